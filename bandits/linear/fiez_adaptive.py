"""XY-Adaptive as Fiez, Jain, Jamieson & Ratliff (2019) ran it (``xy-adaptive:variant=fiez``; Soare et al.'s
algorithm, :mod:`bandits.linear.adaptive`, with the constants of XY_ADAPTIVE.py in the authors' code).

Each phase starts from the ridge prior A = I instead of A_0 pulls (theta_j = (I + A_j)^{-1} b_j on
the phase's samples; the authors also count d samples for it, this toolkit counts pulls only), with
n = d + (pulls of the phase); it ends at the first n with

    rho_j(n) / n  <  alpha * rho_{j-1} / n_{j-1},    rho(n) = max_{y in Y_j} y^T (I + A_n)^{-1} y,

starting from rho_0 = 1 and n_0 = d(d+1) + 1 (rho already scales as 1/n: the division by n makes the
phases grow by about alpha^{-1/2} rather than alpha^{-1}); z is discarded when some surviving z' has

    sqrt(2 sigma^2 ||z' - z||^2_{A^{-1}} log(2 pi^2 K^2 j^2 / (6 delta)))  <  (z' - z)^T theta_j,

a union over phases j (sum 6 delta / (pi^2 j^2) = delta) and the K^2 pairs, K = |Z|. Pulls (``rule``):
"design" (default) takes round_design(w_j, m) of the phase's XY design w_j (smallest m by doubling then
bisection); "greedy" is Soare's incremental rule argmin_x max_y y^T (A + x x^T)^{-1} y from A = I, one pull at
a time, as in the authors' code (their ties are broken at random, here to the least pulled arm).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

import optdesign as od

from ..core.statistics import LinearStatistics
from .common import LinearModel
from .phases import PhasedState, dominated, greedy_pulls, smallest_passing

__all__ = ["FiezXYAdaptiveState"]


class _PhaseOptions(Protocol):
    """The options of :class:`bandits.linear.adaptive.XYAdaptive` this policy reads."""

    @property
    def alpha(self) -> float: ...

    @property
    def rule(self) -> str: ...


def fiez_log(phase: int, n_items: int, delta: float) -> float:
    """log(2 pi^2 K^2 j^2 / (6 delta)), the discard level of phase j = ``phase`` in Fiez et al.'s XY-Adaptive
    (K = ``n_items``)."""
    return float(np.log(2.0 * np.pi**2 * n_items**2 * phase**2 / (6.0 * delta)))


def ridge_value(X: np.ndarray, counts: np.ndarray, Y: np.ndarray) -> float:
    """max_{y in Y} y^T (I + X^T diag(counts) X)^{-1} y, the ridge variance rho of the pulls ``counts``."""
    pulled = np.flatnonzero(counts)
    A = np.eye(X.shape[1]) + X[pulled].T @ (counts[pulled, None] * X[pulled])
    V = np.linalg.solve(np.linalg.cholesky(A), Y.T)
    return float(np.max(np.sum(V**2, axis=0)))


def fiez_phase(X: np.ndarray, Y: np.ndarray, weights: np.ndarray | None, target: float,
               cap: int) -> tuple[np.ndarray, float]:
    """Pulls of one phase of Fiez et al.'s XY-Adaptive and its final rho: the first m in [1, cap] with
    rho(m) / (d + m) < target, rho(m) = ridge_value of the m pulls (m = cap if none). The pulls are
    round_design(weights, m) (smallest m by doubling then bisection), or with ``weights`` None the greedy
    rule argmin_x max_y y^T (A + x x^T)^{-1} y from A = I, one pull at a time (ties: least pulled)."""
    d = X.shape[1]
    cap = max(int(cap), 1)
    if weights is not None:
        def value(m: int) -> float:
            return ridge_value(X, od.round_design(weights, m), Y)

        m = smallest_passing(lambda m: value(m) / (d + m) < target, cap)  # m = 0 is no phase: the code pulls once
        return od.round_design(weights, m), value(m)
    counts = np.zeros(X.shape[0], dtype=np.int64)
    for m, score in greedy_pulls(X, Y, np.eye(d), counts):
        if score / (d + m) < target or m >= cap:
            break
    return counts, score


class FiezXYAdaptiveState(PhasedState):
    """The policy of ``XYAdaptive(variant="fiez")``: phases from the ridge prior A = I (see the module docstring).

    Parameters
    ----------
    algo : XYAdaptive
        The configuration (its ``alpha`` and ``rule``).
    env : LinearModel
        The instance.
    delta : float
        Confidence level in (0, 1).
    """

    def __init__(self, algo: _PhaseOptions, env: LinearModel, delta: float) -> None:
        super().__init__(env, delta)
        self.algo = algo
        d = self.X.shape[1]
        self._rho, self._n = 1.0, d * (d + 1) + 1  # rho_0 and n_0 of the authors' code
        self._end: tuple[float, int] | None = None

    def _plan_phase(self, budget: int) -> np.ndarray:
        Y = od.pairwise_differences(self.Z[self.active])
        weights = od.minmax_design(self.X, Y).weights if self.algo.rule == "design" else None
        target = self.algo.alpha * self._rho / self._n
        counts, rho = fiez_phase(self.X, Y, weights, target, budget)
        self._end = (rho, self.X.shape[1] + int(counts.sum()))
        return counts

    def _end_phase(self, stats: LinearStatistics) -> dict[str, Any]:
        M = np.linalg.inv(np.eye(self.X.shape[1]) + stats.A)
        self.theta = M @ stats.b
        width = self.sigma * np.sqrt(2.0 * fiez_log(self.phase, self.Z.shape[0], self.delta))
        self.active = self.active[~dominated(self.Z[self.active], self.theta, M, width)]
        target = self.algo.alpha * self._rho / self._n
        if self._end is None:  # _plan_phase set it before the phase ran
            raise RuntimeError("a phase ended before it was planned")
        self._rho, self._n = self._end
        return {"value": self._rho, "n": self._n, "target": target, "width": width}
