"""Design criteria and their certificates, evaluated in numpy.

Notation: arms X (K x d, rows x_k), weights w in the simplex, information matrix
A(w) = sum_k w_k x_k x_k^T = X^T diag(w) X = L L^T (Cholesky; from a QR factor when A is ill-conditioned),
directions Y (m x d, rows y).

* ``minmax_value``: F(w) = max_y y^T A(w)^{-1} y (G-optimality when Y = X, XY-allocation
  when Y are differences of arms, XY-oracle / rho* when the rows are scaled by 1/gap).
* ``minmax_lower_bound``: for any w and any distribution p over directions,
  F* >= f_p(w)^2 / max_k h_k(w) with f_p = tr(B_p A^{-1}), B_p = sum_y p_y y y^T and
  h_k = x_k^T A^{-1} B_p A^{-1} x_k. Proof: A -> tr(B A^{-1}) is convex and homogeneous of
  degree -1, so tr(B A'^{-1}) >= 2c f - c^2 tr(A^{-1} B A^{-1} A') for every c > 0; take the
  best c and A' = A(w'), then min over w'. It is tight at a saddle point (w*, p*); for Y = X
  and p = w it is the Kiefer–Wolfowitz efficiency bound d^2 / max_k x_k^T A^{-1} x_k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError, solve_triangular
from scipy.linalg.lapack import dpotrf, dtrcon, dtrtrs

from ..errors import InvalidInputError
from ..validation import as_matrix, check_weights

__all__ = [
    "Certificate",
    "certificate",
    "cholesky_factor",
    "direction_variances",
    "g_value",
    "information_matrix",
    "inverse_information",
    "minmax_lower_bound",
    "minmax_value",
    "whiten",
]


def information_matrix(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A(w) = X^T diag(w) X (symmetrised).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, one per row (not validated, as for every array helper of this module).
    w : numpy.ndarray, shape (K,)
        The weights.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The information matrix, exactly symmetric.
    """
    A = (X * w[:, None]).T @ X
    return (A + A.T) / 2


GRAM_MAX_CONDITION = 1e8  # above this cond(A), leverages come from a QR factor (Gram rounding ~ cond(A) eps)
FACTOR_CHUNK_ENTRIES = 1 << 21  # rows of diag(sqrt w) X factorised at once (16 MiB), so memory stays O(chunk d)


def triangular_factor(X: np.ndarray, w: np.ndarray | None = None, *, chunk: int | None = None) -> np.ndarray:
    """Upper-triangular R (d x d) with R^T R = X^T diag(w) X (w = 1 if None): the QR factor of diag(sqrt w) X,
    built ``chunk`` rows at a time over the rows of positive weight (TSQR: no Gram matrix and no copy of X)."""
    d = X.shape[1]
    rows = np.arange(X.shape[0]) if w is None else np.flatnonzero(w > 0)
    step = max(1, chunk if chunk is not None else FACTOR_CHUNK_ENTRIES // max(d, 1))
    R: np.ndarray = np.zeros((0, d))
    for a in range(0, rows.size, step):
        block = X[rows[a : a + step]]
        if w is not None:
            block = np.sqrt(w[rows[a : a + step]])[:, None] * block
        stacked = np.vstack([R, block]) if R.shape[0] else block  # the first block alone: no copy of it
        R = cast(np.ndarray, np.linalg.qr(stacked, mode="r"))  # the stubs give QRResult for any mode
    return R


def cholesky_factor(X: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """Lower-triangular L with A(w) = L L^T, or None when A(w) is numerically singular.

    The Cholesky factor of the Gram matrix X^T diag(w) X is fast, but the rounding of x^T A^{-1} x computed
    through it grows like cond(A) eps = cond(diag(sqrt w) X)^2 eps. When LAPACK's condition estimate says
    cond(A) > GRAM_MAX_CONDITION (or the Gram matrix is not numerically positive definite), L = R^T is taken
    from the QR factorisation of diag(sqrt w) X instead (``triangular_factor``, rounding about
    cond(diag(sqrt w) X) eps), so nearly dependent arms (condition 1e8) still get accurate leverages and
    certificates.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    w : numpy.ndarray, shape (K,)
        Nonnegative weights (any scale).

    Returns
    -------
    numpy.ndarray, shape (d, d), or None
        L, lower triangular; None for non-finite weights or a numerically singular A(w).
    """
    if not np.all(np.isfinite(w)):
        return None
    # LAPACK's potrf directly (what scipy.linalg.cholesky calls, without its per-call overhead: the barrier factors
    # thousands of small matrices per design)
    L, info = dpotrf(information_matrix(X, w), lower=1, clean=1)
    if info == 0:
        rcond, info = dtrcon(L, norm="1", uplo="L")
        if info == 0 and rcond > 0 and rcond**-2 <= GRAM_MAX_CONDITION:
            return L
    R = triangular_factor(X, w)
    diag = np.abs(np.diag(R)) if R.shape[0] == X.shape[1] else np.zeros(1)
    if not np.all(np.isfinite(R)) or diag.min() <= diag.max() * max(X.shape) * np.finfo(float).eps:
        return None
    return np.ascontiguousarray(R.T)


def whiten(L: np.ndarray, V: np.ndarray) -> np.ndarray:
    """L^{-1} V^T (d x n): column j has squared norm v_j^T A^{-1} v_j.

    Parameters
    ----------
    L : numpy.ndarray, shape (d, d)
        Lower-triangular factor of A = L L^T (:func:`cholesky_factor`).
    V : numpy.ndarray, shape (n, d)
        Vectors, one per row.

    Returns
    -------
    numpy.ndarray, shape (d, n)
        The whitened vectors, one per column.

    Raises
    ------
    LinAlgError
        L has a zero on its diagonal (never for a factor of :func:`cholesky_factor`).
    """
    B = V.T
    if L.dtype != np.float64 or B.dtype != np.float64 or B.size == 0:
        return solve_triangular(L, B, lower=True, check_finite=False)
    # LAPACK's trtrs as scipy.linalg.solve_triangular calls it (the transposed system for a C-ordered L), the same
    # arithmetic without the wrapper's per-call overhead
    if L.flags.f_contiguous:
        x, info = dtrtrs(L, B, lower=1)
    else:
        x, info = dtrtrs(L.T, B, lower=0, trans=1)
    if info != 0:
        raise LinAlgError(f"singular triangular factor (trtrs info {info})")
    return x


def inverse_information(X: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """A(w)^{-1}, or None when A(w) is numerically singular.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    w : numpy.ndarray, shape (K,)
        Nonnegative weights.

    Returns
    -------
    numpy.ndarray, shape (d, d), or None
        The inverse, computed from the triangular factor of :func:`cholesky_factor`.
    """
    L = cholesky_factor(X, w)
    if L is None:
        return None
    Linv = solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)
    return Linv.T @ Linv


def direction_variances(X: np.ndarray, w: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """v_y = y^T A(w)^{-1} y for each row of Y (inf when A(w) is singular).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    w : numpy.ndarray, shape (K,)
        Nonnegative weights.
    Y : numpy.ndarray, shape (m, d)
        The directions.

    Returns
    -------
    numpy.ndarray, shape (m,)
        The variances, all inf when A(w) is numerically singular.
    """
    L = cholesky_factor(X, w)
    if L is None:
        return np.full(Y.shape[0], np.inf)
    Z = whiten(L, Y)
    return np.einsum("ij,ij->j", Z, Z)


def _checked(X: ArrayLike, w: ArrayLike, Y: ArrayLike | None = None,
             p: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate the public evaluators' arguments (shapes, finiteness, one weight per row)."""
    Xa = as_matrix(X, "X")
    wa = check_weights(w, "w")
    if wa.size != Xa.shape[0]:
        raise InvalidInputError(f"w must have one weight per arm ({Xa.shape[0]}), got {wa.size}")
    Ya = Xa if Y is None else as_matrix(Y, "Y", n_cols=Xa.shape[1])
    pa = None
    if p is not None:
        pa = check_weights(p, "p")
        if pa.size != Ya.shape[0]:
            raise InvalidInputError(f"p must have one weight per direction ({Ya.shape[0]}), got {pa.size}")
    return Xa, wa, Ya, pa


def minmax_value(X: ArrayLike, w: ArrayLike, Y: ArrayLike) -> float:
    """F(w) = max_y y^T A(w)^{-1} y (inf when A(w) is singular).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms.
    w : array_like, shape (K,)
        A design: nonnegative weights with a positive sum (A(w) scales with it: normalise to compare designs).
    Y : array_like, shape (m, d)
        The directions.

    Returns
    -------
    float
        The criterion; inf when A(w) is numerically singular.

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN/inf, negative or all-zero weights.
    """
    Xa, wa, Ya, _ = _checked(X, w, Y)
    return float(np.max(direction_variances(Xa, wa, Ya)))


def g_value(X: ArrayLike, w: ArrayLike) -> float:
    """G-criterion max_k x_k^T A(w)^{-1} x_k (equals d at the optimum, Kiefer–Wolfowitz).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms.
    w : array_like, shape (K,)
        A design over the arms (nonnegative, summing to 1 for the G-value proper).

    Returns
    -------
    float
        :func:`minmax_value` with Y = X; at least d for a design summing to 1.

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN/inf, negative or all-zero weights.
    """
    return minmax_value(X, w, X)


@dataclass(frozen=True)
class Certificate:
    """Upper bound F(w), lower bound f_p^2 / max_k h_k, and the pieces they are made of."""

    #: F(w) = max_y v_y
    upper: float
    #: the certified lower bound f_p(w)^2 / max_k h_k(w) on F*
    lower: float
    #: y^T A^{-1} y for every direction
    v: np.ndarray
    #: x_k^T A^{-1} B_p A^{-1} x_k for every arm
    h: np.ndarray
    #: f_p(w) = tr(B_p A^{-1}) = sum_y p_y v_y
    f: float


def certificate(X: np.ndarray, Y: np.ndarray, w: np.ndarray, p: np.ndarray,
                L: np.ndarray | None = None) -> Certificate | None:
    """Certificate of (w, p) on the full sets X and Y (see module doc); None if A(w) is singular.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    Y : numpy.ndarray, shape (m, d)
        The directions.
    w : numpy.ndarray, shape (K,)
        The design.
    p : numpy.ndarray, shape (m,)
        A distribution over the directions (negative entries are clipped, the rest normalised).
    L : numpy.ndarray, shape (d, d), optional
        The factor of A(w) from :func:`cholesky_factor`, when the caller has it.

    Returns
    -------
    Certificate or None
        None when A(w) is numerically singular or p has no positive entry.
    """
    if L is None:
        L = cholesky_factor(X, w)
    if L is None:
        return None
    Zy = whiten(L, Y)
    return _whitened_certificate(Zy, np.einsum("ij,ij->j", Zy, Zy), whiten(L, X), p)


def _whitened_certificate(Zy: np.ndarray, v: np.ndarray, Zx: np.ndarray, p: np.ndarray) -> Certificate | None:
    """:func:`certificate` from the whitened directions Zy = L^{-1} Y^T, their variances v and the whitened arms
    Zx = L^{-1} X^T, so that several p are priced at one design for one whitening."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, None)
    if p.sum() <= 0:
        return None
    p = p / p.sum()
    f = float(p @ v)
    C = (Zy * p) @ Zy.T  # L^{-1} B_p L^{-T}
    h = np.einsum("ij,ij->j", Zx, C @ Zx)
    return Certificate(float(v.max()), f * (f / float(h.max())), v, h, f)  # f^2 alone overflows at f = 1e198


def minmax_lower_bound(X: ArrayLike, w: ArrayLike, Y: ArrayLike, p: ArrayLike) -> float:
    """Certified lower bound f_p(w)^2 / max_k h_k(w) on min_w max_y y^T A(w)^{-1} y (0 if none).

    Valid for every design w and every distribution p; tight at a saddle point (w*, p*).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms.
    w : array_like, shape (K,)
        A design over the arms (nonnegative, positive sum).
    Y : array_like, shape (m, d)
        The directions.
    p : array_like, shape (m,)
        Nonnegative weights over the directions (normalised here), e.g. the dual of a solve.

    Returns
    -------
    float
        The lower bound on F*; 0 when A(w) is numerically singular.

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN/inf, negative or all-zero ``w`` or ``p``.
    """
    Xa, wa, Ya, pa = _checked(X, w, Y, p)
    cert = certificate(Xa, Ya, wa, cast(np.ndarray, pa))  # pa is None only when p is

    return 0.0 if cert is None else cert.lower
