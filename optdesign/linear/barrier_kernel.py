"""The barrier's centring stage compiled (numba): the damped Newton steps of :mod:`optdesign.linear.barrier_newton`,
a stage (or a budget of its steps) in one call.

A re-solve of a small design (50 arms, 49 directions in R^20: about 50 Newton steps and as many line searches) spent
most of its time in the interpreter between numpy calls of a few microseconds each. Here the same steps run as one
compiled call: psi(w) and the epigraph level t(w) (:func:`evaluate`), the gradient and the Jacobi-scaled KKT system
of the Newton step (LU, least squares when it is exactly singular), the Armijo backtracking and the stopping rules of
``optdesign.linear.barrier_newton._centre`` (:func:`centre`). The arithmetic is the reference's up to the order
of the operations:

* A(w) = L L^T is factored by plain loops (Cholesky; d is small), L^{-1} formed by forward substitution, and vectors
  whitened by the product L^{-1} V^T (BLAS) instead of a triangular solve;
* the switch to the QR factor of diag(sqrt w) X (:func:`optdesign.linear.criteria.cholesky_factor`: cond(A) above
  GRAM_MAX_CONDITION) reads the exact condition number ||L||_1 ||L^{-1}||_1, which LAPACK's trcon estimates from below
  (so this path may take the QR factor a little earlier, only near that threshold);
* sums run in loop order rather than numpy's pairwise or SIMD order, and the directions of the Hessian's rank-m term
  come from a sort rather than a partition (the same set, summed in another order).

So iterates agree with the reference's to rounding (the tests hold designs and values to 1e-10), and a design may
differ from the reference's in its last bits. ``python benchmarks/bench_designs.py --only barrier-resolve`` times both.
numba is imported with this module, on the first barrier solve; :func:`load` compiles the stage's one signature (about
25 s, once after installation: the code is cached on disk) or reads it from the cache, before the solve's clock starts.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from .barrier_newton import SLACK_BAND, STAGE_STEPS
from .criteria import GRAM_MAX_CONDITION
from .triangular import cholesky, lower_inverse

__all__ = ["centre", "evaluate", "load", "loaded", "steps_per_call"]

EPS = float(np.finfo(np.float64).eps)
CALL_FLOPS = 2e8  # about this much arithmetic per call, between two looks at the deadline
_MATRIX, _VECTOR = types.Array(types.float64, 2, "C"), types.Array(types.float64, 1, "C")
_loaded = False


def load() -> None:
    """Compile :func:`evaluate` and :func:`centre` for the one signature the barrier calls (C-contiguous float64
    arrays), or read them from numba's disk cache; once per process. The barrier calls it before its clock starts,
    so a solve's time limit, and so its answer, never depends on the compile time."""
    global _loaded
    if not _loaded:
        evaluate.compile((_MATRIX, _MATRIX, _VECTOR, types.float64))
        centre.compile((_MATRIX, _MATRIX, _VECTOR, types.float64, types.int64, types.int64, types.float64,
                        types.int64))
        _loaded = True


def loaded() -> bool:
    """Whether :func:`load` has run in this process.

    Returns
    -------
    bool
        True once the compiled stage is loaded.
    """
    return _loaded


def steps_per_call(n: int, m: int, d: int, k: int) -> int:
    """Newton steps per compiled call (1 to STAGE_STEPS), so that a call does about CALL_FLOPS operations.

    A step costs about n^2 (2 d + k) + (n + m) d^2 + n^3 operations, so the caller looks at its deadline every few
    hundredths of a second even on large problems, while a small problem runs a whole stage in one call.

    Parameters
    ----------
    n : int
        Arms in the barrier's subset.
    m : int
        Directions.
    d : int
        Dimension.
    k : int
        Directions in the Hessian's rank-m term.

    Returns
    -------
    int
        The budget of Newton steps of one call of :func:`centre`.
    """
    flops = n * n * (2 * d + k) + (n + m) * d * d + n**3
    return int(max(1, min(STAGE_STEPS, CALL_FLOPS // max(flops, 1))))


@njit(cache=True)
def _norm1(M: np.ndarray) -> float:
    """||M||_1, the largest column sum of |M_ij|."""
    largest = 0.0
    for j in range(M.shape[1]):
        total = 0.0
        for i in range(M.shape[0]):
            total += abs(M[i, j])
        largest = max(largest, total)
    return largest


@njit(cache=True)
def _qr_factor(XS: np.ndarray, w: np.ndarray, L: np.ndarray, W: np.ndarray) -> bool:
    """L = R^T from the QR factor R of diag(sqrt w) X (rows of positive weight) and W = L^{-1}, in place; False when
    |R_jj| <= max_j |R_jj| max(n, d) eps for some j (A(w) numerically singular), as in the reference."""
    rows = np.flatnonzero(w > 0)
    n, d = rows.size, XS.shape[1]
    if n < d:
        return False
    B = np.empty((n, d))
    for r in range(n):
        root = math.sqrt(w[rows[r]])
        for j in range(d):
            B[r, j] = root * XS[rows[r], j]
    R = np.linalg.qr(B)[1]
    if not np.all(np.isfinite(R)):
        return False
    diag = np.abs(np.diag(R))
    if diag.min() <= diag.max() * max(XS.shape[0], d) * EPS:
        return False
    L[:, :] = R.T
    W[:, :] = 0.0
    lower_inverse(L, W)
    return True


@njit(cache=True)
def _factor(XS: np.ndarray, w: np.ndarray, L: np.ndarray, W: np.ndarray) -> bool:
    """A(w) = L L^T and W = L^{-1}, in place (zero-filled on entry): the Cholesky factor of X^T diag(w) X when
    cond(A) = (||L||_1 ||L^{-1}||_1)^2 <= GRAM_MAX_CONDITION, else the QR factor; False when A(w) is singular."""
    A = (XS * w.reshape(-1, 1)).T @ XS
    A = (A + A.T) / 2
    if cholesky(A, L):
        lower_inverse(L, W)
        rcond = 1.0 / (_norm1(L) * _norm1(W))
        if rcond > 0.0 and 1.0 / (rcond * rcond) <= GRAM_MAX_CONDITION:
            return True
    return _qr_factor(XS, w, L, W)


@njit(cache=True)
def _epigraph_level(v: np.ndarray, tau: float) -> float:
    """Root t > max v of sum_y 1 / (t - v_y) = tau by Newton from the left (the reference's iteration)."""
    top = v.max()
    t: float = top + 1.0 / tau
    if not t > top:
        return t
    for _ in range(100):
        total, squares = 0.0, 0.0
        for j in range(v.size):
            r = 1.0 / (t - v[j])
            total += r
            squares += r * r
        g = total - tau
        if g <= 1e-12 * tau:
            break
        step = g / squares
        if step <= 1e-15 * abs(t):
            break
        t += step
    return t


@njit(cache=True)
def evaluate(XS: np.ndarray, YT: np.ndarray, w: np.ndarray,
             tau: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """psi(w) and (L, L^{-1}, Z_y = L^{-1} Y^T, v, s) at w; psi = inf outside the domain (w_k <= 0, A(w) singular,
    or a level t not resolved above max v).

    Parameters
    ----------
    XS : numpy.ndarray, shape (n, d)
        The arms of the barrier's subset (C-contiguous).
    YT : numpy.ndarray, shape (d, m)
        The directions, one per column (C-contiguous).
    w : numpy.ndarray, shape (n,)
        The weights.
    tau : float
        The barrier parameter.

    Returns
    -------
    tuple
        psi(w), L, L^{-1}, Z_y (d x m), the variances v and the slacks s = t - v.
    """
    d, m = YT.shape
    L, W = np.zeros((d, d)), np.zeros((d, d))
    v, s = np.zeros(m), np.zeros(m)
    for k in range(w.size):
        if not (w[k] > 0.0 and np.isfinite(w[k])):
            return np.inf, L, W, np.zeros((d, m)), v, s
    if not _factor(XS, w, L, W):
        return np.inf, L, W, np.zeros((d, m)), v, s
    Zy = W @ YT
    for i in range(d):
        for j in range(m):
            v[j] += Zy[i, j] * Zy[i, j]
    t = _epigraph_level(v, tau)
    log_slacks, log_weights = 0.0, 0.0
    for j in range(m):
        s[j] = t - v[j]
        if not s[j] > 0.0:
            return np.inf, L, W, Zy, v, s
        log_slacks += math.log(s[j])
    for k in range(w.size):
        log_weights += math.log(w[k])
    val = tau * t - log_slacks - log_weights
    return (val if np.isfinite(val) else np.inf), L, W, Zy, v, s


@njit(cache=True)
def _hessian_directions(s: np.ndarray, q: int, cap: int) -> np.ndarray:
    """The reference's directions of the rank-m term (:func:`optdesign.linear.barrier_newton._hessian_directions`),
    smallest slack first."""
    m = s.size
    if m <= q:
        return np.arange(m)
    band = np.count_nonzero(s <= SLACK_BAND * s.min())
    k = min(max(q, band), cap, m)
    return np.arange(m) if k == m else np.argsort(s, kind="mergesort")[:k]


@njit(cache=True)
def _solve(kkt: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """kkt^{-1} rhs by LU, least squares when kkt is exactly singular; NaN when an entry is not finite."""
    if not (np.all(np.isfinite(kkt)) and np.all(np.isfinite(rhs))):
        return np.full(rhs.size, np.nan)
    solution: np.ndarray
    try:
        solution = np.linalg.solve(kkt, rhs)
    except Exception:  # LinAlgError at an exactly zero pivot (numba catches no narrower class)
        solution = np.linalg.lstsq(kkt, rhs, rcond=EPS * rhs.size)[0]
    return solution


@njit(cache=True)
def _newton_direction(XT: np.ndarray, w: np.ndarray, W: np.ndarray, Zy: np.ndarray, s: np.ndarray, q: int,
                      cap: int) -> tuple[np.ndarray, float]:
    """Newton step dw on psi under sum w = 1 and its decrement -grad^T dw
    (:func:`optdesign.linear.barrier_newton._newton_direction`; XT = X_S^T, W = L^{-1})."""
    d, n = XT.shape
    r1 = 1.0 / s
    Zx = W @ XT
    C1x = ((Zy * r1) @ Zy.T) @ Zx
    grad = np.empty(n)
    for k in range(n):
        total = 0.0
        for i in range(d):
            total += Zx[i, k] * C1x[i, k]
        grad[k] = -total - 1.0 / w[k]
    ZxT = np.ascontiguousarray(Zx.T)
    H = 2.0 * (ZxT @ Zx) * (ZxT @ C1x)
    for k in range(n):
        H[k, k] += 1.0 / w[k] ** 2
    active = _hessian_directions(s, q, cap)
    Za = np.empty((d, active.size))
    r2a = np.empty(active.size)
    for a in range(active.size):
        r2a[a] = r1[active[a]] * r1[active[a]]
        for i in range(d):
            Za[i, a] = Zy[i, active[a]]
    G2 = (ZxT @ Za) ** 2
    # rank-m term minus the Schur term in t: the weighted covariance of the rows g_y of G2 (PSD, no cancellation)
    G2 -= ((G2 @ r2a) / r2a.sum()).reshape(-1, 1)
    H += (G2 * r2a) @ np.ascontiguousarray(G2.T)
    dsc = 1.0 / np.sqrt(np.maximum(np.diag(H), 1e-300))
    kkt = np.zeros((n + 1, n + 1))
    rhs = np.empty(n + 1)
    for i in range(n):
        for j in range(n):
            kkt[i, j] = H[i, j] * dsc[i] * dsc[j]
        kkt[i, n] = kkt[n, i] = dsc[i]
        rhs[i] = -grad[i] * dsc[i]
    rhs[n] = 1.0 - w.sum()
    dw = _solve(kkt, rhs)[:n] * dsc
    return dw, float(-(grad @ dw))


@njit(cache=True)
def _line_search(XS: np.ndarray, YT: np.ndarray, w: np.ndarray, val: float, tau: float, dw: np.ndarray,
                 decrement: float) -> tuple[np.ndarray, float, float, tuple]:
    """Armijo backtracking along dw from the largest step inside w > 0 (0.95 of it, at most 1):
    (w + a dw, a, psi there, the rest of :func:`evaluate` there)."""
    ratio = np.inf
    for k in range(w.size):
        if dw[k] < 0.0:
            ratio = min(ratio, -w[k] / dw[k])
    a = min(1.0, 0.95 * ratio)
    while True:
        w_new = w + a * dw
        point = evaluate(XS, YT, w_new, tau)
        if point[0] <= val - 0.25 * a * decrement or a < 1e-12:
            return w_new, a, point[0], point
        a *= 0.5


@njit(cache=True)
def centre(XS: np.ndarray, YT: np.ndarray, w: np.ndarray, tau: float, q: int, cap: int, centring_tol: float,
           budget: int) -> tuple[bool, int, np.ndarray, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Up to ``budget`` Newton steps of a centring stage from w (``optdesign.linear.barrier_newton._centre``, less
    its limits on the steps of a solve and on time, which the caller applies between calls).

    Parameters
    ----------
    XS : numpy.ndarray, shape (n, d)
        The arms of the subset (C-contiguous).
    YT : numpy.ndarray, shape (d, m)
        The directions, one per column (C-contiguous).
    w : numpy.ndarray, shape (n,)
        The starting weights, inside the domain.
    tau : float
        The barrier parameter.
    q, cap : int
        The Hessian's directions: at least q, at most cap.
    centring_tol : float
        Newton decrement at which the stage is centred (after a full step).
    budget : int
        Newton directions to compute at most.

    Returns
    -------
    tuple
        Whether the stage ended (centred, or no decrease left to find), the Newton directions computed, and w, psi(w),
        L, Z_y, v and s at the last accepted point.
    """
    XT = np.ascontiguousarray(XS.T)
    val, L, W, Zy, v, s = evaluate(XS, YT, w, tau)
    if not val < np.inf:
        return True, 0, w, val, L, Zy, v, s
    for step in range(1, budget + 1):
        dw, decrement = _newton_direction(XT, w, W, Zy, s, q, cap)
        # below the rounding of psi (about eps |psi|) no line search can see a decrease
        if not np.isfinite(decrement) or decrement < max(1e-10, 16.0 * EPS * abs(val)):
            return True, step, w, val, L, Zy, v, s
        w_new, a, new_val, point = _line_search(XS, YT, w, val, tau, dw, decrement)
        if not new_val <= val:
            return True, step, w, val, L, Zy, v, s
        w, val, L, W, Zy, v, s = w_new, new_val, point[1], point[2], point[3], point[4], point[5]
        if decrement < centring_tol and a == 1.0:
            return True, step, w, val, L, Zy, v, s
    return False, budget, w, val, L, Zy, v, s
