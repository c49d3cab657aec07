"""The Frank–Wolfe sampling step of a compiled K-armed run: the pieces at (mu_hat, x), their gradients, and the
zero-sum game over the near-minimal ones.

The game max_z min_j <z - x, grad f_j> is solved as :func:`bandits.pure_exploration.games.solve_game` does:
payoffs mapped to [1, 2], the packing program max 1^T q s.t. P^T q <= 1 by a dense tableau (Dantzig's rule for the
first 4J pivots, then Bland's), z from the dual; when the tableau misses von Neumann's equality by more than
GAP_TOL times the payoffs' span, the reference (HiGHS) is called back. The products grad f_j . x are summed here in
a fixed order where the reference's BLAS may fuse them, so a step can differ from the reference's in the last bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, objmode

from ..games import GAP_TOL, PIVOT_TOL, solve_game
from .arithmetic import divergence, pairwise_sum

__all__ = ["furthest_behind", "fws_batch", "fws_direction"]


@njit(cache=True)
def _packing_simplex(P: np.ndarray) -> np.ndarray:
    """z from the packing program max 1^T q s.t. P^T q <= 1, q >= 0 (P > 0): the dual of the final tableau, and q."""
    J, K = P.shape
    T = np.zeros((K + 1, J + K + 1))
    T[:K, :J] = P.T
    for k in range(K):
        T[k, J + k] = 1.0
        T[k, -1] = 1.0
    T[K, :J] = 1.0
    basis = np.arange(J, J + K)
    for pivot in range(50 * (J + K)):
        costs = T[K, :-1]
        if pivot < 4 * J:
            col = int(np.argmax(costs))
        else:
            col = int(np.argmax(costs > PIVOT_TOL))
        if costs[col] <= PIVOT_TOL:
            break
        row, best = -1, np.inf
        for r in range(K):
            if T[r, col] > PIVOT_TOL:
                ratio = max(T[r, -1], 0.0) / T[r, col]
                if ratio < best:
                    row, best = r, ratio
        if pivot >= 4 * J:  # Bland: the smallest basic index among the tied rows
            for r in range(K):
                if T[r, col] > PIVOT_TOL and max(T[r, -1], 0.0) / T[r, col] <= best * (1 + 1e-12) + PIVOT_TOL \
                        and basis[r] < basis[row]:
                    row = r
        pivot_row = T[row] / T[row, col]
        T -= np.outer(T[:, col], pivot_row)
        T[row] = pivot_row
        basis[row] = col
    y = np.maximum(-T[K, J:J + K], 0.0)
    out = np.empty(K + J)
    out[:K] = y / pairwise_sum(y)
    q = np.zeros(J)
    for r in range(K):
        if basis[r] < J:
            q[basis[r]] = max(T[r, -1], 0.0)
    total = pairwise_sum(q)
    out[K:] = q / total if total > 0 else np.full(J, 1.0 / J)
    return out


@njit(cache=True)
def _game(M: np.ndarray) -> np.ndarray:
    """An optimal z of max_z min_j (M z)_j (J >= 2 rows)."""
    K = M.shape[1]
    lo, span = M.min(), M.max() - M.min()
    if span <= 0:
        return np.full(K, 1.0 / K)
    solution = _packing_simplex((M - lo) / span + 1.0)
    z, p = solution[:K], solution[K:]
    if (M.T @ p).max() - (M @ z).min() <= GAP_TOL * span:
        return z
    with objmode(z="float64[:]"):
        z = solve_game(M, method="highs")[0]
    return z


@njit(cache=True)
def fws_direction(family: int, sigma: float, mu: np.ndarray, x: np.ndarray, slack: float) -> np.ndarray:
    """The Frank–Wolfe direction at (mu_hat, x): uniform without a unique positive minimum, the best vertex of the
    one near-minimal piece's gradient, or the game over those within ``slack`` of the minimum."""
    K = mu.size
    b = int(np.argmax(mu))
    values, grads = np.empty(K - 1), np.zeros((K - 1, K))
    i = 0
    for a in range(K):
        if a == b:
            continue
        wb, wa = x[b], x[a]
        total = wb + wa
        m = (wb * mu[b] + wa * mu[a]) / total if total > 0 else 0.5 * (mu[b] + mu[a])
        db, da = divergence(family, sigma, mu[b], m), divergence(family, sigma, mu[a], m)
        values[i] = wb * db + wa * da
        grads[i, b], grads[i, a] = db, da
        i += 1
    if values.min() <= 0:
        return np.full(K, 1.0 / K)
    near = np.flatnonzero(values <= values.min() + slack)
    z = np.zeros(K)
    if near.size == 1:
        z[int(np.argmax(grads[near[0]]))] = 1.0
        return z
    G = grads[near]
    return _game(G - np.expand_dims(G @ x, 1))


@njit(cache=True)
def _is_square(n: int) -> bool:
    r = int(np.sqrt(n))
    while r * r > n:
        r -= 1
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r * r == n


@njit(cache=True)
def fws_batch(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, n: int, x: np.ndarray) -> np.ndarray:
    """n pulls of Frank–Wolfe sampling: at step t (samples so far, at least 2), z forced uniform when floor(t / K) is a
    perfect square, else the direction at slack t^(-9/10) / K; x <- x + (z - x) / t; pull argmax_k x_k / N_k."""
    K = mu.size
    now, batch = counts.copy(), np.zeros(K, np.int64)
    for _ in range(n):
        t = max(int(now.sum()), 2)
        if _is_square(t // K):
            z = np.full(K, 1.0 / K)
        else:
            z = fws_direction(family, sigma, mu, x, float(t) ** -0.9 / K)
        x += (z - x) / t
        arm = furthest_behind(x, now)
        now[arm] += 1
        batch[arm] += 1
    return batch


@njit(cache=True)
def furthest_behind(x: np.ndarray, counts: np.ndarray) -> int:
    """FWS's tracking: argmax_k x_k / N_k (an arm never pulled first; the first on a tie)."""
    best, arm = -np.inf, -1
    for k in range(x.size):
        ratio = x[k] / counts[k] if counts[k] > 0 else np.inf
        if ratio > best or arm < 0:
            best, arm = ratio, k
    return arm
