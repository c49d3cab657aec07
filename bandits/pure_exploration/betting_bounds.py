"""A delta-correct GLR threshold for arms with rewards in [0, 1], the learner knowing nothing else of them.

Along arm k's rewards X_1, X_2, ... of mean mu in (0, 1), every bet u in [0, 1] gives the wealth
W_n(u) = prod_t (u X_t / mu + (1 - u) (1 - X_t) / (1 - mu)), a nonnegative martingale of mean one (each factor has
mean one). Honda & Takemura's dual writes KL_inf through it: n KL_inf(F_hat_n, mu) <= log max_u W_n(u) (the bet
u = mu + lambda mu (1 - mu)). Cover's universal portfolio with the prior Beta(1/2, 1/2) on u, M_n = E_u W_n(u), is
a martingale of mean one, and loses at most a factor V(n) = sqrt(pi) Gamma(n + 1) / Gamma(n + 1/2) <= 2 sqrt(n + 1)
to the best bet in hindsight on any sequence (Cover & Ordentlich 1996, two assets). With b the best arm, the product
M^(a) M^(b) of two arms' mixtures is a martingale too (one arm moves at a time); by Ville's inequality and a union over
the K - 1 arms a, with probability 1 - delta a wrong recommendation a leaves its pair's statistic below::

    N_a KL_inf(F_hat_a, mu_a) + N_b KL_inf(F_hat_b, mu_b) < log((K - 1) / delta) + log V(N_a) + log V(N_b),

the sum of the arms' caps c(N) = log((K - 1) / delta) / 2 + log V(N) (the project's construction, read pair by pair
through :class:`bandits.pure_exploration.cap_bounds.CapBounds`). The cap grows as log(pi N) / 2 per arm. In
thresholding, an arm on the wrong side of the level leaves its own piece, N_k KL_inf(F_hat_k, tau) <=
N_k KL_inf(F_hat_k, mu_k), below log(K / delta) + log V(N_k) (a union over the K arms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optdesign.validation import as_count

from .cap_bounds import CapThreshold

__all__ = ["BettingThreshold", "portfolio_regret"]


def portfolio_regret(counts: np.ndarray) -> np.ndarray:
    """log V(N): the most the Beta(1/2, 1/2) mixture of two-asset bets loses to the best bet in hindsight over N
    rounds, log(sqrt(pi) Gamma(N + 1) / Gamma(N + 1/2)) (module docstring).

    Parameters
    ----------
    counts : numpy.ndarray
        The rounds N (pulls of an arm), nonnegative.

    Returns
    -------
    numpy.ndarray
        log V(N), elementwise (0 at N = 0).
    """
    from scipy.special import gammaln

    n = np.asarray(counts, dtype=float)
    return 0.5 * np.log(np.pi) + gammaln(n + 1.0) - gammaln(n + 0.5)


@dataclass(frozen=True)
class BettingThreshold(CapThreshold):
    """The delta-correct threshold of arms with rewards in [0, 1] (module docstring): pairwise for best-arm
    identification, per arm for thresholding.

    Parameters
    ----------
    n_arms : int
        K, the number of arms.
    per_arm : bool
        Thresholding's pieces, one per arm: every arm's martingale at delta / K, the cap log(K / delta) + log V(N).
    pairs : int, optional
        The pairs a wrong answer may misorder, the union of the pairwise bound (default K - 1, best-arm
        identification; m (K - m) for the top m).
    """

    n_arms: int
    per_arm: bool = False
    pairs: int | None = None

    def __post_init__(self) -> None:
        as_count(self.n_arms, "n_arms (K, at least 2)", minimum=2)
        as_count(self.pairs if self.pairs is not None else 1, "pairs (of the union)")

    def caps(self, delta: float, counts: np.ndarray) -> np.ndarray:
        """c(N_k) = log(P / delta) / 2 + log V(N_k) over P pairs (P = K - 1 by default), log(K / delta) + log V(N_k)
        (single arms)."""
        pairs = self.n_arms - 1 if self.pairs is None else self.pairs
        level = np.log(self.n_arms / delta) if self.per_arm else 0.5 * np.log(pairs / delta)
        return level + portfolio_regret(counts)
