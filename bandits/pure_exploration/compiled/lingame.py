"""LinGame and LinGame-C in compiled runs (Degenne, Ménard, Shang & Valko 2020; the references are
:mod:`bandits.pure_exploration.samplers.lingame` and :mod:`bandits.pure_exploration.samplers.lingame_c`).

AdaHedge (:class:`bandits.pure_exploration.adahedge.AdaHedge`: weights proportional to exp(-eta L), eta = ln n / Delta,
Delta the summed mixability gaps; uniform on argmin L while Delta = 0) plays w over the arms (LinGame, one learner or
one per answer of the estimate) or W over the (answer, arm) pairs (LinGame-C). The best response to w is the closest
alternative lambda of least value under A(w) = sum_k w_k x_k x_k^T (Cholesky; the pseudo-inverse and the free pieces
of :class:`bandits.core.alternatives.Alternatives` when w does not span R^d), and the learner gains
U_k = min((|x_k^T (theta_hat - lambda)| + width_k)^2 / (2 sigma^2), c_t), width_k = sigma sqrt(2 c_t)
||x_k||_{A(N)^{-1}} at the batch's counts, c_t = log max(t, 2). On K arms of a Gaussian or Bernoulli family the best
response moves the estimate's answer b and the challenger a of least w_b d(mu_b, m) + w_a d(mu_a, m) to their weighted
mean m, and U_k = min(max(d(l_k, lambda_k), d(u_k, lambda_k)), c_t) over the intervals
[l_k, u_k] = {m : N_k d(mu_k, m) <= c_t} (:class:`bandits.pure_exploration.karmed.KArmedOptimism`). The pulls C-track
the cumulative plays.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...core.alternatives import FREE_TOL, NORM_FLOOR, PSEUDO_RCOND
from .arithmetic import GAUSSIAN, divergence, kl_bound, pair_cost, pairwise_sum

__all__ = ["confidence_intervals", "hedge_update", "hedge_weights", "karmed_gains", "lingame_batch", "lingame_c_batch",
           "new_game", "optimistic_gains", "widths"]


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
def new_game(pairs: bool, shared: bool, K: int, n_answers: int) -> tuple:
    """The learners' state (cumulative losses per learner, their summed mixability gaps, and LinGame-C's cumulative
    plays and pulls per (answer, arm) pair): one learner over the arms, one per answer, or one over the pairs."""
    if pairs:
        return np.zeros((1, n_answers * K)), np.zeros(1), np.zeros((n_answers, K)), np.zeros((n_answers, K))
    rows = 1 if shared else n_answers
    return np.zeros((rows, K)), np.zeros(rows), np.zeros((1, 1)), np.zeros((1, 1))


@njit(cache=True)
def confidence_intervals(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray,
                         c: float) -> tuple[np.ndarray, np.ndarray]:
    """[l_k, u_k] = {m : N_k d(mu_k, m) <= c}: mu_k -/+ sigma sqrt(2 c / N_k), or by BISECTION_STEPS halvings between
    mu_k and each end of [0, 1] (Bernoulli)."""
    level = c / np.maximum(counts.astype(np.float64), 1e-300)
    if family == GAUSSIAN:  # closed form, vectorised as the reference's
        width = sigma * np.sqrt(2.0 * level)
        return mu - width, mu + width
    lower, upper = np.empty(mu.size), np.empty(mu.size)
    for k in range(mu.size):
        lower[k] = kl_bound(family, sigma, mu[k], level[k], False)
        upper[k] = kl_bound(family, sigma, mu[k], level[k], True)
    return lower, upper


@njit(cache=True)
def karmed_gains(family: int, sigma: float, mu: np.ndarray, best: int, w: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, c: float) -> np.ndarray:
    """U at the best response to the play ``w`` on K arms: the challenger a of least pair cost with the answer b
    (the first on a tie), lambda_a = lambda_b = their w-weighted mean, the other means unchanged."""
    a, least = -1, np.inf
    for j in range(mu.size):
        if j != best:
            cost = pair_cost(family, sigma, mu, w, best, j, False)
            if cost < least or a < 0:
                a, least = j, cost
    lam = mu.copy()
    total = w[best] + w[a]
    lam[a] = lam[best] = (w[best] * mu[best] + w[a] * mu[a]) / total if total > 0 else 0.5 * (mu[a] + mu[best])
    return _interval_gains(family, sigma, lower, upper, lam, c)


@njit(cache=True)
def _interval_gains(family: int, sigma: float, lower: np.ndarray, upper: np.ndarray, lam: np.ndarray,
                    c: float) -> np.ndarray:
    """min(max(d(l_k, lambda_k), d(u_k, lambda_k)), c) for every arm."""
    out = np.empty(lam.size)
    for k in range(lam.size):
        out[k] = min(max(divergence(family, sigma, lower[k], lam[k]), divergence(family, sigma, upper[k], lam[k])), c)
    return out


#: the family code of a linear run's gains (K-armed runs pass their family's code)
LINEAR = -1


@njit(cache=True)
def play_gains(family: int, sigma: float, c: float, best: int, w: np.ndarray, linear: tuple,
               arms: tuple) -> np.ndarray:
    """U at the best response to the play ``w``: linear = (X, Yt, gaps, widths) when ``family`` is LINEAR, else
    arms = (mu, lower, upper) of K arms of that family (the other tuple holds placeholders)."""
    if family == LINEAR:
        X, Yt, gaps, width = linear
        return optimistic_gains(X, Yt, gaps, sigma, w, width, c)
    mu, lower, upper = arms
    return karmed_gains(family, sigma, mu, best, w, lower, upper, c)


@njit(cache=True)
def idle_gains(family: int, sigma: float, c: float, linear: tuple, arms: tuple) -> np.ndarray:
    """U at lambda = the estimate (LinGame-C's answers other than the estimate's)."""
    if family == LINEAR:
        width = linear[3]
        return np.minimum(width**2 / (2.0 * sigma**2), c)
    mu, lower, upper = arms
    return _interval_gains(family, sigma, lower, upper, mu, c)


@njit(cache=True)
def lingame_batch(family: int, sigma: float, c: float, best: int, linear: tuple, arms: tuple, counts: np.ndarray,
                  n: int, key: int, losses: np.ndarray, hedges: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """n LinGame pulls: learner ``key`` (a row of ``losses``) plays w, gains U at its best response
    (``play_gains``), and the pull is argmax_k (cumulative_k - N_k) once w is added to ``cumulative``."""
    batch, now = np.zeros(counts.size, np.int64), counts.copy()
    for _ in range(n):
        w = hedge_weights(losses[key], hedges[key])
        hedge_update(losses, hedges, key, -play_gains(family, sigma, c, best, w, linear, arms), w)
        cumulative += w
        k = int(np.argmax(cumulative - now))
        now[k] += 1
        batch[k] += 1
    return batch


@njit(cache=True)
def lingame_c_batch(family: int, sigma: float, c: float, best: int, linear: tuple, arms: tuple, n: int,
                    losses: np.ndarray, hedges: np.ndarray, plays: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """n LinGame-C pulls: the learner plays W over the (answer, arm) pairs; the row of the estimate's answer gains U at
    its best response (its normalised row; uniform when the row is zero), the others U at the estimate; the pair
    furthest behind its cumulative play is pulled."""
    n_answers, K = plays.shape
    idle = idle_gains(family, sigma, c, linear, arms)
    batch = np.zeros(K, np.int64)
    for _ in range(n):
        W = hedge_weights(losses[0], hedges[0])
        U = np.empty((n_answers, K))
        U[:] = idle
        row = W[best * K:(best + 1) * K]
        total = pairwise_sum(row)
        play = row / total if total > 0 else np.full(K, 1.0 / K)
        U[best] = play_gains(family, sigma, c, best, play, linear, arms)
        hedge_update(losses, hedges, 0, -U.ravel(), W)
        plays += W.reshape(n_answers, K)
        flat = int(np.argmax(plays - pairs))
        pairs[flat // K, flat % K] += 1
        batch[flat % K] += 1
    return batch
