"""Rizk et al. (2021) Algorithm 1: a joint assignment from an estimate M_hat by a greedy local max-cut,
with (r - r_min)/(r* - r_min) >= 1/2 (Thm 4.2 / A.2)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import numpy.typing as npt

from optdesign.validation import as_arms

from .assignments import check_M
from .graphs import directed_edges

__all__ = ["algorithm1_allocation"]


def algorithm1_allocation(graph: nx.Graph, X: npt.ArrayLike, M_hat: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Rizk et al. Alg. 1: a joint assignment with (r - r_min)/(r* - r_min) >= 1/2 (Thm 4.2 / A.2).

    (x*, x'*) = argmax_{x, x'} x^T S x' over X^2 with S = (M_hat + M_hat^T)/2 (K^2 evaluations). If
    x* = x'* every node gets x*; otherwise nodes are visited in ``graph.nodes`` order and node i gets
    x* if n2 >= n1, else x'*, where n1 (n2) counts the directed edges, either way, between i and the
    already-assigned nodes holding x* (x'*): a greedy local max-cut (ties go to x*, as in the paper).

    Symmetrisation (App. E.1) leaves the global reward unchanged on a symmetric edge set, since
    each pair contributes x_i^T M x_j + x_j^T M x_i = 2 x_i^T S x_j, and is a no-op for symmetric M.
    Counting edges with their multiplicity keeps the proof valid on any DiGraph when M is symmetric
    (each directed edge is formed exactly once, at its later endpoint). For a non-symmetric M on a
    non-symmetric DiGraph there is no guarantee (one edge 1 -> 2, M = e_1 e_2^T, order (2, 1): r = 0).

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        The graph; an undirected edge counts both ways.
    X : array_like, shape (K, d)
        The node arms, one per row (spanning R^d).
    M_hat : array_like, shape (d, d)
        The estimate of M (e.g. unvec of the OLS estimate of theta).

    Returns
    -------
    ndarray of int64, shape (n,)
        Arm index of every node, in ``graph.nodes`` order; only the two arms of the best pair ``(x*, x'*)`` occur.

    Raises
    ------
    InvalidInputError
        A bad graph, arms, or ``M_hat`` not d x d.
    """
    nodes, edges = directed_edges(graph)
    X = as_arms(X, "X")
    M_hat = check_M(M_hat, X.shape[1], "M_hat")
    S = (M_hat + M_hat.T) / 2.0
    K, n = X.shape[0], len(nodes)
    k1, k2 = divmod(int(np.argmax((X @ S @ X.T).ravel())), K)
    if k1 == k2:
        return np.full(n, k1, dtype=np.int64)
    # neighbours with multiplicity: one entry per directed edge, in both directions
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.argsort(src, kind="stable")
    starts = np.searchsorted(src[order], np.arange(n + 1))
    nbrs = dst[order]
    side = np.full(n, -1, dtype=np.int64)  # 0: x*, 1: x'*, -1: not yet assigned
    for i in range(n):
        held = side[nbrs[starts[i]:starts[i + 1]]]
        n1, n2 = np.count_nonzero(held == 0), np.count_nonzero(held == 1)
        side[i] = 0 if n2 >= n1 else 1
    return np.where(side == 0, k1, k2).astype(np.int64)
