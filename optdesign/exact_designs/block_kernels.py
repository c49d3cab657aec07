"""The exchange of grouped designs, compiled: the information, its factor and inverse, and the exact price of a move.

The search's arrays (:mod:`optdesign.exact_designs.block_state`) come in two named tuples that these functions read and
fill in place: the plan, fixed by the problem for every start, and the state of one start (the runs' candidates, M, its
Cholesky factor L, M^{-1}, V = X M^{-1}, the variances h, the group sums S, Gamma S, a_r = S^T Gamma z_r of every run, V
B and b_k = v_k^T B v_k for the linear criteria, the loss and the moves made).

A change M' = M + U C U^T is priced by :func:`optdesign.exact_designs.block_algebra.low_rank_gain` from G = U^T M^{-1} U
and Q = U^T M^{-1} B M^{-1} U (the U and C of :mod:`optdesign.exact_designs.group_structure`), or, for a group whose
rank 3n is at least p, by M' rebuilt and factored. :func:`refresh` recomputes the state from the runs (O(N p^2 + K
p^2)), so no rounding accumulates. The pricing writes into scratch space (:func:`scratch`), so the passes
(:mod:`optdesign.exact_designs.block_passes`) allocate nothing per move priced. Only the entry points take the tuples;
the loops below them take arrays, all C-contiguous, which keeps numba's compilation short (one signature each).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .block_algebra import cholesky, log_det, low_rank_gain, lower_inverse, sandwich_trace
from .block_state import Plan, State

__all__ = ["move_gains_into", "refresh", "reset_gains_into", "scratch", "swap_gains"]


@njit(cache=True)
def _information(X: np.ndarray, members: np.ndarray, gamma: np.ndarray, rows: np.ndarray, M: np.ndarray,
                 S: np.ndarray, GS: np.ndarray, A: np.ndarray) -> None:
    """S, Gamma S, the a_r and M = X_r^T X_r - S^T Gamma S (exactly symmetric) from the runs ``rows``."""
    N, levels = members.shape
    G, p = S.shape
    S.fill(0.0)
    M.fill(0.0)
    for r in range(N):
        x = X[rows[r]]
        for level in range(levels):
            g = members[r, level]
            for j in range(p):
                S[g, j] += x[j]
        for i in range(p):
            for j in range(i, p):
                M[i, j] += x[i] * x[j]
    for g in range(G):
        for j in range(p):
            t = 0.0
            for f in range(G):
                t += gamma[g, f] * S[f, j]
            GS[g, j] = t
    for i in range(p):
        for j in range(i, p):
            t = M[i, j]
            for g in range(G):
                t -= 0.5 * (S[g, i] * GS[g, j] + S[g, j] * GS[g, i])
            M[i, j] = t
            M[j, i] = t
    for r in range(N):
        for j in range(p):
            t = 0.0
            for level in range(levels):
                t += GS[members[r, level], j]
            A[r, j] = t


@njit(cache=True)
def _rows_times(X: np.ndarray, P: np.ndarray, out: np.ndarray) -> None:
    """out = X P^T over the rows of X and of P (X P for P symmetric)."""
    for k in range(out.shape[0]):
        for j in range(P.shape[0]):
            t = 0.0
            for i in range(X.shape[1]):
                t += X[k, i] * P[j, i]
            out[k, j] = t


@njit(cache=True)
def _row_dots(X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> None:
    """out[k] = x_k^T y_k."""
    for k in range(X.shape[0]):
        t = 0.0
        for j in range(X.shape[1]):
            t += X[k, j] * Y[k, j]
        out[k] = t


@njit(cache=True)
def refresh(plan: Plan, state: State) -> bool:
    """The state recomputed from the runs; False (the state then partly stale) when M is numerically singular: a
    pivot of its Cholesky factor not positive, or the smallest squared at most SINGULAR_RTOL times M's largest
    diagonal entry."""
    M, L, Minv = state.M, state.L, state.Minv
    p = M.shape[0]
    _information(plan.X, plan.members, plan.gamma, state.rows, M, state.S, state.GS, state.A)
    if not cholesky(M, L):
        return False
    low, top = np.inf, 0.0
    for j in range(p):
        low, top = min(low, L[j, j] * L[j, j]), max(top, M[j, j])
    if low <= plan.limits[2] * top:
        return False
    W = np.empty((p, p))
    lower_inverse(L, W)
    for i in range(p):
        for j in range(i + 1):
            t = 0.0
            for k in range(i, p):
                t += W[k, i] * W[k, j]
            Minv[i, j] = t
            Minv[j, i] = t
    _rows_times(plan.X, Minv, state.V)
    _row_dots(state.V, plan.X, state.h)
    if plan.linear:
        state.scalars[0] = sandwich_trace(W, plan.B)
        _rows_times(state.V, plan.B, state.VB)
        _row_dots(state.VB, state.V, state.b)
    else:
        state.scalars[0] = -log_det(L)
    return True


@njit(cache=True)
def scratch(p: int, m: int) -> tuple:
    """Work space of the pricing: vectors (4 x p); C, G, Q of a rank-three move (3 x 3 x 3) and two 3 x 3 of work;
    for groups of rank up to m: C U, U and one more m x p, G and Q (2 x m x m), two m x m of work; pivots (m, at
    least 3); two p x p."""
    return (np.zeros((4, p)), np.zeros((3, 3, 3)), np.zeros((2, 3, 3)), np.zeros((3, m, p)), np.zeros((2, m, m)),
            np.zeros((2, m, m)), np.zeros(max(m, 3), dtype=np.int64), np.zeros((2, p, p)))


@njit(cache=True)
def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a^T b."""
    t = 0.0
    for j in range(a.size):
        t += a[j] * b[j]
    return t


@njit(cache=True)
def _move_setup(Minv: np.ndarray, B: np.ndarray, x: np.ndarray, a: np.ndarray, c: float, h_i: float, linear: bool,
                vectors: np.ndarray, small: np.ndarray) -> None:
    """C, and the entries of G and Q that do not depend on the new candidate, of moving a run from x (its a_r = a,
    c = z_r^T Gamma z_r): U = [x_j, x, a], C = diag(1, -1, 0) - c f f^T - f e3^T - e3 f^T, f = (1, -1, 0); u = M^{-1}
    x, w = M^{-1} a and B u, B w in ``vectors``."""
    u, w, Bu, Bw = vectors[0], vectors[1], vectors[2], vectors[3]
    C, G, Q = small[0], small[1], small[2]
    C[0, 0], C[0, 1], C[0, 2] = 1.0 - c, c, -1.0
    C[1, 0], C[1, 1], C[1, 2] = c, -1.0 - c, 1.0
    C[2, 0], C[2, 1], C[2, 2] = -1.0, 1.0, 0.0
    for j in range(u.size):
        u[j], w[j] = _dot(Minv[j], x), _dot(Minv[j], a)
    G[1, 1], G[1, 2], G[2, 2] = h_i, _dot(x, w), _dot(a, w)
    G[2, 1] = G[1, 2]
    if linear:
        for j in range(u.size):
            Bu[j], Bw[j] = _dot(B[j], u), _dot(B[j], w)
        Q[1, 1], Q[1, 2], Q[2, 2] = _dot(u, Bu), _dot(u, Bw), _dot(w, Bw)
        Q[2, 1] = Q[1, 2]


@njit(cache=True)
def move_gains_into(plan: Plan, state: State, r: int, J: np.ndarray, n: int, out: np.ndarray,
                    buffers: tuple) -> None:
    """``out[t]``: the loss decrease of moving run r to candidate J[t] (-inf: M' singular, or its own candidate), for
    t < n; ``buffers`` from :func:`scratch`."""
    vectors, small, work, pivots = buffers[0], buffers[1], buffers[2], buffers[6]
    i = state.rows[r]
    x, a = plan.X[i], state.A[r]
    _move_setup(state.Minv, plan.B, x, a, plan.gammas[r], state.h[i], plan.linear, vectors, small)
    C, G, Q = small[0], small[1], small[2]
    for t in range(n):
        j = J[t]
        if j == i:
            out[t] = -np.inf
            continue
        v = state.V[j]
        G[0, 0], G[0, 1], G[0, 2] = state.h[j], _dot(v, x), _dot(v, a)
        G[1, 0], G[2, 0] = G[0, 1], G[0, 2]
        if plan.linear:
            vb = state.VB[j]
            Q[0, 0], Q[0, 1], Q[0, 2] = state.b[j], _dot(vb, vectors[0]), _dot(vb, vectors[1])
            Q[1, 0], Q[2, 0] = Q[0, 1], Q[0, 2]
        out[t] = low_rank_gain(C, G, Q, C.shape[0], plan.linear, plan.limits[1], work, pivots)


@njit(cache=True)
def _reset_rows(X: np.ndarray, rows: np.ndarray, A: np.ndarray, runs: np.ndarray, stride: int, radix: int,
                setting: int, U: np.ndarray) -> None:
    """The leading 3n rows of U: U^T of giving the n runs ``runs`` the setting ``setting`` of the kind of stride
    ``stride`` and radix ``radix``: their new rows, their old rows, their a_r."""
    n = runs.size
    for k in range(n):
        code = rows[runs[k]]
        new = code + (setting - (code // stride) % radix) * stride
        for j in range(X.shape[1]):
            U[k, j], U[n + k, j], U[2 * n + k, j] = X[new, j], X[code, j], A[runs[k], j]


@njit(cache=True)
def _congruence(U: np.ndarray, m: int, P: np.ndarray, T: np.ndarray, out: np.ndarray) -> None:
    """The leading m x m block of out = U P U^T, symmetrised, over the leading m rows of U (P symmetric); T (its
    leading m rows) = U P."""
    for k in range(m):
        for j in range(P.shape[0]):
            t = 0.0
            for i in range(U.shape[1]):
                t += U[k, i] * P[j, i]
            T[k, j] = t
    for i in range(m):
        for j in range(i + 1):
            s = 0.5 * (_dot(T[i], U[j]) + _dot(T[j], U[i]))
            out[i, j] = s
            out[j, i] = s


@njit(cache=True)
def _rebuilt_gain(M: np.ndarray, L: np.ndarray, U: np.ndarray, C: np.ndarray, m: int, B: np.ndarray, linear: bool,
                  loss: float, min_ratio: float, T: np.ndarray, square: np.ndarray) -> float:
    """The loss decrease of M' = M + U^T C U (the leading m rows of U, m x m of C), M' rebuilt and factored; -inf
    when M' is not numerically definite or det M' / det M <= ``min_ratio``. T (m x p) and ``square`` (2 x p x p)
    are scratch space."""
    p = M.shape[0]
    Ms, Lnew = square[0], square[1]
    for k in range(m):
        for j in range(p):
            s = 0.0
            for f in range(m):
                s += C[k, f] * U[f, j]
            T[k, j] = s
    for i in range(p):
        for j in range(i + 1):
            s = 0.0
            for k in range(m):
                s += U[k, i] * T[k, j] + U[k, j] * T[k, i]
            Ms[i, j] = M[i, j] + 0.5 * s
            Ms[j, i] = Ms[i, j]
    if not cholesky(Ms, Lnew):
        return -np.inf
    log_ratio = log_det(Lnew) - log_det(L)
    if not log_ratio > math.log(min_ratio):
        return -np.inf
    if linear:
        lower_inverse(Lnew, Ms)
        return loss - sandwich_trace(Ms, B)
    return log_ratio


@njit(cache=True)
def reset_gains_into(plan: Plan, state: State, t: int, out: np.ndarray, buffers: tuple) -> None:
    """``out[s]``: the loss decrease of giving group t of the plan's resets setting s of the kind it ties (-inf: M'
    singular, or its current setting); by the determinant lemma when its rank m = 3n is below p, else by M' rebuilt;
    ``buffers`` from :func:`scratch` (m at least 3n)."""
    runs = plan.reset_runs[plan.reset_starts[t]:plan.reset_starts[t + 1]]
    m, p = 3 * runs.size, state.M.shape[0]
    stride, radix, C = plan.strides[t], plan.radices[t], plan.changes[t]
    T, U, W = buffers[3][0], buffers[3][1], buffers[3][2]
    G, Q = buffers[4][0], buffers[4][1]
    current = (state.rows[runs[0]] // stride) % radix
    for s in range(radix):
        if s == current:
            out[s] = -np.inf
            continue
        _reset_rows(plan.X, state.rows, state.A, runs, stride, radix, s, U)
        if m < p:
            _congruence(U, m, state.Minv, W, G)  # W = U M^{-1}
            if plan.linear:
                _congruence(W, m, plan.B, T, Q)
            out[s] = low_rank_gain(C, G, Q, m, plan.linear, plan.limits[1], buffers[5], buffers[6])
        else:
            out[s] = _rebuilt_gain(state.M, state.L, U, C, m, plan.B, plan.linear, state.scalars[0], plan.limits[1],
                                   T, buffers[7])


@njit(cache=True)
def _swap_block(H: np.ndarray, g1: int, g2: int, r1: int, r2: int, out: np.ndarray) -> None:
    """U^T A U (3 x 3) for U = [s_g1, s_g2, x_r2 - x_r1], from H = R^T A R over the stacked group sums and runs."""
    out[0, 0], out[1, 1], out[0, 1] = H[g1, g1], H[g2, g2], H[g1, g2]
    out[0, 2] = H[g1, r2] - H[g1, r1]
    out[1, 2] = H[g2, r2] - H[g2, r1]
    out[2, 2] = H[r1, r1] + H[r2, r2] - 2.0 * H[r1, r2]
    out[1, 0], out[2, 0], out[2, 1] = out[0, 1], out[0, 2], out[1, 2]


@njit(cache=True)
def swap_gains(plan: Plan, state: State, out: np.ndarray) -> None:
    """``out[q]``: the loss decrease of exchanging the runs of pair q of the plan (two runs of different groups of
    one grouping, diagonal Gamma): U = [s_g1, s_g2, x_2 - x_1], C = -(c_g1 SWAP_1 + c_g2 SWAP_2); -inf when the two
    runs share a candidate or M' is singular."""
    G, N, p = state.S.shape[0], state.rows.size, state.M.shape[0]
    R = np.empty((G + N, p))  # the group sums, then the runs
    for i in range(G + N):
        row = state.S[i] if i < G else plan.X[state.rows[i - G]]
        for j in range(p):
            R[i, j] = row[j]
    T, H, HB = np.empty((G + N, p)), np.empty((G + N, G + N)), np.empty((G + N, G + N))
    _congruence(R, G + N, state.Minv, T, H)  # T = R M^{-1}
    if plan.linear:
        _congruence(T, G + N, plan.B, np.empty((G + N, p)), HB)
    small, work, pivots = np.zeros((3, 3, 3)), np.empty((2, 3, 3)), np.empty(3, dtype=np.int64)
    C, Gq, Q = small[0], small[1], small[2]
    for q in range(plan.first.size):
        r1, r2 = plan.first[q], plan.second[q]
        if state.rows[r1] == state.rows[r2]:
            out[q] = -np.inf
            continue
        g1, g2 = plan.group[r1], plan.group[r2]
        for i in range(3):
            for j in range(3):
                C[i, j] = -(plan.shrink[g1] * plan.swaps[0, i, j] + plan.shrink[g2] * plan.swaps[1, i, j])
        _swap_block(H, g1, g2, G + r1, G + r2, Gq)
        if plan.linear:
            _swap_block(HB, g1, g2, G + r1, G + r2, Q)
        out[q] = low_rank_gain(C, Gq, Q, C.shape[0], plan.linear, plan.limits[1], work, pivots)
