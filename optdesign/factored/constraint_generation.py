"""Constraint generation for programs with one constraint per joint action (exact T* and the regret bound).

T* = inf over the marginal polytope of max_{a != a*} H_w(a) / Delta(a)^2 (MF-TaS eq. 1) and the Graves–Lai regret
bound (:mod:`optdesign.factored.regret`) both have one constraint per joint action a != a*. Keeping only a working
set W gives the *master* (a relaxation), solved over junction-tree clique tables
(:mod:`optdesign.factored.marginals`) and re-centred on the previous iterate (:mod:`optdesign.factored.rescaling`).
:func:`generate` runs the loop for any :class:`CuttingPlaneMaster`; every iteration brackets the optimum without
trusting the solver:

* **upper bound**: the solver's clique tables are repaired to exactly consistent ones
  (:func:`~optdesign.factored.marginals.consistent_clique_weights`, so their factor marginals wbar lie in the
  polytope or cone) and the objective at wbar is evaluated over ALL joint
  actions by the Pareto separation oracle (:func:`optdesign.factored.separation.most_violated`), which also returns
  the most violated joint actions to add to W;
* **lower bound** (weak duality): the master's multipliers lambda (a distribution over W) give c = sum_a lambda_a
  (scaled row of a) >= 0, and the dual function min_w sum c / w over the polytope is bounded below by Cauchy–Schwarz,
  (sum sqrt(c s))^2 / max_w s . wbar for any s >= 0, the max being one max-sum (T*) or one max-ratio (regret);
  s = c / wbar^2 at the current iterate, then at the minimiser of sum c / w (one smooth solve), where it is tight.

Exact T* (:mod:`optdesign.factored.char_time_generated`) and the regret bound (:mod:`optdesign.factored.regret`)
are the two masters. The initial working set decides the iteration count (../shared/spec/factored.md §3): the
joint actions in gap order, every single deviation from a*, and per factor and group action the best joint action
through it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..deadline import Deadline, as_time_limit, stop_reason, stop_requested, time_budget
from ..errors import InstanceTooLargeError, InvalidInputError, SolverError
from ..progress import listening, report
from ..result import relative_gap
from ..solvers import SolveInfo
from ..validation import as_count, as_tolerance
from .factorgraph import FactorGraph
from .inference import MaxSum
from .marginals import marginal_maps
from .rescaling import Reference, ScaledAllocation
from .separation import MAX_STATES, Separation, most_violated

DEFAULT_TOL = 1e-4
MAX_ITERATIONS = 100
TIME_LIMIT = 600.0
# re-centred re-solves without a new joint action before giving up
MAX_STALLS = 3
# the top-k separation's state budget; past it, violated joint actions come from this upper share of the range
# [master value, exact maximum] (the exact maximum itself gets the full budget, separation.MAX_STATES)
TOP_K_STATES = 2_000_000
TOP_SHARE = 0.5
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


def check_initial(fg: FactorGraph, initial: ArrayLike) -> np.ndarray:
    """An (M, N) array of joint actions other than a* (a warm start's working set), or InvalidInputError."""
    A = np.asarray(initial)
    if (A.ndim != 2 or A.shape[1] != fg.n_agents or not np.issubdtype(A.dtype, np.integer) or np.any(A < 0)
            or np.any(A >= np.asarray(fg.n_actions))):
        raise InvalidInputError(f"initial must be an (M, {fg.n_agents}) integer array of joint actions")
    return A[np.any(A != fg.best_action(), axis=1)]


@dataclass(frozen=True)
class Iterate:
    """One master solve: raw clique tables ``y`` (the next reference), exactly consistent ones ``exact`` with factor
    marginals ``wbar``, multipliers ``lam`` of the working-set rows (summing to one), the solver's optimum ``z``."""

    y: np.ndarray
    exact: np.ndarray
    wbar: np.ndarray
    lam: np.ndarray
    z: float
    info: SolveInfo


class CuttingPlaneMaster(ABC):
    """A program with one row per joint action a != a*, restricted to a working set W (module docstring).

    Subclasses give the scaled rows of joint actions, the master solve, the value over all joint actions at an
    iterate (with the most violated joint actions) and the two weak-duality bounds."""

    def __init__(self, fg: FactorGraph, solver: str | None):
        self.fg, self.solver = fg, solver
        self.plan = fg.plan()
        self.F, self.C, self.R = marginal_maps(self.plan)
        self.best = fg.best_action()
        self.star = fg.group_indices(self.best)[0]
        self.dmin = fg.gap_min()  # raises if a* is not unique
        factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
        self.gap_terms = fg.means[self.star][factor_of] - fg.means  # Delta(a) = sum_e gap_terms[a_e]
        self.factor_of = factor_of
        self.actions = np.zeros((0, fg.n_agents), dtype=np.int64)
        self.rows = sp.csr_matrix((0, self.n_columns))

    @property
    def n_columns(self) -> int:
        return self.fg.abar

    @abstractmethod
    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        """One row per joint action, in the units the master's constraints use."""

    @abstractmethod
    def solve(self, reference: Reference) -> Iterate:
        """Solve the master on W centred on ``reference``."""

    @abstractmethod
    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        """(objective at ``it.wbar`` over all joint actions, the separation with the k most violated)."""

    @abstractmethod
    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """Cauchy–Schwarz lower bound with s = c / wbar^2."""

    @abstractmethod
    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        """The same bound at the minimiser of sum c / w (one smooth solve)."""

    def start(self) -> Reference:
        """Reference of the first solve: uniform clique tables."""
        sizes = np.asarray([step.n_rows for step in self.plan.steps])
        return self.reference(1.0 / np.repeat(sizes, sizes))

    def reference(self, y: np.ndarray) -> Reference:
        """The reference centred on clique tables ``y``."""
        return Reference.around(y, self.F)

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
        self.rows = sp.vstack([self.rows, self.scaled_rows(actions)]).tocsr()
        return actions.shape[0]

    def violated(self, h: np.ndarray, k: int, threshold: float) -> Separation:
        """Exact separation of H(a) / Delta(a)^2 for per-entry costs ``h`` and the k most violated joint actions.

        Near-ties just above ``threshold`` can make the top-k search explode (ring N = 50, K = 10: 60-76 s per
        call). So the top-k search gets a small state budget; past it, the exact maximum is found alone (k = 1,
        the strongest pruning) and the k actions are taken from the upper part of the violation range,
        [threshold + TOP_SHARE (max - threshold), max], with k / 10, ..., 1 if that still overflows.
        """
        def run(k: int, floor: float, max_states: int = MAX_STATES) -> Separation:
            return most_violated(self.plan, h, self.gap_terms, delta_min=self.dmin, k=k, threshold=floor,
                                 candidates=self.actions[-k:], max_states=max_states)
        if k > 1:
            try:
                return run(k, threshold, TOP_K_STATES)
            except InstanceTooLargeError:
                pass
        best = run(1, threshold)
        if k == 1 or not best.exact or best.max_ratio <= threshold:
            return best
        floor = threshold + TOP_SHARE * (best.max_ratio - threshold)
        while k > 1:
            try:
                return replace(run(k, floor, TOP_K_STATES), max_ratio=best.max_ratio, exact=best.exact,
                               upper_bound=best.upper_bound)
            except InstanceTooLargeError:
                k = max(1, k // 10)
        return best

    def support(self, it: Iterate) -> np.ndarray:
        """The joint actions whose rows carry ``it``: positive multipliers (W only grows, so rows keep their index)."""
        return self.actions[:it.lam.size][it.lam > 1e-9 * it.lam.max()]

    def multipliers(self, dual: ArrayLike | None) -> np.ndarray:
        """The rows' multipliers as a distribution over W (uniform if the solver gave none)."""
        lam = np.clip(np.asarray(dual if dual is not None else np.zeros(0), dtype=float).ravel(), 0.0, None)
        if lam.size != self.actions.shape[0] or lam.sum() <= 0:
            return np.full(self.actions.shape[0], 1.0 / max(self.actions.shape[0], 1))
        return lam / lam.sum()

    def polytope(self, alloc: ScaledAllocation) -> list:
        """Clique tables of one distribution: one unit of mass per root, consistent on separators."""
        constraints = [*alloc.constraints, alloc.linear(self.R) == 1]
        if self.C.shape[0]:
            constraints.append(alloc.linear(self.C, normalise=True) == 0)
        return constraints


@dataclass(frozen=True)
class GenerationRun:
    """What :func:`generate` reached: the bracket, the iterate attaining ``upper``, the work done."""

    upper: float
    lower: float
    kept: Iterate
    status: str
    iterations: int
    master_time: float
    separation_time: float
    info: SolveInfo
    stopped: str  # why the loop ended: "certified", "iterations", "time", "stalled" or "separation"

    @property
    def gap(self) -> float:
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
    (:mod:`optdesign.solvers`), and one stopped by it ends the run with the bracket of the previous iterations."""
    deadline = Deadline(time_limit)
    reference = master.start()
    upper, lower, kept = np.inf, 0.0, None
    t_master = t_sep = 0.0
    status, stopped = "not_converged", "iterations"
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
                  time_limit: float, add_per_iteration: int | None) -> GenerationRun:
    """:func:`generate` from the initial working set plus the ``initial`` joint actions (a warm start, or None);
    ``add_per_iteration`` defaults to 5 N."""
    fg = master.fg
    master.add(initial_working_set(fg))
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
