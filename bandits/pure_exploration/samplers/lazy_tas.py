"""Lazy Track-and-Stop (Jedra & Proutière, NeurIPS 2020, "Optimal best-arm identification in linear bandits").

The target proportions w are updated lazily, only at the times t that are powers of two: up to ``fw_steps``
Frank–Wolfe steps on F(w) = min_j f_j(w) at the estimate, warm-started at the previous target. Step i moves to
the vertex e_k of the largest gradient coordinate of the best-response piece, w <- (i w + e_k) / (i + 1), and the
loop ends early once ||e_k|| / ((i + 1) ||w||) < ``tolerance`` (the rule of the Frank–Wolfe sampling authors'
implementation, which their Table 1 ran). The arm pulled C-tracks the sum of the targets of every step so far,
argmax_k (sum_s w_s,k - N_k), except under forced exploration: while the smallest eigenvalue of the information
matrix A_t is below c0 sqrt(t), the arms of a spanning set are pulled in turn (c0 = lambda_min(A) / sqrt(d) after
the initial pulls; for K-armed problems A_t = diag(N); the spanning set is the problem's exploration arms). The
estimate, t and the eigenvalue test are those of the batch's start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState, c_tracking

__all__ = ["LazyTrackAndStop"]


@dataclass(frozen=True)
class LazyTrackAndStop(Sampler):
    """Lazy Track-and-Stop (Jedra & Proutière 2020): Frank–Wolfe targets at powers of two, C-tracking, forced
    exploration of a spanning set while lambda_min(A_t) < c0 sqrt(t) (module docstring).

    Parameters
    ----------
    fw_steps : int
        The most Frank–Wolfe steps of one lazy update (1,000 in the published experiments).
    tolerance : float
        The early stop of an update: ||e_k|| / ((i + 1) ||w||) below it.

    Raises
    ------
    InvalidInputError
        ``fw_steps`` below 1 or a tolerance that is not a positive number.
    """

    fw_steps: int = 1000
    tolerance: float = 1e-3

    def __post_init__(self) -> None:
        """Check the options."""
        if isinstance(self.fw_steps, bool) or not isinstance(self.fw_steps, int) or self.fw_steps < 1:
            raise InvalidInputError(f"fw_steps must be an integer >= 1, got {self.fw_steps!r}")
        if isinstance(self.tolerance, bool) or not (isinstance(self.tolerance, (int, float))
                                                    and math.isfinite(self.tolerance) and self.tolerance > 0):
            raise InvalidInputError(f"tolerance must be a positive number, got {self.tolerance!r}")

    @property
    def name(self) -> str:
        """``lazy-tas``."""
        return "lazy-tas"

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        return _LazyState(problem, self.fw_steps, float(self.tolerance))


class _LazyState(SequentialState):
    """One run: the target, the cumulative targets, the forced-exploration set and its constant c0."""

    def __init__(self, problem: Problem, fw_steps: int, tolerance: float) -> None:
        self.problem, self.fw_steps, self.tolerance = problem, fw_steps, tolerance
        self.target = np.full(problem.n_arms, 1.0 / problem.n_arms)
        self.cumulative: np.ndarray | None = None
        self.spanning = problem.exploration_arms()
        self.c0: float | None = None
        self.next_forced = 0
        self.forced = False
        self.updated_at = 0
        self.updates = 0

    def smallest_eigenvalue(self, counts: np.ndarray) -> float:
        """lambda_min of the information matrix at the counts (the smallest count for a K-armed problem)."""
        A = self.problem.information(counts)
        return float(counts.min()) if A is None else float(np.linalg.eigvalsh(A)[0])

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """Update the target at powers of two, decide forced exploration, then pull arm by arm."""
        t = obs.t
        if self.cumulative is None:  # after the initial pulls: they count as on target, and fix c0
            self.cumulative = obs.counts.astype(float)
            self.c0 = self.smallest_eigenvalue(obs.counts) / math.sqrt(self.problem.dim)
        if self.updated_at == 0 or 2 ** math.floor(math.log2(t)) > self.updated_at:  # a power of two passed
            self.updated_at = 2 ** math.floor(math.log2(t))
            self._update(obs)
        assert self.c0 is not None
        self.forced = self.smallest_eigenvalue(obs.counts) < self.c0 * math.sqrt(t)
        return super().plan(obs, n)

    def _update(self, obs: Observations) -> None:
        """Frank–Wolfe steps on min_j f_j at the estimate from the current target (module docstring)."""
        w = self.target.copy()
        for i in range(1, self.fw_steps + 1):
            pieces = obs.pieces(w)
            if pieces.gradients is None or pieces.values.size == 0:
                break
            k = int(np.argmax(pieces.gradients[pieces.best_response]))
            w *= i / (i + 1.0)
            w[k] += 1.0 / (i + 1.0)
            if 1.0 / ((i + 1) * np.linalg.norm(w)) < self.tolerance:
                break
        self.target = w
        self.updates += 1

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        assert self.cumulative is not None
        self.cumulative += self.target
        if self.forced:
            arm = int(self.spanning[self.next_forced % self.spanning.size])
            self.next_forced += 1
            return arm
        return c_tracking(self.cumulative, counts)
