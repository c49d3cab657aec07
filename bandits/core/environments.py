"""Seeded reward generators, simulated through sufficient statistics.

An environment is a plain description of an instance (arms, parameter, noise level); every draw
takes a ``numpy.random.Generator``, so one seed reproduces a whole run. Pulls come in batches:
``pull(counts, rng)`` returns, for every arm k, the *sum* of ``counts[k]`` independent rewards,
drawn in one Gaussian step as ``counts[k] * mean_k + sigma * sqrt(counts[k]) * xi_k`` (exact in
law for Gaussian noise). This is what lets hard instances (10^6-10^8 samples) run in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, cast

import numpy as np
from numpy.typing import ArrayLike

from optdesign import shared_doc
from optdesign.errors import InvalidInputError
from optdesign.validation import as_arms, as_matrix, as_vector

__all__ = ["LinearBandit", "as_counts", "gaussian_sums"]

#: the parameters of every environment's ``pull`` and the head of its Returns, documented once
#: (:func:`optdesign.shared_doc`)
pull_doc = shared_doc({"batch": """Parameters
        ----------
        counts : array_like of int, shape (K,)
            Pulls per arm.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------"""})


def as_counts(counts: ArrayLike, n_arms: int) -> np.ndarray:
    """A batch of pull counts: nonnegative integers, one per arm.

    Parameters
    ----------
    counts : array_like, shape (n_arms,)
        Pulls per arm; integral floats are accepted and converted.
    n_arms : int
        Number of arms of the environment.

    Returns
    -------
    numpy.ndarray of int64, shape (n_arms,)
        The counts.

    Raises
    ------
    InvalidInputError
        A wrong shape, a non-integral or non-finite entry, or a negative count.
    """
    arr = np.asarray(counts)
    if arr.shape != (n_arms,):
        raise InvalidInputError(f"counts must have shape ({n_arms},), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise InvalidInputError("counts must be integers")
        arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise InvalidInputError("counts must be nonnegative")
    return arr.astype(np.int64, copy=False)


def gaussian_sums(means: np.ndarray, counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Sum of counts[k] draws of N(means[k], sigma^2) for every k, in one Gaussian draw per pulled entry (arms
    without pulls draw nothing, so a batch costs O(pulled arms) draws whatever the number of arms).

    Parameters
    ----------
    means : numpy.ndarray, shape (K,)
        Expected reward of every arm.
    counts : numpy.ndarray of int, shape (K,)
        Pulls per arm (validated, e.g. by :func:`as_counts`).
    sigma : float
        Standard deviation of one reward.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``counts[k] * means[k] + sigma * sqrt(counts[k]) * xi_k`` with xi_k standard normal (0 where
        ``counts[k]`` is 0): exact in law for Gaussian rewards.
    """
    sums = np.zeros(means.shape)
    pulled = np.flatnonzero(counts)
    n = counts[pulled]
    sums[pulled] = n * means[pulled] + sigma * np.sqrt(n) * rng.standard_normal(pulled.size)
    return sums


def check_sigma(sigma: float) -> float:
    """``sigma`` as a float when it is a positive noise level whose variance is a normal float64, else
    InvalidInputError."""
    try:
        value = float(sigma)
        variance = value**2
    except (TypeError, ValueError, OverflowError):
        value = variance = float("nan")
    if isinstance(sigma, bool) or not (value > 0 and np.isfinite(variance) and variance >= np.finfo(float).tiny):
        raise InvalidInputError(f"sigma must be a positive number whose square is a finite, normal float "
                                f"(about 1e-154 to 1e154), got {sigma!r}")
    return float(sigma)


@dataclass(frozen=True)
class LinearBandit:
    """Linear bandit with Gaussian noise (Soare et al. 2014; transductive: Fiez et al. 2019).

    Measuring arm x_k (row k of ``X``) returns x_k^T theta + sigma * N(0, 1). The instance's own question is the
    best *item* z* = argmax_{z in Z} z^T theta (unique when a best-item run starts; other questions, such as the top m
    items, may be asked of an instance with a tie); ``Z`` defaults to ``X`` (plain linear best-arm identification). A
    learner may read ``X``, ``Z`` and ``sigma``; only oracle algorithms read ``theta``. Construction sets
    ``best_item``, the index of z* among the rows of ``Z`` (the first on a tie), and ``gaps``, the gaps
    (z* - z)^T theta of every item (0 for z*).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The measurement arms, one per row.
    theta : array_like, shape (d,)
        The unknown parameter.
    sigma : float
        Standard deviation of the Gaussian noise of one reward (default 1).
    Z : array_like, shape (M, d), optional
        The items whose best is sought (at least two); None means ``X``.
    name : str
        Label of the instance in result tables.

    Raises
    ------
    InvalidInputError
        Malformed arrays, ``theta`` of the wrong length, fewer than two items or a nonpositive ``sigma``.
    """

    X: np.ndarray
    theta: np.ndarray
    sigma: float = 1.0
    Z: np.ndarray | None = None
    name: str = "linear"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "linear"
    best_item: int = field(init=False)
    gaps: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        X = as_arms(self.X, "X")
        theta = as_vector(self.theta, "theta")
        if theta.size != X.shape[1]:
            raise InvalidInputError(f"theta must have length d = {X.shape[1]} (the arms' dimension), got {theta.size}")
        Z = X if self.Z is None else as_matrix(self.Z, "Z", n_cols=X.shape[1])
        if Z.shape[0] < 2:
            raise InvalidInputError("Z must hold at least two items to identify the best of")
        scores = Z @ theta
        best = int(np.argmax(scores))
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "Z", Z)
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "best_item", best)
        object.__setattr__(self, "gaps", scores[best] - scores)

    @property
    def n_arms(self) -> int:
        """Number K of measurement arms."""
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        """Dimension d of the arms and of theta."""
        return int(self.X.shape[1])

    @cached_property
    def means(self) -> np.ndarray:
        """Expected reward x_k^T theta of every measurement arm (computed once: every batch reads it)."""
        return self.X @ self.theta

    @property
    def gap_min(self) -> float:
        """Smallest gap Delta_min between z* and another item."""
        return float(np.min(np.delete(self.gaps, self.best_item)))

    @pull_doc
    def pull(self, counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch: ``counts[k]`` pulls of arm k (see the module docstring).

        %(batch)s
        numpy.ndarray, shape (K,)
            Sum of the rewards of each arm's pulls (:func:`gaussian_sums`).
        """
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def describe(self) -> dict[str, Any]:
        """A flat record of the instance for result tables.

        Returns
        -------
        dict
            Name, K, d, number of items, sigma and Delta_min.
        """
        return {"name": self.name, "K": self.n_arms, "d": self.dim, "items": cast(np.ndarray, self.Z).shape[0],
                "sigma": self.sigma, "gap_min": self.gap_min}
