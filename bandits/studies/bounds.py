"""Characteristic times of the study instances: the constant c with E[tau] >= c kl(delta, 1 - delta) for
every delta-correct algorithm (Garivier & Kaufmann 2016; Soare et al. 2014; Vannella et al. 2023).

* linear (samples): c = 2 sigma^2 rho*, rho* = min_w max_z ||z* - z||^2_{A(w)^-1} / Delta(z)^2 (H_LB when
  Z = X), from ``optdesign.transductive``;
* factored (rounds): c = 2 sigma^2 T*, exact T* certified by ``optdesign.characteristic_time`` (constraint
  generation beyond enumeration); when that is not settled within ``EXACT_TIME_LIMIT`` seconds it is 2 sigma^2 T^MF,
  an upper reference (MF-TaS's rate), not a lower bound, and is labelled so;
* bilinear and thresholding: none here (NaN).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import optdesign as od
from optdesign import kl_delta  # the factor c multiplies (re-exported here)
from optdesign.errors import InstanceTooLargeError

from ..environments import LinearBandit
from ..instances import parse_instance

__all__ = ["characteristic_time", "characteristic_times", "kl_delta"]

BOUNDS_FILE = "bounds.json"
# seconds the certified exact T* of one instance may take before the T^MF reference is used instead
EXACT_TIME_LIMIT = 120.0


def characteristic_time(instance: str) -> dict[str, Any]:
    """``{"kind", "value": c, "unit": "samples" | "rounds"}`` of an instance text (NaN where none applies).

    Parameters
    ----------
    instance : str
        An instance text as the CLI takes it (``family:key=value,...``).

    Returns
    -------
    dict
        ``kind`` (how c was obtained, e.g. ``"2 T*"`` or ``"2 T^MF (reference)"``; empty where none applies),
        ``value`` (c, NaN for bilinear and thresholding instances) and ``unit`` (``"samples"`` or ``"rounds"``).
    """
    from ..multiagent.environment import FactoredBandit

    env = parse_instance(instance)
    if isinstance(env, FactoredBandit):
        try:  # certified by constraint generation at any size; T^MF when it is not settled in time
            exact = od.characteristic_time(env.fg, solver="CLARABEL", time_limit=EXACT_TIME_LIMIT)
        except InstanceTooLargeError:  # an interaction graph too wide for variable elimination
            exact = None
        if exact is not None and exact.status == "optimal":
            value, kind = exact.value, "2 T*"
        else:
            value, kind = od.mf_characteristic_time(env.fg, solver="CLARABEL").value, "2 T^MF (reference)"
        return {"kind": kind, "value": 2 * env.sigma**2 * float(value), "unit": "rounds"}
    if isinstance(env, LinearBandit):
        items = env.X if env.Z is None else env.Z  # __post_init__ sets Z = X when it is not given
        rho = od.transductive(env.X, items, env.theta, solver="CLARABEL").value
        return {"kind": "2 sigma^2 rho*", "value": 2 * env.sigma**2 * float(rho), "unit": "samples"}
    return {"kind": "", "value": float("nan"), "unit": "samples"}


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
    missing = [i for i in dict.fromkeys(instances) if i not in cache]
    for instance in missing:
        cache[instance] = characteristic_time(instance)
    if path is not None and missing:
        path.write_text(json.dumps(cache, indent=2))
    return {i: cache[i] for i in instances}
