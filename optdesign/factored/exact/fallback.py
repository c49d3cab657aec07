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

a* and a_1 come from one max-sum pass that every certified answer needs, so it is granted
:data:`optdesign.runtime.deadline.CERTIFY_SECONDS` past a budget already spent (a ``time_limit`` of 1e-9 s still
returns these brackets, unless that pass needs longer: a ring of 10^5 agents takes seconds).

When no solve can start in the time limit (:func:`solve_blocker`), the bracket is the answer and the time left goes to
lowering its upper end (the uniform allocation spreads its mass over joint actions with large gaps: its value was 50
times the lower end on a ring of 1,000 agents with K = 10). Mixtures of point masses and the uniform distribution,

    w = (1 - s) sum_{j=0..M} lambda_j delta_{a_j} + s uniform,    lambda_j proportional to d(a_j) / Delta(a_j)^2,

over a* = a_0 and the M best joint actions after it (lambda_0 = max_j lambda_j), are distributions over joint actions,
so their factor marginals are in the polytope; each is evaluated by one exact separation (for c_theta, the counts
2 V_w w with V_w = max_a sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} / Delta(a)^2 cost 2 V_w E_w[Delta]), for M in
MIXTURE_SIZES and s in MIXTURE_SHARES, until the list or the time runs out; the best replaces the uniform allocation
(on that ring, within 1.2 % of the lower end once all six are tried).

Each result records ``extras["fallback"]``: ``"uniform"`` (value attained by the returned uniform allocation),
``"mixture"`` (value attained by the returned mixture; ``extras["mixture"]`` names M + 1 and s), ``"closed-form"`` (the
separation did not finish: the value bounds the objective at that allocation from above) or ``"none"`` (no bound was
computed: a* was not found before the time ran out or a stop was requested; value inf, lower bound 0, empty
``best_action``). ``extras["stopped"]`` says why no solve gave the bracket (:func:`unsolved_reason`).
:mod:`optdesign.factored.exact.fallback_results` turns a bracket into a result, or merges it into a solve cut short.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...errors import InstanceTooLargeError, TimeLimitReached
from ...runtime.deadline import check_budget, overtime, remaining_budget, stop_requested, time_budget
from ...runtime.solvers import setup_seconds
from ..graph.factor_graph import FactorGraph
from .enumerated_separation import MAX_JOINT_ACTIONS, EnumeratedSeparation
from .separation import most_violated
from .working_set import best_first_actions, working_set_fits

__all__ = ["MIXTURE_SHARES", "MIXTURE_SIZES", "SHARE", "Bracket", "char_time_bracket", "deferred", "mf_bracket",
           "regret_bracket", "solve_blocker", "unsolved_reason"]


@dataclass(frozen=True)
class Bracket:
    """A certified bracket lower <= optimum <= upper and how the upper end was obtained."""

    #: an upper bound on the optimum (attained by the allocation ``marginals`` when ``how`` is ``"uniform"`` or
    #: ``"mixture"``)
    upper: float
    #: a lower bound on the optimum
    lower: float
    #: ``"uniform"``, ``"mixture"``, ``"closed-form"`` or ``"none"`` (module docstring)
    how: str
    #: for c_theta: the total mass of the counts attaining ``upper`` (U for the uniform allocation); 0 otherwise
    mass: float = 0.0
    #: flat factor marginals (laid out like ``fg.means``) of the distribution attaining ``upper``; None: uniform
    marginals: np.ndarray | None = field(default=None, compare=False)
    #: ``"mixture"``: its number of joint actions M + 1 and uniform share s (module docstring)
    mixture: dict[str, Any] | None = field(default=None, compare=False)


UNKNOWN = Bracket(float("inf"), 0.0, "none")
# the share of the time left that the exact evaluation of the uniform allocation may use, when a solve could follow
SHARE = 0.25
# the mixtures tried when no solve can start (module docstring): M best joint actions after a* and the share s of the
# uniform distribution (the best of these was within 1.01 to 1.84 times exact T* on ten rings, lines, stars and grids
# of 16 to 2e14 joint actions, where the uniform allocation was at 1.9 to 40 times; s = 0.05 and 0.01 won most often)
MIXTURE_SIZES = (16, 256)
MIXTURE_SHARES = (0.05, 0.01, 0.2)


def solve_blocker(fg: FactorGraph) -> str | None:
    """Why no solve can start now, or None when one may: ``"working-set"`` (constraint generation could not hold the
    single deviations, :func:`.exact.working_set.working_set_fits`), ``"setup"`` (the smallest program over the clique
    tables, plan rows, their marginals and one row per single deviation, cannot start in the time left,
    :func:`optdesign.runtime.solvers.setup_seconds`: a ring of 1,000 agents with K = 10 needs about 36 s) or
    ``"time"`` (the budget ran out while the elimination plan was built). Always None outside any time budget (where
    a working set too large is refused by the solve). When a solve is blocked, the fallback bracket gets the whole
    budget.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    str or None
        The reason, to become the result's ``extras["stopped"]`` (:func:`unsolved_reason`), or None.
    """
    left = remaining_budget()
    if left is None:
        return None

    if not working_set_fits(fg):  # constraint generation would refuse it: the bracket is the answer in time
        return "working-set"
    try:
        size = fg.plan().n_rows + fg.abar + int(sum(fg.n_actions))
    except TimeLimitReached:
        return "time"
    return None if setup_seconds(size) < left else "setup"


def unsolved_reason(fg: FactorGraph, blocked: str | None = None) -> str:
    """Why no solve bracketed the optimum: ``"interrupted"`` (a stop request), ``blocked`` (no solve could start,
    :func:`solve_blocker`), ``"working-set"`` (constraint generation could not hold the single deviations,
    :func:`.exact.working_set.working_set_fits`) or ``"time"``.

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    blocked : str, optional
        What :func:`solve_blocker` returned before the solve; None if a solve was started.

    Returns
    -------
    str
        The value of the result's ``extras["stopped"]``.
    """

    if stop_requested():
        return "interrupted"
    if blocked is not None:
        return blocked
    return "time" if working_set_fits(fg) else "working-set"


def deferred(compute: Callable[[], Bracket], now: bool) -> Callable[[], Bracket]:
    """``compute`` cached: run at once when ``now`` (under a time limit, before the solve may use the budget up), else
    at its first call (only when a solve ends short) with :func:`optdesign.runtime.deadline.overtime` (the budget may
    be spent).

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


def _best_two(fg: FactorGraph) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(a*, a_1, Delta_min) by one max-sum pass, granted overtime (module docstring); None when even that does not find
    them, or a stop was requested."""
    try:
        with overtime():
            (star, _), (runner_up, dmin) = fg.m_best(2)
    except TimeLimitReached:
        return None
    return star, runner_up, dmin


def _max_ratio(fg: FactorGraph, star: np.ndarray, dmin: float, h: np.ndarray) -> tuple[float, bool]:
    """(max_{a != a*} sum_e h_e(a_e) / Delta(a)^2, whether exact) by one exact separation (an enumeration on small
    structures), or a bound above it when the separation prunes; raises what the separation raises."""

    star_idx = fg.group_indices(star)[0]
    gap = fg.means[star_idx][np.repeat(np.arange(fg.n_factors), fg.table_sizes)] - fg.means
    sep = (EnumeratedSeparation.for_plan(fg.plan()).separate(h, gap, star, k=1, threshold=0.0, delta_min=dmin)
           if fg.n_joint_actions <= MAX_JOINT_ACTIONS else most_violated(fg.plan(), h, gap, delta_min=dmin))
    return (sep.max_ratio, True) if sep.exact else (max(sep.max_ratio, sep.upper_bound), False)


def _uniform_ratio(fg: FactorGraph, star: np.ndarray, dmin: float) -> tuple[float, str]:
    """(U, how): max_a 2 sum_{e dev} |T_e| / Delta(a)^2 by exact separation, or 2 sum_e |T_e| / Delta_min^2 when
    that is cut by the time budget or its state budget."""
    closed = 2.0 * float(fg.table_sizes.sum()) / dmin**2
    h = 2.0 * np.repeat(fg.table_sizes, fg.table_sizes).astype(float)
    h[fg.group_indices(star)[0]] = 0.0
    try:
        value, exact = _max_ratio(fg, star, dmin, h)
    except (TimeLimitReached, InstanceTooLargeError):
        return closed, "closed-form"
    return min(value, closed), "uniform" if exact and value <= closed else "closed-form"


def _uniform_gap(fg: FactorGraph, star: np.ndarray) -> float:
    """E[Delta] under the uniform distribution over joint actions: theta(a*) - sum_e mean_b theta_e(b)."""
    return float(np.sum(fg.means[fg.group_indices(star)[0]] - np.asarray([t.mean() for t in fg.tables])))


def _mixtures(fg: FactorGraph, star: np.ndarray) -> Iterator[tuple[np.ndarray, float, dict[str, Any]]]:
    """The mixtures of the module docstring, each share s of MIXTURE_SHARES with each M of MIXTURE_SIZES in turn (so a
    short budget tries both sizes): (flat factor marginals w, E_w[Delta], {"joint_actions": M + 1,
    "uniform_share": s}); fewer sizes when the instance has fewer joint actions, or the time budget runs out while
    they are listed."""

    ranked = np.asarray(best_first_actions(fg, max(MIXTURE_SIZES) + 1), dtype=np.int64).reshape(-1, fg.n_agents)
    if ranked.shape[0] < 2:  # the time budget ran out before a second joint action was listed: no mixture
        return
    gaps = np.asarray(fg.gap(ranked), dtype=float)
    # per distinct size: the marginals of sum_j lambda_j delta_{a_j}, its mean gap, M + 1
    points: list[tuple[np.ndarray, float, int]] = []
    for size in MIXTURE_SIZES:
        top, top_gaps = ranked[:size + 1], gaps[:size + 1]
        if top.shape[0] < 2 or (points and top.shape[0] == points[-1][2]):
            break
        idx = fg.group_indices(top)
        weight = np.zeros(top.shape[0])
        weight[1:] = np.sum(idx[1:] != idx[0], axis=1) / top_gaps[1:] ** 2
        weight[0] = weight[1:].max()
        weight /= weight.sum()
        points.append((np.bincount(idx.ravel(), weights=np.repeat(weight, fg.n_factors), minlength=fg.abar),
                       float(weight @ top_gaps), int(top.shape[0])))
    uniform, uniform_gap = 1.0 / np.repeat(fg.table_sizes, fg.table_sizes).astype(float), _uniform_gap(fg, star)
    for share in MIXTURE_SHARES:
        for point, point_gap, count in points:
            yield ((1.0 - share) * point + share * uniform, (1.0 - share) * point_gap + share * uniform_gap,
                   {"joint_actions": count, "uniform_share": share})


def _refined(fg: FactorGraph, bracket: Bracket, star: np.ndarray,
             value: Callable[[np.ndarray, float], tuple[float, float]]) -> Bracket:
    """``bracket`` with its upper end lowered by the best of :func:`_mixtures`: ``value(w, E_w[Delta])`` is (the
    certified objective at w, or inf; the mass of the counts attaining it). Stops when the time or the separation's
    state budget runs out, or when the time left is shorter than the last evaluation took (the next one would be cut
    short, its work lost)."""
    best, took = bracket, 0.0
    try:
        for w, mean_gap, mixture in _mixtures(fg, star):
            left = remaining_budget()
            if left is not None and left < took:
                break
            check_budget("the fallback's mixtures")  # an enumerated separation does not check it
            start = time.perf_counter()
            upper, mass = value(w, mean_gap)
            took = time.perf_counter() - start
            if upper < best.upper:
                best = replace(best, upper=upper, how="mixture", mass=mass, marginals=w, mixture=mixture)
    except (TimeLimitReached, InstanceTooLargeError):
        pass
    return best


def char_time_bracket(fg: FactorGraph, share: float = 1.0, *, refine: bool = False) -> Bracket:
    """The bracket of exact T* (module docstring), or UNKNOWN when a* is not found before the budget runs out.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    share : float
        The share of the time left (after a* and Delta_min) that the separation at the uniform allocation may use.
    refine : bool
        Spend that time on mixtures too (module docstring): when no solve can start, the bracket is the answer.

    Returns
    -------
    Bracket
        4 d(a_1) / Delta_min^2 <= T* <= the value at the uniform distribution or the best mixture (closed form if the
        separation is cut).
    """
    found = _best_two(fg)
    if found is None:
        return UNKNOWN
    star, runner_up, dmin = found
    lower = 4.0 * float(_deviating(fg, runner_up, star).sum()) / dmin**2
    left = remaining_budget()
    with time_budget(None if left is None else share * left):
        upper, how = _uniform_ratio(fg, star, dmin)
        bracket = Bracket(upper, lower, how)
        if refine and how == "uniform":
            star_idx = fg.group_indices(star)[0]
            factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)

            def value(w: np.ndarray, mean_gap: float) -> tuple[float, float]:
                h = 1.0 / w + (1.0 / w[star_idx])[factor_of]  # H_w(a) = sum_e h_e(a_e), zero at a*
                h[star_idx] = 0.0
                ratio, exact = _max_ratio(fg, star, dmin, h)
                return (ratio if exact else np.inf), 0.0

            bracket = _refined(fg, bracket, star, value)
    return bracket


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


def regret_bracket(fg: FactorGraph, share: float = 1.0, *, refine: bool = False) -> Bracket:
    """The bracket of c_theta (module docstring), or UNKNOWN when a* is not found before the budget runs out.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    share : float
        As for :func:`char_time_bracket`.
    refine : bool
        As for :func:`char_time_bracket`, with the mixtures' counts 2 V_w w and their cost.

    Returns
    -------
    Bracket
        2 d(a_1) / Delta_min <= c_theta <= U (theta(a*) - sum_e mean theta_e), with ``mass`` = U, or the cost of the
        best mixture's counts.
    """
    tstar = char_time_bracket(fg, share)
    if tstar.how == "none":
        return UNKNOWN
    (star, _), (runner_up, dmin) = fg.m_best(2)  # cached by char_time_bracket
    bracket = Bracket(tstar.upper * _uniform_gap(fg, star), 2.0 * float(_deviating(fg, runner_up, star).sum()) / dmin,
                      tstar.how, mass=tstar.upper)
    if refine and tstar.how == "uniform":
        star_idx = fg.group_indices(star)[0]

        def value(w: np.ndarray, mean_gap: float) -> tuple[float, float]:
            h = 1.0 / w  # the rows of c_theta: sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} <= Delta(a)^2 / 2
            h[star_idx] = 0.0
            ratio, exact = _max_ratio(fg, star, dmin, h)
            return (2.0 * ratio * mean_gap if exact else np.inf), 2.0 * ratio

        bracket = _refined(fg, bracket, star, value)
    return bracket
