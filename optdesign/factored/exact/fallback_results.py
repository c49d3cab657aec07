"""A fallback bracket (:mod:`optdesign.factored.exact.fallback`) as a result: the CharTimeResult or
RegretBoundResult of its allocation (uniform or a mixture), and a solve cut short by a limit merged with the better
ends of a bracket."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from ...result import CharTimeResult, RegretBoundResult, relative_gap
from ...vocabulary import CharTimeKind, RegretMethod, Status
from ..graph.checks import structure_key
from ..graph.factor_graph import FactorGraph
from .fallback import Bracket

__all__ = ["char_time_result", "merge_char_time", "merge_regret", "regret_result"]


def _best(fg: FactorGraph, bracket: Bracket) -> tuple[np.ndarray, np.ndarray]:
    """(a*, [Delta_min]) when the bracket knows them, else empty arrays."""
    if bracket.how == "none":
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    (star, _), (_, dmin) = fg.m_best(2)
    return star, np.asarray([dmin])


def _marginals(fg: FactorGraph, bracket: Bracket, mass: float) -> list[np.ndarray]:
    """The factor tables of ``mass`` times the bracket's distribution (uniform unless it carries marginals)."""
    if bracket.marginals is None:
        return [np.full(t.shape, mass / t.size) for t in fg.tables]
    return fg.split_tables(mass * bracket.marginals)


def _extras(extras: dict[str, Any], bracket: Bracket) -> dict[str, Any]:
    """A fallback result's extras: the caller's, where the bracket came from, and which mixture attains it."""
    out = {**extras, "fallback": bracket.how}
    if bracket.mixture is not None:
        out["mixture"] = bracket.mixture
    return out


def char_time_result(fg: FactorGraph, bracket: Bracket, *, status: Status, start: float, extras: dict[str, Any],
                     method: CharTimeKind = "exact", m: int = 0, gaps: np.ndarray | None = None) -> CharTimeResult:
    """A CharTimeResult for ``bracket``: its allocation (uniform or a mixture), status ``status`` (a limit stopped
    the solve).

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    bracket : Bracket
        From :func:`char_time_bracket` (``method="exact"``) or :func:`mf_bracket` divided by Delta_m^2.
    status : str
        ``"not_converged"`` or ``"interrupted"``.
    start : float
        ``time.perf_counter()`` at the start of the call (for ``solve_time``).
    extras : dict
        Entries added to the result's extras (why it stopped, ...).
    method : str
        ``"exact"`` or ``"mean-field"``.
    m : int
        The m of T^MF(m) (0 for T*).
    gaps : numpy.ndarray, optional
        The gaps Delta_1..Delta_m of T^MF(m) (default: [Delta_min]).

    Returns
    -------
    CharTimeResult
        ``value`` = the upper end, certified ``lower_bound`` and ``gap``, the bracket's marginals (and uniform local
        allocations for the mean field), an empty ``working_set`` (a warm start from it adds nothing).
    """
    star, dmin = _best(fg, bracket)
    local = [np.full(k, 1.0 / k) for k in fg.n_actions] if method == "mean-field" else None
    return CharTimeResult(
        value=bracket.upper, solver_value=bracket.upper, method=method, m=m,
        best_action=star, gaps=dmin if gaps is None else gaps, marginals=_marginals(fg, bracket, 1.0),
        local_allocations=local, global_allocation=None, n_constraints=0, n_variables=0, width=None, status=status,
        solver="none", solve_time=time.perf_counter() - start, compile_time=0.0,
        extras=_extras(extras, bracket), lower_bound=bracket.lower,
        gap=relative_gap(bracket.upper, bracket.lower), clique_weights=None,
        working_set=np.zeros((0, fg.n_agents), dtype=np.int64) if method == "exact" else None,
        structure=structure_key(fg.n_actions, fg.scopes) if method == "exact" else None,
    )


def regret_result(fg: FactorGraph, bracket: Bracket, *, status: Status, start: float, extras: dict[str, Any],
                  method: RegretMethod = "exact", m: int = 0) -> RegretBoundResult:
    """A RegretBoundResult for the bracket of :func:`regret_bracket`: counts of total mass ``bracket.mass``, uniform
    or the bracket's mixture.

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    bracket : Bracket
        From :func:`regret_bracket`.
    status : str
        ``"not_converged"`` or ``"interrupted"``.
    start : float
        ``time.perf_counter()`` at the start of the call.
    extras : dict
        Entries added to the result's extras.
    method : str
        ``"exact"``, or ``"mf"`` (then only UNKNOWN: the closed form does not bound c^MF(m) from above).
    m : int
        The m of ``"mf"`` (0 for ``"exact"``).

    Returns
    -------
    RegretBoundResult
        ``value`` = the upper end (attained by the returned counts unless ``how`` is ``"closed-form"``), certified
        ``lower_bound`` and ``gap`` (None for ``"mf"``).
    """
    star, _ = _best(fg, bracket)
    mass = bracket.mass if np.isfinite(bracket.mass) and bracket.mass > 0 else 0.0
    return RegretBoundResult(
        value=bracket.upper, solver_value=bracket.upper, method=method, m=m, best_action=star,
        marginals=_marginals(fg, bracket, mass), n_constraints=0, n_variables=0,
        status=status, solver="none", solve_time=time.perf_counter() - start,
        extras=_extras(extras, bracket), lower_bound=bracket.lower if method == "exact" else None,
        gap=relative_gap(bracket.upper, bracket.lower) if method == "exact" else None,
    )


def merge_regret(fg: FactorGraph, res: RegretBoundResult, bracket: Bracket) -> RegretBoundResult:
    """As :func:`merge_char_time`, for the exact regret bound and the bracket of :func:`regret_bracket`.

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    res : RegretBoundResult
        A solve's result of ``method="exact"``.
    bracket : Bracket
        From :func:`regret_bracket`.

    Returns
    -------
    RegretBoundResult
        The merged result.
    """
    if res.status not in ("not_converged", "interrupted") or bracket.how == "none":
        return res
    lower = max(res.lower_bound or 0.0, bracket.lower)
    if bracket.upper < res.value:
        out = regret_result(fg, replace(bracket, lower=lower), status=res.status, start=0.0, extras=res.extras)
        return replace(out, solve_time=res.solve_time)
    return replace(res, lower_bound=lower, gap=relative_gap(res.value, lower))


def merge_char_time(fg: FactorGraph, res: CharTimeResult, bracket: Bracket) -> CharTimeResult:
    """``res``, cut short by a limit, with the better ends of ``bracket``: its lower bound if higher, its allocation
    (uniform or a mixture) if that attains less. A result that was not cut short is returned unchanged.

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    res : CharTimeResult
        A solve's result (status ``"not_converged"`` or ``"interrupted"`` when a limit stopped it).
    bracket : Bracket
        The fallback bracket, in the units of ``res.value``.

    Returns
    -------
    CharTimeResult
        The merged result (``extras["fallback"]`` says when the uniform allocation replaced the solve's).
    """
    if res.status not in ("not_converged", "interrupted") or bracket.how == "none":
        return res
    lower = max(res.lower_bound or 0.0, bracket.lower)
    if bracket.upper < res.value:
        out = char_time_result(fg, replace(bracket, lower=lower), status=res.status, start=0.0, extras=res.extras,
                               method=res.method, m=res.m, gaps=res.gaps)
        return replace(out, solve_time=res.solve_time)
    return replace(res, lower_bound=lower, gap=relative_gap(res.value, lower))
