"""Track-and-Stop (Garivier & Kaufmann, COLT 2016): track the plug-in optimal proportions w*(mu_hat).

The target is the oracle's w*(mu_hat) at the estimate (:meth:`bandits.pure_exploration.problem.Problem.oracle`),
and each pull follows it by one of GK16's two tracking rules (Sec. 3.1):

* ``"C"`` (C-tracking): pull argmax_k (sum_{s <= t} w^{eps_s}_k - N_k), where w^eps is the L-infinity
  projection of the target onto {w >= eps} (:func:`bandits.core.tracking.project_floor`) and
  eps_s = 1 / (2 sqrt(K^2 + s)); the floor replaces forced exploration (GK16 Lemma 7: every N_k grows like
  sqrt(t)).
* ``"D"`` (D-tracking): if some N_k < sqrt(t) - K/2, pull the least-pulled arm (forced exploration), else
  argmax_k (t w_k - N_k). On a linear problem the forced exploration runs over all K arms, as GK16 write it;
  a spanning subset would be enough for the estimate, but the rule is kept as published.

Lazy re-solving: the target is recomputed only at the start of a batch where t has grown by a factor
1 + ``resolve_growth`` since the last solve (0 re-solves at every batch). The oracle then runs O(log(t) /
log(1 + resolve_growth)) times in a run instead of once per batch, the cost that matters for linear problems
(a convex program per solve); the price is a target up to a factor 1 + ``resolve_growth`` in time stale.
Tracking converges to w*(mu) as long as the estimate does, so the asymptotic behaviour is unchanged; on GK16's
first experiment (delta = 0.1, D-tracking) the default 0.1 stopped as early as re-solving at every batch, within
the noise of 20 to 50 runs, with a sixteenth of the oracle time, while 0.5 cost about 25 % more samples.

How the pulls follow the target is the problem's ``allocation_tracker`` capability
(:mod:`bandits.pure_exploration.allocation_tracker`): on arm-pull problems, the C- or D-tracking above of the
oracle's weights; on a factored problem (``tracking="C"``), C-tracking of the law over joint actions of the exact T*
allocation, re-solved by warm-started constraint generation to the certified gap ``tol``
(:class:`bandits.multiagent.tracking.JointTracker`), or with ``allocation="mean-field"`` MF-TaS's mean-field
allocation, relabelled to the estimate's best joint action and drawn agent by agent
(:class:`bandits.multiagent.tracking.MeanFieldTracker`). A law over joint actions has no floor that would explore
every group action, so the problem runs the rule in batches that add it (its ``tracking_batches``: on a factored
problem the covering set's forced exploration, MF-TaS §6.2, which makes this rule ``tas``, and ``mf-tas`` with
``allocation="mean-field"`` and ``resolve_growth=0``).
When the oracle fails at the estimate (a tie for the best answer, a solver failure) the previous target is kept
(uniform before the first success). Time in the oracle is the state's ``solve_time``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ...core.tracking import next_checkpoint
from ...core.validation import check_choice
from ..allocation_tracker import ALLOCATIONS, TRACKING, Tracker, check_tol
from ..pieces import GLRStatistic
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState

__all__ = ["TRACKING", "TrackAndStop"]


@dataclass(frozen=True)
class TrackAndStop(Sampler):
    """Track-and-Stop: C- or D-tracking of the plug-in oracle w*(mu_hat), re-solved on a geometric schedule
    (GK16 Sec. 3.1; module docstring).

    Parameters
    ----------
    tracking : str
        ``"D"`` (forced exploration, then t w - N) or ``"C"`` (cumulative projected targets; on a factored
        problem, the law over joint actions).
    resolve_growth : float
        Re-solve the oracle when t has grown by this factor since the last solve (0.1: after 10 % more
        samples; 0: at every batch).
    tol : float, optional
        Certified relative gap in (0, 1) of each re-solve, for a problem whose oracle is iterative (the factored T*
        by constraint generation: 1e-2 by default). None: the problem's default; an oracle in closed form or solved
        to its own accuracy refuses a number.
    allocation : str
        The allocation tracked: ``"exact"``, the oracle's w*(mu_hat), or ``"mean-field"``, a factored problem's
        mean-field allocation of T^MF (MF-TaS: ``mf-tas`` is this rule with ``resolve_growth=0`` in the factored
        batches).

    Raises
    ------
    InvalidInputError
        An unknown tracking rule or allocation, a negative or non-finite ``resolve_growth``, or a ``tol`` outside
        (0, 1).
    """

    tracking: str = "D"
    resolve_growth: float = 0.1
    tol: float | None = None
    allocation: str = "exact"

    def __post_init__(self) -> None:
        """Check the options."""
        check_choice(self.tracking, "tracking", TRACKING)
        check_choice(self.allocation, "allocation", ALLOCATIONS)
        check_tol(self.tol)
        growth = self.resolve_growth
        if isinstance(growth, bool) or not isinstance(growth, (int, float)) or not (np.isfinite(growth)
                                                                                    and growth >= 0):
            raise InvalidInputError(f"resolve_growth must be a number >= 0, got {growth!r}")

    @property
    def name(self) -> str:
        """``track-and-stop``."""
        return "track-and-stop"

    def requires(self) -> tuple[str, ...]:
        """The problem's tracker (C-tracking); D-tracking's forced exploration pulls single arms; a mean-field
        allocation needs a factor graph."""
        needs = ("allocation_tracker",) if self.tracking == "C" else ("arm_pull",)
        return (*needs, "factor_graph") if self.allocation == "mean-field" else needs

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """The run on the problem's tracker (:meth:`tracked`), in the batches the problem runs tracking in."""
        return problem.tracking_batches(self.tracked(problem, rng))

    def tracked(self, problem: Problem, rng: np.random.Generator) -> SamplerState:
        """This rule's schedule on the problem's tracker, outside any batches the problem adds (``tas`` and ``mf-tas``
        run it in their own, with their covering set and forced-exploration options).

        Parameters
        ----------
        problem : Problem
            The problem (its ``allocation_tracker``).
        rng : numpy.random.Generator
            The tracker's randomness.

        Returns
        -------
        SamplerState
            The tracker re-solved on the grid of ``resolve_growth`` (:meth:`follow`).
        """
        start = time.perf_counter()
        tracker = problem.allocation_tracker(tracking=self.tracking, tol=self.tol, rng=rng, allocation=self.allocation)
        state = self.follow(tracker)
        state.solve_time = time.perf_counter() - start  # a tracker may solve a program once for the run
        return state

    def follow(self, tracker: Tracker) -> SamplerState:
        """A run of this rule's schedule on a given tracker (:meth:`start` takes the problem's; a paper's rule may
        follow its target its own way, as GK16's batch form on one agent: :mod:`bandits.multiagent.mab`).

        Parameters
        ----------
        tracker : Tracker
            The target and how the pulls follow it (:mod:`bandits.pure_exploration.allocation_tracker`).

        Returns
        -------
        SamplerState
            The run's state: ``tracker`` re-solved on the grid of ``resolve_growth``.

        Raises
        ------
        InvalidInputError
            ``tracker`` is not a :class:`~bandits.pure_exploration.allocation_tracker.Tracker`.
        """
        if not isinstance(tracker, Tracker):
            raise InvalidInputError(f"Track-and-Stop follows a Tracker (bandits.pure_exploration.allocation_tracker), "
                                    f"got {type(tracker).__name__}")
        return _TrackAndStopState(tracker, float(self.resolve_growth))


class _TrackAndStopState(SamplerState):
    """One run: the problem's tracker, re-solved on the grid t -> max(t + 1, ceil(t (1 + resolve_growth))) of the
    problem's time."""

    def __init__(self, tracker: Tracker, resolve_growth: float) -> None:
        self.tracker, self.resolve_growth = tracker, resolve_growth
        self.next_solve = 0

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """Re-solve the target when the time has grown enough, then follow it.

        Parameters
        ----------
        obs : Observations
            Counts, sums and estimate at the batch's start.
        n : int
            Batch size.

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm (``n`` pulls).
        """
        if obs.time >= self.next_solve:
            with self.solving():
                self.tracker.resolve(obs.mu)
            self.next_solve = next_checkpoint(obs.time, self.resolve_growth)
        return self.tracker.plan(obs.counts, n)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The tracker's numbers (:meth:`bandits.pure_exploration.allocation_tracker.Tracker.describe`)."""
        return self.tracker.describe(statistic)
