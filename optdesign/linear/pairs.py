"""Min-max designs over all pairwise differences of many items, without listing the directions.

XY-allocation and the transductive design without theta minimise F(w) = max_{i<j} ||z_i - z_j||^2_{A(w)^{-1}}
over n(n-1)/2 directions: 5e7 of them for Fiez et al.'s n = 10,000 arms in R^2, too many to hand a
solver. Two facts make the full set unnecessary:

* for fixed w, F(w) is the squared diameter of the whitened items L^{-1} z_i (A(w) = L L^T), found
  exactly by a chunked O(n^2 d) scan that holds about PAIR_CHUNK_ENTRIES numbers at a time;
* the dual certificate F* >= f_p(w)^2 / max_k h_k(w) of :mod:`optdesign.linear.criteria` holds for any
  distribution p over directions, in particular one supported on a subset of the pairs.

So :func:`pairwise_design` solves the design on a working set of pairs, scans all pairs at its
weights (an upper bound F(w)), adds the pairs above the working-set value, and stops when the
upper bound over all pairs and the working set's certified lower bound are within ``tol``
(constraint generation; the certificate is on the full problem).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..errors import InvalidInputError, SolverError
from ..result import DesignResult, relative_gap
from ..validation import as_arms, as_count, as_matrix, as_tolerance
from .criteria import cholesky_factor, whiten

PAIR_CHUNK_ENTRIES = 2_000_000  # pair values held at once by the scan (16 MB)
MAX_ROUNDS = 60
TIE_RTOL = 1e-9


def pair_count(n: int) -> int:
    """Number of unordered pairs of n items."""
    return n * (n - 1) // 2


def top_pairs(V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
    """Largest squared distance max_{i<j} ||v_i - v_j||^2 between the columns of V (d x n), and
    up to ``k`` pairs (rows (i, j), i < j, largest first) whose squared distance exceeds ``floor``."""
    V = as_matrix(V, "V")
    k = as_count(k, "k", minimum=0)
    n = V.shape[1]
    if n < 2:
        return 0.0, np.empty((0, 2), dtype=np.int64)
    norms = np.einsum("ij,ij->j", V, V)
    rows = max(1, PAIR_CHUNK_ENTRIES // n)
    best = -np.inf
    kept_values, kept_pairs = [], []
    for a in range(0, n - 1, rows):
        b = min(a + rows, n - 1)
        # block: items a..b-1 against items a+1..n-1; entry (r, c) is the pair (a + r, a + 1 + c)
        block = norms[a:b, None] + norms[None, a + 1 :] - 2.0 * (V[:, a:b].T @ V[:, a + 1 :])
        m = b - a  # pairs with j <= i, i.e. c < r, all lie in the first m columns
        block[:, :m][np.tril_indices(m, -1)] = -np.inf
        flat = block.ravel()
        best = max(best, float(flat.max()))
        if k > 0:
            idx = np.flatnonzero(flat > floor)  # usually few: the floor is the working set's value
            if idx.size > k:
                idx = idx[np.argpartition(flat[idx], idx.size - k)[idx.size - k :]]
            r, c = np.divmod(idx, block.shape[1])
            kept_values.append(flat[idx])
            kept_pairs.append(np.stack([a + r, a + 1 + c], axis=1))
    if not kept_pairs:
        return best, np.empty((0, 2), dtype=np.int64)
    values, pairs = np.concatenate(kept_values), np.concatenate(kept_pairs)
    order = np.argsort(-values)[:k]
    return best, pairs[order]


def max_pair_variance(A: np.ndarray, Z: np.ndarray, *, rcond: float = 1e-12) -> float:
    """max_{i<j} (z_i - z_j)^T A^+ (z_i - z_j) for a PSD information matrix A (pseudo-inverse), or
    inf when some difference has a component in the null space of A (it cannot be estimated)."""
    A = as_matrix(A, "A")
    if A.shape[0] != A.shape[1]:
        raise InvalidInputError(f"A must be a square information matrix, got shape {A.shape}")
    Z = as_matrix(Z, "Z", n_cols=A.shape[0])
    if not (np.isfinite(rcond) and rcond >= 0):
        raise InvalidInputError(f"rcond must be a nonnegative number, got {rcond!r}")
    eigval, eigvec = np.linalg.eigh((A + A.T) / 2)
    keep = eigval > rcond * max(eigval.max(), 0.0)
    if not keep.any():
        return np.inf
    null_part = eigvec[:, ~keep].T @ Z.T  # equal columns <=> every difference lies in range(A)
    spread = np.abs(null_part - null_part[:, :1]).max(initial=0.0)
    if spread > 1e-8 * max(np.abs(Z - Z[0]).max(), 1e-300):
        return np.inf
    V = (eigvec[:, keep] / np.sqrt(eigval[keep])).T @ Z.T
    return top_pairs(V)[0]


def pairwise_design(
    X: np.ndarray,
    Z: np.ndarray,
    solve: Callable[[np.ndarray, np.ndarray | None, float], DesignResult],
    *,
    tol: float,
    batch: int | None = None,
    time_limit: float = 600.0,
    explicit: Callable[[], DesignResult] | None = None,
) -> DesignResult:
    """Design minimising max_{i<j} ||z_i - z_j||^2_{A(w)^{-1}} by constraint generation over pairs.

    ``solve(Y, w0, tol)`` solves the min-max design on an explicit direction set (warm-started at
    w0). The result's ``value`` is F(w) over all pairs and ``lower_bound`` a certificate valid
    for the full problem; ``extras`` records the pairs, the working-set size and the rounds.
    ``explicit()``, when given, solves the problem on the full list of differences: it is used
    instead when a whole batch of pairs ties at the uniform design (symmetric item sets).
    """
    start = time.perf_counter()
    X = as_arms(X)
    Z = as_matrix(Z, "Z", n_cols=X.shape[1])
    tol = as_tolerance(tol)
    n, d = Z.shape
    batch = max(50, 40 * d) if batch is None else as_count(batch, "batch")
    w = np.full(X.shape[0], 1.0 / X.shape[0])
    L = cholesky_factor(X, w)
    if L is None:
        raise SolverError("A(w) of the uniform design is numerically singular")
    V = whiten(L, Z)
    upper, working = top_pairs(V, batch)
    if upper <= 0:
        raise InvalidInputError("Z has a single distinct item: there is nothing to identify")
    if explicit is not None and len(working) == batch:
        tail = working[-1]
        if np.sum((V[:, tail[0]] - V[:, tail[1]]) ** 2) >= (1 - TIE_RTOL) * upper:
            # a batch of pairs tie at the uniform design (symmetric items, e.g. a basis): a working
            # set would grow to most of them, one barrier on the full list is faster
            return explicit()
    best: DesignResult | None = None
    best_upper, best_lower = np.inf, 0.0
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        inner = solve(Z[working[:, 0]] - Z[working[:, 1]], None if best is None else best.weights, tol / 2)
        L = cholesky_factor(X, inner.weights)
        if L is None:  # a singular design has an infinite value: keep the previous one
            break
        upper, violators = top_pairs(whiten(L, Z), batch, floor=inner.value * (1 + tol / 4))
        best_lower = max(best_lower, inner.lower_bound)  # p on a subset of pairs certifies all pairs
        if upper < best_upper:
            best, best_upper = inner, upper
        known = {tuple(p) for p in working.tolist()}
        fresh = np.array([p for p in violators.tolist() if tuple(p) not in known], dtype=np.int64).reshape(-1, 2)
        if relative_gap(best_upper, best_lower) <= tol or len(fresh) == 0 or time.perf_counter() - start > time_limit:
            break
        working = np.concatenate([working, fresh])
    if best is None:
        raise SolverError("the design on the working set of pairs has a singular information matrix")
    gap = relative_gap(best_upper, best_lower)
    extras = {**best.extras, "pairs": pair_count(n), "working_pairs": len(working), "rounds": rounds}
    return replace(
        best, value=best_upper, lower_bound=best_lower, gap=gap, solve_time=time.perf_counter() - start,
        status="optimal" if gap <= tol else "not_converged", extras=extras,
    )
