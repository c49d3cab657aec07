"""Joint assignments of a graphical bilinear bandit (Rizk et al. 2021, Sec. 4): one node arm per node.

The global reward of an assignment a is r(a) = sum over directed edges (i, j) of x_{a_i}^T M x_{a_j};
maximising it is NP-hard (Thm 4.1), so :func:`brute_force_assignment` enumerates the K^n assignments
of small instances (K^n <= :data:`MAX_ASSIGNMENTS`). Also the input checks shared by the package:
:func:`pair_means` (the K x K matrix of x_k^T M x_k'), ``check_M``, ``check_assignment``.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import numpy.typing as npt

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.validation import as_arms, as_matrix

from .graphs import directed_edges

__all__ = ["DRAW_CHUNK", "MAX_ASSIGNMENTS", "BruteForceResult", "brute_force_assignment", "global_reward",
           "pair_means"]

#: largest number K^n of joint assignments that :func:`brute_force_assignment` enumerates
MAX_ASSIGNMENTS = 10**6
#: node draws held in memory at once when simulating a batch of rounds (entries of the R x n matrix)
DRAW_CHUNK = 2**21


def global_reward(graph: nx.Graph, X: npt.ArrayLike, M: npt.ArrayLike, assignment: npt.ArrayLike) -> float:
    """r(a) = sum over directed edges (i, j) of x_{a_i}^T M x_{a_j} (a in ``graph.nodes`` order).

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        The graph; an undirected edge counts both ways (:func:`~bandits.bilinear.graphs.directed_edges`).
    X : array_like, shape (K, d)
        The node arms, one per row.
    M : array_like, shape (d, d)
        The bilinear parameter (need not be symmetric).
    assignment : array_like of int, shape (n,)
        Arm index in 0..K-1 of every node, in ``graph.nodes`` order.

    Returns
    -------
    float
        The expected global reward r(a).

    Raises
    ------
    InvalidInputError
        A bad graph, arms, M of the wrong shape, or an assignment of the wrong length or out of range.
    """
    nodes, edges = directed_edges(graph)
    R = pair_means(X, M)
    a = check_assignment(assignment, len(nodes), R.shape[0])
    return float(R[a[edges[:, 0]], a[edges[:, 1]]].sum())


@dataclass(frozen=True)
class BruteForceResult:
    """Best joint assignment (one arm index per node, ``graph.nodes`` order), its global reward
    ``value`` = r*, and the smallest global reward ``min_value`` = r_min over all K^n assignments."""

    #: arm index of every node (``graph.nodes`` order) in the best assignment (the first in enumeration order)
    assignment: npt.NDArray[np.int64]
    #: r*, the largest global reward
    value: float
    #: r_min, the smallest global reward (the reference of Alg. 1's 1/2 ratio)
    min_value: float


def brute_force_assignment(graph: nx.Graph, X: npt.ArrayLike, M: npt.ArrayLike, *,
                           max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
    """Enumerate all K^n joint assignments (the problem is NP-hard, Rizk Thm 4.1).

    Assignments are enumerated in chunks, node i being digit i of the index in base K.

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        The graph (n nodes); an undirected edge counts both ways.
    X : array_like, shape (K, d)
        The node arms, one per row.
    M : array_like, shape (d, d)
        The bilinear parameter.
    max_assignments : int
        Largest K^n enumerated (default :data:`MAX_ASSIGNMENTS` = 10^6).

    Returns
    -------
    BruteForceResult
        The best assignment, its reward r* and the smallest reward r_min.

    Raises
    ------
    InstanceTooLargeError
        K^n exceeds ``max_assignments``.
    InvalidInputError
        A bad graph, arms or M.
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


def pair_means(X: npt.ArrayLike, M: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The K x K matrix of x_k^T M x_k' (the mean reward of an edge whose ends play x_k and x_k').

    Parameters
    ----------
    X : array_like, shape (K, d)
        The node arms, one per row.
    M : array_like, shape (d, d)
        The bilinear parameter.

    Returns
    -------
    ndarray, shape (K, K)
        Entry (k, k') is x_k^T M x_k'; raveled, entry k K + k' is the mean of edge arm k K + k'.

    Raises
    ------
    InvalidInputError
        Arms with NaN/inf or the wrong shape, or M not d x d.
    """
    X = as_arms(X, "X")
    return X @ check_M(M, X.shape[1], "M") @ X.T


def check_M(M: npt.ArrayLike, d: int, name: str) -> npt.NDArray[np.float64]:
    """``M`` as a d x d float matrix (InvalidInputError otherwise)."""
    M = as_matrix(M, name)
    if M.shape != (d, d):
        raise InvalidInputError(f"{name} must be a {d} x {d} matrix (d = the arms' dimension), got shape {M.shape}")
    return M


def check_assignment(a: npt.ArrayLike, n: int, K: int) -> npt.NDArray[np.int64]:
    """``a`` (..., n) as int64 arm indices in 0..K-1 (InvalidInputError otherwise)."""
    a = np.asarray(a)
    if a.shape[-1:] != (n,):
        raise InvalidInputError(f"an assignment gives one arm index per node: length {n} expected, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= K:
        raise InvalidInputError(f"assignment entries must be arm indices in 0..{K - 1}")
    return a.astype(np.int64, copy=False)
