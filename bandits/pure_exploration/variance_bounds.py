"""A delta-correct GLR threshold for Gaussian arms whose variances the learner does not know.

Two time-uniform bounds, each valid along one arm's own sequence of rewards whatever the sampling rule, combine into
a threshold per pair of arms (the project's construction; the approach of Jourdan, Degenne & Kaufmann, ALT 2023,
who bound the mean and the variance of every arm in a box):

* the means (Kaufmann & Koolen 2021, as :class:`bandits.core.stopping.Kk21Threshold` uses it): with probability at
  least 1 - delta / 2, for every time t and every pair {a, b} holding the best arm,
  s_a + s_b <= beta(t) = Kk21(t, delta / 2), where s_k = N_k (mu_hat_k - mu_k)^2 / (2 sigma_k^2);
* the variances: after N pulls of an arm, W = N sigma_hat^2 / sigma^2 (sigma_hat^2 the maximum-likelihood variance)
  is a sum of m = N - 1 independent chi^2_1 variables (Helmert's contrasts). For lambda > 0,
  exp(-lambda W_m + (m / 2) log(1 + 2 lambda)) is a nonnegative martingale of mean one, so by Ville's inequality
  W_m >= ((m / 2) log(1 + 2 lambda) - log(1 / eta)) / lambda for every m with probability 1 - eta. A union over the
  grid lambda_i (optimal at m = 2^i, eta_i = eta 6 / (pi^2 (i + 1)^2)) and over the K arms (eta = delta / (2 K))
  gives sigma_hat_k^2 / sigma_k^2 >= rho_k(N_k) for every arm and time with probability 1 - delta / 2.

On both events a wrong recommendation a (the best arm being b) needs the statistic of the pair (a, b) to stay below::

    plug-in:  sum_k N_k (mu_hat_k - mu_k)^2 / (2 sigma_hat_k^2) <= beta / min(rho_a, rho_b),
    EV-GLR:   sum_k (N_k / 2) log(1 + (mu_hat_k - mu_k)^2 / sigma_hat_k^2)
              <= max over s_a + s_b <= beta of sum_k (N_k / 2) log(1 + 2 s_k / (N_k rho_k)),

the last a water-filling: rho_k + 2 s_k / N_k = L on the arms it raises. Stopping when every pair's statistic
exceeds its bound is therefore delta-correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..core.stopping import Kk21Threshold, Threshold

__all__ = ["PairThresholds", "VarianceThreshold", "variance_lower_bound"]

#: the grid lambda_i is optimal at m = 2^i, i < GRID: every count a run can reach
GRID = 64


@lru_cache(maxsize=64)
def _grid(eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(lambda_i, log(1 / eta_i)) for the union of :func:`variance_lower_bound` at level ``eta``."""
    from scipy.optimize import minimize_scalar

    levels = np.log(1.0 / eta) + np.log(np.pi**2 * np.arange(1, GRID + 1) ** 2 / 6.0)
    lams = np.empty(GRID)
    for i, level in enumerate(levels):
        m = 2.0**i
        res = minimize_scalar(lambda s, m=m, level=level: -(0.5 * m * np.log1p(2 * np.exp(s)) - level) / np.exp(s),
                              bounds=(-40.0, 10.0), method="bounded", options={"xatol": 1e-10})
        lams[i] = float(np.exp(res.x))
    return lams, levels


def variance_lower_bound(counts: np.ndarray, eta: float) -> np.ndarray:
    """rho(N): with probability 1 - eta, sigma_hat^2 / sigma^2 >= rho(N) for every N along one arm (module docstring).

    Parameters
    ----------
    counts : numpy.ndarray
        Pulls N of the arms (0 or 1 give rho = 0: no variance is seen yet).
    eta : float
        The error level of one arm, in (0, 1).

    Returns
    -------
    numpy.ndarray
        rho in [0, 1), elementwise.
    """
    lams, levels = _grid(float(eta))
    N = np.asarray(counts, dtype=float)
    m = np.maximum(N - 1.0, 0.0)[..., None]
    W = np.max((0.5 * m * np.log1p(2 * lams) - levels) / lams, axis=-1)
    return np.where(N >= 2, np.maximum(W, 0.0) / np.maximum(N, 1.0), 0.0)


@dataclass(frozen=True)
class PairThresholds:
    """The bound of every pair (best, j) at one time and delta (module docstring).

    Parameters
    ----------
    beta : float
        The means' deviation bound beta(t) = Kk21(t, delta / 2).
    rho : numpy.ndarray, shape (K,)
        The arms' variance lower bounds rho_k(N_k).
    counts : numpy.ndarray, shape (K,)
        The pulls N_k.
    log_divergence : bool
        The bound of the EV-GLR statistic (else the plug-in one's).
    """

    beta: float
    rho: np.ndarray
    counts: np.ndarray
    log_divergence: bool

    def of_pairs(self, best: int, others: np.ndarray) -> np.ndarray:
        """The bound of the pair (best, j) for every j of ``others`` (inf while an arm's rho is 0).

        Parameters
        ----------
        best : int
            The recommended arm.
        others : numpy.ndarray of int
            The other arms.

        Returns
        -------
        numpy.ndarray
            One bound per other arm.
        """
        ra, rb = self.rho[best], self.rho[others]
        if not self.log_divergence:
            low = np.minimum(ra, rb)
            return np.where(low > 0, self.beta / np.where(low > 0, low, 1.0), np.inf)
        na, nb = float(self.counts[best]), self.counts[others].astype(float)
        # the arm of the smaller rho fills first; both fill once the level passes the larger rho
        small, large = np.minimum(ra, rb), np.maximum(ra, rb)
        n_small = np.where(ra <= rb, na, nb)
        level = small + 2.0 * self.beta / n_small
        both = level > large
        level = np.where(both, (2.0 * self.beta + na * ra + nb * rb) / (na + nb), level)
        with np.errstate(divide="ignore"):
            value = 0.5 * (na * np.log(np.maximum(level / ra, 1.0)) + nb * np.log(np.maximum(level / rb, 1.0)))
        return np.where(small > 0, value, np.inf)

    @property
    def floor(self) -> float:
        """A number at most every pair's bound (rho < 1 and at least two pulls per arm): a GLR statistic known to be
        at most this cannot stop."""
        return float(np.log1p(self.beta)) if self.log_divergence else self.beta


@dataclass(frozen=True)
class VarianceThreshold(Threshold):
    """The delta-correct pairwise threshold of best-arm identification with unknown variances (module docstring).

    Parameters
    ----------
    n_arms : int
        K, the number of arms.
    log_divergence : bool
        For the EV-GLR statistic (True) or the plug-in one (False).
    """

    n_arms: int
    log_divergence: bool = True

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> PairThresholds:  # type: ignore[override]
        """The pairs' bounds at time ``t``; ``A`` is the counts (:meth:`Problem.threshold_argument`)."""
        counts = np.asarray(A, dtype=float)
        beta = Kk21Threshold(self.n_arms)(t, delta / 2.0)
        rho = variance_lower_bound(counts, delta / (2.0 * self.n_arms))
        return PairThresholds(beta, rho, counts, self.log_divergence)

    @property
    def name(self) -> str:
        """``theory`` (the problem's own delta-correct threshold)."""
        return "theory"
