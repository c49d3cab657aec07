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

from ...errors import InstanceTooLargeError, InvalidInputError, SolverError, TimeLimitReached
from ...result import relative_gap
from ...runtime.deadline import (
    as_time_limit,
    budget_expired,
    overtime,
    remaining_budget,
    stop_reason,
    stop_requested,
    time_budget,
)
from ...runtime.progress import listening, report
from ...runtime.solvers import SolveInfo
from ...validation import as_count, as_tolerance
from ...vocabulary import Status
from ..graph.factor_graph import FactorGraph
from .cutting_plane_master import CuttingPlaneMaster, Iterate
from .rescaling import Reference
from .separation import Separation
from .working_set import best_through_entries, initial_working_set, working_set_capacity

__all__ = ["DEFAULT_TOL", "MAX_ITERATIONS", "TIME_LIMIT", "GenerationRun", "best_through_entries", "generate",
           "initial_working_set", "warm_generate"]

DEFAULT_TOL = 1e-4
MAX_ITERATIONS = 100
TIME_LIMIT = 600.0
# re-centred re-solves without a new joint action before giving up
MAX_STALLS = 3
# under a time budget, the share of the time left a master solve may use (the rest brackets its point), and the
# share the initial working set may use
MASTER_SHARE, INITIAL_SHARE = 0.8, 0.3
# the lower bound is only as good as the master's multipliers: CLARABEL at 1e-10 instead of its default 1e-8
MASTER_SOLVER_OPTIONS = {"CLARABEL": {"tol_feas": 1e-10, "tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}}


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
    #: Why the loop ended: "certified", "iterations", "time", "interrupted", "stalled", "separation" or
    #: "working-set" (W holds :func:`.working_set.working_set_capacity` joint actions).
    stopped: str

    @property
    def gap(self) -> float:
        """The certified relative gap ``upper / lower - 1`` (inf when ``lower`` is 0)."""
        return relative_gap(self.upper, self.lower)


def check_time_limit(time_limit: object) -> float:
    """A positive finite number of seconds (:func:`optdesign.runtime.deadline.as_time_limit`), here required."""
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
    ``"not_converged"``, or ``"interrupted"`` after Ctrl-C under :func:`optdesign.runtime.deadline.graceful_interrupt`:
    the bracket still holds).

    Every step runs under one time budget of ``time_limit`` seconds (:func:`optdesign.runtime.deadline.time_budget`,
    capped
    by an enclosing one): each master solve gets MASTER_SHARE of the time left as its solver's limit and returns its
    point when stopped by it (any point is bracketed below), separation checks the budget between elimination
    steps, and a step cut short ends the run with the bracket of the iterations before it; when the first
    iteration is cut, :class:`~optdesign.errors.TimeLimitReached` tells the caller that no bracket exists yet.

    Every iteration adds up to ``add_per_iteration`` of the most violated joint actions to W; after MAX_STALLS
    re-solves that add none, when exact separation runs out of its state budget, or when W is full
    (:func:`.working_set.working_set_capacity`), the run stops with the bracket reached.

    Parameters
    ----------
    master : CuttingPlaneMaster
        The program, with its starting working set already added
        (:meth:`~optdesign.factored.exact.cutting_plane_master.CuttingPlaneMaster.add`).
    tol : float
        Certified relative gap ``upper / lower - 1`` at which to stop.
    max_iterations : int
        Largest number of master solves.
    time_limit : float
        Seconds for the whole run.
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
    TimeLimitReached
        The budget ran out (or a stop was requested) before the first iterate was bracketed.
    InstanceTooLargeError
        Exact separation ran out of its state budget at the first iterate.
    """
    with time_budget(time_limit):  # capped by an enclosing budget
        run = _Run(master, tol, add_per_iteration)
        reference = master.start()
        while run.iteration < max_iterations:
            run.iteration += 1
            try:
                it, c, sep = run.bracket(reference)
            except (SolverError, InstanceTooLargeError) as exc:  # TimeLimitReached is a SolverError
                if run.kept is None or not (isinstance(exc, InstanceTooLargeError) or budget_expired()):
                    raise
                run.stopped = "separation" if isinstance(exc, InstanceTooLargeError) else _time_reason()
                run.status = run.status if isinstance(exc, InstanceTooLargeError) else stop_reason()
                break
            reference = master.reference(it.y)
            last = run.iteration == max_iterations or budget_expired() or it.info.status == "not_converged"
            run.certify(c, reference, it, last)
            if relative_gap(run.upper, run.lower) <= tol:
                run.status, run.stopped = "optimal", "certified"
                break
            if last:
                run.stopped = "iterations" if run.iteration == max_iterations else _time_reason()
                run.status = stop_reason()
                break
            room = working_set_capacity(master.fg) - master.actions.shape[0]
            if room <= 0:  # W is full (dense rows of N agents): the bracket reached is the answer
                run.stopped = "working-set"
                break
            if master.add(sep.actions[:room]) == 0:  # W is complete at this point: re-solve centred on it
                run.stalls += 1
                if run.stalls >= MAX_STALLS:
                    run.stopped = "stalled"
                    break
    # kept: the iterate attaining upper (set once a value is finite)
    return GenerationRun(float(run.upper), float(run.lower), cast(Iterate, run.kept), run.status, run.iteration,
                         run.t_master, run.t_sep, cast(SolveInfo, run.info), run.stopped)


def _time_reason() -> str:
    """Why a run cut by its budget stopped: ``"interrupted"`` after a stop request, else ``"time"``."""
    return "interrupted" if stop_requested() else "time"


class _Run:
    """The state of one :func:`generate` run: the bracket, the iterate attaining its upper end, the work done."""

    def __init__(self, master: CuttingPlaneMaster, tol: float, k: int):
        self.master, self.tol, self.k = master, tol, k
        self.upper, self.lower, self.kept = np.inf, 0.0, cast(Iterate | None, None)
        self.t_master = self.t_sep = 0.0
        self.status: Status = "not_converged"
        self.stopped = "iterations"
        self.iteration = self.stalls = 0
        self.info: SolveInfo | None = None

    def bracket(self, reference: Reference) -> tuple[Iterate, np.ndarray, Separation]:
        """Solve the master (MASTER_SHARE of the time left), raise the lower bound from its multipliers and the
        upper bound by separation at its point; returns (iterate, multipliers' combination c, separation)."""
        master = self.master
        t0 = time.perf_counter()
        left = remaining_budget()
        with time_budget(None if left is None else MASTER_SHARE * left):
            it = master.solve(reference)
        self.t_master += time.perf_counter() - t0
        self.info = it.info
        c = master.rows.T @ it.lam
        t0 = time.perf_counter()
        with overtime():  # the bracket of a point the budget cut short is still worth having
            self.lower = max(self.lower, master.dual_bound(c, it.wbar))
            value, sep = master.separate(it, self.k)
        self.t_sep += time.perf_counter() - t0
        if value < self.upper:
            self.upper, self.kept = value, it
        if listening():
            report(f"constraint generation: iteration {self.iteration}, {master.actions.shape[0]:,} joint actions, "
                   f"bracket [{self.lower:.6g}, {self.upper:.6g}]")
        return it, c, sep

    def certify(self, c: np.ndarray, reference: Reference, it: Iterate, last: bool) -> None:
        """The minimiser bound, once the master's optimum is near the upper bound (it is at most that optimum) or at
        the last iteration; skipped when the time runs out."""
        if relative_gap(self.upper, self.lower) > self.tol and (last or relative_gap(self.upper, it.z) <= 2 * self.tol):
            t0 = time.perf_counter()
            try:
                self.lower = max(self.lower, self.master.minimiser_bound(c, reference))
            except TimeLimitReached:
                pass
            self.t_master += time.perf_counter() - t0


def warm_generate(master: CuttingPlaneMaster, initial: ArrayLike | None, *, tol: float, max_iterations: int,
                  time_limit: float, add_per_iteration: int | None, n_best: int | None = None) -> GenerationRun:
    """:func:`generate` from the initial working set plus the ``initial`` joint actions (a warm start, or None);
    ``add_per_iteration`` defaults to 5 N. ``time_limit`` covers both; the initial working set gets at most
    INITIAL_SHARE of it (cut short, it keeps the joint actions found).

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
    with time_budget(time_limit):
        left = remaining_budget()
        with time_budget(None if left is None else INITIAL_SHARE * left):
            master.add(initial_working_set(fg, n_best=n_best))
        if initial is not None:
            master.add(check_initial(fg, initial))
        k = 5 * fg.n_agents if add_per_iteration is None else add_per_iteration
        return generate(master, tol=tol, max_iterations=max_iterations, time_limit=time_limit,
                        add_per_iteration=max(1, min(k, working_set_capacity(fg) // 4)))


def run_extras(run: GenerationRun, master: CuttingPlaneMaster) -> dict:
    """The ``extras`` of a generated result: iterations, working-set size, where the time went, why it stopped."""
    return {"formulation": "constraint-generation", "iterations": run.iterations,
            "working_set": int(master.actions.shape[0]), "master_time": run.master_time,
            "separation_time": run.separation_time, "solver_status": run.info.status, "stopped": run.stopped,
            "order": list(master.plan.order), "width": master.plan.width}
