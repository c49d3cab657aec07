"""K-armed bandits with rewards from a one-parameter exponential family, simulated through reward sums."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InvalidInputError
from optdesign.validation import as_vector

from .families import ExponentialFamily, Gaussian

__all__ = ["KArmedBandit"]


@dataclass(frozen=True)
class KArmedBandit:
    """K arms with means ``means`` and rewards from ``family``; ``best_item`` is the best arm (the first on a tie:
    best-arm identification refuses a tie when a run starts, the other questions may be asked of such instances).

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

    means: np.ndarray
    family: ExponentialFamily = field(default_factory=Gaussian)
    name: str = "karmed"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "karmed"
    best_item: int = field(init=False)

    def __post_init__(self) -> None:
        """Check the means and record the best arm."""
        means = self.family.check_means(as_vector(self.means, "means"))
        if means.size < 2:
            raise InvalidInputError("a K-armed bandit needs at least two arms")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "best_item", int(np.argmax(means)))

    @property
    def n_arms(self) -> int:
        """Number K of arms."""
        return int(self.means.size)

    def pull(self, counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch: entry k sums ``counts[k]`` rewards of arm k.

        Parameters
        ----------
        counts : array_like of int, shape (K,)
            Pulls per arm.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The reward sums.
        """
        return self.family.sample_sums(self.means, np.asarray(counts, dtype=np.int64), rng)
