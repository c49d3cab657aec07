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
from scipy.special import xlog1py, xlogy

from optdesign.errors import InvalidInputError

from ..core.validation import is_number

__all__ = ["BISECTION_STEPS", "POSITIVE_EPS", "Bernoulli", "Exponential", "ExponentialFamily", "Gaussian", "Poisson"]


@dataclass(frozen=True)
class ExponentialFamily(ABC):
    """A one-parameter exponential family of reward distributions, indexed by their mean."""

    @property
    def name(self) -> str:
        """Short name (``gaussian``, ``bernoulli``, ``poisson``, ``exponential``)."""
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
        if not (is_number(self.sigma) and self.sigma > 0):
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


#: Poisson and exponential means in a kl are kept this far above 0 (exponential: both means), where it stays finite
POSITIVE_EPS = 1e-15
#: the largest float: a kl's second argument is kept at most this large (an upper bound bracketed by doubling)
FLOAT_MAX = float(np.finfo(float).max)
#: doublings allowed when an upper confidence bound on a half-line is bracketed (2^1100 overflows anyway)
DOUBLING_STEPS = 1100


def _bisect(kl: Any, mu: np.ndarray, level: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """The end of {m : kl(mu, m) <= level} between ``inside`` (in the set) and ``outside`` (beyond it), by
    :data:`BISECTION_STEPS` halvings; the last point found inside the set."""
    for _ in range(BISECTION_STEPS):
        mid = inside + 0.5 * (outside - inside)  # no overflow near the largest float
        ok = kl(mu, mid) <= level
        inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
    return inside


def _half_line_interval(kl: Any, mu: np.ndarray, level: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The KL confidence interval of a family whose means fill a half-line above 0: bisection between mu_k and 0
    below; above, the end is bracketed by doubling from ``start`` (> mu_k) until the kl exceeds the level, then
    bisected between the last two points."""
    mu, level = np.asarray(mu, dtype=float), np.broadcast_to(np.asarray(level, dtype=float), np.shape(mu))
    lower = _bisect(kl, mu, level, mu.copy(), np.zeros(mu.shape))
    inside, outside = mu.copy(), np.minimum(np.asarray(start, dtype=float), FLOAT_MAX)
    for _ in range(DOUBLING_STEPS):
        ok = (kl(mu, outside) <= level) & (outside < FLOAT_MAX)
        if not ok.any():
            break
        inside, outside = np.where(ok, outside, inside), np.where(ok, 2.0 * np.minimum(outside, FLOAT_MAX / 2), outside)
    return lower, _bisect(kl, mu, level, inside, outside)


@dataclass(frozen=True)
class Poisson(ExponentialFamily):
    """Poisson rewards: d(x, y) = x log(x / y) - x + y (d(0, y) = y), variance v(y) = y.

    Close means: x log1p((x - y) / y) - (x - y) (relative accuracy kept, as Bernoulli's); distant ones: the logarithms.
    y >= :data:`POSITIVE_EPS` keeps d(x, 0) finite. A mean 0 is allowed (an arm that never rewards, or an estimate).
    """

    def kl(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        x = np.maximum(x, 0.0)
        y = np.clip(y, POSITIVE_EPS, FLOAT_MAX)
        gap = x - y
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = gap / y
            near = xlog1py(x, t) - gap
            far = xlogy(x, x) - xlogy(x, y) + y - x
        return np.asarray(np.where(np.abs(t) < 0.5, near, far))

    def kl_derivative(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        y = np.maximum(y, POSITIVE_EPS)
        return np.asarray((y - np.maximum(x, 0.0)) / y)

    def sample_sums(self, means: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The sum of n Poisson(mu) rewards is Poisson(n mu): one draw per arm."""
        return rng.poisson(np.asarray(counts) * np.asarray(means, dtype=float)).astype(float)

    def confidence_interval(self, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bisection between mu_k and 0 below; above, the end bracketed by doubling from 2 mu_k + level_k, then
        bisected (KL-LCB and KL-UCB on [0, inf))."""
        mu = np.asarray(mu, dtype=float)
        return _half_line_interval(self.kl, mu, level, 2.0 * mu + np.asarray(level, dtype=float) + POSITIVE_EPS)

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """Gamma(shape 1/2 + S_k, rate N_k) per arm: the posterior under Jeffreys' prior mu^(-1/2)."""
        counts = np.asarray(counts, dtype=float)
        return rng.gamma(0.5 + np.asarray(sums, dtype=float), 1.0 / counts, size=(size, counts.size))

    def check_means(self, means: np.ndarray) -> np.ndarray:
        means = np.asarray(means, dtype=float)
        if not np.all(np.isfinite(means) & (means >= 0)):
            raise InvalidInputError("Poisson means must be nonnegative finite numbers")
        return means


@dataclass(frozen=True)
class Exponential(ExponentialFamily):
    """Exponential rewards of mean mu (rate 1 / mu): d(x, y) = x / y - 1 - log(x / y), variance v(y) = y^2.

    Close means: t - log1p(t), t = (x - y) / y (relative accuracy kept); distant ones: x / y - 1 + log y - log x. Both
    means are kept at least :data:`POSITIVE_EPS` (d is infinite at 0 in either argument).
    """

    def kl(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        x = np.maximum(x, POSITIVE_EPS)
        y = np.clip(y, POSITIVE_EPS, FLOAT_MAX)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            t = (x - y) / y
            near = t - np.log1p(t)
            far = x / y - 1.0 + np.log(y) - np.log(x)
        return np.asarray(np.where(np.abs(t) < 0.5, near, far))

    def kl_derivative(self, x: np.ndarray | float, y: np.ndarray | float) -> np.ndarray:
        y = np.maximum(y, POSITIVE_EPS)
        return np.asarray((y - np.maximum(x, POSITIVE_EPS)) / y**2)

    def sample_sums(self, means: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The sum of n exponential rewards of mean mu is Gamma(shape n, scale mu): one draw per arm."""
        return rng.gamma(np.asarray(counts, dtype=float), np.asarray(means, dtype=float))  # shape 0: a sum of 0

    def confidence_interval(self, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bisection between mu_k and 0 below (the end stays positive); above, the end bracketed by doubling from
        2 mu_k, then bisected (KL-LCB and KL-UCB on (0, inf))."""
        mu = np.maximum(np.asarray(mu, dtype=float), POSITIVE_EPS)
        return _half_line_interval(self.kl, mu, level, 2.0 * mu)

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """S_k / G with G ~ Gamma(N_k, 1) per arm: the rate 1 / mu is Gamma(shape N_k, rate S_k), the posterior
        under Jeffreys' prior 1 / mu (a conjugate Gamma prior with both parameters 0)."""
        counts = np.asarray(counts, dtype=float)
        sums = np.maximum(np.asarray(sums, dtype=float), POSITIVE_EPS)
        return sums / rng.gamma(counts, 1.0, size=(size, counts.size))

    def check_means(self, means: np.ndarray) -> np.ndarray:
        means = np.asarray(means, dtype=float)
        if not np.all(np.isfinite(means) & (means > 0)):
            raise InvalidInputError("exponential means must be positive finite numbers")
        return means
