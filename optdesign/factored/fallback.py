"""Certified brackets that need no solve: what T*, T^MF(m) and c_theta return when a time limit leaves no better one.

Only a*, the next joint actions in gap order, the gaps and the table sizes |T_e| are used; d(a) counts the factors
e with a_e != a*_e, and Delta(a) >= Delta_min for every a != a* (a_1 is the runner-up, Delta(a_1) = Delta_min):

* T* (MF-TaS eq. 1): the two marginal entries x = wbar_{e,a*_e}, y = wbar_{e,a_e} of a deviating factor have
  x + y <= 1, so 1/x + 1/y >= 4 and T* >= 4 d(a_1) / Delta_min^2. The uniform distribution (marginals 1/|T_e|)
  attains U = max_{a != a*} 2 sum_{e: a_e != a*_e} |T_e| / Delta(a)^2, one exact separation
  (:func:`~optdesign.factored.exact.separation.most_violated`), itself at most 2 sum_e |T_e| / Delta_min^2.
* T^MF(m) (eqs. 2-3, App. H): the same over products, where every joint action deviating on all n'_f factors that
  hold an agent with two actions or more is a row at Delta_m:
  max(4 n'_f, max_{j<m} 4 d(a_j) Delta_m^2 / Delta_j^2) <= T^MF(m) Delta_m^2 <= the same with 2 |T_e| in place of
  4 per factor, attained by uniform local allocations.
* c_theta (App. F): the row of a_1 forces wbar_{e,a_1,e} >= 2 d(a_1) / Delta_min^2 on some factor, mass that costs
  at least Delta_min per unit, so c_theta >= 2 d(a_1) / Delta_min; the uniform allocation of total mass U
  satisfies every row and costs U (theta(a*) - sum_e mean_b theta_e(b)).

Each result records ``extras["fallback"]``: ``"uniform"`` (value attained by the returned uniform allocation),
``"closed-form"`` (the separation did not finish: the value bounds the objective at that allocation from above) or
``"none"`` (a* itself was not found in time: value inf, lower bound 0, empty ``best_action``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..deadline import overtime, remaining_budget, stop_requested, time_budget
from ..errors import InstanceTooLargeError, TimeLimitReached
from ..result import CharTimeResult, RegretBoundResult, relative_gap
from ..solvers import setup_seconds
from ..vocabulary import CharTimeKind, RegretMethod, Status
from .graph.checks import structure_key
from .graph.factor_graph import FactorGraph

__all__ = ["SHARE", "Bracket", "char_time_bracket", "char_time_result", "deferred", "merge_char_time", "merge_regret",
           "mf_bracket", "regret_bracket", "regret_result", "solve_fits", "unsolved_reason"]


@dataclass(frozen=True)
class Bracket:
    """A certified bracket lower <= optimum <= upper and how the upper end was obtained."""

    #: an upper bound on the optimum (attained by the uniform allocation when ``how`` is ``"uniform"``)
    upper: float
    #: a lower bound on the optimum
    lower: float
    #: ``"uniform"``, ``"closed-form"`` or ``"none"`` (module docstring)
    how: str
    #: for c_theta: the total mass of the uniform allocation (the T* upper end U); 0 otherwise
    mass: float = 0.0


UNKNOWN = Bracket(float("inf"), 0.0, "none")
# the share of the time left that the exact evaluation of the uniform allocation may use, when a solve could follow
SHARE = 0.25


def solve_fits(fg: FactorGraph) -> bool:
    """Whether the smallest program over the clique tables (plan rows, their marginals, one row per single deviation)
    can start in the time left (:func:`optdesign.solvers.setup_seconds`; a ring of 1,000 agents with K = 10 needs
    about 30 s) and its working set fits (:func:`.exact.working_set.working_set_fits`); True outside any time
    budget (where a working set too large is refused by the solve). When it cannot, the fallback bracket gets the
    whole budget.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    bool
        False when the budget is too short (or ran out while the elimination plan was built), or the working set would
        not fit.
    """
    left = remaining_budget()
    if left is None:
        return True
    from .exact.working_set import working_set_fits  # the exact package imports this module

    if not working_set_fits(fg):  # constraint generation would refuse it: the bracket is the answer in time
        return False
    try:
        size = fg.plan().n_rows + fg.abar + int(sum(fg.n_actions))
    except TimeLimitReached:
        return False
    return setup_seconds(size) < left


def unsolved_reason(fg: FactorGraph) -> str:
    """Why no solve bracketed the optimum: ``"interrupted"`` (a stop request), ``"working-set"`` (constraint
    generation could not hold the single deviations, :func:`.exact.working_set.working_set_fits`) or ``"time"``.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    str
        The value of the result's ``extras["stopped"]``.
    """
    from .exact.working_set import working_set_fits  # the exact package imports this module

    if stop_requested():
        return "interrupted"
    return "time" if working_set_fits(fg) else "working-set"


def deferred(compute: Callable[[], Bracket], now: bool) -> Callable[[], Bracket]:
    """``compute`` cached: run at once when ``now`` (under a time limit, before the solve may use the budget up), else
    at its first call (only when a solve ends short) with :func:`optdesign.deadline.overtime` (the budget may be spent).

    Parameters
    ----------
    compute : callable
        Computes the fallback bracket.
    now : bool
        Whether to compute it before returning.

    Returns
    -------
    callable
        The bracket, computed at most once.
    """
    cached = functools.cache(compute)
    if now:
        cached()

    def late() -> Bracket:
        with overtime():
            return cached()

    return late


def _deviating(fg: FactorGraph, action: np.ndarray, star: np.ndarray) -> np.ndarray:
    """Per factor, whether ``action`` deviates from ``star`` on its scope."""
    return np.asarray(fg.group_indices(action)[0] != fg.group_indices(star)[0])


def _uniform_ratio(fg: FactorGraph, star: np.ndarray, dmin: float) -> tuple[float, str]:
    """(U, how): max_a 2 sum_{e dev} |T_e| / Delta(a)^2 by exact separation, or 2 sum_e |T_e| / Delta_min^2 when
    that is cut by the time budget or its state budget."""
    from .exact.enumerated_separation import MAX_JOINT_ACTIONS, EnumeratedSeparation  # the exact package
    from .exact.separation import most_violated  # imports this module

    closed = 2.0 * float(fg.table_sizes.sum()) / dmin**2
    star_idx = fg.group_indices(star)[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    h = 2.0 * fg.table_sizes[factor_of].astype(float)
    h[star_idx] = 0.0
    gap = fg.means[star_idx][factor_of] - fg.means
    try:
        sep = (EnumeratedSeparation.for_plan(fg.plan()).separate(h, gap, star, k=1, threshold=0.0, delta_min=dmin)
               if fg.n_joint_actions <= MAX_JOINT_ACTIONS else most_violated(fg.plan(), h, gap, delta_min=dmin))
    except (TimeLimitReached, InstanceTooLargeError):
        return closed, "closed-form"
    exact = sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)
    return min(exact, closed), "uniform" if sep.exact and exact <= closed else "closed-form"


def char_time_bracket(fg: FactorGraph, share: float = 1.0) -> Bracket:
    """The bracket of exact T* (module docstring), or UNKNOWN when a* is not found before the budget runs out.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    share : float
        The share of the time left (after a* and Delta_min) that the separation at the uniform allocation may use.

    Returns
    -------
    Bracket
        4 d(a_1) / Delta_min^2 <= T* <= the value at the uniform distribution (closed form if the separation is cut).
    """
    try:
        (star, _), (runner_up, dmin) = fg.m_best(2)
    except TimeLimitReached:
        return UNKNOWN
    left = remaining_budget()
    with time_budget(None if left is None else share * left):
        upper, how = _uniform_ratio(fg, star, dmin)
    return Bracket(upper, 4.0 * float(_deviating(fg, runner_up, star).sum()) / dmin**2, how)


def mf_bracket(fg: FactorGraph, ranked: list[tuple[np.ndarray, float]]) -> Bracket:
    """The bracket of T^MF(m) Delta_m^2 (module docstring), in the units of the mean-field model.

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    ranked : list of (numpy.ndarray, float)
        ``fg.m_best(m + 1)``: a* first, then a_1..a_m with their gaps.

    Returns
    -------
    Bracket
        Both ends times Delta_m^2; the upper end is attained by uniform local allocations.
    """
    star, gaps = ranked[0][0], np.asarray([g for _, g in ranked[1:]])
    nontrivial = np.asarray([any(fg.n_actions[i] > 1 for i in s) for s in fg.scopes])
    lower, upper = 4.0 * float(nontrivial.sum()), 2.0 * float(fg.table_sizes[nontrivial].sum())
    for (action, _), g in zip(ranked[1:-1], gaps[:-1], strict=True):  # the explicit rows a_1..a_{m-1}
        dev = _deviating(fg, action, star)
        weight = (gaps[-1] / g) ** 2
        lower, upper = max(lower, 4.0 * weight * dev.sum()), max(upper, 2.0 * weight * fg.table_sizes[dev].sum())
    return Bracket(upper, lower, "uniform")


def regret_bracket(fg: FactorGraph, share: float = 1.0) -> Bracket:
    """The bracket of c_theta (module docstring), or UNKNOWN when a* is not found before the budget runs out.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    share : float
        As for :func:`char_time_bracket`.

    Returns
    -------
    Bracket
        2 d(a_1) / Delta_min <= c_theta <= U (theta(a*) - sum_e mean theta_e), with ``mass`` = U.
    """
    tstar = char_time_bracket(fg, share)
    if tstar.how == "none":
        return UNKNOWN
    (star, _), (runner_up, dmin) = fg.m_best(2)  # cached by char_time_bracket
    star_idx = fg.group_indices(star)[0]
    mean_gap = float(np.sum(fg.means[star_idx] - np.asarray([t.mean() for t in fg.tables])))
    return Bracket(tstar.upper * mean_gap, 2.0 * float(_deviating(fg, runner_up, star).sum()) / dmin, tstar.how,
                   mass=tstar.upper)


def _best(fg: FactorGraph, bracket: Bracket) -> tuple[np.ndarray, np.ndarray]:
    """(a*, [Delta_min]) when the bracket knows them, else empty arrays."""
    if bracket.how == "none":
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    (star, _), (_, dmin) = fg.m_best(2)
    return star, np.asarray([dmin])


def char_time_result(fg: FactorGraph, bracket: Bracket, *, status: Status, start: float, extras: dict[str, Any],
                     method: CharTimeKind = "exact", m: int = 0, gaps: np.ndarray | None = None) -> CharTimeResult:
    """A CharTimeResult for ``bracket``: the uniform allocation, status ``status`` (a limit stopped the solve).

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
        ``value`` = the upper end, certified ``lower_bound`` and ``gap``, uniform marginals (and local
        allocations for the mean field), an empty ``working_set`` (a warm start from it adds nothing).
    """
    star, dmin = _best(fg, bracket)
    local = [np.full(k, 1.0 / k) for k in fg.n_actions] if method == "mean-field" else None
    return CharTimeResult(
        value=bracket.upper, solver_value=bracket.upper, method=method, m=m,
        best_action=star, gaps=dmin if gaps is None else gaps,
        marginals=[np.full(t.shape, 1.0 / t.size) for t in fg.tables], local_allocations=local,
        global_allocation=None, n_constraints=0, n_variables=0, width=None, status=status, solver="none",
        solve_time=time.perf_counter() - start, compile_time=0.0,
        extras={**extras, "fallback": bracket.how}, lower_bound=bracket.lower,
        gap=relative_gap(bracket.upper, bracket.lower), clique_weights=None,
        working_set=np.zeros((0, fg.n_agents), dtype=np.int64) if method == "exact" else None,
        structure=structure_key(fg.n_actions, fg.scopes) if method == "exact" else None,
    )


def regret_result(fg: FactorGraph, bracket: Bracket, *, status: Status, start: float, extras: dict[str, Any],
                  method: RegretMethod = "exact", m: int = 0) -> RegretBoundResult:
    """A RegretBoundResult for the bracket of :func:`regret_bracket`: uniform counts of total mass ``bracket.mass``.

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
        ``value`` = the upper end (attained by the uniform counts unless ``how`` is ``"closed-form"``), certified
        ``lower_bound`` and ``gap`` (None for ``"mf"``).
    """
    star, _ = _best(fg, bracket)
    mass = bracket.mass if np.isfinite(bracket.mass) and bracket.mass > 0 else 0.0
    return RegretBoundResult(
        value=bracket.upper, solver_value=bracket.upper, method=method, m=m, best_action=star,
        marginals=[np.full(t.shape, mass / t.size) for t in fg.tables], n_constraints=0, n_variables=0,
        status=status, solver="none", solve_time=time.perf_counter() - start,
        extras={**extras, "fallback": bracket.how}, lower_bound=bracket.lower if method == "exact" else None,
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
    """``res``, cut short by a limit, with the better ends of ``bracket``: its lower bound if higher, its uniform
    allocation if that attains less. A result that was not cut short is returned unchanged.

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
