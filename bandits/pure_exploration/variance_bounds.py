"""A delta-correct GLR threshold for Gaussian arms whose variances the learner does not know.

Along one arm's own rewards, with t_n the one-sample t statistic of its true mean after n pulls (nu = n - 1) and
z_n = t_n^2 / nu = (mu_hat - mu)^2 / sigma_hat^2 (sigma_hat^2 the maximum-likelihood variance), the Bayes factor of a
normal prior N(0, g) on the effect size (mean - mu) / sigma against the true mean, with the right-Haar prior
d sigma / sigma on the scale (the t-test Bayes factor of Rouder, Speckman, Sun, Morey & Iverson 2009, at fixed g),

    B_n = (1 + n g)^(-1/2) ((1 + z_n) / (1 + z_n / (1 + n g)))^(n / 2),

is the likelihood ratio of the scale-invariant part of the rewards (Wijsman's representation), so a nonnegative
martingale of mean one whatever sigma (the t-test martingale of Lai 1976; Pérez-Ortiz, Lardy, de Heide & Grünwald
2024). By Ville's inequality B_n < 1 / eta for every n with probability 1 - eta; as B_n increases with z_n, this
caps z_n at z_max(n) = (R - 1) / (1 - R / C), C = 1 + n g, R = (C / eta^2)^(1 / n) (no cap while R >= C). A union
over the K arms (eta = delta / K) and a wrong recommendation a, the best arm being b, give: the pair's statistic stays
below the sum of its two arms' caps::

    EV-GLR:   sum_k (N_k / 2) log(1 + (mu_hat_k - mu_k)^2 / sigma_hat_k^2) <= c(N_a) + c(N_b),
              c(n) = (n / 2) log(1 + z_max(n)),
    plug-in:  sum_k N_k (mu_hat_k - mu_k)^2 / (2 sigma_hat_k^2) <= (N_a z_max(N_a) + N_b z_max(N_b)) / 2,

so stopping when every pair's statistic exceeds its bound is delta-correct (in thresholding, an arm on the wrong side
of the level leaves its own piece below its own cap: the same caps, read per arm; the project's construction, one of the
two routes of Jourdan, Degenne & Kaufmann, ALT 2023: a time-uniform bound on the EV-GLR itself). The bound is
finite once an arm has some twenty pulls; g = :data:`EFFECT_VARIANCE`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cap_bounds import CapThreshold

__all__ = ["EFFECT_VARIANCE", "VarianceThreshold", "mean_deviation_cap"]

#: g, the prior variance of the effect size (gap / sigma) in the mixture: about the gaps of a hard pair; at
#: delta / K = 1e-3 its cap c(n) is within 11 % of the best fixed g's for every count from 50 to 3,000
EFFECT_VARIANCE = 0.1


def mean_deviation_cap(counts: np.ndarray, eta: float, g: float = EFFECT_VARIANCE) -> np.ndarray:
    """z_max(N): with probability 1 - eta, (mu_hat - mu)^2 / sigma_hat^2 <= z_max(N) for every N along one arm
    (module docstring); inf while the mixture caps nothing (fewer than about twenty pulls).

    Parameters
    ----------
    counts : numpy.ndarray
        Pulls N of the arms.
    eta : float
        The error level of one arm, in (0, 1).
    g : float
        The prior variance of the effect size.

    Returns
    -------
    numpy.ndarray
        z_max, elementwise.
    """
    n = np.maximum(np.asarray(counts, dtype=float), 1.0)
    C = 1.0 + n * g
    R = np.exp((2.0 * np.log(1.0 / eta) + np.log(C)) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((R < C) & (n >= 2), (R - 1.0) / (1.0 - R / C), np.inf)


@dataclass(frozen=True)
class VarianceThreshold(CapThreshold):
    """The delta-correct threshold of unknown variances (module docstring): pairwise for best-arm identification, per
    arm for thresholding.

    Parameters
    ----------
    n_arms : int
        K, the number of arms.
    log_divergence : bool
        For the EV-GLR statistic (True) or the plug-in one (False).
    per_arm : bool
        Thresholding's pieces, one per arm, each bounded by its own arm's cap (the same caps, at delta / K).
    """

    n_arms: int
    log_divergence: bool = True
    per_arm: bool = False

    def caps(self, delta: float, counts: np.ndarray) -> np.ndarray:
        """c(N_k) for the EV-GLR, N_k z_max(N_k) / 2 for the plug-in statistic (inf below two pulls)."""
        z = mean_deviation_cap(counts, delta / self.n_arms)
        with np.errstate(invalid="ignore"):
            return np.where(counts >= 2, 0.5 * counts * (np.log1p(z) if self.log_divergence else z), np.inf)
