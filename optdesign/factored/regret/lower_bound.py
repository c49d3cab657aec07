"""Graves–Lai regret lower bound for multi-agent semi-bandits (MF-TaS paper App. F; Cuvelier et al. 2021).

With unit-variance Gaussian feedback on every factor, every uniformly good algorithm has
liminf R(T) / log T >= c_theta, where (w = expected counts / log T, unnormalised)

    c_theta = min_{w in R^A_{>=0}}  sum_a w_a Delta(a)
              s.t. sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} <= Delta(a)^2 / 2   for every a != a*,

with wbar_{e,b} = sum_{a: a_e = b} w_a. The terms 1/wbar_{e,a*_e} of the pure-exploration
program are absent: w_{a*} costs nothing, so it is sent to infinity. The objective depends on w
only through its factor marginals, sum_a w_a Delta(a) = sum_{e,b} wbar_{e,b} (theta_e(a*_e) -
theta_e(b)), so w is replaced by the exact *cone* of factor marginals: junction-tree clique
counts mu >= 0 consistent on separators (:func:`optdesign.factored.inference.marginals.marginal_maps`) with one
common total mass over the connected components, but no normalisation. Its size is O(N K^{w+1}).
The objective is written r @ mu with the max-sum regrets r >= 0 of the cliques
(Delta(a) = sum_l r_l(clique row of a), :mod:`optdesign.factored.inference.max_sum`): equal on the cone, and free
of the cancellation between signed local gaps that costs percents when Delta_min << abs(theta_e).

* ``method="exact"``: one constraint row per joint action a != a*, enumerated up to ``max_joint_actions``
  (default 20,000) joint actions and by constraint generation beyond (``RegretMaster``, the engine of
  :mod:`optdesign.factored.exact.constraint_generation`). Certified either way: ``lower_bound`` by weak duality from
  the rows' multipliers lambda (a distribution over joint actions, c = sum_a lambda_a (2 / Delta(a)^2) 1{a_e = b}):
  on the cone, min r.mu + c.(1/wbar) - 1.lambda maximised over the scale of lambda is min_{r.mu = 1} c.(1/wbar)
  >= (sum c / wbar)^2 / max_{a != a*} S(a) / Delta(a) with S(a) = sum_e (c / wbar^2)_{e,a_e} (Cauchy–Schwarz;
  the max is one Dinkelbach max-ratio).
* ``method="mf"``: an UPPER bound on c_theta for large instances, see :func:`regret_lower_bound`.

Numerics: the program is solved for theta / Delta_max (every gap <= 1, Delta_max the largest gap;
c scales as 1/theta and the counts as 1/theta^2, so value and allocation are scaled back), in passes
(:func:`optdesign.factored.exact.rescaling.solve_in_passes`, as exact T*): each pass is centred on the
allocation of the previous one (pass 1 on a feasible mixture of joint actions, ``Cone.mixture``), so that clique counts,
the cone entries of s_{e,b} >= 1/wbar_{e,b} (:class:`~optdesign.factored.exact.rescaling.ScaledAllocation`) and
the cost are all O(1). The zero-cost ray w_{a*} -> infinity is cut by a valid linear row. The
reported value is the objective at the pass's allocation, scaled up if needed to satisfy every
constraint exactly; the pass with the smallest value is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ... import solvers
from ... import vocabulary as vocab
from ..._lazy import cp
from ...errors import InvalidInputError, SolverError
from ...result import RegretBoundResult, relative_gap
from ...solvers import SolveInfo
from ...validation import as_count, check_enumerable, check_m_best
from ..exact.constraint_generation import (
    DEFAULT_TOL,
    MASTER_SOLVER_OPTIONS,
    MAX_ITERATIONS,
    TIME_LIMIT,
    check_limits,
    run_extras,
    warm_generate,
)
from ..exact.cutting_plane_master import CuttingPlaneMaster, Iterate
from ..exact.rescaling import Reference, solve_in_passes
from ..exact.separation import Separation
from ..graph.factor_graph import FactorGraph
from ..inference.constraint_reduction import factored_max
from ..inference.elimination import EliminationPlan
from ..inference.marginals import consistent_clique_weights
from ..inference.max_sum import MaxSum
from .cone import Cone

__all__ = ["EXACT_MAX_JOINT_ACTIONS", "METHODS", "RESTRICTIONS", "STRATEGIES", "RegretBoundResult",
           "regret_lower_bound"]

# the options' tuples, from optdesign.vocabulary
METHODS, RESTRICTIONS, STRATEGIES = vocab.REGRET_METHODS, vocab.RESTRICTIONS, vocab.REGRET_STRATEGIES
# method="exact" enumerates up to this many joint actions (3^9 = 19,683 fits) and generates constraints beyond
EXACT_MAX_JOINT_ACTIONS = 20_000
REGULARISED_OPTIONS = {"CLARABEL": {**MASTER_SOLVER_OPTIONS["CLARABEL"], "static_regularization_constant": 1e-6}}


class RegretMaster(CuttingPlaneMaster):
    """c_theta on a working set W: min r . mu s.t. (2 / Delta(a)^2) sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= 1, a in W."""

    def __init__(self, fg: FactorGraph, solver: str | None):
        super().__init__(fg, solver)
        self.cone = Cone.of(fg, self.plan)
        self.gap_terms = self.gap_terms / self.cone.unit
        self.dmin = self.dmin / self.cone.unit

    @property
    def n_columns(self) -> int:
        return self.fg.abar - self.fg.n_factors

    def start(self) -> Reference:
        """Centred on :meth:`start_counts`: the optimum's shape, unlike the uniform ``Cone.mu0`` (from which
        the masters of rings with K = 10 stop far above the optimum or fail: bench_factored.py --only regret-scale)."""
        return self.reference(self.start_counts())

    def start_counts(self) -> np.ndarray:
        """:meth:`Cone.mixture` scaled so that the worst row over all joint actions holds with equality (a feasible
        point of the cone)."""
        mu = self.cone.mixture(self.fg, self.plan)
        worst, _ = self._worst_row(self.F @ mu, 1)  # every row is homogeneous of degree -1 in mu
        return mu * worst

    def reference(self, y: np.ndarray) -> Reference:
        return Reference.around(y, self.F[self.cone.dev])

    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        return self.cone.rows(self.fg, actions)

    def solve(self, reference: Reference) -> Iterate:
        counts, constraints = self.cone.allocation(reference)
        rows = counts.inverse(self.rows) <= 1
        cost, ref = counts.cost(self.cone.regrets)
        problem = cp.Problem(cp.Minimize(cost), [*constraints, rows])
        info = self._solve(problem)
        mu = counts.value
        exact = consistent_clique_weights(self.plan, mu, float(np.mean(self.R @ mu)))
        return Iterate(mu, exact, self.F @ exact, self.multipliers(rows.dual_value), float(problem.value) * ref, info)

    def _solve(self, problem: cp.Problem) -> SolveInfo:
        """CLARABEL, then CLARABEL with more static regularisation, before the solver chain: on rings with K = 10
        from N = 6 the master stops CLARABEL with a NumericalError and SCS took 20-45 s per master (measured)."""
        if self.solver is None:
            for options in (MASTER_SOLVER_OPTIONS, REGULARISED_OPTIONS):
                try:
                    return solvers.solve(problem, "CLARABEL", accept_inaccurate=True, solver_options=options)
                except SolverError:
                    pass
        return solvers.solve(problem, self.solver, accept_inaccurate=True, solver_options=MASTER_SOLVER_OPTIONS)

    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        """Scaled so that every row holds: v = max_a (2 / Delta(a)^2) H(a), value v r . mu (attained at mu v)."""
        worst, sep = self._worst_row(it.wbar, k)
        return worst * float(self.cone.regrets @ it.exact), sep

    def _worst_row(self, wbar: np.ndarray, k: int) -> tuple[float, Separation]:
        """(max over ALL joint actions a != a* of (2 / Delta(a)^2) H(a) at ``wbar``, the separation)."""
        h = np.zeros(self.fg.abar)
        h[self.cone.dev] = 1.0 / np.maximum(wbar[self.cone.dev], 1e-300)
        sep = self.violated(h, k, 0.5)
        return 2.0 * (sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)), sep

    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """(sum c / wbar)^2 / max_{a != a*} S(a) / Delta(a), S = c / wbar^2 on the group actions b != a*_e."""
        w = wbar[self.cone.dev]
        if np.any(w <= 0):
            return 0.0
        s = np.zeros(self.fg.abar)
        s[self.cone.dev] = c / w**2
        top = _max_ratio(self.fg, self.plan, s, self.gap_terms, floor=0.0)
        return 0.0 if top <= 0 else float(np.sum(c / w)) ** 2 / top

    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        y = reference.allocation
        counts, constraints = self.cone.allocation(self.reference(y / float(self.cone.regrets @ y)))  # r . mu = 1
        cost, ref = counts.cost(self.cone.regrets)
        objective = counts.inverse(sp.csr_matrix(c / max(float(c.max()), 1e-300)))
        problem = cp.Problem(cp.Minimize(cp.sum(objective)), [*constraints, cost == 1.0 / ref])
        self._solve(problem)
        mu = counts.value
        return self.dual_bound(c, self.F @ consistent_clique_weights(self.plan, mu, float(np.mean(self.R @ mu))))


def regret_lower_bound(fg: FactorGraph, method: vocab.RegretMethod = "exact", *, solver: str | None = None, m: int = 1,
                       max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS, restriction: vocab.Restriction = "secant",
                       order: str | Sequence[int] = "auto", strategy: vocab.RegretStrategy = "auto",
                       tol: float = DEFAULT_TOL,
                       time_limit: float = TIME_LIMIT, initial: ArrayLike | None = None) -> RegretBoundResult:
    """c_theta = min_w sum_a w_a Delta(a) s.t. sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= Delta(a)^2/2, a != a*.

    ``method="exact"``: one row per joint action a != a*, certified (``lower_bound``, ``gap``). ``strategy``
    ``"enumerate"`` lists them all (InstanceTooLargeError above ``max_joint_actions``), ``"generate"`` runs
    constraint generation to relative gap ``tol`` (status ``"not_converged"`` after ``time_limit`` seconds,
    ``initial`` joint actions warm-start its working set), ``"auto"`` enumerates up to ``max_joint_actions``
    and generates beyond. ``m`` and ``restriction`` are validated but not used. ``order`` is the elimination
    order of the junction tree / FCR (any order gives the same value).
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
        Seconds for constraint generation; past them its bracket is returned (status ``"not_converged"``).
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
    if method == "exact" and (strategy == "generate" or (strategy == "auto" and fg.n_joint_actions > limit)):
        return _generated(fg, solver=solver, tol=tol, time_limit=time_limit, initial=initial)
    if method == "exact":
        check_enumerable(fg.n_joint_actions, limit, what="the enumerated regret bound",
                         instead="strategy='generate' (constraint generation, any size)")
    start = time.perf_counter()
    fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    plan = fg.plan(order)
    cone = Cone.of(fg, plan)
    unit, regrets, dev, F = cone.unit, cone.regrets, cone.dev, cone.F
    star = fg.group_indices(best)[0]

    if method == "exact":
        A = fg.joint_actions()
        A = A[np.any(A != best, axis=1)]
        H = cone.rows(fg, A)  # (2 / Delta(a)^2) H s <= 1, with s >= 1 / wbar on the group actions b != a*_e
        n_constraints, gaps, G = A.shape[0], None, None
    else:
        ranked = fg.m_best(m + 1)[1:]
        gaps = np.asarray([g for _, g in ranked]) / unit
        # (2 / Delta_m^2) G(a) over the flat group actions (zero at a*_e), as a map of s
        G = sp.csr_matrix((np.full(dev.size, 2.0 / gaps[-1] ** 2), (dev, np.arange(dev.size))),
                          shape=(fg.abar, dev.size))
        n_constraints = None  # FCR rows and the m - 1 explicit ones, counted when built
        H = None
        if m > 1:
            H = sp.diags(2.0 / gaps[:-1] ** 2) @ fg.deviation_matrix(np.stack([a for a, _ in ranked[:-1]]))[:, dev]
        # the secant rows in closed form, for the feasibility check: Delta(a) / Delta_m factor by factor
        local_gap = (fg.means[star][np.repeat(np.arange(fg.n_factors), fg.table_sizes)] - fg.means) / unit
    build_time = time.perf_counter() - start

    def violation(wdev: np.ndarray) -> float:
        """max over the program's rows of (row sum of 1/wbar) / (allowed bound); <= 1 iff feasible."""
        if np.any(wdev <= 0):
            return np.inf
        inv = 1.0 / wdev
        worst = float(np.max(H @ inv)) if H is not None else 0.0
        if G is not None:
            if restriction == "secant":  # max_{a != a*} (2 / Delta_m^2) G(a) / (Delta(a) / Delta_m)
                worst = max(worst, _max_ratio(fg, plan, G @ inv, local_gap / cast(np.ndarray, gaps)[-1]))
            else:
                worst = max(worst, MaxSum(plan, G @ inv).value)
        return worst

    def build(reference: Reference) -> tuple[cp.Problem, Callable[[], tuple]]:
        nonlocal n_constraints
        counts, constraints = cone.allocation(reference)  # mu, with s >= 1 / (F_dev mu)
        rows = None
        if H is not None:
            rows = counts.inverse(H) <= 1
            constraints.append(rows)
        if G is not None:
            if restriction == "secant":  # (2 / Delta_m^2) G(a) - Delta(a) / Delta_m <= 0, every term O(1)
                fcr_max = factored_max(counts.inverse(G), plan, row_terms=-regrets / cast(np.ndarray, gaps)[-1])
                constraints += [*fcr_max.constraints, fcr_max.t <= 0]
            else:  # (2 / Delta_m^2) G(a) <= 1
                fcr_max = factored_max(counts.inverse(G), plan)
                constraints += [*fcr_max.constraints, fcr_max.t <= 1]
            n_constraints = fcr_max.n_constraints + m - 1
        cost, ref = counts.cost(regrets)
        problem = cp.Problem(cp.Minimize(cost), constraints)

        def evaluate() -> tuple:
            mu = counts.value
            wbar = F @ mu
            scale = max(1.0, violation(wbar[dev]))
            point = (wbar, scale, None if rows is None else rows.dual_value, mu)
            return float(scale * (regrets @ mu)), float(problem.value) * ref, point, Reference.around(mu, F[dev])

        return problem, evaluate

    mix = cone.mixture(fg, plan)  # scaled to satisfy every row (RegretMaster.start_counts)
    reference = Reference.around(mix * violation((F @ mix)[dev]), F[dev])
    out = solve_in_passes(build, reference, solver, label=f"regret bound ({method})")
    kept = out.best
    wbar, scale, dual, mu = kept.point
    lower = None
    if method == "exact":  # weak duality from the rows' multipliers (module docstring)
        master = RegretMaster(fg, solver)
        if dual is not None and np.size(dual) == H.shape[0] and np.max(dual) > 0:
            c = H.T @ (np.clip(dual, 0.0, None) / np.clip(dual, 0.0, None).sum())
            lower = max(master.dual_bound(c, wbar), master.minimiser_bound(c, master.reference(mu))) / unit
    extras = {"formulation": "junction-tree", "passes": out.passes, "pass_used": kept.index,
              "feasibility_scale": scale, "build_time": build_time, "wall_time": time.perf_counter() - start,
              "order": list(plan.order), "width": plan.width}
    if gaps is not None:
        extras.update({"gaps": gaps * unit, "restriction": restriction})
    value = kept.value / unit
    return RegretBoundResult(
        value=value, solver_value=kept.solver_value / unit, method=method,
        m=m if method == "mf" else 0, best_action=best, marginals=fg.split_tables(scale * wbar / unit**2),
        n_constraints=int(n_constraints), n_variables=out.n_variables,
        status=kept.info.status, solver=kept.info.solver, solve_time=out.solve_time, extras=extras,
        lower_bound=lower, gap=None if lower is None else relative_gap(value, lower),
    )


def _generated(fg: FactorGraph, *, solver: str | None, tol: float, time_limit: float,
               initial: ArrayLike | None) -> RegretBoundResult:
    """The exact bound by constraint generation (:func:`optdesign.factored.exact.constraint_generation.generate`)."""
    start = time.perf_counter()
    master = RegretMaster(fg, solver)
    run = warm_generate(master, initial, tol=tol, max_iterations=MAX_ITERATIONS, time_limit=time_limit,
                        add_per_iteration=None)
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


def _max_ratio(fg: FactorGraph, plan: EliminationPlan, num: np.ndarray, den: np.ndarray, *,
               floor: float = 1.0) -> float:
    """max(floor, max_{a != a*} num(a) / den(a)) for factored num, den with num(a*) = den(a*) = 0, den > 0 elsewhere.

    Dinkelbach's iteration: rho <- num(a) / den(a) at a = argmax_a [num(a) - rho den(a)] (max-sum)
    until that maximum is 0 (attained at a*); rho increases strictly, so it stops finitely.
    """
    rho = floor
    for _ in range(1000):
        ms = MaxSum(plan, num - rho * den)
        if ms.value <= 1e-12 * rho * max(1.0, float(np.abs(den).max())):
            return rho
        idx = fg.group_indices(ms.best_action)[0]
        new = float(num[idx].sum() / den[idx].sum())
        if new <= rho * (1 + 1e-14):
            return rho
        rho = new
    return rho
