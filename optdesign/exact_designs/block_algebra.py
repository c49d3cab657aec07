"""Small dense linear algebra, compiled, for the exchange of grouped designs: Cholesky and LU factors, the inverse of
a triangular factor (the first and the last those of :mod:`optdesign.linear.triangular`, which the barrier's
kernel shares), and the price of a low-rank change of M from G and Q.

The matrices of a grouped design's search are small (p parameters, the 3 x 3 or 3n x 3n matrices of one move), so
plain loops without allocation beat calls into LAPACK here. A change M' = M + U C U^T (U p x r, C r x r symmetric,
possibly singular) is priced, with G = U^T M^{-1} U and Q = U^T M^{-1} B M^{-1} U, by Sylvester's determinant
identity and Woodbury's identity in the form that needs no inverse of C
(:mod:`optdesign.exact_designs.block_information`):

    det M' / det M = det(I + C G),    tr(B M'^{-1}) = tr(B M^{-1}) - tr((I + C G)^{-1} C Q).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..linear.triangular import cholesky, lower_inverse

__all__ = ["cholesky", "log_det", "low_rank_gain", "lower_inverse", "sandwich_trace"]


@njit(cache=True)
def log_det(L: np.ndarray) -> float:
    """log det(L L^T) = 2 sum_j log L_jj."""
    total = 0.0
    for j in range(L.shape[0]):
        total += math.log(L[j, j])
    return 2.0 * total


@njit(cache=True)
def sandwich_trace(W: np.ndarray, B: np.ndarray) -> float:
    """tr(W B W^T) for W lower triangular (tr(B M^{-1}) for W = L^{-1})."""
    p = W.shape[0]
    total = 0.0
    for i in range(p):
        for j in range(i + 1):
            t = 0.0
            for k in range(i + 1):
                t += B[j, k] * W[i, k]
            total += W[i, j] * t
    return total


@njit(cache=True)
def _det3(A: np.ndarray) -> float:
    """det of the leading 3 x 3 block by the rule of Sarrus."""
    return float(A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]) - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
                 + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))


@njit(cache=True)
def _lu(A: np.ndarray, r: int, pivots: np.ndarray) -> float:
    """The LU factors with partial pivoting of A's leading r x r block, in place (row k swapped with row pivots[k]);
    its determinant."""
    det = 1.0
    for k in range(r):
        m = k
        for i in range(k + 1, r):
            if abs(A[i, k]) > abs(A[m, k]):
                m = i
        pivots[k] = m
        if m != k:
            for j in range(r):
                A[k, j], A[m, j] = A[m, j], A[k, j]
            det = -det
        d = A[k, k]
        det *= d
        if d == 0.0:
            continue
        for i in range(k + 1, r):
            f = A[i, k] / d
            A[i, k] = f
            for j in range(k + 1, r):
                A[i, j] -= f * A[k, j]
    return det


@njit(cache=True)
def _solved_trace(LU: np.ndarray, r: int, pivots: np.ndarray, R: np.ndarray) -> float:
    """tr(A^{-1} R) over the leading r x r blocks, from A's LU factors (:func:`_lu`); R is overwritten."""
    total = 0.0
    for c in range(r):
        for k in range(r):
            m = pivots[k]
            R[k, c], R[m, c] = R[m, c], R[k, c]
        for i in range(r):
            for k in range(i):
                R[i, c] -= LU[i, k] * R[k, c]
        for i in range(r - 1, -1, -1):
            for k in range(i + 1, r):
                R[i, c] -= LU[i, k] * R[k, c]
            R[i, c] /= LU[i, i]
        total += R[c, c]
    return total


@njit(cache=True)
def _product(C: np.ndarray, G: np.ndarray, r: int, out: np.ndarray, identity: bool) -> None:
    """out = C G over the leading r x r blocks, plus I when ``identity``."""
    for i in range(r):
        for j in range(r):
            t = 1.0 if identity and i == j else 0.0
            for k in range(r):
                t += C[i, k] * G[k, j]
            out[i, j] = t


@njit(cache=True)
def low_rank_gain(C: np.ndarray, G: np.ndarray, Q: np.ndarray, r: int, linear: bool, min_ratio: float,
                  work: np.ndarray, pivots: np.ndarray) -> float:
    """The loss decrease of M' = M + U C U^T of rank r from G and Q (module docstring; their leading r x r blocks):
    log det(I + C G) (D) or tr((I + C G)^{-1} C Q) (linear); -inf when det(I + C G) = det M' / det M <=
    ``min_ratio``. ``work`` (2 x r x r at least) and ``pivots`` (r) are scratch space; Q is read only for linear
    criteria. The determinant of a 3 x 3 change is by the rule of Sarrus, else by LU with partial pivoting."""
    A = work[0]
    _product(C, G, r, A, True)
    if r == 3:
        ratio = _det3(A)
        if ratio > min_ratio and linear:
            _lu(A, r, pivots)
    else:
        ratio = _lu(A, r, pivots)
    if not ratio > min_ratio:
        return -np.inf
    if not linear:
        return math.log(ratio)
    _product(C, Q, r, work[1], False)
    return _solved_trace(A, r, pivots, work[1])
