"""One-parameter exponential families of rewards, in their mean parametrisation.

A K-armed problem needs three things from its family: the relative entropy d(x, y) of two of its
distributions (by their means), the sum of n rewards drawn at a mean (the simulation works on sufficient
statistics), and which means are allowed. For every such family the closest alternative to a pair of arms
(i, j) with weights (w_i, w_j) that swaps their order puts both at the weighted mean
m = (w_i mu_i + w_j mu_j) / (w_i + w_j) (Garivier & Kaufmann, COLT 2016, Lemma 3), so the family's kl is all
the generalized likelihood ratio needs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import xlog1py

from optdesign.errors import InvalidInputError

__all__ = ["Bernoulli", "ExponentialFamily", "Gaussian"]


@dataclass(frozen=True)
class ExponentialFamily(ABC):
    """A one-parameter exponential family of reward distributions, indexed by their mean."""

    @property
    def name(self) -> str:
        """Short name (``gaussian``, ``bernoulli``)."""
        return type(self).__name__.lower()

    @abstractmethod
    def kl(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        """Relative entropy d(x, y) = KL(P_x, P_y) of the distributions with means x and y (elementwise).

        Parameters
        ----------
        x, y : array_like
            Means (broadcast together).

        Returns
        -------
        numpy.ndarray
            d(x, y) >= 0, zero where x == y.
        """

    @abstractmethod
    def kl_derivative(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        """The derivative of d(x, y) in its second argument: (y - x) / v(y), v(y) the variance at mean y.

        In the natural parametrisation d(x, y) = A(theta_y) - A(theta_x) - x (theta_y - theta_x), and
        d theta / d y = 1 / v(y), so d/dy d(x, y) = (A'(theta_y) - x) / v(y) = (y - x) / v(y).

        Parameters
        ----------
        x, y : array_like
            Means (broadcast together).

        Returns
        -------
        numpy.ndarray
            d/dy d(x, y), of the sign of y - x.
        """

    @abstractmethod
    def sample_sums(self, means: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Sums of ``counts[k]`` independent rewards of mean ``means[k]`` (one draw of the sum per arm).

        Parameters
        ----------
        means : numpy.ndarray, shape (K,)
            The arms' means.
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The reward sums (0 for an arm not pulled).
        """

    @abstractmethod
    def check_means(self, means: np.ndarray) -> np.ndarray:
        """The means, checked to lie in the family's mean space.

        Parameters
        ----------
        means : numpy.ndarray
            Candidate means.

        Returns
        -------
        numpy.ndarray
            The same means as floats.

        Raises
        ------
        InvalidInputError
            A mean outside the family's mean space.
        """

    def confidence_interval(self, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The KL confidence interval {m : d(mu_k, m) <= level_k} of every arm (LinGame's optimism, UCB indices).

        Parameters
        ----------
        mu : numpy.ndarray, shape (K,)
            The means.
        level : numpy.ndarray, shape (K,)
            The divergence allowed per arm (c / N_k).

        Returns
        -------
        tuple of numpy.ndarray
            ``(lower, upper)`` bounds per arm.

        Raises
        ------
        InvalidInputError
            The family does not give its confidence intervals.
        """
        raise InvalidInputError(f"{self.name} arms do not give KL confidence intervals")

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """Draws of the means from the posterior after ``counts`` pulls with reward ``sums`` (Thompson sampling).

        Parameters
        ----------
        mu : numpy.ndarray, shape (K,)
            The empirical means.
        counts : numpy.ndarray, shape (K,)
            Pulls per arm (positive).
        sums : numpy.ndarray, shape (K,)
            Reward sums per arm.
        size : int
            Number of draws.
        rng : numpy.random.Generator
            The source of the draws.

        Returns
        -------
        numpy.ndarray, shape (size, K)
            One draw of the K means per row.

        Raises
        ------
        InvalidInputError
            The family has no posterior here.
        """
        raise InvalidInputError(f"{self.name} arms have no posterior to draw from")

    @property
    def has_posterior(self) -> bool:
        """Whether :meth:`posterior_draws` is defined for the family."""
        return type(self).posterior_draws is not ExponentialFamily.posterior_draws

    def describe(self) -> dict[str, Any]:
        """The family as a flat record.

        Returns
        -------
        dict
            ``{"family": name, parameter: value, ...}``.
        """
        return {"family": self.name, **{k: v for k, v in self.__dict__.items()}}


@dataclass(frozen=True)
class Gaussian(ExponentialFamily):
    """Gaussian rewards of known standard deviation sigma: d(x, y) = (x - y)^2 / (2 sigma^2).

    Parameters
    ----------
    sigma : float
        Standard deviation of one reward (> 0).

    Raises
    ------
    InvalidInputError
        A nonpositive or non-finite sigma.
    """

    sigma: float = 1.0

    def __post_init__(self) -> None:
        """Refuse a nonpositive or non-finite sigma."""
        if not (np.isfinite(self.sigma) and self.sigma > 0):
            raise InvalidInputError(f"sigma must be a positive number, got {self.sigma!r}")

    def kl(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        return np.square(np.subtract(x, y)) / (2.0 * self.sigma**2)

    def kl_derivative(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        return np.subtract(y, x) / self.sigma**2

    def sample_sums(self, means: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.zeros(means.shape[0])
        pulled = np.flatnonzero(counts)
        n = counts[pulled].astype(float)
        out[pulled] = n * means[pulled] + self.sigma * np.sqrt(n) * rng.standard_normal(pulled.size)
        return out

    def confidence_interval(self, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """mu_k -/+ sigma sqrt(2 level_k) (closed form)."""
        width = self.sigma * np.sqrt(2.0 * level)
        return mu - width, mu + width

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """N(mu_k, sigma^2 / N_k) per arm (the flat prior's posterior)."""
        return mu + self.sigma / np.sqrt(counts) * rng.standard_normal((size, counts.size))

    def check_means(self, means: np.ndarray) -> np.ndarray:
        means = np.asarray(means, dtype=float)
        if not np.all(np.isfinite(means)):
            raise InvalidInputError("Gaussian means must be finite numbers")
        return means


#: means of a Bernoulli kl are kept this far inside (0, 1), where the kl stays finite
BERNOULLI_EPS = 1e-15
#: bisection steps of the Bernoulli confidence bounds
BISECTION_STEPS = 50


@dataclass(frozen=True)
class Bernoulli(ExponentialFamily):
    """Bernoulli rewards: d(x, y) = x log(x / y) + (1 - x) log((1 - x) / (1 - y)), variance v(y) = y (1 - y).

    The kl is evaluated as x log1p((x - y) / y) + (1 - x) log1p((y - x) / (1 - y)), which keeps its relative
    accuracy for close means (about 1e-16 / |x - y|; the two logarithms of ratios lose it, down to negative
    values at |x - y| = 1e-9). y is kept in [BERNOULLI_EPS, 1 - BERNOULLI_EPS], where the kl stays finite.
    """

    def kl(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        x = np.minimum(np.maximum(x, 0.0), 1.0)
        y = np.minimum(np.maximum(y, BERNOULLI_EPS), 1.0 - BERNOULLI_EPS)
        gap = x - y
        return np.asarray(xlog1py(x, gap / y) + xlog1py(1.0 - x, -gap / (1.0 - y)))

    def kl_derivative(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        y = np.minimum(np.maximum(y, BERNOULLI_EPS), 1.0 - BERNOULLI_EPS)
        return np.asarray((y - np.minimum(np.maximum(x, 0.0), 1.0)) / (y * (1.0 - y)))

    def sample_sums(self, means: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.binomial(counts, means).astype(float)

    def confidence_interval(self, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bisection (:data:`BISECTION_STEPS` halvings) between mu_k and each end of [0, 1] (KL-UCB and KL-LCB)."""
        bounds = []
        for edge in (0.0, 1.0):
            inside, outside = mu.copy(), np.full(mu.shape, edge)
            for _ in range(BISECTION_STEPS):
                mid = 0.5 * (inside + outside)
                ok = self.kl(mu, mid) <= level
                inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
            bounds.append(inside)
        return bounds[0], bounds[1]

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """Beta(1 + S_k, 1 + N_k - S_k) per arm (the uniform prior's posterior)."""
        return rng.beta(1.0 + sums, 1.0 + counts - sums, size=(size, counts.size))

    def check_means(self, means: np.ndarray) -> np.ndarray:
        means = np.asarray(means, dtype=float)
        if not np.all((means >= 0) & (means <= 1)):
            raise InvalidInputError("Bernoulli means must lie in [0, 1]")
        return means
