"""Characteristic times of the study instances: the constant c with E[tau] >= c kl(delta, 1 - delta) for
every delta-correct algorithm, as each instance's problem gives it at its true parameter
(:meth:`bandits.pure_exploration.Problem.lower_bound`; Garivier & Kaufmann 2016; Soare et al. 2014; Vannella et
al. 2023):

* K-armed (samples): c = T*(mu) of :meth:`bandits.pure_exploration.karmed.KArmedProblem.oracle` (GK16, Thm 5);
* linear (samples): c = 2 sigma^2 rho*, rho* = min_w max_z ||z* - z||^2_{A(w)^-1} / Delta(z)^2 (H_LB when
  Z = X), from ``optdesign.transductive``;
* factored (rounds): c = 2 sigma^2 T*, exact T* certified by ``optdesign.characteristic_time`` (constraint
  generation beyond enumeration); when that is not settled within
  :data:`bandits.multiagent.problem.EXACT_TIME_LIMIT` seconds, the certified lower end of its bracket, else
  2 sigma^2 T^MF, an upper reference (MF-TaS's rate), not a lower bound, and labelled so;
* bilinear and thresholding: none here (NaN);
* a run that asks another question of its instance (a sampling rule's ``problem`` option, e.g. ``top-m:m=2``):
  that problem's own lower bound, keyed ``"INSTANCE | problem=PROBLEM"`` (:func:`bound_key`).

Beside c kl(delta, 1 - delta), :func:`practical_bound` gives the *practical* lower bound of the Frank–Wolfe
sampling and Top-Two experiments: the largest t* with t* = c beta(t*, delta), beta the practical threshold
log((1 + log t) / delta) (the oracle's GLR grows like t / c, so it crosses beta at about t*).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from scipy.optimize import brentq

from optdesign import kl_delta  # the factor c multiplies (re-exported here)

from ..core.entries import split_options
from ..core.stopping import check_delta
from ..instances import INSTANCES, parse_instance
from ..kinds import kind_of
from ..pure_exploration.algorithm import ask

__all__ = ["bound_key", "characteristic_time", "characteristic_times", "kl_delta", "practical_bound"]

BOUNDS_FILE = "bounds.json"
#: what separates an instance from the question asked of it in a bound's key
QUESTION = " | problem="


def bound_key(instance: str, problem: str | None = None) -> str:
    """The key of a lower bound: the instance text, with the question asked of it when it is not the instance's own.

    Parameters
    ----------
    instance : str
        The instance text.
    problem : str, optional
        A sampling rule's ``problem`` option (``"top-m:m=2"`` or ``"package.module:Class"``); None or empty: the
        instance's own problem.

    Returns
    -------
    str
        ``instance`` or ``"instance | problem=problem"``.
    """
    return f"{instance}{QUESTION}{problem}" if problem else instance


def characteristic_time(instance: str) -> dict[str, Any]:
    """``{"kind", "value": c, "unit": "samples" | "rounds"}`` of an instance text (NaN where none applies).

    The instance's problem computes c at its true parameter (module docstring); a kind without a problem has none.

    Parameters
    ----------
    instance : str
        An instance text as the CLI takes it (``family:key=value,...``), or a :func:`bound_key` naming the question
        asked of it.

    Returns
    -------
    dict
        ``kind`` (how c was obtained, e.g. ``"T*"``, ``"2 T*"`` or ``"2 T^MF (reference)"``; empty where none applies),
        ``value`` (c, NaN for bilinear and thresholding instances) and ``unit`` (``"samples"`` or ``"rounds"``).
    """
    text, _, question = instance.partition(QUESTION)
    env = parse_instance(text)
    if question:
        problem = ask(question, env)
        return dict(problem.lower_bound(problem.true_parameter(env)))
    entry = kind_of(env.kind).characteristic_time(env)
    return entry if entry is not None else {"kind": "", "value": float("nan"), "unit": "samples"}


def characteristic_times(instances: list[str], out: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """:func:`characteristic_time` of each instance, cached in ``out/bounds.json``.

    Parameters
    ----------
    instances : list of str
        Instance texts (repeats are computed once).
    out : str or Path, optional
        A results directory whose ``bounds.json`` caches the values (read, then extended); None computes
        every value without a cache.

    Returns
    -------
    dict
        Instance text to its :func:`characteristic_time` entry, for every given instance.
    """
    path = None if out is None else Path(out) / BOUNDS_FILE
    cache = json.loads(path.read_text()) if path is not None and path.exists() else {}
    missing = [i for i in dict.fromkeys(instances) if i not in cache or _stale(i, cache[i])]
    for instance in missing:
        cache[instance] = characteristic_time(instance)
    if path is not None and missing:
        path.write_text(json.dumps(cache, indent=2))
    return {i: cache[i] for i in instances}


def _stale(instance: str, entry: dict[str, Any]) -> bool:
    """A cached K-armed entry without a value (written before K-armed instances had one)."""
    spec = INSTANCES.get(split_options(instance)[0])
    return not entry.get("kind") and spec is not None and spec.kind == "karmed"


def practical_bound(c: float, delta: float) -> float:
    """The largest t >= 1 with t = c log((1 + log t) / delta) (1 when t > c beta(t, delta) on all of [1, inf)).

    f(t) = t - c log((1 + log t) / delta) is convex on [1, inf): Brent's method brackets its largest root between
    max(1, c log(1 / delta), the minimiser of f) and a doubling upper end. t* >= c log(1 / delta), which exceeds
    c kl(delta, 1 - delta) = c (1 - 2 delta) log((1 - delta) / delta) for delta < 1/2.

    Parameters
    ----------
    c : float
        The characteristic time T* (GK16's convention, in samples or rounds).
    delta : float
        Confidence level in (0, 1).

    Returns
    -------
    float
        t*, in c's unit; NaN when c is NaN, infinite or not positive.

    Raises
    ------
    InvalidInputError
        ``delta`` outside (0, 1).
    """
    c, delta = float(c), check_delta(delta)
    if not (math.isfinite(c) and c > 0):
        return float("nan")

    def gap(t: float) -> float:
        return t - c * math.log((1.0 + math.log(t)) / delta)

    # the minimiser of f solves t (1 + log t) = c (f' = 1 - c / (t (1 + log t))); it is below 1 when c <= 1
    low = max(1.0, c * math.log(1.0 / delta))
    if c > 1:
        low = max(low, brentq(lambda t: t * (1.0 + math.log(t)) - c, 1.0, c, xtol=1e-12, rtol=1e-15))
    if gap(low) > 0:  # f > 0 on [1, inf): no crossing
        return 1.0
    high = 2.0 * low
    while gap(high) <= 0:
        high *= 2.0
    return float(brentq(gap, low, high, xtol=1e-300, rtol=1e-15, maxiter=500))
