"""Constraint generation for programs with one constraint per joint action (exact T* and the regret bound).

T* = inf over the marginal polytope of max_{a != a*} H_w(a) / Delta(a)^2 (MF-TaS eq. 1) and the Graves–Lai regret
bound (:mod:`optdesign.factored.regret`) both have one constraint per joint action a != a*. Keeping only a working
set W gives the *master* (a relaxation), solved over junction-tree clique tables
(:mod:`optdesign.factored.inference.marginals`) and re-centred on the previous iterate (:mod:`.rescaling`).
:func:`generate` runs the loop for any :class:`~optdesign.factored.exact.cutting_plane_master.CuttingPlaneMaster`
(the master's interface, in its own module); every iteration brackets the optimum without
trusting the solver:

* **upper bound**: the solver's clique tables are repaired to exactly consistent ones
  (:func:`~optdesign.factored.inference.marginals.consistent_clique_weights`, so their factor marginals wbar lie in the
  polytope or cone) and the objective at wbar is evaluated over ALL joint
  actions by the Pareto separation oracle (:func:`.separation.most_violated`), which also returns
  the most violated joint actions to add to W;
* **lower bound** (weak duality): the master's multipliers lambda (a distribution over W) give c = sum_a lambda_a
  (scaled row of a) >= 0, and the dual function min_w sum c / w over the polytope is bounded below by Cauchy–Schwarz,
  (sum sqrt(c s))^2 / max_w s . wbar for any s >= 0, the max being one max-sum (T*) or one max-ratio (regret);
  s = c / wbar^2 at the current iterate, then at the minimiser of sum c / w (one smooth solve), where it is tight
  (derivation: the *Notes* page of the documentation, section "Constraint generation for the exact T*").

Exact T* (:mod:`optdesign.factored.exact.generated`) and the regret bound (:mod:`optdesign.factored.regret.lower_bound`)
are the two masters. The initial working set matters for the iteration count (same section of the *Notes*): the
joint actions in gap order, every single deviation from a*, and per factor and group action the best joint action
through it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from ...deadline import Deadline, as_time_limit, stop_reason, stop_requested, time_budget
from ...errors import InstanceTooLargeError, InvalidInputError, SolverError
from ...progress import listening, report
from ...result import relative_gap
from ...solvers import SolveInfo
from ...validation import as_count, as_tolerance
from ...vocabulary import Status
from ..graph.factor_graph import FactorGraph
from ..inference.max_sum import batched_max_sum
from .cutting_plane_master import CuttingPlaneMaster, Iterate

__all__ = ["DEFAULT_TOL", "MAX_ITERATIONS", "TIME_LIMIT", "GenerationRun", "best_through_entries", "generate",
           "initial_working_set", "warm_generate"]

DEFAULT_TOL = 1e-4
MAX_ITERATIONS = 100
TIME_LIMIT = 600.0
# re-centred re-solves without a new joint action before giving up
MAX_STALLS = 3
# the lower bound is only as good as the master's multipliers: CLARABEL at 1e-10 instead of its default 1e-8
MASTER_SOLVER_OPTIONS = {"CLARABEL": {"tol_feas": 1e-10, "tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}}


def initial_working_set(fg: FactorGraph, *, n_best: int | None = None) -> np.ndarray:
    """Joint actions to start from: the ``n_best`` (default 20 N) smallest gaps, the single deviations from a*,
    and for every factor e and group action b the best joint action with a_e = b (one max-sum each).

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    n_best : int, optional
        How many joint actions after a* in gap order to include; 20 N by default.

    Returns
    -------
    numpy.ndarray, shape (M, N)
        Distinct joint actions other than a*, in lexicographic order.
    """
    best = fg.best_action()
    n_best = 20 * fg.n_agents if n_best is None else n_best
    rows = [a for a, _ in fg.m_best(min(n_best + 1, fg.n_joint_actions))]
    for i, k in enumerate(fg.n_actions):
        for b in range(k):
            if b != best[i]:
                a = best.copy()
                a[i] = b
                rows.append(a)
    rows.extend(best_through_entries(fg))
    A = np.unique(np.asarray(rows, dtype=np.int64), axis=0)
    return A[np.any(A != best, axis=1)]


def best_through_entries(fg: FactorGraph) -> np.ndarray:
    """For every factor e and group action b, the best joint action a with a_e = b (batched max-sum per factor).

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    numpy.ndarray of int64, shape (fg.abar, N)
        Row i is the best joint action through the flat factor-table entry i (laid out like ``fg.means``); its
        gap is the smallest gap of the joint actions through that entry.
    """
    plan = fg.plan()
    means = fg.means
    never = -2.0 * (np.abs(means).sum() + 1.0)  # below any joint action's value: excludes a group action
    rows = np.zeros((fg.abar, fg.n_agents), dtype=np.int64)
    for e in range(fg.n_factors):  # one batched max-sum per factor, a column per entry b of its table
        lo, hi = plan.factor_offsets[e], plan.factor_offsets[e + 1]
        forced = np.repeat(means[:, None], hi - lo, axis=1)
        forced[lo:hi] = never
        forced[np.arange(lo, hi), np.arange(hi - lo)] = means[lo:hi]
        rows[lo:hi] = batched_max_sum(plan, forced)[1]
    return rows


def check_initial(fg: FactorGraph, initial: ArrayLike) -> np.ndarray:
    """An (M, N) array of joint actions other than a* (a warm start's working set), or InvalidInputError."""
    A = np.asarray(initial)
    if (A.ndim != 2 or A.shape[1] != fg.n_agents or not np.issubdtype(A.dtype, np.integer) or np.any(A < 0)
            or np.any(A >= np.asarray(fg.n_actions))):
        raise InvalidInputError(f"initial must be an (M, {fg.n_agents}) integer array of joint actions")
    return A[np.any(A != fg.best_action(), axis=1)]


@dataclass(frozen=True)
class GenerationRun:
    """What :func:`generate` reached: the bracket, the iterate attaining ``upper``, the work done."""

    #: The best value over all joint actions at an iterate (attained by ``kept``).
    upper: float
    #: The best weak-duality lower bound.
    lower: float
    #: The iterate attaining ``upper``.
    kept: Iterate
    #: ``"optimal"`` once certified to ``tol``, else ``"not_converged"`` or ``"interrupted"``.
    status: Status
    #: Master solves run.
    iterations: int
    #: Seconds in the master solves (and the minimiser bounds).
    master_time: float
    #: Seconds in the separation oracle.
    separation_time: float
    #: The last master solve's solver, status and time.
    info: SolveInfo
    #: Why the loop ended: "certified", "iterations", "time", "interrupted", "stalled" or "separation".
    stopped: str

    @property
    def gap(self) -> float:
        """The certified relative gap ``upper / lower - 1`` (inf when ``lower`` is 0)."""
        return relative_gap(self.upper, self.lower)


def check_time_limit(time_limit: object) -> float:
    """A positive finite number of seconds (:func:`optdesign.deadline.as_time_limit`), here required."""
    limit = as_time_limit(time_limit)
    if limit is None:
        raise InvalidInputError("time_limit must be a positive number of seconds, got None")
    return limit


def check_limits(tol: float, time_limit: float, max_iterations: int,
                 add_per_iteration: int | None) -> tuple[int, int | None]:
    """Validate the loop's limits; returns (max_iterations, add_per_iteration) as counts."""
    as_tolerance(tol)
    check_time_limit(time_limit)
    max_iterations = as_count(max_iterations, "max_iterations")
    if add_per_iteration is not None:
        add_per_iteration = as_count(add_per_iteration, "add_per_iteration")
    return max_iterations, add_per_iteration


def generate(master: CuttingPlaneMaster, *, tol: float, max_iterations: int, time_limit: float,
             add_per_iteration: int) -> GenerationRun:
    """Constraint generation until upper / lower - 1 <= ``tol``, or the iteration / time limits (status
    ``"not_converged"``, or ``"interrupted"`` after Ctrl-C under :func:`optdesign.deadline.graceful_interrupt`:
    the bracket still holds). The first iteration always completes; each later master solve gets the time left
    (:mod:`optdesign.solvers`), and one stopped by it ends the run with the bracket of the previous iterations.

    Every iteration adds up to ``add_per_iteration`` of the most violated joint actions to W; after MAX_STALLS
    re-solves that add none, or when exact separation runs out of its state budget, the run stops with the bracket
    reached.

    Parameters
    ----------
    master : CuttingPlaneMaster
        The program, with its starting working set already added (:meth:`CuttingPlaneMaster.add`).
    tol : float
        Certified relative gap ``upper / lower - 1`` at which to stop.
    max_iterations : int
        Largest number of master solves.
    time_limit : float
        Seconds, checked after each iteration and passed to the later master solves.
    add_per_iteration : int
        Most violated joint actions added to W per iteration.

    Returns
    -------
    GenerationRun
        The bracket, the iterate attaining its upper end, status, why it stopped and the time spent.

    Raises
    ------
    SolverError
        A master solve failed before the time was up (or the first one failed).
    InstanceTooLargeError
        Exact separation ran out of its state budget at the first iterate.
    """
    deadline = Deadline(time_limit)
    reference = master.start()
    upper, lower, kept = np.inf, 0.0, None
    t_master = t_sep = 0.0
    status: Status = "not_converged"
    stopped = "iterations"
    iteration = stalls = 0
    while iteration < max_iterations:
        iteration += 1
        t0 = time.perf_counter()
        try:  # the first iteration always completes (it makes the first bracket); later ones get the time left
            with time_budget(None if kept is None else deadline.time_left()):
                it = master.solve(reference)
        except SolverError:
            if kept is None or not deadline.expired():
                raise
            stopped, status = ("interrupted" if stop_requested() else "time"), stop_reason()
            break
        t_master += time.perf_counter() - t0
        c = master.rows.T @ it.lam
        lower = max(lower, master.dual_bound(c, it.wbar))
        t0 = time.perf_counter()
        try:
            value, sep = master.separate(it, add_per_iteration)
        except InstanceTooLargeError:  # exact separation out of reach at this iterate: keep the bracket so far
            if kept is None:
                raise
            stopped = "separation"
            break
        t_sep += time.perf_counter() - t0
        if value < upper:
            upper, kept = value, it
        reference = master.reference(it.y)
        if listening():
            report(f"constraint generation: iteration {iteration}, {master.actions.shape[0]:,} joint actions, "
                   f"bracket [{lower:.6g}, {upper:.6g}]")
        last = iteration == max_iterations or deadline.expired()
        # the minimiser bound is at most the master's optimum: it can only certify once that is near the upper bound
        if relative_gap(upper, lower) > tol and (last or relative_gap(upper, it.z) <= 2 * tol):
            t0 = time.perf_counter()
            lower = max(lower, master.minimiser_bound(c, reference))
            t_master += time.perf_counter() - t0
        if relative_gap(upper, lower) <= tol:
            status, stopped = "optimal", "certified"
            break
        if last:
            stopped = "iterations" if iteration == max_iterations else "interrupted" if stop_requested() else "time"
            status = stop_reason()
            break
        if master.add(sep.actions) == 0:  # W is complete at this point: re-solve centred on it (precision)
            stalls += 1
            if stalls >= MAX_STALLS:
                stopped = "stalled"
                break
    # kept: the iterate attaining upper (set once a value is finite)
    return GenerationRun(float(upper), float(lower), cast(Iterate, kept), status, iteration, t_master, t_sep,
                         it.info, stopped)


def warm_generate(master: CuttingPlaneMaster, initial: ArrayLike | None, *, tol: float, max_iterations: int,
                  time_limit: float, add_per_iteration: int | None, n_best: int | None = None) -> GenerationRun:
    """:func:`generate` from the initial working set plus the ``initial`` joint actions (a warm start, or None);
    ``add_per_iteration`` defaults to 5 N.

    Parameters
    ----------
    master : CuttingPlaneMaster
        The program; :func:`initial_working_set` of its instance is added to its working set.
    initial : array_like, shape (M, N), optional
        Extra joint actions for the working set (a previous result's ``working_set``); a* is dropped.
    tol, max_iterations, time_limit : float, int, float
        The stopping rules of :func:`generate`.
    add_per_iteration : int, optional
        Most violated joint actions added per iteration; 5 N by default.
    n_best : int, optional
        Joint actions in gap order in the initial working set (:func:`initial_working_set`; 20 N by default).

    Returns
    -------
    GenerationRun
        What :func:`generate` reached.

    Raises
    ------
    InvalidInputError
        ``initial`` is not an integer array of joint actions of the instance.
    SolverError
        As in :func:`generate`.
    InstanceTooLargeError
        As in :func:`generate`.
    """
    fg = master.fg
    master.add(initial_working_set(fg, n_best=n_best))
    if initial is not None:
        master.add(check_initial(fg, initial))
    return generate(master, tol=tol, max_iterations=max_iterations, time_limit=time_limit,
                    add_per_iteration=5 * fg.n_agents if add_per_iteration is None else add_per_iteration)


def run_extras(run: GenerationRun, master: CuttingPlaneMaster) -> dict:
    """The ``extras`` of a generated result: iterations, working-set size, where the time went, why it stopped."""
    return {"formulation": "constraint-generation", "iterations": run.iterations,
            "working_set": int(master.actions.shape[0]), "master_time": run.master_time,
            "separation_time": run.separation_time, "solver_status": run.info.status, "stopped": run.stopped,
            "order": list(master.plan.order), "width": master.plan.width}
