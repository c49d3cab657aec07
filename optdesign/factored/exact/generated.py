"""Exact T* for any number of joint actions, by constraint generation (:mod:`.constraint_generation`).

The master on a working set W: rows H_W(a) (1/wbar) (Delta_min / Delta(a))^2 <= z, minimise z over the marginal
polytope (MF-TaS eq. 1 restricted to W). Its multipliers c give the weak-duality bound
T* >= (sum c / wbar)^2 / max_a sum_e (c / wbar^2)_{e,a_e} / Delta_min^2, and the Pareto separation oracle evaluates
the objective at the repaired iterate over all joint actions (the upper bound).
"""

from __future__ import annotations

import time
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ... import solvers
from ..._lazy import cp
from ...deadline import overtime
from ...errors import TimeLimitReached
from ...result import CharTimeResult
from ..graph.checks import structure_key
from ..graph.factor_graph import FactorGraph
from ..inference.marginals import consistent_clique_weights
from ..inference.max_sum import MaxSum
from .constraint_generation import (
    DEFAULT_TOL,
    MASTER_SOLVER_OPTIONS,
    MAX_ITERATIONS,
    TIME_LIMIT,
    check_limits,
    run_extras,
    warm_generate,
)
from .cutting_plane_master import CuttingPlaneMaster, Iterate
from .rescaling import Reference, ScaledAllocation
from .separation import Separation

__all__ = ["characteristic_time_generated"]


class CharTimeMaster(CuttingPlaneMaster):
    """T* on W: min z s.t. H_W(a) (1/wbar) (Delta_min / Delta(a))^2 <= z, wbar in the marginal polytope.

    Its master reaches T* within a few iterations on large rings but sits on a wide optimal face (most rows
    tight); the later iterations only move the iterate within that face, off the joint actions outside W that it
    violates. So when the top-k separation overflows its budget, the most violated joint actions are taken from
    the whole violation range (``top_share`` 0), and k is halved (``top_shrink`` 2), not divided by 10, while
    that still overflows (``python benchmarks/bench_factored.py --only tstar-scale`` against the regret master's
    upper half and division by 10).
    """

    top_share = 0.0
    top_shrink = 2

    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        scale = (self.dmin / self.fg.gap(actions)) ** 2
        return sp.diags(scale) @ self.fg.deviation_matrix(actions, with_best=True)

    def solve(self, reference: Reference) -> Iterate:
        solvers.check_setup_time(self.size, "the exact T* master")  # before building a problem too large to start
        alloc = ScaledAllocation(self.F, reference, name="w")
        z = cp.Variable(name="z")
        rows = alloc.inverse(self.rows) <= z
        problem = cp.Problem(cp.Minimize(z), [*self.polytope(alloc), rows])
        # accept_limit: a point the solver stopped at on the time budget is still bracketed (constraint_generation)
        info = solvers.solve(problem, self.solver, accept_inaccurate=True, accept_limit=True,
                             solver_options=MASTER_SOLVER_OPTIONS)
        y = alloc.value
        exact = consistent_clique_weights(self.plan, y, 1.0)
        return Iterate(y, exact, self.F @ exact, self.multipliers(rows.dual_value),
                       float(cast(np.ndarray, z.value)) / self.dmin**2, info)

    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        h = 1.0 / it.wbar + 1.0 / it.wbar[self.star][self.factor_of]
        h[self.star] = 0.0
        sep = self.violated(h, k, it.z)
        return (sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)), sep

    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """(sum c / wbar)^2 / max_a sum_e (c / wbar^2)_{e,a_e} / Delta_min^2."""
        top = MaxSum(self.plan, c / wbar**2, keep_regrets=False).value
        return 0.0 if top <= 0 else float(np.sum(c / wbar)) ** 2 / top / self.dmin**2

    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        alloc = ScaledAllocation(self.F, reference, name="w")
        objective = alloc.inverse(sp.csr_matrix(c / max(float(c.max()), 1e-300)))
        problem = cp.Problem(cp.Minimize(cp.sum(objective)), self.polytope(alloc))
        solvers.solve(problem, self.solver, accept_inaccurate=True, accept_limit=True)  # valid at any point
        return self.dual_bound(c, self.F @ consistent_clique_weights(self.plan, alloc.value, 1.0))


def certified_lower_bound(fg: FactorGraph, H_scaled: sp.csr_matrix, dual: ArrayLike | None, wbar: np.ndarray,
                          solver: str | None) -> float:
    """Weak-duality lower bound on T* from multipliers ``dual`` of rows H_scaled (1/wbar) <= z (any rows of joint
    actions, scaled by (Delta_min / Delta(a))^2), at ``wbar`` and at the minimiser of sum c / w; 0 without duals.
    Under a time budget, the bounds computed before it runs out (the first with :func:`optdesign.deadline.overtime`)."""
    if dual is None:
        return 0.0
    lam = np.clip(np.asarray(dual, dtype=float).ravel(), 0.0, None)
    if lam.sum() <= 0:
        return 0.0
    master = CharTimeMaster(fg, solver)
    c = H_scaled.T @ (lam / lam.sum())
    lower = 0.0
    try:
        with overtime():
            lower = master.dual_bound(c, wbar)
        return max(lower, master.minimiser_bound(c, master.start()))
    except TimeLimitReached:
        return lower


def characteristic_time_generated(fg: FactorGraph, *, tol: float = DEFAULT_TOL, solver: str | None = None,
                                  max_iterations: int = MAX_ITERATIONS, time_limit: float = TIME_LIMIT,
                                  add_per_iteration: int | None = None,
                                  initial: ArrayLike | None = None) -> CharTimeResult:
    """Exact T* with a certified bracket by constraint generation (module docstring), for any number of joint actions.

    Stops when value / lower_bound - 1 <= ``tol``, or after ``max_iterations`` / ``time_limit`` seconds with
    status ``"not_converged"`` (the bracket still holds: ``gap`` says how far it got; ``extras["stopped"]`` says
    why). ``initial`` joint actions join the starting working set: a warm start from the previous result's
    ``working_set`` (the joint actions whose rows carry its optimum) on a nearby instance
    (:func:`optdesign.factored.characteristic_time` with ``warm_start``, which checks that the structures match).
    The result's ``clique_weights`` define a distribution with the returned marginals
    (:func:`optdesign.factored.inference.marginals.sample_joint_actions` draws from it).
    :func:`optdesign.factored.characteristic_time` calls it for ``method="generate"``.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    tol : float
        Certified relative gap ``value / lower_bound - 1`` at which to stop.
    solver : str, optional
        Conic solver of the master (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    max_iterations : int
        Largest number of master solves.
    time_limit : float
        Seconds; past them the bracket reached is returned.
    add_per_iteration : int, optional
        Most violated joint actions added to the working set per iteration; 5 N by default.
    initial : array_like, shape (M, N), optional
        Joint actions added to the starting working set (a warm start).

    Returns
    -------
    CharTimeResult
        ``value`` (T*, attained by ``marginals``; convention E[tau] >= 2 T* kl(delta, 1 - delta)), certified
        ``lower_bound`` and ``gap``, ``clique_weights``, ``working_set``, ``structure``, ``status`` and ``extras``
        (iterations, working-set size, master and separation times, why it stopped, elimination order and width).

    Raises
    ------
    InvalidInputError
        A tie for a*, bad limits, a malformed ``initial``.
    InstanceTooLargeError
        Exact separation out of its state budget at the first iterate.
    SolverError
        A master solve failed before the time was up.
    TimeLimitReached
        The time ran out before the first iterate was bracketed
        (:func:`optdesign.factored.characteristic_time` then returns a closed-form bracket).
    """
    max_iterations, add_per_iteration = check_limits(tol, time_limit, max_iterations, add_per_iteration)
    start = time.perf_counter()
    master = CharTimeMaster(fg, solver)
    run = warm_generate(master, initial, tol=tol, max_iterations=max_iterations, time_limit=time_limit,
                        add_per_iteration=add_per_iteration)
    return CharTimeResult(
        value=run.upper, solver_value=run.kept.z, method="exact", m=0, best_action=master.best,
        gaps=np.asarray([master.dmin]), marginals=fg.split_tables(run.kept.wbar), local_allocations=None,
        global_allocation=None, n_constraints=int(master.actions.shape[0]), n_variables=int(master.plan.n_rows),
        width=master.plan.width, status=run.status, solver=run.info.solver, solve_time=time.perf_counter() - start,
        compile_time=0.0,
        extras=run_extras(run, master), lower_bound=run.lower, gap=run.gap, clique_weights=run.kept.exact,
        working_set=master.support(run.kept), structure=structure_key(fg.n_actions, fg.scopes),
    )
