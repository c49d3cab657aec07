"""K-armed bandits simulated through sufficient statistics: rewards from a one-parameter exponential family (reward
sums), Gaussian rewards of unequal variances (reward sums and sums of squares), or rewards in [0, 1] on a finite
support (how many rewards fell on each support point)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InvalidInputError
from optdesign.identification import check_bounded_arms
from optdesign.validation import as_vector

from ..core.environments import pull_doc
from .families import ExponentialFamily, Gaussian

__all__ = ["ArmMeans", "BoundedBandit", "HeteroscedasticBandit", "KArmedBandit"]


@dataclass(frozen=True)
class ArmMeans:
    """Arms with means: their number and ``best_item``, the best arm (the first on a tie: best-arm identification
    refuses a tie when a run starts, the other questions may be asked of such instances).

    Parameters
    ----------
    means : array_like, shape (K,)
        The arms' means.
    """

    means: np.ndarray
    best_item: int = field(init=False)

    def record_means(self, means: np.ndarray) -> None:
        """Keep the checked means and their best arm.

        Parameters
        ----------
        means : numpy.ndarray, shape (K,)
            The means, checked.

        Raises
        ------
        InvalidInputError
            Fewer than two arms.
        """
        if means.size < 2:
            raise InvalidInputError("a K-armed bandit needs at least two arms")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "best_item", int(np.argmax(means)))

    @property
    def n_arms(self) -> int:
        """Number K of arms."""
        return int(self.means.size)


@dataclass(frozen=True)
class KArmedBandit(ArmMeans):
    """K arms with means ``means`` and rewards from ``family`` (:class:`ArmMeans`).

    A batch of n pulls of arm k is one draw of the sum of n rewards (Gaussian: one normal draw;
    Bernoulli: one binomial draw), exact in law.

    Parameters
    ----------
    means : array_like, shape (K,)
        The arms' means (at least two arms).
    family : ExponentialFamily
        The reward family (Gaussian with sigma = 1 by default).
    name : str
        Label in result tables.

    Raises
    ------
    InvalidInputError
        Fewer than two arms, or means outside the family's mean space.
    """

    family: ExponentialFamily = field(default_factory=Gaussian)
    name: str = "karmed"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "karmed"

    def __post_init__(self) -> None:
        """Check the means and record the best arm."""
        self.record_means(self.family.check_means(as_vector(self.means, "means")))

    @pull_doc
    def pull(self, counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch: entry k sums ``counts[k]`` rewards of arm k.

        %(batch)s
        numpy.ndarray, shape (K,)
            The reward sums.
        """
        return self.family.sample_sums(self.means, np.asarray(counts, dtype=np.int64), rng)


@dataclass(frozen=True)
class HeteroscedasticBandit(ArmMeans):
    """K Gaussian arms N(mu_k, sigma_k^2); a batch returns, per arm, the reward sum and the sum of squares.

    Parameters
    ----------
    means : array_like, shape (K,)
        The means (at least two arms).
    sigmas : array_like, shape (K,)
        The standard deviations (positive).
    name : str
        Label in result tables.

    Raises
    ------
    InvalidInputError
        Fewer than two arms, non-finite means, or standard deviations that are not positive, one per arm.
    """

    sigmas: np.ndarray
    name: str = "heteroscedastic"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "heteroscedastic"

    def __post_init__(self) -> None:
        """Check the arms and record the best one."""
        means, sigmas = as_vector(self.means, "means"), as_vector(self.sigmas, "sigmas")
        if sigmas.shape != means.shape or not np.all(sigmas > 0):
            raise InvalidInputError(f"sigmas must be {means.size} positive numbers, one per arm")
        self.record_means(means)
        object.__setattr__(self, "sigmas", sigmas)

    @pull_doc
    def pull(self, counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """The sufficient statistics of a batch: column 0 the reward sums, column 1 the sums of squares.

        %(batch)s
        numpy.ndarray, shape (K, 2)
            Per arm, the sum and the sum of squares of its ``counts[k]`` rewards (zeros for an arm not pulled).
        """
        n = np.asarray(counts, dtype=np.int64)
        sums = rng.normal(n * self.means, np.sqrt(n) * self.sigmas)
        centred = self.sigmas**2 * rng.chisquare(np.maximum(n - 1, 1))  # chi^2_{n-1}; one degree drawn at n <= 1
        squares = np.where(n > 1, centred, 0.0) + np.where(n > 0, sums**2 / np.maximum(n, 1), 0.0)
        return np.stack([np.where(n > 0, sums, 0.0), squares], axis=1)


@dataclass(frozen=True)
class BoundedBandit(ArmMeans):
    """K arms with rewards in [0, 1]: arm k's reward is ``support[l]`` with probability ``probs[k, l]``; a batch
    returns, per arm, how many of its rewards fell on each support point (multinomial, exact in law).

    Parameters
    ----------
    support : array_like, shape (L,)
        The reward values, in [0, 1].
    probs : array_like, shape (K, L)
        One distribution per arm (rows summing to one).
    name : str
        Label in result tables.

    Raises
    ------
    InvalidInputError
        A support outside [0, 1], rows that are not distributions on it, or fewer than two arms.
    """

    support: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0]))
    probs: np.ndarray = field(default_factory=lambda: np.empty((0, 2)))
    means: np.ndarray = field(init=False)
    name: str = "bounded"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "bounded"

    def __post_init__(self) -> None:
        """Check the distributions and record the means and the best arm."""
        probs, support = check_bounded_arms(self.probs, self.support)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "support", support)
        self.record_means(probs @ support)

    @pull_doc
    def pull(self, counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """How many rewards of each arm fell on each support point.

        %(batch)s
        numpy.ndarray, shape (K, L)
            Row k: the counts of arm k's ``counts[k]`` rewards on the support (reward sums: this times the support).
        """
        return rng.multinomial(np.asarray(counts, dtype=np.int64), self.probs).astype(float)
