"""The closest alternatives of linear best-item identification with Gaussian noise (Soare et al. 2014; Fiez et al.
2019), and the whitening of the information matrix they are computed through.

With an information matrix A (A = sum_k N_k x_k x_k^T at the counts, A(w) at weights), b = argmax_i z_i^T theta and
y_j = z_b - z_j, the cheapest parameter under which z_j beats z_b is::

    lambda_j = theta - (y_j^T theta / ||y_j||^2_{A^{-1}}) A^{-1} y_j,
    f_j = (y_j^T theta)^2 / (2 sigma^2 ||y_j||^2_{A^{-1}})  = sum_k N_k (x_k^T (theta - lambda_j))^2 / (2 sigma^2),

and min_j f_j at theta_hat and the counts is the linear GLR statistic. :class:`Alternatives` (at the
:class:`Directions` y_j of theta and a :class:`Whitening` of A) is the one implementation: the GLR of the linear
algorithms (:meth:`bandits.core.statistics.LinearStatistics.glr`) and the pieces of the pure-exploration problem
(:class:`bandits.pure_exploration.linear.LinearProblem`) both evaluate it.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpotrf, dtrtri

from optdesign.errors import InvalidInputError

__all__ = ["Alternatives", "Directions", "Halfspaces", "Whitening", "piece_gradients", "piece_values"]

#: eigenvalues at most this fraction of the largest count as zero in a pseudo-inverse (numpy.linalg.pinv's cutoff)
PSEUDO_RCOND = 1e-15
#: a piece is free when the part of y_j outside the range of a singular A exceeds this fraction of ||y_j||
FREE_TOL = 1e-8
#: floor of ||y||^2_{A^{-1}} in a piece's value (an item equal to the best one)
NORM_FLOOR = 1e-300


class Whitening:
    """A matrix R with R^T R = A^{-1}, so ||y||^2_{A^{-1}} = ||R y||^2 and x^T A^{-1} y = (R x)^T (R y).

    R = L^{-1} for the Cholesky factor A = L L^T (LAPACK potrf and trtri: no general inverse is formed, and every
    later use is a matrix product, which stays single-threaded on small sizes where a threaded BLAS triangular
    solve can stall). When A is not positive definite and ``pseudo`` is set, R = S_+^{-1/2} U_+^T from the
    eigenvalues S_+ of A = U S U^T above ``PSEUDO_RCOND`` max S, so that R^T R = A^+ (the pseudo-inverse), and
    :meth:`outside` gives the part of a vector outside the range of A (the directions the information does not see).

    Parameters
    ----------
    A : numpy.ndarray, shape (d, d)
        A symmetric positive semi-definite matrix (an information matrix).
    pseudo : bool
        Fall back to the pseudo-inverse when A is singular (else raise).

    Raises
    ------
    InvalidInputError
        A is singular and ``pseudo`` is false: the arms pulled so far do not span R^d.
    """

    def __init__(self, A: np.ndarray, *, pseudo: bool = False) -> None:
        A = np.asarray(A, dtype=float)
        L, info = dpotrf(A, lower=1, clean=1)
        #: the lower Cholesky factor L of A, or None when A is singular
        self.cholesky: np.ndarray | None = None
        self._basis: np.ndarray | None = None  # U_+ when A is singular
        if info == 0:
            self.cholesky = L
            self.root, _ = dtrtri(L, lower=1)
            return
        if not pseudo:
            raise InvalidInputError("the information matrix is singular: the arms pulled so far do not span R^d")
        s, U = np.linalg.eigh(A)
        keep = s > PSEUDO_RCOND * max(float(s.max()), 0.0)
        self._basis = U[:, keep]
        #: R, shape (d, d) (rank(A) x d when A is singular)
        self.root = (self._basis / np.sqrt(s[keep])).T

    def __call__(self, V: np.ndarray) -> np.ndarray:
        """R V.

        Parameters
        ----------
        V : numpy.ndarray, shape (d,) or (d, n)
            Vectors as columns.

        Returns
        -------
        numpy.ndarray
            The whitened vectors (rank(A) rows when A is singular).
        """
        return self.root @ V

    def outside(self, V: np.ndarray) -> np.ndarray | None:
        """(I - U_+ U_+^T) V, the part of V outside the range of A; None when A is positive definite.

        Parameters
        ----------
        V : numpy.ndarray, shape (d, n)
            Vectors as columns.

        Returns
        -------
        numpy.ndarray or None
            The projections, shape (d, n).
        """
        if self._basis is None:
            return None
        return V - self._basis @ (self._basis.T @ V)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """A^{-1} b = R^T R b (A^+ b when A is singular: the least-squares solution of least norm).

        Parameters
        ----------
        b : numpy.ndarray, shape (d,)
            The right-hand side.

        Returns
        -------
        numpy.ndarray, shape (d,)
            The solution.
        """
        return self.root.T @ (self.root @ b)


def piece_values(gaps: np.ndarray, norms: np.ndarray, sigma: float) -> np.ndarray:
    """f_j = gap_j^2 / (2 sigma^2 ||y_j||^2_{A^{-1}}), 0 where gap_j <= 0 (no information separates a tie).

    Parameters
    ----------
    gaps : numpy.ndarray, shape (J,)
        y_j^T theta.
    norms : numpy.ndarray, shape (J,)
        ||y_j||^2_{A^{-1}} (floored at ``NORM_FLOOR``).
    sigma : float
        Noise standard deviation.

    Returns
    -------
    numpy.ndarray, shape (J,)
        The values.
    """
    return np.maximum(gaps, 0.0) ** 2 / (2.0 * sigma**2 * np.maximum(norms, NORM_FLOOR))


def piece_gradients(gaps: np.ndarray, norms: np.ndarray, cross: np.ndarray, sigma: float) -> np.ndarray:
    """d f_j / d w_k = (x_k^T (theta - lambda_j))^2 / (2 sigma^2) = (gap_j / ||y_j||^2_{A^{-1}})^2 (x_k^T A^{-1}
    y_j)^2 / (2 sigma^2) (the envelope theorem; 0 where gap_j <= 0).

    Parameters
    ----------
    gaps : numpy.ndarray, shape (J,)
        y_j^T theta.
    norms : numpy.ndarray, shape (J,)
        ||y_j||^2_{A^{-1}} (floored at ``NORM_FLOOR``).
    cross : numpy.ndarray, shape (J, K)
        x_k^T A^{-1} y_j.
    sigma : float
        Noise standard deviation.

    Returns
    -------
    numpy.ndarray, shape (J, K)
        The gradients.
    """
    scale = np.maximum(gaps, 0.0) / np.maximum(norms, NORM_FLOOR)
    return (scale[:, None] * cross) ** 2 / (2.0 * sigma**2)


class Halfspaces:
    """The pieces of a question's alternative set at theta as halfspaces {lambda : y_j^T lambda <= c_j}, one per
    piece j, with gap_j = y_j^T theta - c_j > 0 when theta answers ``best``: best-item identification
    (:class:`Directions`), top m and thresholding on linear arms (:mod:`bandits.pure_exploration.linear_sets`).
    The closest alternative of each is that of the module docstring, with gap_j in place of y_j^T theta.

    Parameters
    ----------
    best : int
        The answer at theta.
    answers : numpy.ndarray, shape (J,)
        The answer each piece stands for.
    gaps : numpy.ndarray, shape (J,)
        y_j^T theta - c_j.
    Y : numpy.ndarray, shape (J, d)
        The normals y_j, one row per piece.
    """

    def __init__(self, best: int, answers: np.ndarray, gaps: np.ndarray, Y: np.ndarray) -> None:
        #: the answer at theta (for best-item identification an index into Z)
        self.best = best
        #: the answer of each piece (for best-item identification the other candidates, indices into Z)
        self.answers = answers
        #: the gaps, one per piece (y_j^T theta for best-item identification)
        self.gaps = gaps
        #: the normals, one row per piece (y_j = z_b - z_j for best-item identification)
        self.Y = Y


class Directions(Halfspaces):
    """The best item among the candidates at theta and its directions to the others: b = argmax_i z_i^T theta (the
    first on a tie), y_j = z_b - z_j and the gaps y_j^T theta, one per other candidate j (halfspaces with c_j = 0).
    They depend on theta only, so a rule that evaluates several information matrices at one estimate (LinGame) forms
    them once.

    Parameters
    ----------
    Z : numpy.ndarray, shape (M, d)
        The items.
    theta : numpy.ndarray, shape (d,)
        The parameter (theta_hat for the GLR statistic).
    candidates : array_like of int, optional
        Indices of the rows of Z competing (e.g. the surviving items); None means all.
    best : int, optional
        The position, among the candidates, of the item to take as b in place of the argmax (a Top-Two leader
        other than the estimate's answer); its gaps may then be negative.
    """

    def __init__(self, Z: np.ndarray, theta: np.ndarray, *, candidates: np.ndarray | None = None,
                 best: int | None = None) -> None:
        index = None if candidates is None else np.asarray(candidates)
        items = Z if index is None else Z[index]
        scores = items @ theta
        j = int(np.argmax(scores)) if best is None else int(best)
        others = np.arange(items.shape[0] - 1)
        others[j:] += 1  # every candidate but the best
        super().__init__(j if index is None else int(index[j]), others if index is None else index[others],
                         (scores[j] - scores)[others], items[j] - items[others])


class Alternatives:
    """The closest alternative of every piece of ``directions`` (module docstring: of every other candidate to the best
    item for best-item identification), with its normal y_j: ``norms`` ||y_j||^2_{A^{-1}} = ||R y_j||^2 and
    ``values`` f_j (:func:`piece_values`).

    When A is singular, a piece whose y_j leaves the range of A (by more than ``FREE_TOL`` ||y_j||) is free: lambda
    may move along a direction A does not see, so ||y_j||_{A^{-1}} = inf, f_j = 0 and its gradient 0 (a
    supergradient, as f_j >= 0); the others are exact with the pseudo-inverse.

    Parameters
    ----------
    directions : Halfspaces
        The answer at theta and the pieces' normals y_j and gaps (:class:`Directions` for best-item identification).
    whitening : Whitening
        R with R^T R = A^{-1} for the information matrix A.
    sigma : float
        Noise standard deviation.
    """

    def __init__(self, directions: Halfspaces, whitening: Whitening, sigma: float) -> None:
        self._whitening, self.sigma = whitening, float(sigma)
        #: the answer at theta (b, an index into Z, for best-item identification)
        self.best = directions.best
        #: the answer of each piece (the other candidates, indices into Z, for best-item identification)
        self.answers = directions.answers
        #: the gaps (y_j^T theta for best-item identification)
        self.gaps = directions.gaps
        self._whitened = whitening(directions.Y.T)  # R y_j as columns
        norms = np.einsum("ij,ij->j", self._whitened, self._whitened)
        leak = whitening.outside(directions.Y.T)
        if leak is not None:
            norms[np.linalg.norm(leak, axis=0) > FREE_TOL * np.linalg.norm(directions.Y, axis=1)] = np.inf
        #: ||y_j||^2_{A^{-1}} (inf for a free piece)
        self.norms = norms
        #: f_j
        self.values = piece_values(self.gaps, self.norms, sigma)

    @property
    def value(self) -> float:
        """min_j f_j: the GLR statistic at the counts (inf with no other candidate)."""
        return float(self.values.min()) if self.values.size else float("inf")

    def gradients(self, X: np.ndarray) -> np.ndarray:
        """d f_j / d w_k for every piece and arm (:func:`piece_gradients`).

        Parameters
        ----------
        X : numpy.ndarray, shape (K, d)
            The arms.

        Returns
        -------
        numpy.ndarray, shape (J, K)
            The gradients.
        """
        cross = self._whitened.T @ self._whitening(X.T)  # (R y_j)^T (R x_k) = x_k^T A^{-1} y_j
        return piece_gradients(self.gaps, self.norms, cross, self.sigma)

    def displacement(self, j: int) -> np.ndarray:
        """theta - lambda_j = (gap_j / ||y_j||^2_{A^{-1}}) A^{-1} y_j (0 when gap_j <= 0 or the piece is free).

        Parameters
        ----------
        j : int
            A piece (an index into ``answers``).

        Returns
        -------
        numpy.ndarray, shape (d,)
            The move from theta to the closest alternative lambda_j, negated.
        """
        scale = max(float(self.gaps[j]), 0.0) / max(float(self.norms[j]), NORM_FLOOR)
        if scale == 0.0:  # no move (A^{-1} y_j itself may overflow when the piece is free)
            return np.zeros(self._whitening.root.shape[1])
        return scale * (self._whitening.root.T @ self._whitened[:, j])
