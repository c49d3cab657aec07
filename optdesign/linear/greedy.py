"""Soare et al.'s (2014) greedy incremental allocation rules, vectorised with Sherman–Morrison.

Given the current information matrix A (invertible) the next arm is::

    x_t = argmin_{x in X} max_{y in Y} y^T (A + x x^T)^{-1} y,

with y^T (A + x x^T)^{-1} y = y^T A^{-1} y - (x^T A^{-1} y)^2 / (1 + x^T A^{-1} x).
Y = X gives the G-allocation rule (Fig. 2 of the paper), Y = {x - x'} the XY rule, and Y = the
active directions of a phase the XY-Adaptive rule.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..validation import as_matrix, check_array_size, count_text

__all__ = ["greedy_allocation", "greedy_choice", "greedy_scores"]

_CHUNK_ENTRIES = 4_000_000  # bound on the K x m score block held in memory at once


def _inverse(A_in: ArrayLike, d: int) -> np.ndarray:
    A = as_matrix(A_in, "A", n_cols=d)
    if A.shape != (d, d):
        raise InvalidInputError(f"A must be {d} x {d}, got {A.shape}")
    A = (A + A.T) / 2
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise InvalidInputError(
            "A must be positive definite (start from e.g. one pull of each canonical arm, or A = eta I)"
        ) from None
    return np.linalg.inv(A)


def greedy_scores(X: ArrayLike, Y: ArrayLike, A: ArrayLike) -> np.ndarray:
    """s_x = max_y y^T (A + x x^T)^{-1} y for every arm x (row of X).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms, one per row.
    Y : array_like, shape (m, d)
        The directions (Y = X for the G rule, differences of arms for the XY rule).
    A : array_like, shape (d, d)
        The current information matrix, symmetric positive definite (e.g. the sum of x x^T over past pulls).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The worst-direction variance after one more pull of each arm.

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN/inf, or ``A`` not positive definite.
    """
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y", n_cols=X.shape[1])
    M = _inverse(A, X.shape[1])
    return _scores(X, Y, M)


def _scores(X: np.ndarray, Y: np.ndarray, M: np.ndarray) -> np.ndarray:
    MY = Y @ M
    v = np.einsum("ij,ij->i", MY, Y)
    hx = np.einsum("ij,ij->i", X @ M, X)
    out = np.empty(X.shape[0])
    step = max(1, _CHUNK_ENTRIES // max(1, Y.shape[0]))
    for lo in range(0, X.shape[0], step):
        C = X[lo : lo + step] @ MY.T
        out[lo : lo + step] = np.max(v[None, :] - C * C / (1.0 + hx[lo : lo + step, None]), axis=1)
    return out


def _choose(X: np.ndarray, Y: np.ndarray, M: np.ndarray) -> int:
    """argmin_x max_y y^T (A + x x^T)^{-1} y; exact ties (common from A = I, where every single
    pull leaves some e_i - e_j at the same variance) go to the smallest sum over y, then the
    lowest index, so the rule does not pull the first arm forever."""
    s = _scores(X, Y, M)
    best = s.min()
    tied = np.flatnonzero(s <= best + 1e-12 * abs(best))
    if tied.size == 1:
        return int(tied[0])
    MY = Y @ M
    C = X[tied] @ MY.T
    hx = np.einsum("ij,ij->i", X[tied] @ M, X[tied])
    total = np.einsum("ij,ij->", MY, Y) - np.sum(C * C, axis=1) / (1.0 + hx)
    return int(tied[np.argmin(total)])


def greedy_choice(X: ArrayLike, Y: ArrayLike, A: ArrayLike) -> int:
    """Index of the arm chosen by the greedy rule argmin_x max_y y^T (A + x x^T)^{-1} y.

    Exact ties (common from A = I) go to the arm with the smallest sum over y of the variances, then to the
    lowest index.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms, one per row.
    Y : array_like, shape (m, d)
        The directions whose worst variance the pull should reduce most.
    A : array_like, shape (d, d)
        The current information matrix, symmetric positive definite.

    Returns
    -------
    int
        Row index in ``X`` of the arm to pull next.

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN/inf, or ``A`` not positive definite.
    """
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y", n_cols=X.shape[1])
    return _choose(X, Y, _inverse(A, X.shape[1]))


def greedy_allocation(X: ArrayLike, Y: ArrayLike, n: int, A0: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run the greedy rule for ``n`` pulls from A0 (default: identity, i.e. A0 = I).

    Each step pulls :func:`greedy_choice` and updates A^{-1} by Sherman–Morrison (O(K m d) per pull).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms, one per row.
    Y : array_like, shape (m, d)
        The directions (Y = X: Soare et al.'s G-allocation; pairwise differences: XY-allocation).
    n : int
        Number of pulls, nonnegative.
    A0 : array_like, shape (d, d), optional
        Initial information matrix, symmetric positive definite; the identity by default.

    Returns
    -------
    sequence : numpy.ndarray of int64, shape (n,)
        The pulled arms' row indices, in order.
    A : numpy.ndarray, shape (d, d)
        The final information matrix A0 + sum_t x_t x_t^T.

    Raises
    ------
    InvalidInputError
        ``n`` not a nonnegative integer, shapes that do not match, NaN/inf, or ``A0`` not positive definite.
    InstanceTooLargeError
        A sequence of ``n`` pulls above the array limit (2.5e8 entries).
    """
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y", n_cols=X.shape[1])
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidInputError(f"n must be a nonnegative integer, got {n!r}")
    check_array_size(float(n), f"a greedy sequence of n = {count_text(n)} pulls",
                     instead="run fewer pulls, or round a continuous design (round_design) for large n")
    d = X.shape[1]
    A = np.eye(d) if A0 is None else np.array(A0, dtype=float)
    M = _inverse(A, d)
    seq = np.empty(n, dtype=np.int64)
    for t in range(n):
        k = _choose(X, Y, M)
        seq[t] = k
        x = X[k]
        Mx = M @ x
        M -= np.outer(Mx, Mx) / (1.0 + x @ Mx)
        A += np.outer(x, x)
    return seq, A
