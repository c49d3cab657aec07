"""Exact T* for any number of joint actions, by constraint generation (:mod:`.constraint_generation`).

The master on a working set W: rows H_W(a) (1/wbar) (Delta_min / Delta(a))^2 <= z, minimise z over the marginal
polytope (MF-TaS eq. 1 restricted to W). Its multipliers c give the weak-duality bound
T* >= (sum c / wbar)^2 / max_a sum_e (c / wbar^2)_{e,a_e} / Delta_min^2, and the Pareto separation oracle evaluates
the objective at the repaired iterate over all joint actions (the upper bound).

With CLARABEL at the head of the solver chain the master goes to the solver directly (:mod:`.clarabel_master`; the
cvxpy model serves the other solvers and is the fallback), and with at most 20,000 joint actions separation
enumerates them (:mod:`.enumerated_separation`). A warm start (a bandit's re-solve at its next plug-in estimate)
centres the first master solve on the previous clique tables and starts from a shorter gap-order list
(``WARM_N_BEST``); the notes' section "Constraint generation for the exact T*" says why neither affects the bracket.
"""

from __future__ import annotations

import functools
import time
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..._lazy import cp
from ...errors import InvalidInputError, SolverError, TimeLimitReached
from ...result import CharTimeResult
from ...runtime import solvers
from ...runtime.deadline import overtime
from ...validation import as_vector
from ..graph.checks import structure_key
from ..graph.factor_graph import FactorGraph
from ..inference.elimination import EliminationPlan
from ..inference.marginals import consistent_clique_weights
from ..inference.max_sum import MaxSum
from .clarabel_master import ScaledConicLayout
from .constraint_generation import (
    DEFAULT_TOL,
    MASTER_SOLVER_OPTIONS,
    MAX_ITERATIONS,
    TIME_LIMIT,
    check_limits,
    run_extras,
    warm_generate,
)
from .cutting_plane_master import CuttingPlaneMaster, Iterate, shared_marginal_maps
from .enumerated_separation import MAX_JOINT_ACTIONS as ENUMERATED_SEPARATION
from .enumerated_separation import EnumeratedSeparation
from .rescaling import Reference, ScaledAllocation
from .separation import Separation

__all__ = ["characteristic_time_generated"]

# joint actions in gap order per agent in the starting working set of a warm start certifying a loose tol (at least
# LOOSE_TOL, a bandit's re-solve; 20 per agent otherwise): the warm start's own joint actions carry the rest (2 was the
# fastest of 0, 1, 2, 5, 20 per agent for exact TaS, benchmarks/bench_exact_tas.py). At tol 1e-6 the short list
# cost an extra iteration (tests/test_constraint_generation.py, ring N = 5, K = 3, seed 2)
WARM_N_BEST = 2
LOOSE_TOL = 1e-3


def master_options(tol: float) -> dict[str, float | bool]:
    """CLARABEL's settings for a master certifying the relative gap ``tol``: tolerances 1e-6 tol within [1e-10, 1e-8],
    and at a loose tol (at least LOOSE_TOL) no iterative refinement of the Newton steps.

    The lower bound is only as good as the master's multipliers (hence 1e-10 at the default tol 1e-4,
    :data:`.constraint_generation.MASTER_SOLVER_OPTIONS`); a bandit certifying 1e-2 needs no more than CLARABEL's
    default 1e-8, which saves about a quarter of the interior-point iterations, and without the refinement each
    iteration costs about a third less (``benchmarks/bench_exact_tas.py``). Looser tolerances (1e-6) were faster still
    but returned other allocations within tol on which exact TaS stopped later (ring N = 3, K = 3: 1.91e6 rounds
    against 1.67e6 over 130 seeds, Welch t = 2.0); without the refinement alone it stopped as before (1.71e6).
    """
    accuracy = min(1e-8, max(MASTER_SOLVER_OPTIONS["CLARABEL"]["tol_gap_rel"], 1e-6 * tol))
    options: dict[str, float | bool] = {"tol_feas": accuracy, "tol_gap_rel": accuracy, "tol_gap_abs": accuracy}
    if tol >= LOOSE_TOL:
        options["iterative_refinement_enable"] = False
    return options


@functools.lru_cache(maxsize=16)
def _conic_layout(plan: EliminationPlan) -> ScaledConicLayout:
    """The CLARABEL layout of a plan's master, shared like the plan by every instance of a structure."""
    F, C, R = shared_marginal_maps(plan)
    return ScaledConicLayout(F, R, C)


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

    def __init__(self, fg: FactorGraph, solver: str | None, *, centre: np.ndarray | None = None,
                 tol: float = DEFAULT_TOL):
        super().__init__(fg, solver)
        self.centre = None if centre is None else self.reference(centre)
        self.options = master_options(tol)
        # at a loose tol the minimiser of the dual bound is solved to the master's settings too (CLARABEL's otherwise)
        self.bound_options = self.options if tol >= LOOSE_TOL else None
        # CLARABEL at the head of the chain: the master's data are written directly (.clarabel_master)
        direct = (solver.upper() if isinstance(solver, str) else solvers.default_solver()) == "CLARABEL"
        self.layout = _conic_layout(self.plan) if direct else None
        self.enumerate = fg.n_joint_actions <= ENUMERATED_SEPARATION  # few joint actions: separate by enumeration

    def start(self) -> Reference:
        """Centred on ``centre`` (a warm start's clique tables) when given, else on uniform clique tables."""
        return super().start() if self.centre is None else self.centre

    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        """Row a: (Delta_min / Delta(a))^2 at (e, a_e) and (e, a*_e) for every factor with a_e != a*_e, i.e.
        ``fg.deviation_matrix(actions, with_best=True)`` scaled, from one lookup of the group positions."""
        idx = self.plan.group_indices(actions)
        scale = (self.dmin / self.gap_terms[idx].sum(axis=1)) ** 2
        rows, factors = np.nonzero(idx != self.star)
        return sp.csr_matrix((np.tile(scale[rows], 2), (np.tile(rows, 2), np.concatenate([idx[rows, factors],
                                                                                           self.star[factors]]))),
                             shape=(idx.shape[0], self.fg.abar))

    def solve(self, reference: Reference) -> Iterate:
        """Directly in CLARABEL's form (.clarabel_master) when it heads the chain, else (or if that fails) the cvxpy
        model; a solve centred on a warm start's tables that fails is retried from uniform tables (a warm start
        from another a* can centre on entries near 0 that the new optimum needs)."""
        solvers.check_setup_time(self.size, "the exact T* master")  # before building a problem too large to start
        references = [reference, super().start()] if reference is self.centre else [reference]
        if self.layout is not None:
            for reference in references:
                try:
                    # accept_limit: a point stopped on the time budget is still bracketed (constraint_generation)
                    out = self.layout.solve(reference, rows=self.rows, options=self.options, accept_limit=True)
                    return self._iterate(out.allocation, out.duals, out.value, out.info)
                except SolverError as error:
                    if error.status == "time_limit":
                        raise
        alloc = ScaledAllocation(self.F, references[-1], name="w")
        z = cp.Variable(name="z")
        rows = alloc.inverse(self.rows) <= z
        problem = cp.Problem(cp.Minimize(z), [*self.polytope(alloc), rows])
        info = solvers.solve(problem, self.solver, accept_inaccurate=True, accept_limit=True,
                             solver_options={"CLARABEL": self.options})
        return self._iterate(alloc.value, rows.dual_value, float(cast(np.ndarray, z.value)), info)

    def _iterate(self, y: np.ndarray, dual: ArrayLike | None, z: float, info: solvers.SolveInfo) -> Iterate:
        """The iterate of a master solve: clique tables y, their exact repair, the rows' multipliers, z / dmin^2."""
        exact = consistent_clique_weights(self.plan, y, 1.0)
        return Iterate(y, exact, self.F @ exact, self.multipliers(dual), z / self.dmin**2, info)

    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        h = 1.0 / it.wbar + 1.0 / it.wbar[self.star][self.factor_of]
        h[self.star] = 0.0
        if self.enumerate:  # the same exact answer as Pareto elimination, by one lookup per joint action
            sep = EnumeratedSeparation.for_plan(self.plan).separate(h, self.gap_terms, self.best, k=k, threshold=it.z,
                                                                     delta_min=self.dmin)
        else:
            sep = self.violated(h, k, it.z)
        return (sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)), sep

    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """(sum c / wbar)^2 / max_a sum_e (c / wbar^2)_{e,a_e} / Delta_min^2."""
        top = MaxSum(self.plan, c / wbar**2, keep_regrets=False).value
        return 0.0 if top <= 0 else float(np.sum(c / wbar)) ** 2 / top / self.dmin**2

    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        if self.layout is not None:
            try:
                y = self.layout.solve(reference, cost=c / max(float(c.max()), 1e-300), options=self.bound_options,
                                      accept_limit=True).allocation
                return self.dual_bound(c, self.F @ consistent_clique_weights(self.plan, y, 1.0))
            except SolverError as error:
                if error.status == "time_limit":
                    raise
        alloc = ScaledAllocation(self.F, reference, name="w")
        objective = alloc.inverse(sp.csr_matrix(c / max(float(c.max()), 1e-300)))
        problem = cp.Problem(cp.Minimize(cp.sum(objective)), self.polytope(alloc))
        solvers.solve(problem, self.solver, accept_inaccurate=True, accept_limit=True)  # valid at any point
        return self.dual_bound(c, self.F @ consistent_clique_weights(self.plan, alloc.value, 1.0))


def certified_lower_bound(fg: FactorGraph, H_scaled: sp.csr_matrix, dual: ArrayLike | None, wbar: np.ndarray,
                          solver: str | None) -> float:
    """Weak-duality lower bound on T* from multipliers ``dual`` of rows H_scaled (1/wbar) <= z (any rows of joint
    actions, scaled by (Delta_min / Delta(a))^2), at ``wbar`` and at the minimiser of sum c / w; 0 without duals.
    Under a time budget, the bounds computed before it runs out (the first with
    :func:`optdesign.runtime.deadline.overtime`)."""
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


def _check_centre(fg: FactorGraph, centre: ArrayLike) -> np.ndarray:
    """Clique tables of ``fg.plan()`` with positive finite entries, or InvalidInputError."""
    y = as_vector(centre, "centre", length=fg.plan().n_rows)
    if np.any(y < 0) or not np.any(y > 0):
        raise InvalidInputError("centre must be nonnegative clique tables, not all zero")
    return y


def characteristic_time_generated(fg: FactorGraph, *, tol: float = DEFAULT_TOL, solver: str | None = None,
                                  max_iterations: int = MAX_ITERATIONS, time_limit: float = TIME_LIMIT,
                                  add_per_iteration: int | None = None, initial: ArrayLike | None = None,
                                  centre: ArrayLike | None = None) -> CharTimeResult:
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
    centre : array_like, shape (fg.plan().n_rows,), optional
        Nonnegative clique tables of ``fg.plan()`` on which the first master solve is centred (a warm start's
        ``clique_weights``); uniform tables by default.

    Returns
    -------
    CharTimeResult
        ``value`` (T*, attained by ``marginals``; convention E[tau] >= 2 T* kl(delta, 1 - delta)), certified
        ``lower_bound`` and ``gap``, ``clique_weights``, ``working_set``, ``structure``, ``status`` and ``extras``
        (iterations, working-set size, master and separation times, why it stopped, elimination order and width).

    Raises
    ------
    InvalidInputError
        A tie for a*, bad limits, a malformed ``initial`` or ``centre``.
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
    master = CharTimeMaster(fg, solver, centre=None if centre is None else _check_centre(fg, centre), tol=tol)
    run = warm_generate(master, initial, tol=tol, max_iterations=max_iterations, time_limit=time_limit,
                        add_per_iteration=add_per_iteration,
                        n_best=WARM_N_BEST * fg.n_agents if centre is not None and tol >= LOOSE_TOL else None)
    return CharTimeResult(
        value=run.upper, solver_value=run.kept.z, method="exact", m=0, best_action=master.best,
        gaps=np.asarray([master.dmin]), marginals=fg.split_tables(run.kept.wbar), local_allocations=None,
        global_allocation=None, n_constraints=int(master.actions.shape[0]), n_variables=int(master.plan.n_rows),
        width=master.plan.width, status=run.status, solver=run.info.solver, solve_time=time.perf_counter() - start,
        compile_time=0.0,
        extras=run_extras(run, master), lower_bound=run.lower, gap=run.gap, clique_weights=run.kept.exact,
        working_set=master.support(run.kept), structure=structure_key(fg.n_actions, fg.scopes),
    )
