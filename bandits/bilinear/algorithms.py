"""Rizk et al. (2021) Algorithm 2 (``gbb-g-allocation``): every round each node draws its arm i.i.d. from
the G-optimal node design mu*, theta = vec(M) is estimated by OLS over the edge observations, and the
GLRT over the K^2 edge arms stops with the threshold (S1); Alg. 1 (:mod:`.maxcut`) turns the final
estimate M_hat into a joint assignment."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

import optdesign as od
from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm, Policy
from ..core.statistics import GLR, LinearStatistics
from ..core.stopping import BilinearThreshold, PracticalThreshold, Threshold
from ..core.thresholds import ThresholdContext, check_threshold_option, make_threshold, threshold_names
from ..core.tracking import next_checkpoint
from ..linear.common import check_growth
from .assignments import DRAW_CHUNK
from .environment import GraphicalBilinearBandit
from .maxcut import algorithm1_allocation

__all__ = ["BILINEAR_THRESHOLDS", "RandomizedGAllocation", "draw_assignments"]

#: the threshold names of :class:`RandomizedGAllocation` (:data:`bandits.core.thresholds.FAMILY_THRESHOLDS`)
BILINEAR_THRESHOLDS = threshold_names("bilinear")


def draw_assignments(weights: npt.NDArray[np.float64], n_nodes: int, rounds: int,
                     rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """``rounds`` x ``n_nodes`` node arms drawn i.i.d. from ``weights`` (inverse-CDF sampling).

    Parameters
    ----------
    weights : ndarray, shape (K,)
        Nonnegative weights of the node arms (normalised here; the last arm takes any rounding leftover).
    n_nodes : int
        Number of nodes n.
    rounds : int
        Number of rounds R.
    rng : numpy.random.Generator
        Source of the draws (R n uniforms).

    Returns
    -------
    ndarray of int64, shape (rounds, n_nodes)
        Arm index of every node in every round.
    """
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    a = np.searchsorted(cdf, rng.random((rounds, n_nodes)), side="right")
    return np.minimum(a, len(weights) - 1)


@dataclass(frozen=True)
class RandomizedGAllocation(Algorithm):
    """Rizk et al. Alg. 2: every round each node draws x ~ mu* i.i.d. (mu* the G-optimal design on X),
    theta_hat = OLS over all m t edge observations, stop by the GLRT over the K^2 edge arms.

    In expectation the edge design is mu* (x) mu*, G-optimal on the edge arms with value d^2 (Thm 5.1),
    so A_t ~ m t A(mu*) (x) A(mu*). Thresholds (``threshold``):

    * ``"s1"`` (default): (S1), 4 log(6 m^2 t^2 K^4 / (delta pi)) with t in rounds
      (:class:`~bandits.core.stopping.BilinearThreshold`, printed form);
    * ``"practical"``: log((1 + log n) / delta) with n = m t observations;
    * ``"theory"``: :class:`~bandits.core.stopping.LinearTheoryThreshold` with A_0 the information of
      the rounds up to the first checkpoint where A is invertible (node draws ignore the rewards, so
      A_0 is independent of the noise and may serve as the fixed regulariser);
    * a :class:`~bandits.core.stopping.Threshold` instance, called with t = rounds if it is a
      ``BilinearThreshold`` and t = observations otherwise.

    The stopping rule is checked at the end of every batch; batches end on the geometric grid of
    rounds t -> max(t + 1, ceil(t (1 + growth))). Until the observed edge arms span R^{d^2} (random
    early rounds, e.g. a star whose centre has played one arm only) A is singular and the run just
    keeps sampling. Recommendation: the empirical best edge arm k K + k'; the policy's
    ``allocation()`` gives Alg. 1's node assignment from M_hat (what the paper finally returns).

    Parameters
    ----------
    threshold : str or Threshold
        The stopping threshold beta: ``"s1"`` (default), ``"practical"``, ``"theory"`` or an instance (above).
    design : str
        The node design mu*: ``"g"`` (default), the G-optimal design on X (:func:`optdesign.g_optimal`,
        Alg. 2), or ``"bilinear"``, the node weights of :func:`optdesign.bilinear_design`.
    growth : float
        Relative step of the grid of rounds at which the stopping rule is checked (0.01: every 1 %).

    Raises
    ------
    InvalidInputError
        An unknown threshold or design, or a growth outside (0, 1].
    """

    threshold: str | Threshold = "s1"
    design: str = "g"
    growth: float = 0.01
    delta_independent = True

    def __post_init__(self) -> None:
        check_threshold_option(self.threshold, "bilinear")
        if self.design not in ("g", "bilinear"):
            raise InvalidInputError(f"design must be 'g' (od.g_optimal) or 'bilinear' (od.bilinear_design); "
                                    f"got {self.design!r}")
        check_growth(self.growth)

    @property
    def name(self) -> str:
        return "gbb-g-allocation"

    def start(self, env: GraphicalBilinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """Solve the node design mu* and return the policy (its ``allocation()`` gives Alg. 1's assignment).

        Raises
        ------
        InvalidInputError
            ``env`` is not a :class:`~bandits.bilinear.environment.GraphicalBilinearBandit`.
        """
        if not isinstance(env, GraphicalBilinearBandit):
            raise InvalidInputError(f"{self.name} runs on a GraphicalBilinearBandit, got {type(env).__name__}")
        return _GAllocationPolicy(self, env, rng)


class _GAllocationPolicy(Policy):
    """Linear GLRT over the edge arms (X = Z = the K^2 edge arms in R^{d^2}), fed by random rounds; recommendation:
    the empirical best edge arm (0 until the observed edge arms span R^{d^2})."""

    def __init__(self, algo: RandomizedGAllocation, env: GraphicalBilinearBandit, rng: np.random.Generator):
        deferred = algo.threshold == "theory"  # replaced once A is invertible
        graph = ThresholdContext(graph=(env.n_edges, env.n_node_arms))
        self.threshold = PracticalThreshold() if deferred else make_threshold(algo.threshold, graph, "bilinear")
        self.X, self.sigma = env.Z, env.sigma
        self.stats = LinearStatistics(self.X)
        self._glr: GLR | None = None
        self.algo, self.env, self.rng = algo, env, rng
        self._deferred = deferred
        start = time.perf_counter()
        if algo.design == "g":
            mu = od.g_optimal(env.X).weights
        else:
            mu = od.bilinear_design(env.X).node_weights
        self.solve_time = time.perf_counter() - start
        mu = np.clip(mu, 0.0, None)
        self.mu = mu / mu.sum()
        self.t = 0
        self._pending_rounds = 0  # rounds of the batch handed out, counted once observed
        self._spanning = False

    @property
    def rounds(self) -> int:
        return self.t

    def next_batch(self, budget: int) -> np.ndarray:
        m, n = self.env.n_edges, self.env.n_nodes
        R = min(next_checkpoint(self.t, self.algo.growth) - self.t, budget // m)
        if R == 0:  # budget below one round: observe the first `budget` edges of one round (not counted)
            self._pending_rounds = 0
            a = draw_assignments(self.mu, n, 1, self.rng)
            K = self.env.n_node_arms
            e = self.env.edges[:budget]
            return np.bincount(a[0, e[:, 0]] * K + a[0, e[:, 1]], minlength=K * K).astype(np.int64)
        counts = np.zeros(self.env.n_arms, dtype=np.int64)
        step = max(1, DRAW_CHUNK // max(n, m))
        for lo in range(0, R, step):
            counts += self.env.edge_counts(draw_assignments(self.mu, n, min(step, R - lo), self.rng))
        self._pending_rounds = R
        return counts

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.stats.add(counts, sums)
        self._glr = None
        self.t += self._pending_rounds
        self._pending_rounds = 0
        if not self._spanning:
            seen = self.X[self.stats.counts > 0]
            self._spanning = seen.shape[0] >= seen.shape[1] and np.linalg.matrix_rank(seen) == seen.shape[1]
            if self._spanning and self._deferred:
                self.threshold = make_threshold("theory", ThresholdContext(information=self.stats.A), "bilinear")

    def glr(self) -> GLR | None:
        if not self._spanning:
            return None
        if self._glr is None:
            self._glr = self.stats.glr(self.X, self.sigma)
        return self._glr

    def stopped(self, delta: float) -> bool:
        glr = self.glr()
        if glr is None:
            return False
        t = self.t if isinstance(self.threshold, BilinearThreshold) else self.stats.n
        return glr.value > self.threshold(t, delta, self.stats.A)

    def M_hat(self) -> np.ndarray:
        """unvec(theta_hat), the OLS estimate of M (d x d)."""
        d = self.env.dim
        return self.stats.theta_hat().reshape(d, d)

    def allocation(self) -> np.ndarray:
        """Alg. 1's joint assignment computed from M_hat (what Rizk et al.'s procedure returns)."""
        return algorithm1_allocation(self.env.graph, self.env.X, self.M_hat())

    def recommend(self) -> int:
        glr = self.glr()
        return 0 if glr is None else glr.best

    def stop_statistic(self) -> dict[str, Any]:
        glr = self.glr()
        return {"glr": glr.value, "best": glr.best, "rounds": self.t} if glr is not None else {"rounds": self.t}
