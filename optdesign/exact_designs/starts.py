"""Starting designs of the exchange: the rounded approximate optimum, extreme bases completed at random, perturbed
best designs.

Random starts come in two kinds, taken in turn: a basis of extreme points, each the candidate of largest
|x^T P g| for a Gaussian direction g projected (P) off the points already chosen (the random start of
OptimalDesign's od_KL, Harman & Filová), completed by n - d runs drawn uniformly; and the best design so far with
two to four runs moved at random (an iterated local search). On the response surfaces of
``benchmarks/bench_exact_exchange.py`` the exchange ends at the best design found about as often from extreme
bases as from uniform draws, and more often on its I-criterion case.

Any start with n >= d runs is repaired into one whose points span R^d: keep a basis of its own points (pivoted
QR), add the candidates of a basis of the complement (pivoted QR of the candidates' residuals, one run each) and
take as many runs off the points outside the kept basis, the most replicated first.

With fixed runs (``fixed``, counts kept by the exchange, :mod:`optdesign.exact_designs.augment`) every start is the
fixed runs plus a start for the new ones: the kept basis begins with a basis of the fixed points, the extreme basis with
the directions the fixed points leave out, and runs are only ever taken off the new ones.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import qr

from ..linear.rounding import round_design

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: a pivot of a QR factor below this fraction of the largest counts as zero (the rows are dependent)
RANK_RTOL = 1e-10


def _pivots(A: np.ndarray, limit: int, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pivoted QR of the columns of A (d x m): (indices of up to ``limit`` independent columns, Q factor); a pivot
    counts when above RANK_RTOL times ``scale`` (default: the largest pivot)."""
    if A.shape[1] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((A.shape[0], 0))
    Q, R, piv = qr(A, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    reference = diag[0] if scale is None else scale
    if reference == 0:
        return piv[:0], Q[:, :0]
    rank = min(int(np.sum(diag > RANK_RTOL * reference)), limit)
    return piv[:rank], Q[:, :rank]


def _floor(X: np.ndarray, fixed: np.ndarray | None) -> np.ndarray:
    """The fixed counts (zeros without fixed runs)."""
    return np.zeros(X.shape[0], dtype=np.int64) if fixed is None else fixed


def fixed_span(X: np.ndarray, fixed: np.ndarray | None) -> np.ndarray:
    """An orthonormal basis (d x r) of the span of the fixed points (d x 0 without fixed runs)."""
    return _pivots(X[_floor(X, fixed) > 0].T, X.shape[1])[1]


def spanning(X: np.ndarray, counts: np.ndarray, fixed: np.ndarray | None = None) -> np.ndarray:
    """``counts`` (n >= d runs, or n >= d - rank of the fixed points beyond ``fixed``) repaired so that its points
    span R^d (module docstring); the total is kept and no fixed run is taken off."""
    d = X.shape[1]
    counts = counts.astype(np.int64).copy()
    floor = _floor(X, fixed)
    points = np.flatnonzero(counts)
    points = points[np.argsort(-counts[points], kind="stable")]
    pinned, others = points[floor[points] > 0], points[floor[points] == 0]
    kept_pinned, Q = _pivots(X[pinned].T, d)  # a basis of the fixed points first: they cannot lose their runs
    scale = float(np.max(np.linalg.norm(X[points], axis=1))) if pinned.size else None
    kept_others, Q_others = _pivots(X[others].T - Q @ (Q.T @ X[others].T), d - kept_pinned.size, scale)
    Q = np.hstack([Q, Q_others])
    missing = d - kept_pinned.size - kept_others.size
    if missing == 0:
        return counts
    residual = X.T - Q @ (Q.T @ X.T)
    new, _ = _pivots(residual, missing)
    counts[new] += 1
    protected = np.zeros(X.shape[0], dtype=np.int64)
    protected[pinned[kept_pinned]] = 1
    protected[others[kept_others]] = 1
    protected[new] = 1
    for _ in range(new.size):  # one run off the most replicated new point outside the basis, else a new replicate
        spare = counts - np.maximum(floor, protected)
        counts[int(np.argmax(spare))] -= 1
    return counts


def rounded_start(X: np.ndarray, weights: np.ndarray, n: int, replicates: bool,
                  rng: np.random.Generator, fixed: np.ndarray | None = None) -> np.ndarray:
    """The approximate optimum (of the n new runs) rounded to n runs (efficient apportionment; without replicates:
    the n free points of largest weight, filled at random), added to the fixed runs and made spanning."""
    floor = _floor(X, fixed)
    if replicates:
        return spanning(X, floor + round_design(weights, n), fixed)
    free = np.where(floor == 0, weights, 0.0)
    order = np.argsort(-free, kind="stable")
    top = order[: min(n, int(np.count_nonzero(free > 0)))]
    counts = floor.copy()
    counts[top] = 1
    rest = np.flatnonzero(counts == 0)
    counts[rng.choice(rest, size=n - top.size, replace=False)] = 1
    return spanning(X, counts, fixed)


def extreme_start(X: np.ndarray, n: int, replicates: bool, rng: np.random.Generator,
                  fixed: np.ndarray | None = None) -> np.ndarray:
    """A basis of extreme candidates along random directions, completed by n - d runs drawn uniformly (module
    docstring); with fixed runs, min(n, d) extreme new runs, the first along the directions the fixed points leave
    out, added to them."""
    K, d = X.shape
    floor = _floor(X, fixed)
    Q = fixed_span(X, fixed)
    P = np.eye(d) - Q @ Q.T
    basis = np.empty(min(n, d), dtype=np.int64)
    for r in range(basis.size):
        if np.trace(P) < 0.5:  # the fixed points and the basis span R^d: the next extreme points from scratch
            P = np.eye(d)
        scores = np.abs(X @ (P @ rng.standard_normal(d)))
        scores[basis[:r]] = -1.0
        if not replicates:
            scores[floor > 0] = -1.0
        basis[r] = int(np.argmax(scores))
        v = P @ X[basis[r]]
        if v @ v > 0:
            P -= np.outer(v, v) / (v @ v)
    counts = floor + np.bincount(basis, minlength=K).astype(np.int64)
    rest = np.flatnonzero(counts == 0) if not replicates else np.arange(K)
    counts += np.bincount(rng.choice(rest, size=n - basis.size, replace=replicates), minlength=K)
    return spanning(X, counts, fixed)


def perturbed_start(X: np.ndarray, counts: np.ndarray, replicates: bool, rng: np.random.Generator,
                    fixed: np.ndarray | None = None) -> np.ndarray:
    """``counts`` with two to four new runs moved to random candidates (without replicates: to empty ones)."""
    counts = counts.copy()
    floor = _floor(X, fixed)
    for _ in range(int(rng.integers(2, 5))):
        targets = np.flatnonzero(counts == 0) if not replicates else np.arange(X.shape[0])
        movable = np.flatnonzero(counts > floor)
        if targets.size == 0 or movable.size == 0:
            break
        counts[rng.choice(movable)] -= 1
        counts[rng.choice(targets)] += 1
    return spanning(X, counts, fixed)
