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
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import qr

from ..linear.rounding import round_design

__all__: list[str] = []  # internal: exact_design (optdesign.exact.design) is the public entry point

#: a pivot of a QR factor below this fraction of the largest counts as zero (the rows are dependent)
RANK_RTOL = 1e-10


def _pivots(A: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Pivoted QR of the columns of A (d x m): (indices of up to ``limit`` independent columns, Q factor)."""
    Q, R, piv = qr(A, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    if diag.size == 0 or diag[0] == 0:
        return piv[:0], Q[:, :0]
    rank = min(int(np.sum(diag > RANK_RTOL * diag[0])), limit)
    return piv[:rank], Q[:, :rank]


def spanning(X: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``counts`` (n >= d runs) repaired so that its points span R^d (module docstring); the total is kept."""
    d = X.shape[1]
    counts = counts.astype(np.int64).copy()
    points = np.flatnonzero(counts)
    points = points[np.argsort(-counts[points], kind="stable")]
    kept, Q = _pivots(X[points].T, d)
    missing = d - kept.size
    if missing == 0:
        return counts
    residual = X.T - Q @ (Q.T @ X.T)
    new, _ = _pivots(residual, missing)
    counts[new] += 1
    protected = np.zeros(X.shape[0], dtype=bool)
    protected[points[kept]] = True
    protected[new] = True
    for _ in range(new.size):  # take one run off the most replicated point outside the basis, else a replicate
        spare = np.where(protected, counts - 1, counts)
        counts[int(np.argmax(spare))] -= 1
    return counts


def rounded_start(X: np.ndarray, weights: np.ndarray, n: int, replicates: bool,
                  rng: np.random.Generator) -> np.ndarray:
    """The approximate optimum rounded to n runs (efficient apportionment; without replicates: the n points of
    largest weight, filled at random), made spanning."""
    if replicates:
        return spanning(X, round_design(weights, n))
    order = np.argsort(-weights, kind="stable")
    top = order[: min(n, int(np.count_nonzero(weights > 0)))]
    counts = np.zeros(X.shape[0], dtype=np.int64)
    counts[top] = 1
    rest = np.flatnonzero(counts == 0)
    counts[rng.choice(rest, size=n - top.size, replace=False)] = 1
    return spanning(X, counts)


def extreme_start(X: np.ndarray, n: int, replicates: bool, rng: np.random.Generator) -> np.ndarray:
    """A basis of extreme candidates along random directions, completed by n - d runs drawn uniformly (module
    docstring)."""
    K, d = X.shape
    P = np.eye(d)
    basis = np.empty(d, dtype=np.int64)
    for r in range(d):
        scores = np.abs(X @ (P @ rng.standard_normal(d)))
        scores[basis[:r]] = -1.0
        basis[r] = int(np.argmax(scores))
        v = P @ X[basis[r]]
        if v @ v > 0:
            P -= np.outer(v, v) / (v @ v)
    counts = np.bincount(basis, minlength=K).astype(np.int64)
    rest = np.flatnonzero(counts == 0) if not replicates else np.arange(K)
    counts += np.bincount(rng.choice(rest, size=n - int(counts.sum()), replace=replicates), minlength=K)
    return spanning(X, counts)


def perturbed_start(X: np.ndarray, counts: np.ndarray, replicates: bool, rng: np.random.Generator) -> np.ndarray:
    """``counts`` with two to four runs moved to random candidates (without replicates: to empty ones)."""
    counts = counts.copy()
    for _ in range(int(rng.integers(2, 5))):
        targets = np.flatnonzero(counts == 0) if not replicates else np.arange(X.shape[0])
        if targets.size == 0:
            break
        counts[rng.choice(np.flatnonzero(counts))] -= 1
        counts[rng.choice(targets)] += 1
    return spanning(X, counts)
