"""The relaxation of the certified group bound, compiled: max over the simplex of a concave quadratic, by pairwise
Frank–Wolfe steps with exact line search (``optdesign.exact_designs.block_bounds._relaxed`` states the method; this
is its loop, at compiled speed, so that its up to FW_STEPS steps of O(K p) cost microseconds each).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["relaxed_bound"]


@njit(cache=True)
def _state(X: np.ndarray, A: np.ndarray, V: np.ndarray, h: np.ndarray, w: np.ndarray, rho: float, z: np.ndarray,
           Az: np.ndarray, grad: np.ndarray) -> float:
    """z = X^T w, A z, the gradient h - 2 rho V z (in place); f(w) = h^T w - rho z^T A z."""
    K, p = X.shape
    for i in range(p):
        t = 0.0
        for k in range(K):
            t += X[k, i] * w[k]
        z[i] = t
    quad = 0.0
    for i in range(p):
        t = 0.0
        for j in range(p):
            t += A[i, j] * z[j]
        Az[i] = t
        quad += z[i] * t
    f = 0.0
    for k in range(K):
        t = 0.0
        for i in range(p):
            t += V[k, i] * z[i]
        grad[k] = h[k] - 2.0 * rho * t
        f += h[k] * w[k]
    return f - rho * quad


@njit(cache=True)
def _curvature(X: np.ndarray, V: np.ndarray, h: np.ndarray, z: np.ndarray, Az: np.ndarray, k: int, j: int) -> float:
    """(x_k - z)^T A (x_k - z) for a plain step toward k (j < 0), else (x_k - x_j)^T A (x_k - x_j) (V = X A)."""
    t = 0.0
    if j < 0:
        for i in range(X.shape[1]):
            t += (X[k, i] - z[i]) * (V[k, i] - Az[i])
        return t
    for i in range(X.shape[1]):
        t += V[k, i] * X[j, i]
    return float(h[k] + h[j] - 2.0 * t)


@njit(cache=True)
def _first_max(values: np.ndarray, among: np.ndarray, sign: float) -> int:
    """The first index of the largest of sign * values where ``among`` holds (-1 if it holds nowhere)."""
    best = -1
    for i in range(values.size):
        if among[i] and (best < 0 or sign * values[i] > sign * values[best]):
            best = i
    return best


@njit(cache=True)
def relaxed_bound(X: np.ndarray, A: np.ndarray, h: np.ndarray, rho: float, floor: float, steps: int,
                  tol: float) -> float:
    """An upper bound on max over the simplex of f(w) = h^T w - rho (X^T w)^T A (X^T w), or a number <= ``floor``
    once the bound is known to be at most ``floor``: at most ``steps`` pairwise Frank–Wolfe steps, stopped at a
    relative gap ``tol``; the smallest f(w) + max_k grad_k - grad^T w over the iterates."""
    K, p = X.shape
    V = np.empty((K, p))  # row k: (A x_k)^T
    for k in range(K):
        for i in range(p):
            t = 0.0
            for j in range(p):
                t += A[i, j] * X[k, j]
            V[k, i] = t
    w, grad = np.zeros(K), np.empty(K)
    z, Az = np.empty(p), np.empty(p)
    w[_first_max(h, np.ones(K, dtype=np.bool_), 1.0)] = 1.0
    everywhere = np.ones(K, dtype=np.bool_)
    bound = np.inf
    for _ in range(steps):
        f = _state(X, A, V, h, w, rho, z, Az, grad)
        k = _first_max(grad, everywhere, 1.0)
        gap = grad[k]
        for i in range(K):
            gap -= grad[i] * w[i]
        bound = min(bound, f + max(gap, 0.0))
        if gap <= tol * max(abs(f), 1e-300) or bound <= floor:
            break
        j = _first_max(grad, w > 0, -1.0)  # the support's smallest gradient
        slope = grad[k] - grad[j]
        if j == k or slope <= 0:
            j, limit, slope = -1, 1.0, gap
        else:
            limit = w[j]
        curvature = rho * _curvature(X, V, h, z, Az, k, j)
        step = limit if curvature <= 0 else min(limit, slope / (2.0 * curvature))
        if j < 0:
            for i in range(K):
                w[i] *= 1.0 - step
        else:
            w[j] -= step
            if step >= limit:
                w[j] = 0.0
        w[k] += step
    return float(bound)
