"""Joint assignments of a graphical bilinear bandit (Rizk et al. 2021, Sec. 4): one node arm per node.

The global reward of an assignment a is r(a) = sum over directed edges (i, j) of x_{a_i}^T M x_{a_j};
maximising it is NP-hard (Thm 4.1), so :func:`brute_force_assignment` enumerates the K^n assignments
of small instances (K^n <= :data:`MAX_ASSIGNMENTS`). Also the input checks shared by the package:
:func:`pair_means` (the K x K matrix of x_k^T M x_k'), :func:`check_M`, :func:`check_assignment`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.validation import as_arms, as_matrix

from .graphs import directed_edges

#: largest number K^n of joint assignments that :func:`brute_force_assignment` enumerates
MAX_ASSIGNMENTS = 10**6
#: node draws held in memory at once when simulating a batch of rounds (entries of the R x n matrix)
DRAW_CHUNK = 2**21


def global_reward(graph, X, M, assignment) -> float:
    """r(a) = sum over directed edges (i, j) of x_{a_i}^T M x_{a_j} (a in ``graph.nodes`` order)."""
    nodes, edges = directed_edges(graph)
    R = pair_means(X, M)
    a = check_assignment(assignment, len(nodes), R.shape[0])
    return float(R[a[edges[:, 0]], a[edges[:, 1]]].sum())


@dataclass(frozen=True)
class BruteForceResult:
    """Best joint assignment (one arm index per node, ``graph.nodes`` order), its global reward
    ``value`` = r*, and the smallest global reward ``min_value`` = r_min over all K^n assignments."""

    assignment: np.ndarray
    value: float
    min_value: float


def brute_force_assignment(graph, X, M, *, max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
    """Enumerate all K^n joint assignments (the problem is NP-hard, Rizk Thm 4.1).

    Raises :class:`InstanceTooLargeError` when K^n exceeds ``max_assignments`` (default 10^6).
    """
    nodes, edges = directed_edges(graph)
    R = pair_means(X, M)
    K, n = R.shape[0], len(nodes)
    if float(K) ** n > max_assignments:
        raise InstanceTooLargeError(
            f"brute force over K^n = {K}^{n} joint assignments exceeds the limit {max_assignments:g}"
        )
    total = K**n
    chunk = max(1, DRAW_CHUNK // max(n, edges.shape[0]))
    powers = K ** np.arange(n, dtype=np.int64)
    best_val, best_idx, worst = -np.inf, 0, np.inf
    for lo in range(0, total, chunk):
        idx = np.arange(lo, min(total, lo + chunk), dtype=np.int64)
        a = (idx[:, None] // powers) % K  # digit i of idx in base K is the arm of node i
        r = R[a[:, edges[:, 0]], a[:, edges[:, 1]]].sum(axis=1)
        j = int(np.argmax(r))
        if r[j] > best_val:
            best_val, best_idx = float(r[j]), int(idx[j])
        worst = min(worst, float(r.min()))
    return BruteForceResult(assignment=(best_idx // powers) % K, value=best_val, min_value=worst)


def pair_means(X, M) -> np.ndarray:
    """The K x K matrix of x_k^T M x_k' (the mean reward of an edge whose ends play x_k and x_k')."""
    X = as_arms(X, "X")
    return X @ check_M(M, X.shape[1], "M") @ X.T


def check_M(M, d: int, name: str) -> np.ndarray:
    """``M`` as a d x d float matrix (InvalidInputError otherwise)."""
    M = as_matrix(M, name)
    if M.shape != (d, d):
        raise InvalidInputError(f"{name} must be a {d} x {d} matrix (d = the arms' dimension), got shape {M.shape}")
    return M


def check_assignment(a, n: int, K: int) -> np.ndarray:
    """``a`` (..., n) as int64 arm indices in 0..K-1 (InvalidInputError otherwise)."""
    a = np.asarray(a)
    if a.shape[-1:] != (n,):
        raise InvalidInputError(f"an assignment gives one arm index per node: length {n} expected, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= K:
        raise InvalidInputError(f"assignment entries must be arm indices in 0..{K - 1}")
    return a.astype(np.int64, copy=False)
