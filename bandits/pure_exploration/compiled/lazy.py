"""Lazy Track-and-Stop in compiled runs (:mod:`bandits.pure_exploration.samplers.lazy_tas`, Jedra & Proutière 2020).

The target is updated at the powers of two only, by up to ``fw_steps`` Frank–Wolfe steps on min_j f_j(w) at the
estimate, warm-started at the previous target (step i moves to the vertex of the largest gradient coordinate of the
best-response piece, w <- (i w + e_k) / (i + 1), and stops early once 1 / ((i + 1) ||w||) < ``tolerance``); the
pulls C-track the sum of the targets of every pull, except while lambda_min(A_t) < c0 sqrt(t), when a spanning set
is pulled in turn. The best responses are the K-armed pieces of GK16's Lemma 3 and the linear pieces
gap_j^2 / (2 sigma^2 ||y_j||^2_{A(w)^{-1}}).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...core.alternatives import NORM_FLOOR
from .arithmetic import divergence

__all__ = ["karmed_update", "karmed_vertex", "lazy_batch", "lazy_due", "linear_update", "linear_vertex"]


@njit(cache=True)
def karmed_vertex(family: int, sigma: float, mu: np.ndarray, w: np.ndarray) -> int:
    """argmax_k of the gradient of the K-armed best-response piece at (mu, w) (-1 when mu has one arm)."""
    K = mu.size
    b = int(np.argmax(mu))
    best, response, db, da = np.inf, -1, 0.0, 0.0
    for a in range(K):
        if a == b:
            continue
        total = w[b] + w[a]
        m = (w[b] * mu[b] + w[a] * mu[a]) / total if total > 0 else 0.5 * (mu[b] + mu[a])
        top, low = divergence(family, sigma, mu[b], m), divergence(family, sigma, mu[a], m)
        value = w[b] * top + w[a] * low
        if value < best or response < 0:
            best, response, db, da = value, a, top, low
    gradient = np.zeros(K)
    gradient[b], gradient[response] = db, da
    return int(np.argmax(gradient))


@njit(cache=True)
def linear_vertex(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, w: np.ndarray) -> int:
    """argmax_k of the gradient of the linear best-response piece at (theta, w): (gap_j / ||y_j||^2)^2
    (x_k^T A(w)^{-1} y_j)^2 / (2 sigma^2) for the piece j of least value."""
    R = np.linalg.inv(np.linalg.cholesky(X.T @ (X * w.reshape(-1, 1))))
    values = Z @ theta
    b = int(np.argmax(values))
    best, response, scale = np.inf, -1, 0.0
    Ry = np.zeros(X.shape[1])
    for j in range(Z.shape[0]):
        if j == b:
            continue
        y = Z[b] - Z[j]
        whitened = R @ y
        norm = max(whitened @ whitened, NORM_FLOOR)
        gap = max(y @ theta, 0.0)
        value = gap**2 / (2.0 * sigma**2 * norm)
        if value < best or response < 0:
            best, response, scale, Ry = value, j, gap / norm, whitened
    gradient = (scale * ((X @ R.T) @ Ry)) ** 2 / (2.0 * sigma**2)
    return int(np.argmax(gradient))


@njit(cache=True)
def lazy_due(state: np.ndarray, t: int) -> bool:
    """Whether a power of two has passed since the last update (``state[0]``, set to it when due)."""
    power = 1
    while 2 * power <= t:  # the largest power of two at most t (numba 0.59 has no math.log2)
        power *= 2
    if state[0] == 0 or power > state[0]:
        state[0] = power
        return True
    return False


@njit(cache=True)
def _step(w: np.ndarray, i: int, k: int, tolerance: float) -> bool:
    """Step i of a lazy update towards e_k, in place; True when the update ends there (1 / ((i + 1) ||w||) below
    the tolerance)."""
    w *= i / (i + 1.0)
    w[k] += 1.0 / (i + 1.0)
    return 1.0 / ((i + 1) * np.sqrt(w @ w)) < tolerance


@njit(cache=True)
def karmed_update(family: int, sigma: float, mu: np.ndarray, target: np.ndarray, steps: int,
                  tolerance: float) -> None:
    """A lazy update of the K-armed target, in place."""
    for i in range(1, steps + 1):
        if _step(target, i, karmed_vertex(family, sigma, mu, target), tolerance):
            return


@njit(cache=True)
def linear_update(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, target: np.ndarray, steps: int,
                  tolerance: float) -> None:
    """A lazy update of the linear target, in place."""
    for i in range(1, steps + 1):
        if _step(target, i, linear_vertex(X, Z, sigma, theta, target), tolerance):
            return


@njit(cache=True)
def lazy_batch(target: np.ndarray, cumulative: np.ndarray, counts: np.ndarray, n: int, spanning: np.ndarray,
               state: np.ndarray, smallest: float) -> np.ndarray:
    """n pulls: forced exploration of ``spanning`` in turn while ``smallest`` (lambda_min(A_t) at the batch's start)
    is below c0 sqrt(t), else C-tracking of the cumulative targets; ``state`` = (last update, c0 (-1 before the
    first batch), next forced arm)."""
    t = counts.sum()
    forced = smallest < state[1] * math.sqrt(t)
    now, batch = counts.copy(), np.zeros(counts.size, np.int64)
    for _ in range(n):
        cumulative += target
        if forced:
            k = int(spanning[int(state[2]) % spanning.size])
            state[2] += 1
        else:
            k = int(np.argmax(cumulative - now))
        now[k] += 1
        batch[k] += 1
    return batch
