"""APT, the anytime parameter-free thresholding rule (Locatelli, Gutzeit & Carpentier, ICML 2016): after a warm-up
of ``init_pulls`` pulls of every arm, pull argmin_i sqrt(n_i) (|mu_hat_i - tau| + eps), mu_hat the empirical means;
the graph is not used (the baseline of LeJeune et al. 2020)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optdesign.validation import as_count

from ..core.validation import check_choice
from .algorithms import TIES, ThresholdingAlgorithm, ThresholdingPolicy, argmin_index, one_pull
from .environment import GraphThresholdingBandit

__all__ = ["APT"]


@dataclass(frozen=True)
class APT(ThresholdingAlgorithm):
    """APT (Locatelli et al. 2016): after ``init_pulls`` pulls of every arm (round robin; 1 in the original,
    2 in the GrAPL experiments' code), pull argmin_i sqrt(n_i) (|mu_hat_i - tau| + eps) with plain
    empirical means. Ignores the graph. Before an arm's first pull its estimate is tau.

    The options are also the CLI's ``apt:key=value`` keys; the index's eps is the instance's.

    Parameters
    ----------
    init_pulls : int
        Pulls of every arm before the index rule starts (round robin), at least 1.
    ties : str
        ``"random"`` breaks ties of the index (up to rounding) uniformly at random, ``"first"`` by the lowest
        index.

    Raises
    ------
    InvalidInputError
        ``init_pulls`` not a positive integer, or an unknown ``ties``.
    """

    init_pulls: int = 2
    ties: str = "random"

    def __post_init__(self) -> None:
        as_count(self.init_pulls, "init_pulls")
        check_choice(self.ties, "ties", TIES)

    @property
    def name(self) -> str:
        return "apt"

    def start(self, env: GraphThresholdingBandit, rng: np.random.Generator) -> ThresholdingPolicy:
        """APT's policy: empirical means, with a warm-up of ``init_pulls`` per arm."""
        return _APTPolicy(self, env, rng)

    def warmup_pulls(self, n_arms: int) -> int:
        """``init_pulls`` pulls of each of the N arms."""
        return int(self.init_pulls) * int(n_arms)


class _APTPolicy(ThresholdingPolicy):
    def __init__(self, alg: APT, env: GraphThresholdingBandit, rng: np.random.Generator):
        self.env, self.rng, self.init, self.ties = env, rng, int(alg.init_pulls), alg.ties
        self.counts = np.zeros(env.n_arms, dtype=np.int64)
        self.sums = np.zeros(env.n_arms)

    def warmup(self) -> npt.NDArray[np.int64]:
        return np.full(self.env.n_arms, self.init, dtype=np.int64)

    def next_batch(self, budget: int) -> npt.NDArray[np.int64]:
        n = self.env.n_arms
        done = int(self.counts.sum())
        if done < self.init * n:  # round robin 0..N-1, init times: the next min(budget, left) of that sequence
            k = min(budget, self.init * n - done)
            return np.bincount(np.arange(done, done + k) % n, minlength=n)
        mu = self.sums / self.counts
        z = np.sqrt(self.counts) * (np.abs(mu - self.env.tau) + self.env.eps)
        return one_pull(n, argmin_index(z, self.ties, self.rng))

    def observe(self, counts: npt.NDArray[np.int64], sums: npt.NDArray[np.float64]) -> None:
        self.counts += counts
        self.sums += sums

    def estimate(self) -> npt.NDArray[np.float64]:
        return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), self.env.tau)
