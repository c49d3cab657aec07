"""Track-and-Stop for one agent (Garivier & Kaufmann, COLT 2016) with Gaussian arms.

Optimal weights (GK16 Thm 5) by 1-D root finding, written out for d(x, y) = (x - y)^2 / (2 sigma^2). Let
arm 1 be the best and Delta_a = mu_1 - mu_a. Then

    g_a(x) = (1 + x) I_{1/(1+x)}(mu_1, mu_a) = x Delta_a^2 / (2 sigma^2 (1 + x)),
    x_a(y) = g_a^{-1}(y) = 2 sigma^2 y / (Delta_a^2 - 2 sigma^2 y)          on [0, Delta_a^2 / (2 sigma^2)),
    F(y) = sum_{a != 1} d(mu_1, m_a) / d(mu_a, m_a) = sum_{a != 1} x_a(y)^2,   m_a = (mu_1 + x_a mu_a) / (1 + x_a).

F rises from 0 to infinity on (0, min_a Delta_a^2 / (2 sigma^2)), so F(y*) = 1 has one root, found by
Brent's method. Then w_1 = 1 / (1 + sum_a x_a(y*)), w_a = x_a(y*) w_1 and T*_GK = (1 + sum_a x_a(y*)) / y*.
With unit variance T*_GK is twice the MF-TaS convention's T* (``optdesign.factored.characteristic_time`` on
``FactorGraph.single_agent``).

Sampling rules (batch forms on the shared grid; t in samples, which are rounds here):

* D-tracking: if some N_a < sqrt(t) - K/2, the under-sampled arms get their deficit (forced exploration,
  ``exploration="dtracking"`` of the shared loop). Otherwise the batch tracks t w*(mu_hat(t)) with
  :func:`bandits.tracking.track`.
* C-tracking: the target is the cumulative sum sum_s w^{eps_s}(mu_hat(s)), where w^eps is the L-infinity
  projection of w* onto {w >= eps} and eps_s = (K^2 + s)^{-1/2} / 2. No forced exploration. Within a batch
  of R rounds mu_hat is fixed, and the R projections are replaced by R w^{eps} at the batch's middle time.
  eps changes by under 1 % across a batch on the 1 % grid.

Stopping is the GLRT of :mod:`bandits.multiagent.glrt`. For one factor it is GK's Chernoff statistic
min_b (mu_hat_best - mu_hat_b)^2 / (2 sigma^2 (1/N_best + 1/N_b)).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from optdesign.errors import InvalidInputError
from optdesign.validation import as_vector, unique_argmax

from ..algorithm import Algorithm
from ..environments import check_sigma
from ..linear.common import check_growth
from ..stopping import Threshold
from ..tracking import track
from ..validation import check_choice
from .environment import FactoredBandit
from .glrt import check_glrt_mode
from .policy import FactoredPolicy, _shared_doc, check_env
from .thresholds import check_threshold

__all__ = ["GKTrackAndStop", "gk_optimal_weights", "project_floor"]

#: the ``tracking`` options of :class:`GKTrackAndStop`
TRACKING = ("D", "C")


def gk_optimal_weights(mu: npt.ArrayLike, sigma: float = 1.0) -> tuple[npt.NDArray[np.float64], float]:
    """Garivier–Kaufmann optimal weights w* and T*_GK for Gaussian arms (module docstring).

    Parameters
    ----------
    mu : array_like, shape (K,)
        Arm means (K >= 2) with a unique best.
    sigma : float
        Noise standard deviation (common to the arms).

    Returns
    -------
    w : ndarray, shape (K,)
        The optimal proportions w* (GK16 Thm 5), summing to 1.
    t_star : float
        T*_GK, with d(x, y) = (x - y)^2 / (2 sigma^2): twice the MF-TaS convention's T* at unit variance.

    Raises
    ------
    InvalidInputError
        Fewer than two means, non-finite means, a tie for the best, or sigma not positive.
    """
    mu = as_vector(mu, "mu")
    if mu.size < 2:
        raise InvalidInputError("mu must hold at least two arm means")
    sigma2 = check_sigma(sigma) ** 2
    best = unique_argmax(mu, "mu")
    others = np.delete(np.arange(mu.size), best)
    gaps2 = (mu[best] - mu[others]) ** 2
    y_max = gaps2.min() / (2.0 * sigma2)

    def x_of(y: float) -> np.ndarray:
        return 2.0 * sigma2 * y / (gaps2 - 2.0 * sigma2 * y)

    # at y_max / 2 the closest arm has x_a = 1, so F >= 1 there: [0, y_max / 2] brackets the root
    y_star = brentq(lambda y: np.sum(x_of(y) ** 2) - 1.0, 0.0, y_max / 2.0, xtol=1e-14 * y_max, rtol=1e-15,
                    maxiter=500)
    x = x_of(y_star)
    w = np.empty(mu.size)
    w[best] = 1.0 / (1.0 + x.sum())
    w[others] = x * w[best]
    return w, float((1.0 + x.sum()) / y_star)


def project_floor(w: npt.NDArray[np.float64], eps: float) -> npt.NDArray[np.float64]:
    """L-infinity projection of w onto {w in simplex, w >= eps}: w' = max(w - c, eps) with sum w' = 1.

    The shift c is found by bisection on [-1, 1] (the w^eps of C-tracking).

    Parameters
    ----------
    w : ndarray, shape (K,)
        A point of the simplex.
    eps : float
        The floor; with eps K >= 1 the result is uniform.

    Returns
    -------
    ndarray, shape (K,)
        The projection, renormalised to sum 1.
    """
    if eps * w.size >= 1.0:
        return np.full(w.size, 1.0 / w.size)
    lo, hi = -1.0, 1.0  # sum max(w - c, eps) is nonincreasing in c
    for _ in range(100):
        c = (lo + hi) / 2.0
        if np.maximum(w - c, eps).sum() > 1.0:
            lo = c
        else:
            hi = c
    out = np.maximum(w - hi, eps)
    return out / out.sum()


@_shared_doc
@dataclass(frozen=True)
class GKTrackAndStop(Algorithm[FactoredBandit]):
    """Garivier–Kaufmann Track-and-Stop (D- or C-tracking) for one agent (module docstring).

    Runs on single-agent instances (``mab``): the plug-in weights w*(mu_hat) are re-solved after every
    batch, and the stopping rule is the factored GLRT, GK's Chernoff statistic for one factor.

    Parameters
    ----------
    tracking : str
        ``"D"`` (default): D-tracking with forced exploration below sqrt(t) - K/2; ``"C"``:
        C-tracking of the cumulated projections w^eps_s, no forced exploration.
%(threshold)s
%(glrt)s
%(growth)s

    Raises
    ------
    InvalidInputError
        An unknown tracking, threshold or glrt option, or a growth outside (0, 1].
    """

    tracking: str = "D"
    threshold: str | Threshold = "practical"
    glrt: str = "exact"
    growth: float = 0.01
    delta_independent = True

    def __post_init__(self) -> None:
        check_choice(self.tracking, "tracking", TRACKING)
        check_threshold(self.threshold)
        check_glrt_mode(self.glrt)
        check_growth(self.growth)

    @property
    def name(self) -> str:
        return "gk-tas"

    def start(self, env: FactoredBandit, delta: float, rng: np.random.Generator) -> FactoredPolicy:
        """The policy; it plays the K arms once, then tracks w*(mu_hat) on the grid of rounds.

        Raises
        ------
        InvalidInputError
            ``env`` is not a single-agent, single-factor :class:`~bandits.multiagent.environment.FactoredBandit`.
        """
        env = check_env(env)
        if env.n_agents != 1 or env.n_factors != 1:
            raise InvalidInputError(f"gk-tas needs a single-agent instance (one agent, one factor); {env.name} has "
                                    f"{env.n_agents} agents and {env.n_factors} factors: use mf-tas")
        return _GKPolicy(self, env, rng)


class _GKPolicy(FactoredPolicy):
    def __init__(self, algo: GKTrackAndStop, env: FactoredBandit, rng: np.random.Generator) -> None:
        super().__init__(env, rng, threshold=algo.threshold, glrt=algo.glrt, cover="greedy",
                         exploration="dtracking" if algo.tracking == "D" else "none", growth=algo.growth)
        self.tracking = algo.tracking
        self.K = env.n_arms
        self.cumulative: np.ndarray | None = None  # C-tracking target sum_s w^{eps_s}
        self.weights = np.full(self.K, 1.0 / self.K)

    def _weights(self) -> npt.NDArray[np.float64]:
        start = time.perf_counter()
        try:
            self.weights, _ = gk_optimal_weights(self.theta_hat(), self.sigma)
        except InvalidInputError:  # empirical tie for the best arm: keep the previous weights
            pass
        self.solve_time += time.perf_counter() - start
        return self.weights

    def _track(self, rounds: int) -> npt.NDArray[np.int64]:
        counts = self.stats.counts
        w = self._weights()
        if self.tracking == "D":
            return track(counts, w, rounds)
        if self.cumulative is None:  # the initial pass pulled every arm once
            self.cumulative = counts.astype(float)
        eps = 0.5 / np.sqrt(self.K**2 + self._rounds + rounds / 2.0)
        self.cumulative = self.cumulative + rounds * project_floor(w, eps)
        return track(counts, self.cumulative, rounds)
