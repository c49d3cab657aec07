"""D/G-optimal designs on 10^5-10^6 arms: Newton steps on an active set, priced over all arms.

Why an active set (column generation) rather than REX: the D-optimal design of K arms in R^d is supported
on at most d(d+1)/2 arms, so almost every arm of a large X has weight 0 at the optimum. Plain Frank–Wolfe
(:func:`optdesign.linear.firstorder.d_optimal_fw`) still pays O(K d) for every one of its thousands of
rank-one iterations. Here the problem restricted to a small support S (a few d arms) is solved by a primal-dual
interior-point method (:mod:`optdesign.linear.interior`: about 15 Newton steps of O(|S|^2 d + |S|^3), with
Frank–Wolfe with away steps finishing any solve it leaves short), and the full set of arms is touched once per
outer round, by one blocked BLAS-3 pricing pass

    h_k = x_k^T A(w)^{-1} x_k = ||L^{-1} x_k||^2,   A(w) = L L^T,

in chunks of rows, so the memory beyond X is O(chunk d + K). The arms with the largest h_k (the most violated
optimality conditions h_k <= d) join S; arms whose weight falls to 0 leave it. Each round solves max log det
over S, so log det increases strictly whenever an arm with h_k > d joins.

Certificate (Kiefer–Wolfowitz): max_k h_k >= d for every design, with equality exactly at the optimum, so
the G-value of w is max_k h_k and max_k h_k / d - 1 bounds the relative gap of both the G- and D-criteria
(the D-efficiency is at least d / max_k h_k). The returned design is the best one priced over all arms.

The loop itself (``active_set_loop``: restricted solve, pricing pass, the violators join) and the chunked
pricing (``column_squares``) know nothing of the D-criterion: every criterion with an equivalence theorem
max_k h_k <= f at the optimum runs on them (:mod:`optdesign.linear.classical`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cholesky, eigvalsh

from ..errors import InvalidInputError
from ..result import FastPathResult
from ..runtime.deadline import Deadline
from ..runtime.progress import listening, report
from ..validation import as_matrix, check_scale, triangular_rank
from .criteria import cholesky_factor, triangular_factor, whiten
from .firstorder import d_optimal_fw
from .interior import hadamard_terms, newton_fits, support_interior_point

__all__ = ["d_optimal_exchange", "spanning_arms", "spanning_factor"]

CHUNK_ENTRIES = 1 << 21  # rows per pricing chunk = CHUNK_ENTRIES / d (16 MiB of whitened rows)
#: the Gram matrix decides the rank of X when lambda_min > GRAM_RANK_MARGIN K d eps lambda_max (spanning_factor)
GRAM_RANK_MARGIN = 4.0


def _chunks(n: int, d: int, chunk: int | None) -> Iterator[tuple[int, int]]:
    step = max(1, chunk if chunk is not None else CHUNK_ENTRIES // d)
    for start in range(0, n, step):
        yield start, min(n, start + step)


def column_squares(X: np.ndarray, transform: Callable[[np.ndarray], np.ndarray], *,
                   chunk: int | None = None) -> np.ndarray:
    """h_k = ||transform(x_k)||^2 for every row of X, in chunks of rows (one BLAS-3 call per chunk).

    ``transform(B)`` maps a block of rows B (b x d) to an r x b array whose column j is the image of row j, e.g.
    L^{-1} B^T (:func:`price`) or M B^T for a pricing matrix M. Returns an array of shape (K,).
    """
    n, d = X.shape
    h = np.empty(n)
    for a, b in _chunks(n, d, chunk):
        Z = transform(X[a:b])
        h[a:b] = np.einsum("ij,ij->j", Z, Z)
    return h


def price(X: np.ndarray, L: np.ndarray, *, chunk: int | None = None) -> np.ndarray:
    """Leverages h_k = ||L^{-1} x_k||^2 = x_k^T A^{-1} x_k of every row of X, for A = L L^T (chunked solves).

    Returns them as an array of shape (K,); ``chunk`` rows are whitened at once (CHUNK_ENTRIES / d by default).
    """
    return column_squares(X, lambda B: whiten(L, B), chunk=chunk)


def price_map(X: np.ndarray, M: np.ndarray, *, chunk: int | None = None) -> np.ndarray:
    """h_k = ||M x_k||^2 for every row of X (M of shape r x d), chunked as :func:`price`."""
    return column_squares(X, lambda B: M @ B.T, chunk=chunk)


def spanning_arms(X: ArrayLike, name: str = "X", *, chunk: int | None = None) -> np.ndarray:
    """X as a finite K x d array whose rows span R^d, at a representable scale (``check_scale``), checked
    without copying X (large-K ``as_arms``): :func:`spanning_factor` without the factor.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms.
    name : str
        The argument's name in error messages.
    chunk : int, optional
        Rows per TSQR block.

    Returns
    -------
    numpy.ndarray
        X as float64, not copied when it already is.

    Raises
    ------
    InvalidInputError
        What :func:`optdesign.validation.as_matrix` refuses, rank below d, or a scale outside ARM_SCALE.
    """
    return spanning_factor(X, name, chunk=chunk)[0]


def spanning_factor(X: ArrayLike, name: str = "X", *,
                    chunk: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """X checked as :func:`spanning_arms` says, and the lower-triangular L with L L^T = X^T X, from one pass.

    The Gram matrix G = X^T X (one BLAS-3 call, no copy of X) decides when its eigenvalues are far from
    singular: the rounding of G is at most K eps |X|^T |X| (norm <= K d eps lambda_max), so lambda_min >
    GRAM_RANK_MARGIN K d eps lambda_max proves rank d, as numpy's ``matrix_rank`` (sigma_max K eps) decides it.
    Otherwise the rank is that of the triangular factor R of X = QR, built chunk by chunk (TSQR,
    ``optdesign.linear.criteria.triangular_factor``), decided by ``optdesign.validation.triangular_rank``,
    and L = R^T.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms.
    name : str
        The argument's name in error messages.
    chunk : int, optional
        Rows per TSQR block.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        X (float64, not copied when it already is) and L (d x d).

    Raises
    ------
    InvalidInputError
        What :func:`optdesign.validation.as_matrix` refuses, rank below d, or a scale outside ARM_SCALE.
    """
    X = as_matrix(X, name)
    n, d = X.shape
    G = X.T @ X
    if np.all(np.isfinite(G)):
        lam = eigvalsh(G, check_finite=False)
        if lam[0] > GRAM_RANK_MARGIN * n * d * np.finfo(float).eps * lam[-1]:
            return check_scale(X, name), cholesky(G, lower=True, check_finite=False)
    R = triangular_factor(X, chunk=chunk)
    rank = triangular_rank(R, n)
    if rank < d:
        raise InvalidInputError(f"the rows of {name} must span R^{d} (A(w) is singular otherwise); found rank {rank}")
    return check_scale(X, name), np.ascontiguousarray(R.T)


def initial_support(X: np.ndarray, size: int, chunk: int | None = None,
                    factor: np.ndarray | None = None) -> np.ndarray:
    """The ``size`` arms of largest leverage under the uniform design (the extreme arms of the data's
    ellipsoid), grown until they span R^d; sorted indices. ``factor``: L with L L^T = X^T X, if known
    (:func:`spanning_factor`; the leverages are those of the uniform design times K)."""
    n, d = X.shape
    L = cholesky_factor(X, np.full(n, 1.0 / n)) if factor is None else factor
    if L is None:
        raise InvalidInputError(f"the rows of X must span R^{d} (A(w) is singular otherwise)")
    h = price(X, L, chunk=chunk)
    while True:
        size = min(n, size)
        S = np.argpartition(-h, size - 1)[:size] if size < n else np.arange(n)
        if size == n or np.linalg.matrix_rank(X[S]) == d:
            return np.sort(S)
        size *= 2


#: the restricted solve of an active-set loop: (support, weights on it, inner tol, seconds) -> new weights on it
InnerSolve = Callable[[np.ndarray, np.ndarray, float, float], np.ndarray]
#: the pricing pass: (support, weights on it) -> (h over all arms, f), certified gap max_k h_k / f - 1; None if singular
Pricing = Callable[[np.ndarray, np.ndarray], "tuple[np.ndarray, float] | None"]


@dataclass(frozen=True)
class ActiveSetRun:
    """The best design an ``active_set_loop`` priced: its support, weights there and certified ratio."""

    #: indices of the support arms
    support: np.ndarray
    #: the weights on ``support`` (summing to 1)
    weights: np.ndarray
    #: max_k h_k / f at that design (>= 1; 1 + the certified gap)
    ratio: float
    #: the f of that pricing pass
    f: float
    #: pricing passes
    rounds: int
    #: whether ratio <= 1 + tol
    converged: bool


def active_set_loop(X: np.ndarray, inner: InnerSolve, pricing: Pricing, *, tol: float, deadline: Deadline,
                    batch: int, chunk: int | None = None, max_rounds: int = 10_000, label: str = "exchange",
                    support: np.ndarray | None = None, factor: np.ndarray | None = None) -> ActiveSetRun:
    """Column generation for a design whose optimality condition is max_k h_k <= f (an equivalence theorem).

    Each round: ``inner`` solves the design restricted to the support S to a relative gap well below the current
    global one, arms whose weight fell to 0 leave S, one ``pricing`` pass computes h_k over all arms, and the
    ``batch`` arms outside S with the largest h_k > f (1 + tol) join S. Stops when max_k h_k <= f (1 + tol), at
    ``max_rounds`` or at the deadline, returning the best design priced (smallest max_k h_k / f). ``support``
    is the starting S (default: :func:`initial_support` of max(2 batch, 4 d) arms, ranked with ``factor``, L with
    L L^T = X^T X, when given), started uniform.
    """
    n, d = X.shape
    S = initial_support(X, max(2 * batch, 4 * d), chunk, factor) if support is None else np.sort(support)
    w_S = np.full(S.size, 1.0 / S.size)
    inner_tol = 0.05
    best = ActiveSetRun(S, w_S, np.inf, np.nan, 0, False)
    rounds = 0
    while True:
        w_S = inner(S, w_S, inner_tol, deadline.remaining())
        keep = w_S > 0
        S, w_S = S[keep], w_S[keep] / w_S[keep].sum()
        priced = pricing(S, w_S)
        if priced is None:  # numerically singular support weights: keep the best design priced so far
            break
        h, f = priced
        rounds += 1
        ratio = float(h.max()) / f
        if ratio < best.ratio:
            best = ActiveSetRun(S, w_S, ratio, f, rounds, ratio <= 1.0 + tol)
        if ratio <= 1.0 + tol or rounds >= max_rounds or deadline.expired():
            break
        gap = ratio - 1.0
        if listening():
            report(f"{label}: pricing pass {rounds}, {S.size} support arms, certified gap {gap:.1e}")
        # the inner solve must finish below tol at the end, and need not be much sharper than the global gap
        inner_tol = max(0.5 * tol, min(0.05, 0.1 * gap))
        h[S] = -np.inf
        m = min(batch, n - S.size)
        new = np.argpartition(-h, m - 1)[:m] if m > 0 else np.zeros(0, dtype=int)
        new = new[h[new] > f * (1.0 + tol)]
        if new.size == 0:  # only support arms violate (or all arms are in S): tighten the inner solve
            inner_tol = 0.5 * tol
            continue
        S = np.concatenate([S, new])
        w_S = np.concatenate([w_S, np.zeros(new.size)])
    return ActiveSetRun(best.support, best.weights, best.ratio, best.f, rounds, best.converged)


def d_optimal_exchange(
    X: np.ndarray,
    *,
    tol: float = 1e-4,
    time_limit: float = 60.0,
    batch: int | None = None,
    chunk: int | None = None,
    max_rounds: int = 10_000,
    factor: np.ndarray | None = None,
) -> FastPathResult:
    """D/G-optimal design max_w log det A(w) by an active set with full pricing (see module doc).

    Each round (``active_set_loop``): Newton steps on the support to a relative gap well below the current
    global gap, one pricing pass h_k = x_k^T A^{-1} x_k over all arms, then the ``batch`` arms (default 2d, at
    least 32) with the largest h_k > d (1 + tol) join the support. Stops when max_k h_k <= d (1 + tol) or at
    ``time_limit`` seconds. ``iterations`` counts pricing passes (outer rounds).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, finite and spanning R^d, not validated (``optdesign.d_optimal(X, method="exchange")``
        checks them without a copy); never copied here.
    tol : float
        Certified relative gap: stop when max_k h_k <= d (1 + tol).
    time_limit : float
        Seconds for the whole run (inner solves included), capped by the enclosing time budget.
    batch : int, optional
        Arms added to the support per pricing pass; max(32, 2 d) by default.
    chunk : int, optional
        Rows per pricing block; CHUNK_ENTRIES / d (16 MiB of whitened rows) by default.
    max_rounds : int
        Most pricing passes.
    factor : numpy.ndarray, shape (d, d), optional
        Lower-triangular L with L L^T = X^T X (:func:`spanning_factor`), which ranks the starting support.

    Returns
    -------
    FastPathResult
        The best design priced over all arms (weights on all K rows, zero off the support), its G-value,
        ``lower_bound`` d, the pricing passes and ``converged``.

    Raises
    ------
    InvalidInputError
        The rows of X do not span R^d (A(w) of the uniform design is numerically singular).
    """
    n, d = X.shape

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        XS, deadline = X[S], Deadline(seconds)

        def terms(w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
            L = cholesky_factor(XS, w)
            return None if L is None else hadamard_terms(XS, L, None, 1.0)

        fits = newton_fits(*XS.shape)
        solved = support_interior_point(terms, w_S, tol=inner_tol, deadline=deadline) if fits else None
        if solved is not None and solved[1]:
            return solved[0]
        start = w_S if solved is None else solved[0]  # Frank–Wolfe finishes what Newton could not
        return d_optimal_fw(XS, tol=inner_tol, time_limit=deadline.remaining(), w0=start).weights

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float] | None:
        L = cholesky_factor(X[S], w_S)
        return None if L is None else (price(X, L, chunk=chunk), float(d))

    run = active_set_loop(X, inner, pricing, tol=tol, deadline=Deadline(time_limit),
                          batch=max(32, 2 * d) if batch is None else max(1, int(batch)), chunk=chunk,
                          max_rounds=max_rounds, factor=factor)
    w = np.zeros(n)
    w[run.support] = run.weights
    return FastPathResult(w, run.ratio * d, float(d), run.rounds, run.converged)
