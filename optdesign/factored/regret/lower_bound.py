"""Graves–Lai regret lower bound for multi-agent semi-bandits (MF-TaS paper App. F; Cuvelier et al. 2021).

With unit-variance Gaussian feedback on every factor, every uniformly good algorithm has liminf R(T) / log T >=
c_theta, where (w = expected counts / log T, unnormalised)

    c_theta = min_{w in R^A_{>=0}}  sum_a w_a Delta(a)
              s.t. sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} <= Delta(a)^2 / 2   for every a != a*,

with wbar_{e,b} = sum_{a: a_e = b} w_a. The terms 1/wbar_{e,a*_e} of the pure-exploration program are absent:
w_{a*} costs nothing, so it is sent to infinity. The objective depends on w only through its factor marginals,
sum_a w_a Delta(a) = sum_{e,b} wbar_{e,b} (theta_e(a*_e) - theta_e(b)), so w is replaced by the exact *cone* of
factor marginals: junction-tree clique counts mu >= 0 consistent on separators
(:func:`optdesign.factored.inference.marginals.marginal_maps`) with one common total mass over the connected
components, but no normalisation. Its size is O(N K^{w+1}).
The objective is written r @ mu with the max-sum regrets r >= 0 of the cliques (Delta(a) = sum_l r_l(clique row
of a), :mod:`optdesign.factored.inference.max_sum`): equal on the cone, and free of the cancellation between signed
local gaps that costs percents when Delta_min << abs(theta_e).

* ``method="exact"``: one constraint row per joint action a != a*, enumerated up to ``max_joint_actions``
  (default 20,000) joint actions and by constraint generation beyond (``RegretMaster`` of
  :mod:`optdesign.factored.regret.master` on the engine of :mod:`optdesign.factored.exact.constraint_generation`).
  Certified either way: ``lower_bound`` by weak duality from the rows' multipliers lambda (a distribution over
  joint actions, c = sum_a lambda_a (2 / Delta(a)^2) 1{a_e = b}):
  on the cone, min r.mu + c.(1/wbar) - 1.lambda maximised over the scale of lambda is min_{r.mu = 1} c.(1/wbar)
  >= (sum c / wbar)^2 / max_{a != a*} S(a) / Delta(a) with S(a) = sum_e (c / wbar^2)_{e,a_e} (Cauchy–Schwarz;
  the max is one Dinkelbach max-ratio).
* ``method="mf"``: an UPPER bound on c_theta for large instances, see :func:`regret_lower_bound`.

Numerics: the program is solved for theta / Delta_max (every gap <= 1, Delta_max the largest gap; c scales as 1/theta
and the counts as 1/theta^2, so value and allocation are scaled back), in passes
(:func:`optdesign.factored.exact.rescaling.solve_in_passes`, as exact T*): each pass is centred on the allocation of
the previous one (pass 1 on a feasible mixture of joint actions, ``Cone.mixture``), so that clique counts, the cone
entries of s_{e,b} >= 1/wbar_{e,b} (:class:`~optdesign.factored.exact.rescaling.ScaledAllocation`) and the cost are
all O(1). The zero-cost ray w_{a*} -> infinity is cut by a valid linear row. The reported value is the objective at
the pass's allocation, scaled up if needed to satisfy every constraint exactly; the smallest pass's value is kept.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ... import vocabulary as vocab
from ..._lazy import cp
from ...errors import InvalidInputError, TimeLimitReached
from ...result import RegretBoundResult, relative_gap
from ...runtime.deadline import budget_expired, overtime, stop_reason, time_budget
from ...validation import as_count, check_enumerable, check_m_best
from ..exact.constraint_generation import (
    DEFAULT_TOL,
    MAX_ITERATIONS,
    TIME_LIMIT,
    check_limits,
    run_extras,
    warm_generate,
)
from ..exact.fallback import SHARE, UNKNOWN, deferred, regret_bracket, solve_blocker, unsolved_reason
from ..exact.fallback_results import merge_regret, regret_result
from ..exact.rescaling import Reference, ScaledAllocation, solve_in_passes
from ..graph.factor_graph import FactorGraph
from ..inference.constraint_reduction import factored_max
from ..inference.elimination import EliminationPlan
from ..inference.max_sum import MaxSum, max_ratio
from .cone import Cone
from .master import RegretMaster

__all__ = ["EXACT_MAX_JOINT_ACTIONS", "METHODS", "RESTRICTIONS", "STRATEGIES", "regret_lower_bound"]

# the options' tuples, from optdesign.vocabulary
METHODS, RESTRICTIONS, STRATEGIES = vocab.REGRET_METHODS, vocab.RESTRICTIONS, vocab.REGRET_STRATEGIES
# method="exact" enumerates up to this many joint actions (3^9 = 19,683 fits) and generates constraints beyond
EXACT_MAX_JOINT_ACTIONS = 20_000


class _ConeProgram:
    """min r . mu over the cone of clique counts with explicit rows (2 / Delta(a)^2) H s <= 1 (none if H is None),
    rebuilt around each pass's reference (:func:`optdesign.factored.exact.rescaling.solve_in_passes`)."""

    def __init__(self, fg: FactorGraph, plan: EliminationPlan, cone: Cone, H: sp.spmatrix | None,
                 n_constraints: int | None):
        self.fg, self.plan, self.cone, self.H = fg, plan, cone, H
        self.n_constraints = n_constraints

    def worst_row(self, inv: np.ndarray) -> float:
        """Largest left-hand side of the rows at inv = 1 / wbar on the group actions b != a*_e."""
        return float(np.max(self.H @ inv)) if self.H is not None else 0.0

    def violation(self, wdev: np.ndarray) -> float:
        """max over the program's rows of (row sum of 1/wbar) / (allowed bound); <= 1 iff feasible."""
        if np.any(wdev <= 0):
            return np.inf
        return self.worst_row(1.0 / wdev)

    def factored_rows(self, counts: ScaledAllocation) -> list:
        """Constraints beyond the explicit rows (none here)."""
        return []

    def build(self, reference: Reference) -> tuple[cp.Problem, Callable[[], tuple]]:
        """The conic program of one pass around ``reference``, and the evaluation of its solution."""
        cone = self.cone
        counts, constraints = cone.allocation(reference)  # mu, with s >= 1 / (F_dev mu)
        rows = None
        if self.H is not None:
            rows = counts.inverse(self.H) <= 1
            constraints.append(rows)
        constraints += self.factored_rows(counts)
        cost, ref = counts.cost(cone.regrets)
        problem = cp.Problem(cp.Minimize(cost), constraints)

        def evaluate() -> tuple:
            """(value at the allocation scaled to feasibility, solver value, the pass's point, next reference)."""
            mu = counts.value
            wbar = cone.F @ mu
            scale = max(1.0, self.violation(wbar[cone.dev]))
            point = (wbar, scale, None if rows is None else rows.dual_value, mu)
            value = float(scale * (cone.regrets @ mu))
            return value, float(problem.value) * ref, point, Reference.around(mu, cone.F[cone.dev])

        return problem, evaluate


class _EnumeratedProgram(_ConeProgram):
    """``method="exact"``: one row per joint action a != a*, certified by weak duality (module docstring)."""

    def __init__(self, fg: FactorGraph, plan: EliminationPlan, cone: Cone):
        A = fg.joint_actions()
        A = A[np.any(A != fg.best_action(), axis=1)]
        # (2 / Delta(a)^2) H s <= 1, with s >= 1 / wbar on the group actions b != a*_e
        super().__init__(fg, plan, cone, cone.rows(fg, A), A.shape[0])

    def lower_bound(self, solver: str | None, wbar: np.ndarray, dual: np.ndarray | None,
                    mu: np.ndarray) -> float | None:
        """Certified lower bound from the rows' multipliers (None without usable multipliers), scaled back."""
        H = cast(sp.spmatrix, self.H)
        master = RegretMaster(self.fg, solver)
        if dual is not None and np.size(dual) == H.shape[0] and np.max(dual) > 0:
            c = H.T @ (np.clip(dual, 0.0, None) / np.clip(dual, 0.0, None).sum())
            lower = master.dual_bound(c, wbar)
            try:  # the minimiser bound is a solve: skipped when the time budget runs out
                lower = max(lower, master.minimiser_bound(c, master.reference(mu)))
            except TimeLimitReached:
                pass
            return lower / self.cone.unit
        return None


class _MeanFieldProgram(_ConeProgram):
    """``method="mf"``: explicit rows for a_1..a_{m-1} and one FCR block for the restriction of every other row."""

    def __init__(self, fg: FactorGraph, plan: EliminationPlan, cone: Cone, m: int, restriction: str):
        unit, dev = cone.unit, cone.dev
        ranked = fg.m_best(m + 1)[1:]
        self.m, self.restriction = m, restriction
        self.gaps = np.asarray([g for _, g in ranked]) / unit
        # (2 / Delta_m^2) G(a) over the flat group actions (zero at a*_e), as a map of s
        self.G = sp.csr_matrix((np.full(dev.size, 2.0 / self.gaps[-1] ** 2), (dev, np.arange(dev.size))),
                               shape=(fg.abar, dev.size))
        H = None
        if m > 1:
            H = sp.diags(2.0 / self.gaps[:-1] ** 2) @ fg.deviation_matrix(np.stack([a for a, _ in ranked[:-1]]))[:, dev]
        # the secant rows in closed form, for the feasibility check: Delta(a) / Delta_m factor by factor
        star = fg.group_indices(fg.best_action())[0]
        self.local_gap = (fg.means[star][np.repeat(np.arange(fg.n_factors), fg.table_sizes)] - fg.means) / unit
        super().__init__(fg, plan, cone, H, None)  # FCR rows and the m - 1 explicit ones, counted when built

    def worst_row(self, inv: np.ndarray) -> float:
        """The explicit rows and the restricted ones, max_a over FCR's joint actions by max-sum."""
        worst = super().worst_row(inv)
        if self.restriction == "secant":  # max_{a != a*} (2 / Delta_m^2) G(a) / (Delta(a) / Delta_m)
            return max(worst, max_ratio(self.plan, self.G @ inv, self.local_gap / self.gaps[-1]))
        return max(worst, MaxSum(self.plan, self.G @ inv, keep_regrets=False).value)

    def factored_rows(self, counts: ScaledAllocation) -> list:
        """The FCR block of the restriction, max_a [(2 / Delta_m^2) G(a) - bound(a)] <= 0."""
        if self.restriction == "secant":  # (2 / Delta_m^2) G(a) - Delta(a) / Delta_m <= 0, every term O(1)
            fcr_max = factored_max(counts.inverse(self.G), self.plan, row_terms=-self.cone.regrets / self.gaps[-1])
            rows = [*fcr_max.constraints, fcr_max.t <= 0]
        else:  # (2 / Delta_m^2) G(a) <= 1
            fcr_max = factored_max(counts.inverse(self.G), self.plan)
            rows = [*fcr_max.constraints, fcr_max.t <= 1]
        self.n_constraints = fcr_max.n_constraints + self.m - 1
        return rows


def regret_lower_bound(fg: FactorGraph, method: vocab.RegretMethod = "exact", *, solver: str | None = None, m: int = 1,
                       max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS, restriction: vocab.Restriction = "secant",
                       order: str | Sequence[int] = "auto", strategy: vocab.RegretStrategy = "auto",
                       tol: float = DEFAULT_TOL,
                       time_limit: float = TIME_LIMIT, initial: ArrayLike | None = None) -> RegretBoundResult:
    """c_theta = min_w sum_a w_a Delta(a) s.t. sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= Delta(a)^2/2, a != a*.

    ``method="exact"``: one row per joint action a != a*, certified (``lower_bound``, ``gap``). ``strategy``
    ``"enumerate"`` lists them all (InstanceTooLargeError above ``max_joint_actions``), ``"generate"`` runs
    constraint generation to relative gap ``tol`` (``initial`` joint actions warm-start its working set),
    ``"auto"`` enumerates up to ``max_joint_actions`` and generates beyond. ``time_limit`` bounds the whole call,
    every solve and loop (status ``"not_converged"`` with the best certified bracket when it runs out). ``m`` and
    ``restriction`` are validated but not used. ``order`` is the elimination order of the junction tree / FCR (any
    order gives the same value).
    ``method="mf"``: an upper bound c^MF(m) >= c_theta of polynomial size. The name follows
    T^MF(m): the constraint side is restricted as in MF-TaS App. H, but the allocation is *not*
    a product (see below). With a_1..a_m the m best joint actions after a* (gaps Delta_1 <= ...
    <= Delta_m), rows a_1..a_{m-1} keep their own Delta_j^2 and every a gets a lower estimate of
    Delta(a)^2 that is exact at Delta(a) = Delta_m and decomposes over factors, so that with
    G(a) = sum_e g_e(a_e), g_e(b) = 1{b != a*_e} s_{e,b}, one FCR block
    (:func:`optdesign.factored.inference.constraint_reduction.factored_max`) covers every joint action:

    * ``restriction="secant"`` (default): Delta(a)^2 >= Delta_m Delta(a) for Delta(a) >= Delta_m,
      i.e. max_a [G(a) - Delta_m Delta(a)/2] <= 0, with Delta(a) the sum of the clique regrets
      (FCR handles clique terms exactly). The max includes a* (0 <= 0), so no affine estimate
      with a negative intercept (e.g. a tangent) is allowed: this is the largest line through 0
      below Delta^2 on [Delta_m, inf).
    * ``restriction="constant"``: Delta(a)^2 >= Delta_m^2 as in T^MF(m), max_a G(a) <= Delta_m^2/2.
      Never better than "secant" (Delta_m Delta(a) >= Delta_m^2), kept for comparison.

    The feasible set shrinks, so c^MF(m) >= c_theta, nonincreasing in m, with equality when all
    gaps are equal or m = fg.n_joint_actions - 1. The allocation stays the exact cone of clique marginals: a product
    (mean-field) allocation w_a = prod_i v_{i,a_i} would make the objective sum_e sum_b
    wbar_{e,b} (theta_e(a*_e) - theta_e(b)) a signed polynomial in v (local gaps may be
    negative), non-convex even in log coordinates, whereas the clique cone keeps it linear and
    loses nothing (cost O(N K^{w+1}), w the elimination width: fine for lines, rings, grids).

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    method : str
        ``"exact"`` (certified c_theta) or ``"mf"`` (the upper bound c^MF(m)).
    solver : str, optional
        Conic solver (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    m : int
        ``"mf"``: the m of c^MF(m), explicit rows for a_1..a_{m-1} and Delta_m in the restriction; checked only
        (1 <= m < number of joint actions) for ``"exact"``.
    max_joint_actions : int
        Largest number of joint actions ``strategy="enumerate"`` accepts (and where ``"auto"`` switches to generation).
    restriction : str
        ``"secant"`` (default) or ``"constant"``, the lower estimate of Delta(a)^2 of ``"mf"`` (above).
    order : str or sequence of int
        Elimination order of the junction tree and FCR (``"auto"``: networkx treewidth heuristics).
    strategy : str
        ``"auto"`` (default), ``"enumerate"`` or ``"generate"``: how ``"exact"`` handles its rows.
    tol : float
        Certified relative gap ``value / lower_bound - 1`` at which constraint generation stops.
    time_limit : float
        Seconds for the whole call; past them the best certified result is returned (status ``"not_converged"``,
        as for :func:`optdesign.factored.characteristic_time`): for ``"exact"`` the bracket reached, else the
        closed-form bracket of :mod:`optdesign.factored.exact.fallback` (finite however small the limit, unless a*
        cannot be found in its overtime: then ``extras["fallback"] == "none"``, no bound computed) or the feasible
        starting point's value; for ``"mf"`` the value at its feasible starting point (inf if even that was not
        reached).
    initial : array_like, shape (M, N), optional
        Joint actions added to the starting working set of constraint generation (a warm start).

    Returns
    -------
    RegretBoundResult
        ``value`` (liminf R(T) / log T >= c_theta), ``lower_bound`` and ``gap`` (certified for ``"exact"``), the
        factor marginals of the optimal counts, ``status``, ``solver`` and ``extras``.

    Raises
    ------
    InvalidInputError
        Not a FactorGraph, a tie for a*, an unknown method, restriction or strategy, bad limits.
    InstanceTooLargeError
        ``strategy="enumerate"`` above ``max_joint_actions``, or an elimination order too wide.
    SolverError
        Every conic solver of the chain failed (the message names each status).

    Examples
    --------
    >>> import optdesign as od
    >>> fg = od.FactorGraph.ring(5, 3, seed=0)
    >>> res = od.regret_lower_bound(fg)
    >>> print(res.method, res.lower_bound <= res.value, res.gap <= 1e-4)
    exact True True
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    method = vocab.check_option(method, "method", METHODS)
    restriction = vocab.check_option(restriction, "restriction", RESTRICTIONS)
    strategy = vocab.check_option(strategy, "strategy", STRATEGIES)
    m = check_m_best(m, fg.n_joint_actions)
    limit = as_count(max_joint_actions, "max_joint_actions", minimum=0)
    check_limits(tol, time_limit, MAX_ITERATIONS, None)
    generate = method == "exact" and (strategy == "generate" or (strategy == "auto" and fg.n_joint_actions > limit))
    if method == "exact" and not generate:
        check_enumerable(fg.n_joint_actions, limit, what="the enumerated regret bound",
                         instead="strategy='generate' (constraint generation, any size)")
    start = time.perf_counter()
    with time_budget(time_limit):
        if method == "mf":
            try:
                return _cone_bound(fg, "mf", solver, m, restriction, order)
            except TimeLimitReached:  # no feasible point of the restricted program yet: nothing bounds c^MF(m)
                return regret_result(fg, UNKNOWN, status=stop_reason(), start=start, extras={"stopped": "time"},
                                     method="mf", m=m)
        blocked = solve_blocker(fg)
        # the answer if no solve brackets c_theta in time: computed first under a time limit, else only when needed;
        # when no solve can start it gets the whole budget to improve its allocation (fallback module docstring)
        bracket = deferred(functools.partial(regret_bracket, fg, 1.0 if blocked else SHARE, refine=bool(blocked)),
                           time_limit is not None)
        try:  # no solve when no program over the clique tables can start in the time left
            res = None if blocked else (
                _generated(fg, solver=solver, tol=tol, time_limit=time_limit, initial=initial) if generate
                else _cone_bound(fg, "exact", solver, m, restriction, order))
        except TimeLimitReached:
            res = None
        if res is None:
            return regret_result(fg, bracket(), status=stop_reason(), start=start,
                                 extras={"stopped": unsolved_reason(fg, blocked)})
    return merge_regret(fg, res, bracket()) if res.status in ("not_converged", "interrupted") else res


def _cone_bound(fg: FactorGraph, method: str, solver: str | None, m: int, restriction: str,
                order: str | Sequence[int]) -> RegretBoundResult:
    """The enumerated exact bound or c^MF(m), solved in passes; under a time budget that runs out before the first
    pass, the starting point's value (feasible, so an upper bound on the program)."""
    start = time.perf_counter()
    fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    plan = fg.plan(order)
    cone = Cone.of(fg, plan)
    program: _ConeProgram = (_EnumeratedProgram(fg, plan, cone) if method == "exact"
                             else _MeanFieldProgram(fg, plan, cone, m, restriction))
    build_time = time.perf_counter() - start
    mix = cone.mixture(fg, plan)  # scaled to satisfy every row (RegretMaster.start_counts)
    mix = mix * program.violation((cone.F @ mix)[cone.dev])
    try:
        out = solve_in_passes(program.build, Reference.around(mix, cone.F[cone.dev]), solver,
                              label=f"regret bound ({method})")
    except TimeLimitReached:
        return _at_counts(fg, cone, mix, method=method, m=m, start=start, extras={"stopped": "time"})
    kept = out.best
    wbar, scale, dual, mu = kept.point
    lower = None
    if isinstance(program, _EnumeratedProgram):  # weak duality from the rows' multipliers (module docstring)
        with overtime():
            lower = program.lower_bound(solver, wbar, dual, mu)
    extras = {"formulation": "junction-tree", "passes": out.passes, "pass_used": kept.index,
              "feasibility_scale": scale, "build_time": build_time, "wall_time": time.perf_counter() - start,
              "order": list(plan.order), "width": plan.width}
    if isinstance(program, _MeanFieldProgram):
        extras.update({"gaps": program.gaps * cone.unit, "restriction": restriction})
    value = kept.value / cone.unit
    return RegretBoundResult(
        value=value, solver_value=kept.solver_value / cone.unit, method=method,  # type: ignore[arg-type]
        m=m if method == "mf" else 0, best_action=best, marginals=fg.split_tables(scale * wbar / cone.unit**2),
        n_constraints=int(cast(int, program.n_constraints)), n_variables=out.n_variables,
        status=stop_reason() if out.cut or budget_expired() else kept.info.status, solver=kept.info.solver,
        solve_time=out.solve_time, extras=extras, lower_bound=lower,
        gap=None if lower is None else relative_gap(value, lower),
    )


def _at_counts(fg: FactorGraph, cone: Cone, mu: np.ndarray, *, method: str, m: int, start: float,
               extras: dict) -> RegretBoundResult:
    """The result at feasible clique counts ``mu`` (in the cone's units) when the time ran out before a solve."""
    value = float(cone.regrets @ mu) / cone.unit
    return RegretBoundResult(
        value=value, solver_value=value, method=method, m=m if method == "mf" else 0,  # type: ignore[arg-type]
        best_action=fg.best_action(), marginals=fg.split_tables((cone.F @ mu) / cone.unit**2), n_constraints=0,
        n_variables=0, status=stop_reason(), solver="none", solve_time=time.perf_counter() - start,
        extras={**extras, "fallback": "start"},
    )


def _generated(fg: FactorGraph, *, solver: str | None, tol: float, time_limit: float,
               initial: ArrayLike | None) -> RegretBoundResult:
    """The exact bound by constraint generation (:func:`optdesign.factored.exact.constraint_generation.generate`);
    when the time runs out before the first master is bracketed, the value at the master's feasible start."""
    start = time.perf_counter()
    master = RegretMaster(fg, solver)
    try:
        run = warm_generate(master, initial, tol=tol, max_iterations=MAX_ITERATIONS, time_limit=time_limit,
                            add_per_iteration=None)
    except TimeLimitReached:
        if master.started is None:
            raise
        stopped = {"stopped": unsolved_reason(fg)}
        return _at_counts(fg, master.cone, master.started, method="exact", m=0, start=start, extras=stopped)
    unit, kept = master.cone.unit, run.kept
    scale = run.upper / float(master.cone.regrets @ kept.exact)  # the allocation attaining the upper bound
    return RegretBoundResult(
        value=run.upper / unit, solver_value=kept.z / unit, method="exact", m=0, best_action=master.best,
        marginals=fg.split_tables(scale * kept.wbar / unit**2), n_constraints=int(master.actions.shape[0]),
        n_variables=int(master.plan.n_rows), status=run.status, solver=run.info.solver,
        solve_time=time.perf_counter() - start,
        extras={**run_extras(run, master), "feasibility_scale": scale},
        lower_bound=run.lower / unit, gap=run.gap,
    )
