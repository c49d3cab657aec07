"""D/G-optimal designs when the number of arms K is close to the dimension d: the co-rank formulation.

With r = K - d small, every variance v_k = x_k^T A(w)^{-1} x_k, A(w) = X^T diag(w) X, follows from an
orthonormal basis L (K x r, rows l_k) of the left null space of X (X^T L = 0), computed once by a Householder
QR of X (O(K d^2)), after which every evaluation costs O(K r^2) instead of the O(K d^2) of a d x d factor.

Derivation. The solutions of X^T lam = x_k are lam = e_k + L mu, and c^T A(w)^{-1} c = min over X^T lam = c
of sum_j lam_j^2 / w_j, so

    v_k = min_mu sum_j (delta_jk + l_j^T mu)^2 / w_j = 1 / w_k - l_k^T G^{-1} l_k / w_k^2,  G = L^T W^{-1} L,

i.e. the leverage is h_k = w_k v_k = 1 - [N (N^T N)^{-1} N^T]_kk with N = W^{-1/2} L. As w_k -> 0 this
difference cancels (v_k stays finite: it tends to 1 / l_k^T G_{-k}^{-1} l_k, G_{-k} without arm k). The
arms T of weight below a threshold tau are therefore eliminated exactly: with C = L_B^T W_B^{-1} L_B +
L_T^T L_T / tau (B the other arms), D = diag(w_j tau / (tau - w_j)) and P = L_T C^{-1} L_T^T (Woodbury),

    v_k = (1 - (l_k^T C^{-1} l_k - ||F^{-1} L_T C^{-1} l_k||^2) / w_k) / w_k   (k in B, w_k >= tau),
    v_k = (tau / (tau - w_k))^2 [(D + P)^{-1}]_kk - 1 / (tau - w_k)          (k in T, w_k = 0 included),

with D + P = F F^T; neither divides by a tiny weight, so v_k keeps about eps / (tau v_k) relative accuracy.
An arm outside every linear relation of the others (l_k = 0) has v_k = 1 / w_k, leverage 1: it is needed.

Closed forms: K = d (r = 0) gives w = 1/d and v_k = d for every arm (each arm needed, leverage 1), the optimum
by Kiefer–Wolfowitz; on Soare et al.'s instance (e_1..e_d and a unit x_{d+1} in span(e_1, e_2)) the uniform
design on e_1..e_d is optimal, with v_{d+1} = d ||x_{d+1}||^2 = d at weight 0.

The solver (``d_optimal_corank``) runs multiplicative steps w_k <- w_k v_k / d while they converge fast, then
the Frank–Wolfe step of :mod:`optdesign.linear.firstorder` (away steps, exact log det line search); every step
evaluates all variances afresh in O(K r^2): no rank-one drift. Certificate (Kiefer–Wolfowitz): max_k v_k >= d,
with equality exactly at the optimum, so max_k v_k / d - 1 bounds the relative gap of the G- and D-criteria.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, qr, solve_triangular
from scipy.linalg.lapack import dormqr

from ..errors import InvalidInputError
from ..result import FastPathResult
from ..runtime.deadline import Deadline
from ..validation import as_matrix, triangular_rank
from .firstorder import frank_wolfe_loop

__all__ = ["corank_variances", "d_optimal_corank", "left_null_basis"]

TINY_WEIGHT = 1e-3  # weights below TINY_WEIGHT / K are eliminated exactly (the T arms of the module doc)


def left_null_basis(X: np.ndarray) -> np.ndarray:
    """Orthonormal basis L (K x (K - d)) of {lam : X^T lam = 0}, from the Householder QR of X.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms: finite, K >= d, of rank d (decided from the same QR, as numpy's ``matrix_rank`` would).

    Returns
    -------
    numpy.ndarray, shape (K, K - d)
        The last K - d columns of the orthogonal factor Q of X = QR (empty when K = d).

    Raises
    ------
    InvalidInputError
        NaN/inf entries, a wrong shape, or rows that do not span R^d.
    """
    X = as_matrix(X, "X")
    K, d = X.shape
    r = K - d
    (a, tau), _ = qr(X, mode="raw", check_finite=False)
    rank = triangular_rank(np.triu(a[: min(K, d)]), K)
    if rank < d:
        raise InvalidInputError(f"the rows of X must span R^{d} (A(w) is singular otherwise); found rank {rank}")
    if r == 0:
        return np.zeros((K, 0))
    C = np.zeros((K, r), order="F")
    C[d:, :] = np.eye(r)
    Q, _, _ = dormqr("L", "N", a, tau, C, max(1, r) * 64)  # Q [0; I_r], without forming Q (info: arguments only)
    return np.ascontiguousarray(Q)


def corank_variances(L: np.ndarray, w: np.ndarray, tiny: float | None = None) -> np.ndarray:
    """v_k = x_k^T A(w)^{-1} x_k for every arm, from the left null basis L (module doc); inf if A(w) is singular.

    Parameters
    ----------
    L : numpy.ndarray, shape (K, r)
        Orthonormal basis of the left null space of X (:func:`left_null_basis`).
    w : numpy.ndarray, shape (K,)
        Nonnegative weights.
    tiny : float, optional
        Threshold tau below which a weight is eliminated exactly; TINY_WEIGHT / K by default.

    Returns
    -------
    numpy.ndarray, shape (K,)
        The variances (all inf when A(w) is numerically singular).
    """
    K, r = L.shape
    w = np.asarray(w, dtype=float)
    tau = TINY_WEIGHT / K if tiny is None else float(tiny)
    with np.errstate(divide="ignore"):
        v = 1.0 / w if r == 0 else _variances(L, w, tau)
    if v is None or not np.all(np.isfinite(v)):
        return np.full(K, np.inf)
    return np.maximum(v, 0.0, out=v)  # a zero arm has v_k = 0; rounding must not make it negative


def _variances(L: np.ndarray, w: np.ndarray, tau: float) -> np.ndarray | None:
    """The two formulas of the module doc (B arms: w_k >= tau, T arms: w_k < tau); None if a factor fails."""
    small = w < tau
    big = ~small
    C = (L[big] / w[big, None]).T @ L[big] + L[small].T @ L[small] / tau
    try:
        R = cho_factor(C, lower=False, check_finite=False)
    except LinAlgError:
        return None
    Z = solve_triangular(R[0], L.T, trans="T", lower=False, check_finite=False)  # z_k = R^{-T} l_k
    q = np.einsum("ij,ij->j", Z, Z)  # l_k^T C^{-1} l_k
    if not small.any():
        out: np.ndarray = (1.0 - q / w) / w
        return out
    ZT, ws, wb = Z[:, small], w[small], w[big]
    try:
        F = cho_factor(ZT.T @ ZT + np.diag(ws * tau / (tau - ws)), lower=True, check_finite=False)  # D + P = F F^T
    except LinAlgError:
        return None
    U = solve_triangular(F[0], ZT.T @ Z[:, big], lower=True, check_finite=False)
    v = np.empty(w.size)
    v[big] = (1.0 - (q[big] - np.einsum("ij,ij->j", U, U)) / wb) / wb
    rho = tau / (tau - ws)
    v[small] = rho * rho * np.diag(cho_solve(F, np.eye(ws.size), check_finite=False)) - 1.0 / (tau - ws)
    return v


def _multiplicative(L: np.ndarray, d: int, target: float, max_steps: int,
                    deadline: Deadline) -> tuple[np.ndarray, np.ndarray, int]:
    """Multiplicative steps w_k <- w_k v_k / d from the uniform design while they converge fast: stop at
    ``target``, at ``max_steps``, at the deadline, or once the gap fails to halve over STALL_WINDOW steps.
    Returns (w, v, steps) with v the variances at w."""
    K = L.shape[0]
    w = np.full(K, 1.0 / K)
    v = corank_variances(L, w)
    gaps = [float(v.max()) / d - 1.0]
    steps = 0
    while steps < max_steps and gaps[-1] > target / d - 1.0 and not deadline.expired():
        if steps >= STALL_WINDOW and gaps[-1] > 0.5 * gaps[-1 - STALL_WINDOW]:
            break
        w = w * v / d
        w /= w.sum()
        v = corank_variances(L, w)
        gaps.append(float(v.max()) / d - 1.0)
        steps += 1
    return w, v, steps


STALL_WINDOW = 30  # multiplicative steps over which the gap must halve, else Frank–Wolfe takes over


def d_optimal_corank(
    X: np.ndarray,
    *,
    tol: float = 1e-4,
    max_iter: int = 1_000_000,
    time_limit: float = 60.0,
    max_multiplicative: int = 1_000,
    L: np.ndarray | None = None,
) -> FastPathResult:
    """D/G-optimal design of K = d + r arms by multiplicative steps, then Frank–Wolfe, on the co-rank variances.

    Each step costs O(K r^2) here, as much as a Frank–Wolfe step, so the multiplicative algorithm (all weights
    at once, linear convergence at a non-degenerate optimum) runs while its gap halves every STALL_WINDOW
    steps; Frank–Wolfe with away steps (:mod:`optdesign.linear.firstorder`) then removes the arms whose weight
    only tends to 0 (e.g. Soare's x_{d+1}).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms; without ``L`` they are checked by :func:`left_null_basis` (finite, rank d), with ``L`` they are
        the caller's to check.
    tol : float
        Target certified gap: stop once every variance v_k is at most d (1 + tol).
    max_iter : int
        Most Frank–Wolfe iterations (toward or away steps).
    time_limit : float
        Wall-clock seconds (checked every 64 iterations), capped by the enclosing time budget.
    max_multiplicative : int
        Most multiplicative steps before Frank–Wolfe.
    L : numpy.ndarray, shape (K, K - d), optional
        The left null basis of X, when the caller has it (:func:`left_null_basis` otherwise).

    Returns
    -------
    FastPathResult
        The best design met, its G-value max_k v_k, ``lower_bound`` d, the multiplicative and Frank–Wolfe steps
        and ``converged``; K = d returns the closed form w = 1/d (G-value d, gap 0, no step).

    Raises
    ------
    InvalidInputError
        Without ``L``: what :func:`left_null_basis` refuses.
    """
    K, d = X.shape
    if L is None:
        L = left_null_basis(X)
    if K == d:
        return FastPathResult(np.full(K, 1.0 / d), float(d), float(d), 0, True)
    deadline = Deadline(time_limit)
    target = d * (1 + tol)
    w, v, steps = _multiplicative(L, d, target, max_multiplicative, deadline)

    def fresh(w: np.ndarray, v: np.ndarray, a: float, b: float, k: int, it: int) -> tuple[np.ndarray, np.ndarray]:
        w = np.clip(w, 0.0, None)
        w /= w.sum()
        return w, corank_variances(L, w)  # every variance afresh, O(K r^2): no rank-one drift

    run = frank_wolfe_loop(w, v, d, target=target, max_iter=max_iter, deadline=deadline, update=fresh,
                           label="corank frank-wolfe", keep_best=True)
    best_w, best_g, it = run.best_weights, run.best_value, run.iterations
    return FastPathResult(best_w, best_g, float(d), steps + it, best_g <= target)
