"""The graphical bilinear bandit environment (Rizk, Thomas, Colin, Laraki, Chevaleyre, ICML 2021).

Setting (their Sec. 2, spec Sec. 2.1). A graph G = (V, E) with n nodes and m *directed* edges; every
round each node i plays a node arm x^(i) in X (K x d, spanning R^d) and every directed edge (i, j)
reports r = x^(i)T M x^(j) + sigma N(0, 1) = z^T theta + noise, with z = vec(x^(i) x^(j)T) (row-major)
and theta = vec(M) in R^{d^2}. An undirected networkx graph stands for its symmetric directed
version (edge {i, j} gives (i, j) and (j, i), so m = 2 |E|, as the paper counts); a DiGraph is
taken as given. M need not be symmetric: edge (i, j) always earns x^(i)T M x^(j).

The measurement "arms" for the runner are the K^2 *edge arms* (index k K + k' for the pair (x_k, x_k'));
``best_item`` is the best edge arm z* = argmax_{k, k'} x_k^T M x_k' (what Algorithm 2 identifies); the
best *joint* assignment (NP-hard, Thm 4.1) is found by brute force for K^n <= 10^6
(:func:`~bandits.bilinear.assignments.brute_force_assignment`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.validation import as_arms, unique_argmax

from ..environments import as_counts, check_sigma, gaussian_sums
from .assignments import (
    MAX_ASSIGNMENTS,
    BruteForceResult,
    brute_force_assignment,
    check_assignment,
    check_M,
    pair_means,
)
from .graphs import directed_edges


@dataclass(frozen=True)
class GraphicalBilinearBandit:
    """Graphical bilinear bandit with Gaussian noise (Rizk et al. 2021; module docstring).

    The runner's arms are the K^2 edge arms z_{kK+k'} = vec(x_k x_k'^T) (``Z``, rows of
    :func:`optdesign.edge_arms`), with means x_k^T M x_k' (``means``); ``pull(counts, rng)`` returns
    their reward sums in one Gaussian draw per edge arm. ``edge_counts(assignments)`` turns the node
    assignments of R rounds into those counts, so a batch of rounds costs one bincount. ``n_arms`` is
    K^2 (what ``pull`` takes); ``n_node_arms`` is K. ``best_item`` is the best edge arm, which must
    be unique (a symmetric M whose best pair is off-diagonal ties (k, k') with (k', k): rejected).
    """

    graph: nx.Graph
    X: np.ndarray
    M: np.ndarray
    sigma: float = 1.0
    name: str = "gbb"
    nodes: list = field(init=False)
    edges: np.ndarray = field(init=False)
    Z: np.ndarray = field(init=False)
    theta: np.ndarray = field(init=False)
    means: np.ndarray = field(init=False)
    best_item: int = field(init=False)
    gaps: np.ndarray = field(init=False)

    def __post_init__(self):
        nodes, edges = directed_edges(self.graph)
        X = as_arms(self.X, "X")
        M = check_M(self.M, X.shape[1], "M")
        means = pair_means(X, M).ravel()
        best = unique_argmax(means, "edge-arm means x_k^T M x_k'")
        object.__setattr__(self, "graph", nx.freeze(self.graph.copy()))
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "M", M)
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "Z", od.edge_arms(X))
        object.__setattr__(self, "theta", M.ravel().copy())
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "best_item", best)
        object.__setattr__(self, "gaps", means[best] - means)

    @property
    def n_arms(self) -> int:
        """Number of edge arms K^2 (the length of ``pull``'s counts)."""
        return self.Z.shape[0]

    @property
    def n_node_arms(self) -> int:
        return self.X.shape[0]

    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        """m, the number of directed edges (observations per round)."""
        return self.edges.shape[0]

    @property
    def best_pair(self) -> tuple[int, int]:
        """(k, k') of the best edge arm z* = vec(x_k x_k'^T)."""
        return divmod(self.best_item, self.n_node_arms)

    @property
    def gap_min(self) -> float:
        return float(np.min(np.delete(self.gaps, self.best_item)))

    def edge_counts(self, assignments) -> np.ndarray:
        """Counts of every edge arm k K + k' over the rounds of ``assignments`` (R x n, or n for one
        round): edge (i, j) of round r contributes to k K + k' with k = a[r, i], k' = a[r, j]."""
        a = self._check_assignments(assignments)
        K = self.n_node_arms
        codes = a[:, self.edges[:, 0]] * K + a[:, self.edges[:, 1]]
        return np.bincount(codes.ravel(), minlength=K * K).astype(np.int64)

    def pull(self, counts, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch: ``counts[k K + k']`` observations of edge arm (x_k, x_k')."""
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def play(self, assignments, rng: np.random.Generator) -> np.ndarray:
        """Per-round, per-edge noisy rewards (R x m) of the joint assignments (R x n): the plain
        simulator, one Gaussian per observation (for checks and small runs)."""
        a = self._check_assignments(assignments)
        R = self.means.reshape(self.n_node_arms, -1)
        mean = R[a[:, self.edges[:, 0]], a[:, self.edges[:, 1]]]
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def reward(self, assignment) -> float:
        """Global expected reward sum_{(i,j) in E} x_{a_i}^T M x_{a_j} of one joint assignment."""
        a = check_assignment(assignment, self.n_nodes, self.n_node_arms)
        return float(self.means.reshape(self.n_node_arms, -1)[a[self.edges[:, 0]], a[self.edges[:, 1]]].sum())

    def best_assignment(self, *, max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
        """The best joint assignment by brute force (K^n <= ``max_assignments``, else InstanceTooLargeError)."""
        return brute_force_assignment(self.graph, self.X, self.M, max_assignments=max_assignments)

    def describe(self) -> dict:
        return {"name": self.name, "K": self.n_node_arms, "d": self.dim, "n": self.n_nodes, "m": self.n_edges,
                "sigma": self.sigma, "gap_min": self.gap_min}

    def _check_assignments(self, assignments) -> np.ndarray:
        a = np.asarray(assignments)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_nodes:
            raise InvalidInputError(
                f"assignments must have shape (R, {self.n_nodes}) (one arm per node), got {a.shape}")
        return check_assignment(a, self.n_nodes, self.n_node_arms)
