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

When the oracle fails at the estimate (a tie for the best answer raises
:class:`optdesign.errors.InvalidInputError`, a design solver may raise :class:`optdesign.errors.SolverError`),
the previous target is kept (uniform before the first success). Time in the oracle is the state's
``solve_time``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError, SolverError

from ...core.tracking import project_floor
from ...core.validation import check_choice
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState, c_tracking, d_tracking

__all__ = ["TRACKING", "TrackAndStop"]

#: the tracking rules of :class:`TrackAndStop`
TRACKING = ("C", "D")


@dataclass(frozen=True)
class TrackAndStop(Sampler):
    """Track-and-Stop: C- or D-tracking of the plug-in oracle w*(mu_hat), re-solved on a geometric schedule
    (GK16 Sec. 3.1; module docstring).

    Parameters
    ----------
    tracking : str
        ``"D"`` (forced exploration, then t w - N) or ``"C"`` (cumulative projected targets).
    resolve_growth : float
        Re-solve the oracle when t has grown by this factor since the last solve (0.1: after 10 % more
        samples; 0: at every batch).

    Raises
    ------
    InvalidInputError
        An unknown tracking rule, or a negative or non-finite ``resolve_growth``.
    """

    tracking: str = "D"
    resolve_growth: float = 0.1

    def __post_init__(self) -> None:
        """Check the options."""
        check_choice(self.tracking, "tracking", TRACKING)
        growth = self.resolve_growth
        if isinstance(growth, bool) or not isinstance(growth, (int, float)) or not (np.isfinite(growth)
                                                                                    and growth >= 0):
            raise InvalidInputError(f"resolve_growth must be a number >= 0, got {growth!r}")

    @property
    def name(self) -> str:
        """``track-and-stop``."""
        return "track-and-stop"

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        return _TrackAndStopState(problem, self.tracking, float(self.resolve_growth))


class _TrackAndStopState(SequentialState):
    """One run: the current target, when it was solved, and the cumulative projected targets (C-tracking)."""

    def __init__(self, problem: Problem, tracking: str, resolve_growth: float) -> None:
        self.problem, self.tracking, self.resolve_growth = problem, tracking, resolve_growth
        K = problem.n_arms
        self.target = np.full(K, 1.0 / K)
        self.cumulative: np.ndarray | None = None
        self.solved_at = 0
        self.solves = 0
        self.failures = 0

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """Re-solve the target when t has grown enough, then track it pull by pull.

        Parameters
        ----------
        obs : Observations
            Counts, sums and estimate at the batch's start.
        n : int
            Batch size.

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Pulls per arm summing to ``n``.
        """
        if self.cumulative is None:  # the initial pulls count as on target
            self.cumulative = obs.counts.astype(float)
        if self.solved_at == 0 or obs.t >= (1.0 + self.resolve_growth) * self.solved_at:
            self._solve(obs)
        return super().plan(obs, n)

    def _solve(self, obs: Observations) -> None:
        """w*(mu_hat), or the previous target when the oracle fails at the estimate."""
        self.solved_at = obs.t
        start = time.perf_counter()
        try:
            w = np.clip(np.asarray(self.problem.oracle(obs.mu).weights, dtype=float), 0.0, None)
            if w.sum() > 0 and np.isfinite(w).all():
                self.target = w / w.sum()
                self.solves += 1
            else:
                self.failures += 1
        except (InvalidInputError, SolverError):
            self.failures += 1
        finally:
            self.solve_time += time.perf_counter() - start

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        if self.tracking == "D":
            return d_tracking(self.target, counts)
        assert self.cumulative is not None
        K = counts.size
        self.cumulative += project_floor(self.target, 0.5 / np.sqrt(K * K + counts.sum()))
        return c_tracking(self.cumulative, counts)
