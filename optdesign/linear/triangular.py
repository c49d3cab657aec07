"""Compiled triangular algebra shared by the toolkit's numba kernels (the barrier's centring stage,
:mod:`optdesign.linear.barrier_kernel`, and the exchange of grouped designs, :mod:`optdesign.exact_designs`): the
Cholesky factor A = L L^T and the inverse of a lower triangular matrix, in place, by plain loops.

The matrices are small (d or p of a design's model), where loops without allocation beat calls into LAPACK from
compiled code; the loops run in the textbook order (a row's dot products left to right), so every kernel gets the same
bits from the same matrix.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["cholesky", "lower_inverse"]


@njit(cache=True)
def cholesky(A: np.ndarray, L: np.ndarray) -> bool:
    """L (lower triangular, zero above, in place) with L L^T = A; False at a pivot that is not positive (A is not
    numerically positive definite; L is then partly written).

    Parameters
    ----------
    A : numpy.ndarray, shape (p, p)
        A symmetric matrix (its lower triangle is read).
    L : numpy.ndarray, shape (p, p)
        The factor's storage.

    Returns
    -------
    bool
        Whether every pivot was positive.
    """
    p = A.shape[0]
    for j in range(p):
        pivot = A[j, j]
        for k in range(j):
            pivot -= L[j, k] * L[j, k]
        if not pivot > 0.0:
            return False
        root = math.sqrt(pivot)
        L[j, j] = root
        for i in range(j):
            L[i, j] = 0.0
        for i in range(j + 1, p):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / root
    return True


@njit(cache=True)
def lower_inverse(L: np.ndarray, W: np.ndarray) -> None:
    """W = L^{-1} (lower triangular, zero above, in place) by forward substitution.

    Parameters
    ----------
    L : numpy.ndarray, shape (p, p)
        A lower triangular matrix with a nonzero diagonal.
    W : numpy.ndarray, shape (p, p)
        The inverse's storage.
    """
    p = L.shape[0]
    for j in range(p):
        for i in range(j):
            W[i, j] = 0.0
        W[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, p):
            t = 0.0
            for k in range(j, i):
                t -= L[i, k] * W[k, j]
            W[i, j] = t / L[i, i]
