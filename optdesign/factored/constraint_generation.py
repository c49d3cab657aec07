"""Exact T* by constraint generation: a master on a working set of joint actions, exact separation over all of them.

T* = inf over the marginal polytope of max_{a != a*} H_w(a) / Delta(a)^2 (MF-TaS eq. 1) has one constraint per joint
action. Keeping only a working set W gives the *master*, solved over junction-tree clique distributions
(:mod:`optdesign.factored.marginals`) and re-centred on the previous iterate (:mod:`optdesign.factored.rescaling`).
Every iteration brackets T* without trusting the solver:

* **upper bound**: the solver's clique tables are repaired to exactly consistent ones (a real distribution, so
  their factor marginals wbar lie in the polytope) and the objective at wbar is evaluated over ALL joint actions
  by the Pareto separation oracle (:func:`optdesign.factored.separation.most_violated`), which also returns the
  most violated joint actions to add to W;
* **lower bound** (weak duality): for the master's multipliers lambda (a distribution over W) and
  c = H_W^T lambda / Delta_min^2-scaled rows, T* >= min_w sum c / w >= (sum sqrt(c s))^2 / max_a sum_e s_{e,a_e} for
  any s >= 0 (Cauchy–Schwarz, and sum_{e,b} s_{e,b} wbar_{e,b} <= max_a sum_e s_{e,a_e} for marginals of a
  distribution); s = c / wbar^2 at the current iterate, the max is one max-sum.

The initial working set decides the iteration count (../shared/spec/factored.md §3): the joint actions in gap
order, every single deviation from a*, and per factor and group action the best joint action through it.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .. import solvers
from .._lazy import cp
from ..errors import InvalidInputError
from ..result import CharTimeResult, relative_gap
from ..validation import as_count
from .factorgraph import FactorGraph
from .inference import MaxSum
from .marginals import consistent_clique_weights, marginal_maps
from .rescaling import Reference, ScaledAllocation
from .separation import most_violated

DEFAULT_TOL = 1e-4
MAX_ITERATIONS = 100
TIME_LIMIT = 600.0
# re-centred re-solves without a new joint action before giving up
MAX_STALLS = 3
# the lower bound is only as good as the master's multipliers: CLARABEL at 1e-10 instead of its default 1e-8
MASTER_SOLVER_OPTIONS = {"CLARABEL": {"tol_feas": 1e-10, "tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}}


def initial_working_set(fg: FactorGraph, *, n_best: int | None = None) -> np.ndarray:
    """Joint actions to start from: the ``n_best`` (default 20 N) smallest gaps, the single deviations from a*,
    and for every factor e and group action b the best joint action with a_e = b (one max-sum each)."""
    best = fg.best_action()
    n_best = 20 * fg.n_agents if n_best is None else n_best
    rows = [a for a, _ in fg.m_best(min(n_best + 1, fg.n_joint_actions))]
    for i, k in enumerate(fg.n_actions):
        for b in range(k):
            if b != best[i]:
                a = best.copy()
                a[i] = b
                rows.append(a)
    plan = fg.plan()
    means = fg.means
    never = -2.0 * (np.abs(means).sum() + 1.0)  # below any joint action's value: excludes a group action
    for e in range(fg.n_factors):
        lo, hi = plan.factor_offsets[e], plan.factor_offsets[e + 1]
        for b in range(hi - lo):
            forced = means.copy()
            forced[lo:hi] = never
            forced[lo + b] = means[lo + b]
            rows.append(MaxSum(plan, forced).best_action)
    A = np.unique(np.asarray(rows, dtype=np.int64), axis=0)
    return A[np.any(A != best, axis=1)]


class Master:
    """Restricted program: min z s.t. H_W(a) (1/wbar) (Delta_min / Delta(a))^2 <= z for a in W, wbar in the polytope."""

    def __init__(self, fg: FactorGraph, solver: str | None):
        self.fg, self.solver = fg, solver
        self.plan = fg.plan()
        self.F, self.C, self.R = marginal_maps(self.plan)
        self.dmin = fg.gap_min()
        self.actions = np.zeros((0, fg.n_agents), dtype=np.int64)
        self.H = sp.csr_matrix((0, fg.abar))
        self.scale = np.zeros(0)

    def add(self, actions: np.ndarray) -> int:
        """Add the joint actions not yet in W; returns how many were new."""
        actions = np.asarray(actions, dtype=np.int64).reshape(-1, self.fg.n_agents)
        if self.actions.shape[0]:
            known = {a.tobytes() for a in self.actions}
            actions = np.asarray([a for a in actions if a.tobytes() not in known], dtype=np.int64)
        if actions.size == 0:
            return 0
        actions = np.unique(actions, axis=0)
        self.actions = np.vstack([self.actions, actions])
        self.H = sp.vstack([self.H, self.fg.deviation_matrix(actions, with_best=True)]).tocsr()
        self.scale = np.concatenate([self.scale, (self.dmin / self.fg.gap(actions)) ** 2])
        return actions.shape[0]

    def solve(self, reference: Reference):
        """(clique distribution y, multipliers lambda over W summing to one, solver value z, solve info)."""
        alloc = ScaledAllocation(self.F, reference, name="w")
        z = cp.Variable(name="z")
        rows = alloc.inverse(sp.diags(self.scale) @ self.H) <= z
        constraints = [*alloc.constraints, alloc.linear(self.R) == 1, rows]
        if self.C.shape[0]:
            constraints.append(alloc.linear(self.C, normalise=True) == 0)
        problem = cp.Problem(cp.Minimize(z), constraints)
        info = solvers.solve(problem, self.solver, accept_inaccurate=True, solver_options=MASTER_SOLVER_OPTIONS)
        lam = np.clip(np.asarray(rows.dual_value, dtype=float).ravel(), 0.0, None)
        lam = lam / lam.sum() if lam.sum() > 0 else np.full(lam.size, 1.0 / lam.size)
        return alloc.value, lam, float(z.value), info


def exact_marginals(plan, F: sp.csr_matrix, y: np.ndarray) -> np.ndarray:
    """Factor marginals of the distribution the clique tables y define, exactly inside the marginal polytope."""
    return F @ consistent_clique_weights(plan, y, 1.0)


def dual_lower_bound(master: Master, c: np.ndarray, wbar: np.ndarray) -> float:
    """(sum c / wbar)^2 / max_a sum_e (c / wbar^2)_{e,a_e} / Delta_min^2: Cauchy–Schwarz with s = c / wbar^2."""
    s = c / wbar**2
    top = MaxSum(master.plan, s).value
    if top <= 0:
        return 0.0
    return float(np.sum(c / wbar)) ** 2 / top / master.dmin**2


def minimiser_lower_bound(master: Master, c: np.ndarray, reference: Reference) -> float:
    """The same bound at the minimiser of sum c / wbar over the polytope (one smooth solve), where it is tight."""
    alloc = ScaledAllocation(master.F, reference, name="w")
    constraints = [*alloc.constraints, alloc.linear(master.R) == 1]
    if master.C.shape[0]:
        constraints.append(alloc.linear(master.C, normalise=True) == 0)
    objective = alloc.inverse(sp.csr_matrix(c / max(float(c.max()), 1e-300)))
    problem = cp.Problem(cp.Minimize(cp.sum(objective)), constraints)
    solvers.solve(problem, master.solver, accept_inaccurate=True)
    wbar = exact_marginals(master.plan, master.F, alloc.value)
    return dual_lower_bound(master, c, wbar)


def certified_lower_bound(fg: FactorGraph, H_scaled: sp.csr_matrix, dual, wbar: np.ndarray,
                          solver: str | None) -> float:
    """Weak-duality lower bound on T* from multipliers ``dual`` of rows H_scaled (1/wbar) <= z (any rows of joint
    actions, scaled by (Delta_min / Delta(a))^2), at ``wbar`` and at the minimiser of sum c / w; 0 without duals."""
    if dual is None:
        return 0.0
    lam = np.clip(np.asarray(dual, dtype=float).ravel(), 0.0, None)
    if lam.sum() <= 0:
        return 0.0
    master = Master(fg, solver)
    c = H_scaled.T @ (lam / lam.sum())
    lower = dual_lower_bound(master, c, wbar)
    sizes = np.asarray([step.n_rows for step in master.plan.steps])
    reference = Reference.around(1.0 / np.repeat(sizes, sizes), master.F)
    return max(lower, minimiser_lower_bound(master, c, reference))


def characteristic_time_generated(fg: FactorGraph, *, tol: float = DEFAULT_TOL, solver: str | None = None,
                                  max_iterations: int = MAX_ITERATIONS, time_limit: float = TIME_LIMIT,
                                  add_per_iteration: int | None = None) -> CharTimeResult:
    """Exact T* with a certified bracket, by constraint generation (module docstring); no limit on |A|.

    Stops when value / lower_bound - 1 <= ``tol``, or after ``max_iterations`` / ``time_limit`` seconds with
    status ``"not_converged"`` (the bracket still holds: ``gap`` says how far it got).
    """
    if not (isinstance(tol, (int, float)) and np.isfinite(tol) and tol > 0):
        raise InvalidInputError(f"tol must be a positive number, got {tol!r}")
    if not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise InvalidInputError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    max_iterations = as_count(max_iterations, "max_iterations")
    if add_per_iteration is not None:
        add_per_iteration = as_count(add_per_iteration, "add_per_iteration")
    start = time.perf_counter()
    best = fg.best_action()
    dmin = fg.gap_min()  # raises if a* is not unique
    plan = fg.plan()
    star = fg.group_indices(best)[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    gap_terms = fg.means[star][factor_of] - fg.means
    master = Master(fg, solver)
    master.add(initial_working_set(fg))
    add_per_iteration = 5 * fg.n_agents if add_per_iteration is None else add_per_iteration
    sizes = np.asarray([step.n_rows for step in plan.steps])
    reference = Reference.around(1.0 / np.repeat(sizes, sizes), master.F)
    upper, lower, kept = np.inf, 0.0, None
    t_master = t_sep = 0.0
    status, info = "not_converged", None
    iteration = stalls = 0
    while iteration < max_iterations:
        iteration += 1
        t0 = time.perf_counter()
        y, lam, z, info = master.solve(reference)
        t_master += time.perf_counter() - t0
        wbar = exact_marginals(plan, master.F, y)
        c = (sp.diags(master.scale) @ master.H).T @ lam
        lower = max(lower, dual_lower_bound(master, c, wbar))
        t0 = time.perf_counter()
        h = 1.0 / wbar + 1.0 / wbar[star][factor_of]
        h[star] = 0.0
        sep = most_violated(plan, h, gap_terms, delta_min=dmin, k=add_per_iteration, threshold=z / dmin**2,
                            candidates=master.actions[-add_per_iteration:])
        t_sep += time.perf_counter() - t0
        value = sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)
        if value < upper:
            upper, kept = value, wbar
        reference = Reference.around(y, master.F)
        if relative_gap(upper, lower) > tol:
            t0 = time.perf_counter()
            lower = max(lower, minimiser_lower_bound(master, c, reference))
            t_master += time.perf_counter() - t0
        if relative_gap(upper, lower) <= tol:
            status = "optimal"
            break
        if time.perf_counter() - start > time_limit:
            break
        if master.add(sep.actions) == 0:  # W is complete at this point: re-solve centred on it (precision)
            stalls += 1
            if stalls >= MAX_STALLS:
                break
    marginals = fg.split_tables(kept)
    return CharTimeResult(
        value=float(upper), solver_value=z / dmin**2, method="exact", m=0, best_action=best,
        gaps=np.asarray([dmin]), marginals=marginals, local_allocations=None, global_allocation=None,
        n_constraints=int(master.actions.shape[0]), n_variables=int(plan.n_rows), width=plan.width,
        status=status, solver=info.solver, solve_time=time.perf_counter() - start, compile_time=0.0,
        extras={"formulation": "constraint-generation", "iterations": iteration, "working_set": int(
            master.actions.shape[0]), "master_time": t_master, "separation_time": t_sep,
                "solver_status": info.status},
        lower_bound=float(lower), gap=relative_gap(upper, lower),
    )
