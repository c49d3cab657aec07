"""The reduced barrier psi(w) of :mod:`optdesign.linear.barrier` and its centring stage, in numpy: the reference.

A point w of the simplex (all w_k > 0, A(w) = L L^T nonsingular) has whitened directions Z_y = L^{-1} y with
variances v_y = ||Z_y||^2, the epigraph level t(w) > max_y v_y solving sum_y 1 / (t - v_y) = tau, slacks
s_y = t - v_y and psi(w) = tau t(w) - sum_y log s_y - sum_k log w_k. Newton steps use the reduced Hessian of psi.
With z_k = L^{-1} x_k, G_ky = z_k^T Z_y and P = X A^{-1} X^T::

    d v_y / d w_k = -G_ky^2,   d^2 v_y / dw_j dw_k = 2 P_jk G_jy G_ky,
    grad psi = -z_k^T C1 z_k - 1/w_k,   C1 = sum_y Z_y Z_y^T / s_y,
    Hess psi = sum_y (G_.y^2)(G_.y^2)^T / s_y^2 + 2 P o (Z_x^T C1 Z_x) + diag(1/w^2) - (Schur term in t).

The rank-m first term and the Schur term are assembled over the same directions, as the weighted covariance of the
``G_.y^2`` (so the Hessian stays positive definite whatever directions are left out): the ``hessian_directions``
directions with the smallest slack plus every direction within a factor SLACK_BAND of the smallest one (the others
are smaller by orders of magnitude once tau is large; the band keeps all of them when many tie, e.g. d (d - 1) / 2
differences e_i - e_j). The gradient is exact and an Armijo search safeguards each step, so iterates still converge
on the full problem; the step solves the Jacobi-scaled KKT system of the constraint sum_k w_k = 1.

These functions are the readable definition of a centring stage; :mod:`optdesign.linear.barrier_kernel` compiles the
same arithmetic, and the tests hold it to these (``minmax_barrier(..., compiled=False)`` runs them).
"""

from __future__ import annotations

import numpy as np

from ..runtime.deadline import Deadline
from .criteria import cholesky_factor, whiten

__all__: list[str] = []  # the barrier's internals; the solver is optdesign.linear.barrier.minmax_barrier

# (L, whitened directions, their variances v, slacks t - v) of a point inside the barrier's domain
_Newton = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

HESSIAN_ENTRIES = 2_000_000  # cap on n x (Hessian directions), the size of the rank-m term's factor
SLACK_BAND = 10.0  # directions with slack within this factor of the smallest weigh >= 1 / 100 of it
STAGE_STEPS = 60  # Newton steps of a centring stage at most


def _epigraph_level(v: np.ndarray, tau: float) -> float:
    """Root t > max v of sum_y 1/(t - v_y) = tau (convex decreasing: Newton from the left is monotone)."""
    t: float = v.max() + 1.0 / tau
    if not t > v.max():  # 1 / tau below the rounding of max v: no level resolves it (caller rejects)
        return t
    for _ in range(100):
        r = 1.0 / (t - v)
        g = r.sum() - tau
        if g <= 1e-12 * tau:
            break
        step = g / (r @ r)
        if step <= 1e-15 * abs(t):  # rounding floor: the residual can stall just above 1e-12 tau
            break
        t += step
    return t


def _hessian_directions(s: np.ndarray, q: int, cap: int) -> np.ndarray:
    """Directions whose rank-one terms 1 / s_y^2 enter the Newton Hessian.

    The ``q`` smallest slacks, plus every direction within ``SLACK_BAND`` of the smallest, up to
    ``cap`` directions (smallest slacks first). The band matters when more than ``q`` directions
    are (nearly) active at the optimum, e.g. the d (d - 1) / 2 tied differences e_i - e_j of
    Soare's instance: the truncated Hessian then misses terms as large as those it keeps.
    """
    m = s.size
    if m <= q:
        return np.arange(m)
    k = min(max(q, int(np.count_nonzero(s <= SLACK_BAND * s.min()))), cap, m)
    return np.arange(m) if k == m else np.argpartition(s, k - 1)[:k]



def _reduced_barrier(XS: np.ndarray, Y: np.ndarray, w: np.ndarray, tau: float) -> tuple[float, _Newton | None]:
    """Reduced barrier value psi(w) and the quantities Newton needs (None outside the domain)."""
    if np.any(w <= 0):
        return np.inf, None
    L = cholesky_factor(XS, w)
    if L is None:
        return np.inf, None
    Zy = whiten(L, Y)
    v = np.einsum("ij,ij->j", Zy, Zy)
    t = _epigraph_level(v, tau)
    s = t - v
    if not np.all(s > 0):  # the level is not resolved above max v (rounding): outside the domain
        return np.inf, None
    val = tau * t - np.log(s).sum() - np.log(w).sum()
    return (val, (L, Zy, v, s)) if np.isfinite(val) else (np.inf, None)


def _newton_direction(XS: np.ndarray, w: np.ndarray, cache: _Newton, q_dirs: int) -> tuple[np.ndarray, float]:
    """Newton step dw on psi under sum w = 1 (Jacobi-scaled KKT system) and its decrement -grad^T dw."""
    L, Zy, _, s = cache
    n = w.size
    r1 = 1.0 / s
    r2 = r1 * r1
    Zx = whiten(L, XS)
    C1x = ((Zy * r1) @ Zy.T) @ Zx
    grad = -np.einsum("ij,ij->j", Zx, C1x) - 1.0 / w
    H = 2.0 * (Zx.T @ Zx) * (Zx.T @ C1x)
    H[np.diag_indices(n)] += 1.0 / w**2
    active = _hessian_directions(s, q_dirs, max(q_dirs, HESSIAN_ENTRIES // n))
    G2 = (Zx.T @ Zy[:, active]) ** 2
    r2a = r2[active]
    # rank-m term minus the Schur term in t, both over the active directions: the weighted
    # covariance sum_y r_y (g_y - g_bar)(g_y - g_bar)^T, PSD and free of cancellation
    G2 -= (G2 @ r2a / r2a.sum())[:, None]
    H += (G2 * r2a) @ G2.T
    dsc = 1.0 / np.sqrt(np.maximum(np.diag(H), 1e-300))
    kkt = np.empty((n + 1, n + 1))
    kkt[:n, :n] = H * dsc[:, None] * dsc[None, :]
    kkt[:n, n] = kkt[n, :n] = dsc
    kkt[n, n] = 0.0
    rhs = np.concatenate([-grad * dsc, [1.0 - w.sum()]])
    try:
        sol = np.linalg.solve(kkt, rhs)
    except np.linalg.LinAlgError:
        sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
    dw = sol[:n] * dsc
    return dw, float(-(grad @ dw))


def _line_search(XS: np.ndarray, Y: np.ndarray, w: np.ndarray, val: float, tau: float, dw: np.ndarray,
                 decrement: float) -> tuple[np.ndarray, float, float, _Newton | None]:
    """Armijo backtracking along dw from the largest step inside w > 0: (w + a dw, a, psi, cache)."""
    a = 1.0
    neg = dw < 0
    if np.any(neg):
        a = min(1.0, 0.95 * np.min(-w[neg] / dw[neg]))
    while True:
        w_new = w + a * dw
        new_val, new_cache = _reduced_barrier(XS, Y, w_new, tau)
        if new_val <= val - 0.25 * a * decrement or a < 1e-12:
            return w_new, a, new_val, new_cache
        a *= 0.5


def _centre(XS: np.ndarray, Y: np.ndarray, tau: float, point: tuple[np.ndarray, float, _Newton], q_dirs: int,
            centring_tol: float, budget: int, deadline: Deadline) -> tuple[np.ndarray, float, _Newton, int]:
    """One centring stage from ``point`` = (w, psi(w), its cache): damped Newton steps on psi at fixed tau, at most
    STAGE_STEPS, or ``budget`` (after a step), or until the deadline; the last point and the directions computed."""
    w, val, cache = point
    steps = 0
    for _ in range(STAGE_STEPS):
        dw, decrement = _newton_direction(XS, w, cache, q_dirs)
        steps += 1
        # below the rounding of psi (about eps |psi|, large once tau is) no line search can see
        # a decrease: the stage is as centred as it gets
        if not np.isfinite(decrement) or decrement < max(1e-10, 16 * np.finfo(float).eps * abs(val)):
            break
        w_new, a, new_val, new_cache = _line_search(XS, Y, w, val, tau, dw, decrement)
        if new_cache is None or new_val > val:
            break
        w, val, cache = w_new, new_val, new_cache
        if (decrement < centring_tol and a == 1.0) or steps >= budget or deadline.expired():
            break
    return w, val, cache, steps
