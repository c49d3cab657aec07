"""Sufficient statistics of linear observations and the Gaussian GLR statistic.

With N_k pulls of arm x_k whose rewards sum to S_k, ordinary least squares needs only
A = sum_k N_k x_k x_k^T and b = sum_k S_k x_k, and theta_hat = A^{-1} b. The GLR statistic is the minimum of the
closest alternatives' costs (:class:`bandits.core.alternatives.Alternatives`) at theta_hat and the counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr

from optdesign.validation import as_arms

from .alternatives import Alternatives, Directions, Whitening

__all__ = ["GLR", "LinearStatistics", "spanning_subset"]


def spanning_subset(X: np.ndarray) -> np.ndarray:
    """Indices of d arms spanning R^d: the first d pivots of a column-pivoted QR of X^T, sorted.

    One pull of each makes the information matrix invertible. Soare et al. start every static allocation and
    every XY-Adaptive phase from one pull of each canonical arm; on their instance pivoted QR picks d such arms.
    (:func:`optdesign.linear.exchange.spanning_arms` checks that X spans R^d; it picks no subset.)

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms (spanning R^d).

    Returns
    -------
    numpy.ndarray of int, shape (d,)
        Sorted row indices of the d arms.

    Raises
    ------
    InvalidInputError
        X not a finite K x d matrix, or arms that do not span R^d (:func:`optdesign.validation.as_arms`).
    """
    X = as_arms(X)
    _, _, pivots = qr(X.T, pivoting=True, mode="economic")
    return np.sort(pivots[: X.shape[1]])


@dataclass(frozen=True)
class GLR:
    """Gaussian GLR of the empirical best item against its closest competitor.

    ``value`` = min_{z != z_hat} (z_hat - z)^T theta_hat)^2 / (2 sigma^2 ||z_hat - z||^2_{A^{-1}}),
    ``best`` = z_hat = argmax_z z^T theta_hat (value 0 on an empirical tie).

    Parameters
    ----------
    best : int
        Index of the empirical best item z_hat.
    value : float
        The GLR statistic Lambda (natural units; inf with a single candidate).
    """

    best: int
    value: float


class LinearStatistics:
    """Per-arm counts N_k and reward sums S_k; A, b and the OLS estimate derived from them.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, one per row.
    """

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.counts = np.zeros(X.shape[0], dtype=np.int64)
        self.sums = np.zeros(X.shape[0])
        self._b = np.zeros(X.shape[1])

    def add(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Add a batch of observations.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm of the batch.
        sums : numpy.ndarray, shape (K,)
            Reward sums per arm of the batch.
        """
        self.counts += counts
        self.sums += sums
        batch = np.flatnonzero(counts)  # b = X^T S grows by the batch's arms only (no O(K d) pass per batch)
        self._b += self.X[batch].T @ sums[batch]

    @property
    def n(self) -> int:
        """Total number of observations."""
        return int(self.counts.sum())

    @property
    def A(self) -> np.ndarray:
        """X^T diag(N) X over the pulled arms (one BLAS-3 product, O(K d) memory: no K x d x d outer products,
        which took 932 GiB at d = 5,000)."""
        pulled = np.flatnonzero(self.counts)
        Xp = self.X[pulled]
        return Xp.T @ (Xp * self.counts[pulled, None].astype(float))

    @property
    def b(self) -> np.ndarray:
        """b = sum_k S_k x_k, shape (d,)."""
        return self._b

    def theta_hat(self) -> np.ndarray:
        """The OLS estimate A^{-1} b.

        Returns
        -------
        numpy.ndarray, shape (d,)
            theta_hat = R^T R b (:class:`bandits.core.alternatives.Whitening`; InvalidInputError while A is singular).
        """
        return Whitening(self.A).solve(self.b)

    def glr(self, Z: np.ndarray, sigma: float, candidates: np.ndarray | None = None) -> GLR:
        """GLR statistic of the empirical best among ``candidates`` (default: all rows of Z).

        min over z != z_best of ((z_best - z)^T theta_hat)^2 / (2 sigma^2 ||z_best - z||^2_{A^{-1}}): the minimum
        of :class:`bandits.core.alternatives.Alternatives` at theta_hat = A^{-1} b, through the Cholesky factor of A.

        Parameters
        ----------
        Z : numpy.ndarray, shape (M, d)
            The items.
        sigma : float
            Noise standard deviation.
        candidates : array_like of int, optional
            Indices of the rows of Z competing (e.g. the surviving items); None means all.

        Returns
        -------
        GLR
            The empirical best (an index into Z) and the statistic (inf with one candidate, 0 on an
            empirical tie). InvalidInputError while A is singular.
        """
        whitening = Whitening(self.A)
        directions = Directions(Z, whitening.solve(self.b), candidates=candidates)
        alternatives = Alternatives(directions, whitening, sigma)
        return GLR(best=alternatives.best, value=alternatives.value)
