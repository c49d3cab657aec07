"""LinGame and LinGame-C in compiled linear runs (Degenne, Ménard, Shang & Valko 2020; the references are
:mod:`bandits.pure_exploration.samplers.lingame` and :mod:`bandits.pure_exploration.samplers.lingame_c`).

AdaHedge (:class:`bandits.pure_exploration.adahedge.AdaHedge`: weights proportional to exp(-eta L), eta = ln n / Delta,
Delta the summed mixability gaps; uniform on argmin L while Delta = 0) plays w over the arms (LinGame, one learner or
one per answer of the estimate) or W over the (answer, arm) pairs (LinGame-C). The best response to w is the closest
alternative lambda of least value under A(w) = sum_k w_k x_k x_k^T (Cholesky; the pseudo-inverse and the free pieces
of :class:`bandits.core.alternatives.Alternatives` when w does not span R^d), and the learner gains
U_k = min((|x_k^T (theta_hat - lambda)| + width_k)^2 / (2 sigma^2), c_t), width_k = sigma sqrt(2 c_t)
||x_k||_{A(N)^{-1}} at the batch's counts, c_t = log max(t, 2). The pulls C-track the cumulative plays.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...core.alternatives import FREE_TOL, NORM_FLOOR, PSEUDO_RCOND
from .arithmetic import pairwise_sum

__all__ = ["hedge_update", "hedge_weights", "lingame_batch", "lingame_c_batch", "optimistic_gains", "widths"]


@njit(cache=True)
def hedge_weights(losses: np.ndarray, gap: float) -> np.ndarray:
    """AdaHedge's play at the cumulative ``losses`` and summed mixability gaps ``gap``."""
    shifted = losses - losses.min()
    if gap <= 0:
        u = (shifted <= 0).astype(np.float64)
    else:
        u = np.exp(-math.log(losses.size) / gap * shifted)
    return u / pairwise_sum(u)


@njit(cache=True)
def hedge_update(losses: np.ndarray, gaps: np.ndarray, i: int, loss: np.ndarray, w: np.ndarray) -> None:
    """Learner i (a row of ``losses``, its Delta in ``gaps[i]``) incurs ``loss`` after playing ``w``."""
    hedge = w @ loss
    if gaps[i] <= 0:
        mix = np.inf
        for k in range(loss.size):
            if w[k] > 0:
                mix = min(mix, loss[k])
    else:
        eta = math.log(loss.size) / gaps[i]
        low = loss.min()
        mix = low - math.log(w @ np.exp(-eta * (loss - low))) / eta
    losses[i] += loss
    gaps[i] += max(hedge - mix, 0.0)


@njit(cache=True)
def _cholesky(A: np.ndarray) -> tuple[np.ndarray, bool]:
    """The lower Cholesky factor of A, and False when a pivot is not positive (A is not positive definite)."""
    d = A.shape[0]
    L = np.zeros((d, d))
    for j in range(d):
        pivot = A[j, j]
        for m in range(j):
            pivot -= L[j, m] * L[j, m]
        if not pivot > 0:
            return L, False
        L[j, j] = math.sqrt(pivot)
        for i in range(j + 1, d):
            s = A[i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s / L[j, j]
    return L, True


@njit(cache=True)
def _forward(L: np.ndarray, Yt: np.ndarray) -> np.ndarray:
    """L^{-1} Y^T for the directions y_j as the columns of Yt (column j's squared norm is ||y_j||^2_{A^{-1}}); the
    substitution runs along the rows, so the inner loops are over the directions."""
    d, J = Yt.shape
    V = np.empty((d, J))
    for i in range(d):
        for j in range(J):
            V[i, j] = Yt[i, j]
        for m in range(i):
            scale = L[i, m]
            for j in range(J):
                V[i, j] -= scale * V[m, j]
        for j in range(J):
            V[i, j] /= L[i, i]
    return V


@njit(cache=True)
def _backward(L: np.ndarray, v: np.ndarray) -> np.ndarray:
    """L^{-T} v (so A^{-1} y = L^{-T} L^{-1} y)."""
    d = v.size
    u = np.empty(d)
    for i in range(d - 1, -1, -1):
        s = v[i]
        for m in range(i + 1, d):
            s -= L[m, i] * u[m]
        u[i] = s / L[i, i]
    return u


@njit(cache=True)
def _pseudo_whitening(A: np.ndarray, Yt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a singular A and the directions y_j as the columns of Yt: R with R^T R = A^+ (the eigenvalues above
    PSEUDO_RCOND of the largest), R y_j as columns, and ||y_j||^2_{A^+}, inf for a free piece (y_j leaves the range
    of A by more than FREE_TOL ||y_j||)."""
    s, U = np.linalg.eigh(A)
    keep = np.flatnonzero(s > PSEUDO_RCOND * max(s.max(), 0.0))
    basis = np.ascontiguousarray(U[:, keep])
    R = np.ascontiguousarray((basis / np.sqrt(s[keep])).T)
    V = R @ Yt
    norms = (V * V).sum(axis=0)
    leak = Yt - basis @ (basis.T @ Yt)
    lengths = (Yt * Yt).sum(axis=0)
    for j in range(Yt.shape[1]):
        if math.sqrt((leak[:, j] ** 2).sum()) > FREE_TOL * math.sqrt(lengths[j]):
            norms[j] = np.inf
    return R, V, norms


@njit(cache=True)
def optimistic_gains(X: np.ndarray, Yt: np.ndarray, gaps: np.ndarray, sigma: float, w: np.ndarray,
                     width: np.ndarray, c: float) -> np.ndarray:
    """U at the best response to the play ``w``: the piece j of least f_j under A(w), lambda_j = theta_hat -
    (gap_j / ||y_j||^2_{A(w)^{-1}}) A(w)^{-1} y_j (theta_hat itself for a free piece); the directions y_j are the
    columns of Yt."""
    A = X.T @ (X * w.reshape(-1, 1))
    L, definite = _cholesky(A)
    if definite:
        V = _forward(L, Yt)
        norms = (V * V).sum(axis=0)
    else:
        R, V, norms = _pseudo_whitening(A, Yt)
    values = np.maximum(gaps, 0.0) ** 2 / (2.0 * sigma**2 * np.maximum(norms, NORM_FLOOR))
    j = int(np.argmin(values))
    scale = max(gaps[j], 0.0) / max(norms[j], NORM_FLOOR)
    shift = np.zeros(X.shape[0])
    if scale != 0.0:  # else no move (A^{-1} y_j itself may overflow when the piece is free)
        column = np.ascontiguousarray(V[:, j])
        shift = np.abs(X @ (scale * (_backward(L, column) if definite else R.T @ column)))
    return np.minimum((shift + width) ** 2 / (2.0 * sigma**2), c)


@njit(cache=True)
def widths(X: np.ndarray, R: np.ndarray, sigma: float, c: float) -> np.ndarray:
    """sigma sqrt(2 c ||x_k||^2_{A(N)^{-1}}) for R^T R = A(N)^{-1}."""
    V = X @ R.T
    return sigma * np.sqrt(2.0 * c * np.maximum((V * V).sum(axis=1), 0.0))


@njit(cache=True)
def lingame_batch(X: np.ndarray, Yt: np.ndarray, gaps: np.ndarray, sigma: float, width: np.ndarray, c: float,
                  counts: np.ndarray, n: int, key: int, losses: np.ndarray, hedges: np.ndarray,
                  cumulative: np.ndarray) -> np.ndarray:
    """n LinGame pulls: learner ``key`` (a row of ``losses``) plays w, gains U at its best response, and the pull is
    argmax_k (cumulative_k - N_k) once w is added to ``cumulative``."""
    batch, now = np.zeros(X.shape[0], np.int64), counts.copy()
    for _ in range(n):
        w = hedge_weights(losses[key], hedges[key])
        hedge_update(losses, hedges, key, -optimistic_gains(X, Yt, gaps, sigma, w, width, c), w)
        cumulative += w
        k = int(np.argmax(cumulative - now))
        now[k] += 1
        batch[k] += 1
    return batch


@njit(cache=True)
def lingame_c_batch(X: np.ndarray, Yt: np.ndarray, gaps: np.ndarray, sigma: float, width: np.ndarray, c: float,
                    best: int, n: int, losses: np.ndarray, hedges: np.ndarray, plays: np.ndarray,
                    pairs: np.ndarray) -> np.ndarray:
    """n LinGame-C pulls: the learner plays W over the (answer, arm) pairs; the row of the estimate's answer gains U at
    its best response (its normalised row; uniform when the row is zero), the others U at the estimate; the pair
    furthest behind its cumulative play is pulled."""
    n_answers, K = plays.shape
    idle = np.minimum(width**2 / (2.0 * sigma**2), c)
    batch = np.zeros(K, np.int64)
    for _ in range(n):
        W = hedge_weights(losses[0], hedges[0])
        U = np.empty((n_answers, K))
        U[:] = idle
        row = W[best * K:(best + 1) * K]
        total = pairwise_sum(row)
        U[best] = optimistic_gains(X, Yt, gaps, sigma, row / total if total > 0 else np.full(K, 1.0 / K), width, c)
        hedge_update(losses, hedges, 0, -U.ravel(), W)
        plays += W.reshape(n_answers, K)
        flat = int(np.argmax(plays - pairs))
        pairs[flat // K, flat % K] += 1
        batch[flat % K] += 1
    return batch
