"""Augmenting a design: the runs already made (or forced) are kept, n new runs are chosen, and the bound.

Fixed runs f_k (N0 in all, information F = sum_k f_k x_k x_k^T) and n new runs m_k (integers summing to n; without
replicates m_k <= 1, and m_k = 0 where f_k > 0) make M = F + sum_k m_k x_k x_k^T, valued at M / N, N = N0 + n. The
continuous relaxation A(w) = F + n sum_k w_k x_k x_k^T, w in the simplex (w_k <= 1/n and w_k = 0 on the fixed points
without replicates) holds every such design (w = m / n), so its optimum bounds all of them from below. It is a
concave problem (log det A(w)) or a convex one (tr(B A(w)^{-1})), and any A = A(w) gives a certified bound (the
augmented equivalence theorem: both bounds equal the value at the optimum):

* D, phi = det(A / N)^(-1/d): AM-GM on the eigenvalues of A^{-1/2} A' A^{-1/2} gives
  log det A' - log det A <= d log(tr(A^{-1} A') / d), and tr(A^{-1} A') = t + sum_k w'_k g_k with
  t = tr(A^{-1} F), g_k = n x_k^T A^{-1} x_k; so phi* >= phi d / (t + top(g));
* A and I, phi = N tr(B A^{-1}): convexity of tr(B A^{-1}) at c A gives, for every c > 0,
  tr(B A'^{-1}) >= 2 c tr(B A^{-1}) - c^2 (s + sum_k w'_k g_k), s = tr(A^{-1} B A^{-1} F),
  g_k = n x_k^T A^{-1} B A^{-1} x_k; the best c gives phi* >= phi^2 / (N (s + top(g))),

where top(g) is the largest sum_k w'_k g_k over the feasible w': max_k g_k, or without replicates the mean of the n
largest g_k off the fixed points. With F = 0 these are the bounds of :mod:`optdesign.exact_designs.bounds`. The weights
come from a cvxpy model (log det, or tr T under the Schur complement [[A, C], [C^T, T]] >= 0, B = C C^T) solved by the
project's solver chain (CLARABEL, then SCS; MOSEK only with a usable licence), the bound recomputed here in numpy. The
bound follows the error of the weights, not of the objective, so weights whose bound misses the gap asked for are
polished by Newton steps on the weights strictly inside (0, cap), sum kept at 1, with the exact derivatives (h_kl =
x_k^T A^{-1} x_l, q_kl = x_k^T A^{-1} B A^{-1} x_l): for -log det A, gradient -n h_kk and Hessian n^2 h_kl^2; for tr(B
A^{-1}), gradient -n q_kk and Hessian 2 n^2 h_kl q_kl.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError, cho_solve, cholesky

from .._lazy import cp
from ..errors import InstanceTooLargeError, InvalidInputError, SolverError
from ..linear.models import D_OPTIMAL_MAX_DIM, D_OPTIMAL_MAX_ENTRIES
from ..runtime import solvers
from ..validation import as_count, real_array
from .bounds import ROUNDING_MARGIN, Approximate
from .starts import fixed_span

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: Newton steps that polish weights whose bound misses the gap asked for (each O(K d^2 + s^3), s the support)
POLISH_STEPS = 20
#: a weight within this of 0 (or of its cap 1/n) stays there during the polish
SUPPORT_ATOL = 1e-9
#: the largest fixed count accepted (float64 holds every integer below it exactly)
MAX_FIXED = 2**53
#: eigenvalues of the moment matrix B below this fraction of the largest are dropped from its factor C
MOMENTS_RTOL = 1e-12
#: solver tolerances of the model: the certified first-order gap follows the error of the weights, not of the
#: objective, and at the solvers' defaults it was 1e-6 to 1e-4 on small models; at these, below 3e-7 (CLARABEL,
#: often "optimal_inaccurate") and 1e-9 (SCS)
TIGHT = {"CLARABEL": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12},
         "SCS": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iters": 20_000}}


def as_fixed(fixed: ArrayLike, n_candidates: int, replicates: bool) -> np.ndarray:
    """``fixed`` as int64 run counts, one per candidate: nonnegative whole numbers (at most 1 without replicates)."""
    K = n_candidates
    hint = f"runs given as row indices `rows` of X are fixed=np.bincount(rows, minlength={K})"
    try:
        arr = real_array(fixed)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"fixed must be the run counts at the candidates, numbers: {exc}") from None
    if arr.shape != (K,):
        raise InvalidInputError(f"fixed must hold the number of runs at each of the K = {K} candidates (shape "
                                f"({K},)), got shape {arr.shape}; {hint}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError("fixed contains NaN or infinite entries")
    bad = np.flatnonzero((arr < 0) | (arr != np.round(arr)) | (arr >= MAX_FIXED))
    if bad.size:
        k = int(bad[0])
        raise InvalidInputError(f"fixed must hold whole, nonnegative numbers of runs, got {arr[k]!r} at candidate "
                                f"{k}; {hint}")
    counts = arr.astype(np.int64)
    if not replicates and counts.max() > 1:
        k = int(np.argmax(counts))
        raise InvalidInputError(f"replicates=False allows at most one run per candidate, but fixed has {counts[k]} "
                                f"runs at candidate {k}")
    return counts


def check_new_runs(X: np.ndarray, n: object, fixed: np.ndarray, replicates: bool) -> int:
    """The number of new runs: an integer >= 0, enough to make M nonsingular, at most the free candidates without
    replicates."""
    d = X.shape[1]
    runs = as_count(n, "n", minimum=0)
    rank = fixed_span(X, fixed).shape[1]
    if runs < d - rank:
        raise InvalidInputError(f"the fixed runs span {rank} of the d = {d} dimensions, so n = {runs} new runs "
                                f"cannot make the information matrix nonsingular: n >= {d - rank} are needed")
    free = int(np.count_nonzero(fixed == 0))
    if not replicates and runs > free:
        raise InvalidInputError(f"n = {runs} new runs without replicates need n <= {free}, the candidates without "
                                "a fixed run")
    return runs


def _top(g: np.ndarray, n: int, fixed: np.ndarray, replicates: bool) -> float:
    """max sum_k w'_k g_k over the feasible w' (module docstring)."""
    if n == 0:
        return 0.0
    if replicates:
        return float(g.max())
    free = g[fixed == 0]
    return float(np.sort(free)[free.size - n:].mean())


def augmented_bound(X: np.ndarray, fixed: np.ndarray, n: int, w: np.ndarray, B: np.ndarray | None,
                    replicates: bool) -> Approximate:
    """The value at A = F + n X^T diag(w) X, normalised by N = N0 + n, and its certified bound on the augmented
    approximate optimum (module docstring; D for ``B=None``, else tr(B A^{-1})).

    Raises
    ------
    LinAlgError
        A(w) is not positive definite.
    """
    N = int(fixed.sum()) + n
    F = (X * fixed[:, None]).T @ X
    A = F + n * (X * w[:, None]).T @ X
    L = cholesky((A + A.T) / 2, lower=True, check_finite=False)
    U = cho_solve((L, True), X.T, check_finite=False)  # A^{-1} x_k in column k
    if B is None:
        value = float(N * np.exp(-2.0 * np.mean(np.log(np.diag(L)))))
        t = float(np.trace(cho_solve((L, True), F, check_finite=False)))
        g = n * np.einsum("kj,jk->k", X, U)
        bound = value * X.shape[1] / (t + _top(g, n, fixed, replicates))
    else:
        AB = cho_solve((L, True), B, check_finite=False)  # A^{-1} B
        value = float(N * np.trace(AB))
        s = float(np.sum(cho_solve((L, True), AB.T, check_finite=False) * F))  # tr(A^{-1} B A^{-1} F)
        g = n * np.einsum("jk,jk->k", U, B @ U)
        bound = value * value / (N * (s + _top(g, n, fixed, replicates)))
    return Approximate(w, value, bound * (1.0 - ROUNDING_MARGIN))


def _newton_step(X: np.ndarray, fixed: np.ndarray, n: int, w: np.ndarray, B: np.ndarray | None,
                 inside: np.ndarray) -> np.ndarray:
    """The Newton direction of the loss (-log det A, or tr(B A^{-1})) in the weights ``inside``, sum kept (module
    docstring); a least-squares solution of the KKT system when the Hessian is singular."""
    A = (X * (fixed + n * w)[:, None]).T @ X
    L = cholesky((A + A.T) / 2, lower=True, check_finite=False)
    Xs = X[inside]
    U = cho_solve((L, True), Xs.T, check_finite=False)  # A^{-1} x_k, k inside
    H = Xs @ U
    if B is None:
        grad, hess = -n * np.diag(H), n * n * H * H
    else:
        Q = U.T @ B @ U
        grad, hess = -n * np.diag(Q), 2.0 * n * n * H * Q
    s = int(inside.sum())
    kkt = np.block([[hess, np.ones((s, 1))], [np.ones((1, s)), np.zeros((1, 1))]])
    step = np.linalg.lstsq(kkt, np.concatenate([-grad, [0.0]]), rcond=None)[0][:s]
    out = np.zeros_like(w)
    out[inside] = step - step.mean()  # the sum kept exactly
    return out


def polish(X: np.ndarray, fixed: np.ndarray, n: int, best: Approximate, B: np.ndarray | None, replicates: bool,
           tol: float) -> Approximate:
    """At most POLISH_STEPS damped Newton steps from ``best`` while its certified gap exceeds ``tol``; the weights of
    best certified gap (module docstring)."""
    cap = 1.0 if replicates else 1.0 / n
    current = best
    for _ in range(POLISH_STEPS):
        if best.value <= best.lower_bound * (1.0 + tol):
            break
        w = current.weights
        inside = (w > SUPPORT_ATOL) & (w < cap - SUPPORT_ATOL)
        if inside.sum() < 2:
            break
        step = _newton_step(X, fixed, n, w, B, inside)
        down, up = step < 0, step > 0  # the longest step keeping 0 <= w <= cap, at most the full Newton step
        t = min(1.0, float(np.min(-w[down] / step[down], initial=np.inf)),
                float(np.min((cap - w[up]) / step[up], initial=np.inf)))
        for _ in range(30):  # halve the step until the loss decreases
            trial = np.clip(w + t * step, 0.0, cap)
            found = augmented_bound(X, fixed, n, trial / trial.sum(), B, replicates)
            if found.value < current.value:
                break
            t /= 2
        else:
            break
        current = found
        if found.value / found.lower_bound < best.value / best.lower_bound:
            best = found
    return best


def _model(X: np.ndarray, fixed: np.ndarray, n: int, B: np.ndarray | None, replicates: bool) -> tuple[Any, Any]:
    """The cvxpy model of the augmented approximate design over the allowed candidates: (problem, weights)."""
    d = X.shape[1]
    N = int(fixed.sum()) + n
    scale = float(np.max(np.abs(X)))  # the optimal w depends on neither the scale of X nor that of B
    Xs = X / scale
    F = (Xs * fixed[:, None]).T @ Xs / N
    allowed = Xs if replicates else Xs[fixed == 0]
    w = cp.Variable(allowed.shape[0], nonneg=True, name="w")
    outer = np.einsum("ki,kj->kij", allowed, allowed).reshape(allowed.shape[0], d * d)
    A = F + (n / N) * cp.reshape(outer.T @ w, (d, d), order="C")
    A = (A + A.T) / 2
    constraints = [cp.sum(w) == 1] + ([] if replicates else [w <= 1.0 / n])
    if B is None:
        return cp.Problem(cp.Maximize(cp.log_det(A)), constraints), w
    eig, V = np.linalg.eigh(B)
    keep = eig > MOMENTS_RTOL * eig[-1]
    C = V[:, keep] * np.sqrt(eig[keep] / eig[-1])  # B / lambda_max = C C^T
    T = cp.Variable((C.shape[1], C.shape[1]), symmetric=True, name="T")
    block = cp.bmat([[A, C], [C.T, T]])
    return cp.Problem(cp.Minimize(cp.trace(T)), [*constraints, (block + block.T) / 2 >> 0]), w


def augmented_optimum(X: np.ndarray, fixed: np.ndarray, n: int, B: np.ndarray | None, replicates: bool,
                      solver: str | None, tol: float) -> Approximate:
    """The augmented approximate optimum (weights of the n new runs over the candidates) and its certified bound.

    With n = 0, or without replicates when n equals the free candidates, the one feasible design (its bound is its
    value); otherwise the cvxpy model at tight tolerances (TIGHT) by ``solver``, or by each solver of the chain in
    turn until the certified gap ``value / lower_bound - 1`` is within ``tol``; the best certified answer is kept
    (an ``optimal_inaccurate`` one too: the bound recomputed here certifies whatever weights come back).

    Raises
    ------
    InstanceTooLargeError
        d above 150 or K d^2 above 5e7, the limits of the approximate designs' conic models.
    SolverError
        Every solver failed, or the weights returned leave A(w) singular.
    """
    K, d = X.shape
    free = np.ones(K, dtype=bool) if replicates else fixed == 0
    if n == 0 or (not replicates and n == int(free.sum())):
        return augmented_bound(X, fixed, n, free / max(int(free.sum()), 1) * (n > 0), B, replicates)
    if d > D_OPTIMAL_MAX_DIM or int(free.sum()) * d * d > D_OPTIMAL_MAX_ENTRIES:
        raise InstanceTooLargeError(f"the augmented approximate design on {int(free.sum()):,} candidates in R^{d} "
                                    f"exceeds the size of its conic model (d <= {D_OPTIMAL_MAX_DIM}, K d^2 <= "
                                    f"{D_OPTIMAL_MAX_ENTRIES:.0e}): use fewer candidates")
    problem, w = _model(X, fixed, n, B, replicates)
    best: Approximate | None = None
    failed: list[str] = []
    for name in solvers.solver_chain(solver):
        try:
            solvers.solve(problem, name, accept_inaccurate=True, solver_options=TIGHT)
            weights = np.zeros(K)
            weights[free] = np.clip(np.asarray(w.value, dtype=float).ravel(), 0.0, None)
            found = augmented_bound(X, fixed, n, weights / weights.sum(), B, replicates)
        except (SolverError, LinAlgError) as error:
            failed.append(f"{name}: {error}")
            continue
        if best is None or found.value / found.lower_bound < best.value / best.lower_bound:
            best = found
        if best.value <= best.lower_bound * (1.0 + tol):
            break
    if best is None:
        raise SolverError("the augmented approximate design failed: " + "; ".join(failed))
    try:
        return polish(X, fixed, n, best, B, replicates, tol)
    except LinAlgError:  # a step that looked improving through rounding: the solver's weights
        return best
