"""One linear (transductive) run under the GLR stop, compiled: round robin, Track-and-Stop, Top-Two (EB leader, TC or
TCI challenger), Frank–Wolfe sampling and Lazy Track-and-Stop (:mod:`bandits.pure_exploration.compiled.lazy`).

The loop of :mod:`bandits.pure_exploration.compiled.loop` for a :class:`bandits.core.environments.LinearBandit`: the
first pass pulls every arm once; each batch runs to the next time of the grid at the batch's estimate
theta_hat = A(N)^{-1} sum_k S_k x_k (A(N) = sum_k N_k x_k x_k^T, by its Cholesky factor); rewards are drawn as one
normal sum per arm pulled, in arm order; the GLR statistic is min_j gap_j^2 / (2 sigma^2 ||y_j||^2_{A(N)^{-1}}),
y_j = z* - z_j (:mod:`bandits.pure_exploration.linear`). Track-and-Stop re-solves the transductive design
(:func:`optdesign.transductive`, called back from compiled code) on its geometric schedule; Frank–Wolfe sampling
keeps H = V(x)^{-1} and the projections H y_j by Sherman–Morrison updates, recomputed every ``refresh`` steps and
after a dense direction (:class:`bandits.pure_exploration.design_inverse.DesignInverse`). The matrix products sum in
another order than the reference's BLAS, so runs agree with the reference in distribution, not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, objmode

from ...core.alternatives import NORM_FLOOR
from ..design_inverse import DENSE_SUPPORT
from .arithmetic import track
from .game import _game, _is_square, furthest_behind
from .interrupts import INTERRUPTED, look_now, signals_pending, wall_clock
from .lazy import lazy_batch, lazy_due, linear_update
from .lingame import LINEAR, lingame_batch, lingame_c_batch, new_game, widths
from .loop import _settle, resolve_due, settle_stopped, tracking_batch
from .oracle import linear_oracle_target
from .plan import FRANK_WOLFE, LINGAME, LINGAME_C, ROUND_ROBIN, TOP_TWO, TRACK_AND_STOP

__all__ = ["linear_run"]


@njit(cache=True)
def _directions(Z: np.ndarray, theta: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The best item b (first on a tie), the directions y_j = z_b - z_j of the others, and their gaps y_j^T theta."""
    values = Z @ theta
    b = int(np.argmax(values))
    keep = np.array([j for j in range(Z.shape[0]) if j != b])
    Y = Z[b] - Z[keep]
    return b, Y, values[b] - values[keep]


@njit(cache=True)
def _statistics(X: np.ndarray, Z: np.ndarray, sigma: float, counts: np.ndarray,
                sums: np.ndarray) -> tuple[np.ndarray, int, float, np.ndarray]:
    """theta_hat, its answer, the GLR statistic at the counts and R = L^{-1} for A(N) = L L^T (positive definite
    after the first pass)."""
    A = X.T @ (X * counts.astype(np.float64).reshape(-1, 1))
    R = np.ascontiguousarray(np.linalg.inv(np.linalg.cholesky(A)))
    theta = R.T @ (R @ (X.T @ sums))
    b, Y, gaps = _directions(Z, theta)
    RY = Y @ R.T
    norms = (RY * RY).sum(axis=1)
    values = np.maximum(gaps, 0.0) ** 2 / (2.0 * sigma**2 * np.maximum(norms, NORM_FLOOR))
    return theta, b, values.min(), R


@njit(cache=True)
def _project(X: np.ndarray, H: np.ndarray, Y: np.ndarray, P: np.ndarray, q: np.ndarray) -> None:
    """P = Y H and q_j = y_j^T H y_j (in place)."""
    P[:] = Y @ H
    q[:] = (P * Y).sum(axis=1)


@njit(cache=True)
def _fws_step(X: np.ndarray, t: int, z: np.ndarray, x: np.ndarray, H: np.ndarray, Y: np.ndarray, P: np.ndarray,
              q: np.ndarray, refresh: int, since: np.ndarray, W: np.ndarray, published: bool) -> None:
    """Follow x <- (1 - 1/t) x + z / t (``x`` already moved): V(x) = (1 - 1/t) V + sum_k (z_k / t) x_k x_k^T, so H, P
    and q by Sherman-Morrison, or H = V(x)^{-1} by one inversion every ``refresh`` steps and after a dense z.
    ``published``: the published code's W = t / (t - 1) W + sum_k (z_k / t)^2 x_k x_k^T and its H, inverted only
    after a dense z."""
    support = np.flatnonzero(z)
    since[0] += 1
    scale = t / (t - 1.0) if published else (t - 1.0) / t
    if published:
        W *= scale
        for k in support:
            W += (z[k] / t) ** 2 * np.outer(X[k], X[k])
    if support.size > DENSE_SUPPORT or (not published and since[0] >= refresh):
        inverse = np.linalg.inv(W if published else X.T @ (X * x.reshape(-1, 1)))
        H[:] = 0.5 * (inverse + inverse.T)
        since[0] = 0
        _project(X, H, Y, P, q)
        return
    H /= scale
    P /= scale
    q /= scale
    d, J = H.shape[0], P.shape[0]
    h, Pu = np.empty(d), np.empty(J)
    for k in support:
        u = (z[k] / t if published else math.sqrt(z[k] / t)) * X[k]
        denom = 1.0
        for i in range(d):
            h[i] = 0.0
            for m in range(d):
                h[i] += H[i, m] * u[m]
            denom += u[i] * h[i]
        for j in range(J):
            Pu[j] = 0.0
            for m in range(d):
                Pu[j] += P[j, m] * u[m]
        for i in range(d):
            for m in range(d):
                H[i, m] -= h[i] * (h[m] / denom)
        for j in range(J):
            for m in range(d):
                P[j, m] -= Pu[j] * (h[m] / denom)
            q[j] -= Pu[j] ** 2 / denom


@njit(cache=True)
def _fws_direction(X: np.ndarray, sigma: float, gaps: np.ndarray, P: np.ndarray, q: np.ndarray, x: np.ndarray,
                   slack: float, published: bool) -> np.ndarray:
    """The Frank–Wolfe direction from the pieces along the path: uniform without a unique answer, the best vertex of
    the one near-minimal piece's gradient, or the game over those within ``slack`` of the minimum."""
    K = X.shape[0]
    if gaps.size == 0 or gaps.min() <= 0:
        return np.full(K, 1.0 / K)
    norms = np.maximum(q, NORM_FLOOR)
    if published:  # the published code's f_j = <x, grad f_j> at its matrix
        scale = (np.maximum(gaps, 0.0) / norms).reshape(-1, 1)
        grads = (scale * (P @ X.T)) ** 2 / (2.0 * sigma**2)
        values = grads @ x
        G = grads[np.flatnonzero(values <= values.min() + slack)]
    else:
        values = np.maximum(gaps, 0.0) ** 2 / (2.0 * sigma**2 * norms)
        near = np.flatnonzero(values <= values.min() + slack)
        scale = (np.maximum(gaps[near], 0.0) / norms[near]).reshape(-1, 1)
        G = (scale * (P[near] @ X.T)) ** 2 / (2.0 * sigma**2)
    z = np.zeros(K)
    if G.shape[0] == 1:
        z[int(np.argmax(G[0]))] = 1.0
        return z
    return _game(G - (G @ x).reshape(-1, 1))


@njit(cache=True)
def _fws_batch(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, counts: np.ndarray, n: int,
               refresh: int, published: bool, path: tuple) -> np.ndarray:
    """n FWS pulls at theta_hat; ``path`` = (x, H, W, Y, P, q, state) follows the iterate, state = (the answer whose
    directions Y holds, steps since the last inversion)."""
    x, H, W, Y, P, q, state = path
    K = X.shape[0]
    b, Yb, _ = _directions(Z, theta)
    if b != state[0]:
        state[0] = b
        Y[:] = Yb
        _project(X, H, Y, P, q)
    gaps = Y @ theta
    batch, now = np.zeros(K, np.int64), counts.copy()
    for _ in range(n):
        step = max(int(now.sum()), 2)
        z = np.full(K, 1.0 / K) if _is_square(step // K) else \
            _fws_direction(X, sigma, gaps, P, q, x, float(step) ** -0.9 / K, published)
        x += (z - x) / step
        _fws_step(X, step, z, x, H, Y, P, q, refresh, state[1:], W, published)
        k = furthest_behind(x, now)
        now[k] += 1
        batch[k] += 1
    return batch


@njit(cache=True)
def _top_two_batch(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, counts: np.ndarray, n: int,
                   penalised: bool) -> np.ndarray:
    """n Top-Two pulls at theta_hat (:meth:`bandits.pure_exploration.linear.LinearProblem.top_two_pulls`): the
    empirical best b leads, the challenger is the piece of least cost at the counts (plus log(||y||^2 /
    ||y||^2_{A^{-1}}) when ``penalised``: TCI), and the pull is argmin_k y^T (A + x_k x_k^T)^{-1} y for its y. H =
    A^{-1}, P = Y H, q_j = y_j^T H y_j and h_k = x_k^T H x_k follow the pulls by Sherman-Morrison updates."""
    _, Y, gaps = _directions(Z, theta)
    K, d, J = X.shape[0], X.shape[1], Y.shape[0]
    H = np.linalg.inv(X.T @ (X * counts.astype(np.float64).reshape(-1, 1)))
    H = 0.5 * (H + H.T)
    P, XH = Y @ H, X @ H
    q, h, lengths = (P * Y).sum(axis=1), (XH * X).sum(axis=1), (Y * Y).sum(axis=1)
    top = np.maximum(gaps, 0.0) ** 2 / (2.0 * sigma**2)
    batch = np.zeros(K, np.int64)
    for _ in range(n):
        values = top / np.maximum(q, NORM_FLOOR)
        if penalised:
            values = values + np.log(lengths / q)
        j = int(np.argmin(values))
        cross = X @ P[j]
        k = int(np.argmin(q[j] - cross * cross / (1.0 + h)))
        g, denom = XH[k].copy(), 1.0 + h[k]
        Pg, Xg = Y @ g, X @ g
        for i in range(d):
            for m in range(d):
                H[i, m] -= g[i] * g[m] / denom
        for r in range(J):
            for m in range(d):
                P[r, m] -= Pg[r] * g[m] / denom
            q[r] -= Pg[r] ** 2 / denom
        for r in range(K):
            for m in range(d):
                XH[r, m] -= Xg[r] * g[m] / denom
            h[r] -= Xg[r] ** 2 / denom
        batch[k] += 1
    return batch


@njit(cache=True)
def _game_batch(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, R: np.ndarray, t: int,
                counts: np.ndarray, n: int, pairs: bool, shared: bool, game: tuple,
                cumulative: np.ndarray) -> np.ndarray:
    """n LinGame (``pairs`` false) or LinGame-C pulls at the batch's estimate, level c_t = log max(t, 2) and widths
    from R^T R = A(N)^{-1}."""
    losses, hedges, plays, pulled = game
    c = math.log(max(t, 2))
    b, Y, gaps = _directions(Z, theta)
    linear = (X, np.ascontiguousarray(Y.T), gaps, widths(X, R, sigma, c))
    arms = (theta, theta, theta)  # placeholders (K-armed runs only)
    if pairs:
        return lingame_c_batch(LINEAR, sigma, c, b, linear, arms, n, losses, hedges, plays, pulled)
    return lingame_batch(LINEAR, sigma, c, b, linear, arms, counts, n, 0 if shared else b, losses, hedges, cumulative)


@njit(cache=True)
def _lazy_linear_batch(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray, t: int, counts: np.ndarray,
                       n: int, options: np.ndarray, lazy: np.ndarray, target: np.ndarray,
                       cumulative: np.ndarray) -> np.ndarray:
    """n Lazy TaS pulls: its Frank-Wolfe target refreshed when due, c0 set from A(N)'s least eigenvalue after the
    first pass (:mod:`bandits.pure_exploration.compiled.lazy`)."""
    A = X.T @ (X * counts.astype(np.float64).reshape(-1, 1))
    smallest = np.linalg.eigvalsh(A)[0]
    if lazy[1] < 0:  # c0, after the first pass
        lazy[1] = smallest / math.sqrt(X.shape[1])
    if lazy_due(lazy, t):
        linear_update(X, Z, sigma, theta, target, int(options[0]), options[1])
    return lazy_batch(target, cumulative, counts, n, options[2:].astype(np.int64), lazy, smallest)


@njit(cache=True)
def linear_run(X: np.ndarray, Z: np.ndarray, sigma: float, means: np.ndarray, rule: int, options: np.ndarray,
               growth: float, forms: np.ndarray, max_samples: int, env_rng: np.random.Generator,
               start: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                      np.ndarray]:
    """Run round robin (0), Track-and-Stop (1: tracking, resolve growth), Top-Two (2: the EB leader, the TC or TCI
    challenger, as in ``bandits.pure_exploration.compiled.plan._rule``), FWS (4: refresh, 1 for the published
    update), Lazy TaS (5: Frank–Wolfe steps, tolerance, the spanning arms), LinGame (6: 1 for one learner) or
    LinGame-C (7) on a linear instance until every delta stops, the budget is spent or Ctrl-C ends it; the same outputs
    as :func:`bandits.pure_exploration.compiled.loop.karmed_run`. ``means`` are the arms' means x_k^T theta."""
    K, d, D = X.shape[0], X.shape[1], forms.shape[0]
    outcome, times, pending = np.zeros((4, D), np.int64), np.zeros((2, D)), np.ones(D, np.bool_)
    counts, sums = np.zeros(K, np.int64), np.zeros(K)
    target, cumulative, clock = np.full(K, 1.0 / K), np.zeros(K), np.zeros(2)
    x = np.full(K, 1.0 / K)
    published = rule == FRANK_WOLFE and options[1] == 1
    V = X.T @ (X * x.reshape(-1, 1))
    inverse = np.ascontiguousarray(np.linalg.inv(V))
    W, H = (inverse, V.copy()) if published else (V.copy(), inverse)
    J = Z.shape[0] - 1
    path = (x, H, W, np.zeros((J, d)), np.zeros((J, d)), np.zeros(J), np.array([-1, 0], np.int64))
    t, n_batches, theta, answer = 0, 0, np.zeros(d), 0
    lazy = np.array([0.0, -1.0, 0.0])
    game = new_game(rule == LINGAME_C, rule != LINGAME or options[0] == 1, K, Z.shape[0])
    R, stop = np.eye(d), np.array([-1.0, 0.0])
    while pending.any():
        if t >= max_samples:
            _settle(outcome, times, pending, pending.copy(), t, n_batches, answer, 1, wall_clock() - start, clock[1])
            break
        batch = np.ones(K, np.int64)
        if t > 0:
            n = min(max(t + 1, math.ceil(t * (1.0 + growth))) - t, max_samples - t)
            if rule == ROUND_ROBIN:
                batch = track(counts, np.full(K, 1.0 / K), n)
            elif rule == TRACK_AND_STOP:
                if resolve_due(clock, t, options[1]):
                    started = wall_clock()
                    with objmode(w="float64[:]"):
                        w = linear_oracle_target(X, Z, sigma, theta)
                    clock[1] += wall_clock() - started
                    if w.size == K:
                        target[:] = w
                batch = tracking_batch(target, cumulative, counts, n, options[0] == 1)
            elif rule == LINGAME or rule == LINGAME_C:
                batch = _game_batch(X, Z, sigma, theta, R, t, counts, n, rule == LINGAME_C, options[0] == 1, game,
                                    cumulative)
            elif rule == FRANK_WOLFE:
                batch = _fws_batch(X, Z, sigma, theta, counts, n, int(options[0]), published, path)
            elif rule == TOP_TWO:
                batch = _top_two_batch(X, Z, sigma, theta, counts, n, options[1] == 1)
            else:
                batch = _lazy_linear_batch(X, Z, sigma, theta, t, counts, n, options, lazy, target, cumulative)
        for k in range(K):
            if batch[k] > 0:
                sums[k] += batch[k] * means[k] + sigma * math.sqrt(batch[k]) * env_rng.standard_normal()
        counts += batch
        if t == 0:
            cumulative[:] = counts
        size = int(batch.sum())
        t, n_batches = t + size, n_batches + 1
        if look_now(n_batches, size) and signals_pending():  # type: ignore[call-arg]
            stop[0] = INTERRUPTED
            break
        theta, answer, value, R = _statistics(X, Z, sigma, counts, sums)
        settle_stopped(outcome, times, pending, forms, value, t, n_batches, answer, start, clock[1])
    return outcome[0], outcome[1], outcome[2], outcome[3], times[0], times[1], stop
