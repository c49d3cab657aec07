"""The certificate LP of the barrier method: the dual p that (nearly) maximises a design's certificate.

For a design w, every distribution p over directions certifies F* >= f_p(w)^2 / max_k h_k(w)
(:mod:`optdesign.linear.criteria`). The barrier's own p = 1 / (tau s_y) certifies its iterate, and so does p
truncated to the near-active directions (``_best_certificate``); near the end :mod:`optdesign.linear.barrier` may
also try the p of the LP min_p max_k h_k(w, p) over those directions and keep the better bound (``_sharpened``).
The LP runs row generation over the arms, with the arm-direction products formed in chunks of LP_CHUNK_ENTRIES (memory
independent of K).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.optimize import linprog

from .criteria import Certificate, _whitened_certificate, whiten

__all__: list[str] = []  # the barrier's internal step; the certificate itself is optdesign.linear.criteria's

LP_CHUNK_ENTRIES = 4_000_000  # arm-direction products held at once by the certificate LP (32 MB)


def _squared_products(X: np.ndarray, L: np.ndarray, Zt: np.ndarray,
                      rows: slice | np.ndarray = slice(None)) -> np.ndarray:
    """G2[k, t] = (z_k^T Z_t)^2 for the arms ``rows`` (z_k = L^{-1} x_k; Zt the whitened directions, d x q)."""
    products: np.ndarray = (whiten(L, X[rows]).T @ Zt) ** 2
    return products


def _chunks(K: int, q: int) -> Iterator[slice]:
    """Arm slices holding about LP_CHUNK_ENTRIES products each, so no K x q array is ever held."""
    step = max(1, LP_CHUNK_ENTRIES // max(q, 1))
    return (slice(a, min(a + step, K)) for a in range(0, K, step))


def _lp_dual(X: np.ndarray, Y: np.ndarray, L: np.ndarray, T: np.ndarray) -> np.ndarray | None:
    """p supported on directions T minimising max_k h_k(w, p) (an LP), as a full-length vector.

    Row generation over the arms: the LP is solved on the arms with the largest h_k, and every arm whose h_k
    exceeds the LP's level joins until none does, which is the LP over all K arms (the dense K x |T| LP cost
    16 of 26 s of an XY-allocation on 20,000 arms in R^20; the optimum uses about the design's support). The
    products are formed in chunks of arms (memory O(LP_CHUNK_ENTRIES), not K x |T|).
    """
    K, q = X.shape[0], T.size
    Zt = whiten(L, Y[T])
    row_max = np.concatenate([_squared_products(X, L, Zt, c).max(axis=1) for c in _chunks(K, q)])
    scale = float(row_max.max())
    c = np.zeros(q + 1)
    c[-1] = 1.0
    n_start = min(K, max(4 * q, 64))
    rows = np.argpartition(-row_max, n_start - 1)[:n_start] if n_start < K else np.arange(K)
    for _ in range(50):
        res = linprog(
            c,
            A_ub=np.hstack([_squared_products(X, L, Zt, rows) / scale, -np.ones((rows.size, 1))]),
            b_ub=np.zeros(rows.size),
            A_eq=np.concatenate([np.ones(q), [0.0]])[None, :],
            b_eq=[1.0],
            bounds=[(0, None)] * q + [(None, None)],
            method="highs",
        )
        if res.status != 0:
            return None
        p_T = np.maximum(res.x[:q], 0.0)
        h = np.concatenate([_squared_products(X, L, Zt, c) @ p_T / scale for c in _chunks(K, q)])
        above = np.setdiff1d(np.flatnonzero(h > res.x[-1] * (1 + 1e-9)), rows)
        if above.size == 0:
            break
        rows = np.concatenate([rows, above[np.argsort(-h[above])[:max(4 * q, 64)]]])
    p = np.zeros(Y.shape[0])
    p[T] = p_T
    return p / p.sum() if p.sum() > 0 else None


def _whitened(X: np.ndarray, Y: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L^{-1} Y^T, the variances v and L^{-1} X^T at a design A = L L^T, once for every candidate p."""
    Zy = whiten(L, Y)
    return Zy, np.einsum("ij,ij->j", Zy, Zy), whiten(L, X)


def _best_certificate(X: np.ndarray, Y: np.ndarray, p: np.ndarray, L: np.ndarray,
                      v: np.ndarray) -> tuple[Certificate, np.ndarray] | None:
    """Best certificate among the barrier p and p truncated to near-active directions (v_y within 1e-3 and 1e-5 of
    max v)."""
    upper = v.max()
    candidates = [p]
    for thr in (1e-3, 1e-5):
        q = np.where(v < upper * (1 - thr), 0.0, p)
        if q.sum() > 0:
            candidates.append(q)
    return _best_of(_whitened(X, Y, L), candidates, None)


def _sharpened(X: np.ndarray, Y: np.ndarray, L: np.ndarray, v: np.ndarray, gap_hint: float,
               best: tuple[Certificate, np.ndarray] | None) -> tuple[Certificate, np.ndarray] | None:
    """``best``, or the certificate of the LP p over the directions with v_y >= (1 - delta) max v when its bound is
    larger (delta = 5 ``gap_hint`` within [1e-7, 0.05], at most 400 directions)."""
    upper = v.max()
    delta = min(0.05, max(5 * gap_hint, 1e-7))
    T = np.flatnonzero(v >= upper * (1 - delta))
    if len(T) > 400:
        T = T[np.argsort(-v[T])[:400]]
    q_lp = _lp_dual(X, Y, L, T)
    return best if q_lp is None else _best_of(_whitened(X, Y, L), [q_lp], best)


def _best_of(whitened: tuple[np.ndarray, np.ndarray, np.ndarray], candidates: list[np.ndarray],
             best: tuple[Certificate, np.ndarray] | None) -> tuple[Certificate, np.ndarray] | None:
    """``best`` or the first candidate p whose certificate has a larger lower bound, with that p normalised."""
    for q in candidates:
        cert = _whitened_certificate(*whitened, q)
        if cert is not None and (best is None or cert.lower > best[0].lower):
            best = (cert, q / q.sum())
    return best
