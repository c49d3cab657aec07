"""The graphical bilinear bandit environment (Rizk, Thomas, Colin, Laraki, Chevaleyre, ICML 2021).

Setting (their Sec. 3). A graph G = (V, E) with n nodes and m *directed* edges; every
round each node i plays a node arm x^(i) in X (K x d, spanning R^d) and every directed edge (i, j)
reports r = x^(i)T M x^(j) + sigma N(0, 1) = z^T theta + noise, with z = vec(x^(i) x^(j)T) (row-major)
and theta = vec(M) in R^{d^2}. An undirected networkx graph stands for its symmetric directed
version (edge {i, j} gives (i, j) and (j, i), so m = 2 abs(E), as the paper counts); a DiGraph is
taken as given. M need not be symmetric: edge (i, j) always earns x^(i)T M x^(j).

The measurement "arms" for the runner are the K^2 *edge arms* (index k K + k' for the pair (x_k, x_k'));
``best_item`` is the best edge arm z* = argmax_{k, k'} x_k^T M x_k' (what Algorithm 2 identifies); the
best *joint* assignment (NP-hard, Thm 4.1) is found by brute force for K^n <= 10^6
(:func:`~bandits.bilinear.assignments.brute_force_assignment`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import networkx as nx
import numpy as np
import numpy.typing as npt

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.validation import as_arms, unique_argmax

from ..core.environments import as_counts, check_sigma, gaussian_sums
from .assignments import (
    MAX_ASSIGNMENTS,
    BruteForceResult,
    brute_force_assignment,
    check_assignment,
    check_M,
    pair_means,
)
from .graphs import directed_edges

__all__ = ["GraphicalBilinearBandit"]


@dataclass(frozen=True)
class GraphicalBilinearBandit:
    """Graphical bilinear bandit with Gaussian noise (Rizk et al. 2021; module docstring).

    The runner's arms are the K^2 edge arms z_{kK+k'} = vec(x_k x_k'^T) (``Z``, rows of
    :func:`optdesign.edge_arms`), with means x_k^T M x_k' (``means``); ``pull(counts, rng)`` returns
    their reward sums in one Gaussian draw per edge arm. ``edge_counts(assignments)`` turns the node
    assignments of R rounds into those counts, so a batch of rounds costs one bincount. ``n_arms`` is
    K^2 (what ``pull`` takes); ``n_node_arms`` is K. ``best_item`` is the best edge arm, which must
    be unique (a symmetric M whose best pair is off-diagonal ties (k, k') with (k', k): rejected).

    Raises
    ------
    InvalidInputError
        A bad graph (:func:`~bandits.bilinear.graphs.directed_edges`), arms that do not span R^d, M not
        d x d, sigma not positive, or a tie for the best edge arm.
    """

    #: the graph (stored frozen); an undirected edge counts both ways
    graph: nx.Graph
    #: node arms, K x d, one per row, spanning R^d
    X: np.ndarray
    #: the bilinear parameter, d x d (need not be symmetric)
    M: np.ndarray
    #: standard deviation of the Gaussian noise of every edge observation
    sigma: float = 1.0
    #: label in result tables
    name: str = "gbb"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "bilinear"
    #: node labels in ``graph.nodes`` order
    nodes: list[Hashable] = field(init=False)
    #: (m, 2) directed edges as node positions
    edges: npt.NDArray[np.int64] = field(init=False)
    #: (K^2, d^2) edge arms vec(x_k x_k'^T)
    Z: np.ndarray = field(init=False)
    #: vec(M), the linear parameter of the edge arms
    theta: np.ndarray = field(init=False)
    #: (K^2,) edge-arm means x_k^T M x_k'
    means: np.ndarray = field(init=False)
    #: index k K + k' of the best edge arm
    best_item: int = field(init=False)
    #: (K^2,) gaps to the best edge arm
    gaps: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
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
        return int(self.Z.shape[0])

    @property
    def n_node_arms(self) -> int:
        """K, the number of node arms."""
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        """d, the dimension of the node arms."""
        return int(self.X.shape[1])

    @property
    def n_nodes(self) -> int:
        """n, the number of nodes."""
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        """m, the number of directed edges (observations per round)."""
        return int(self.edges.shape[0])

    @property
    def best_pair(self) -> tuple[int, int]:
        """(k, k') of the best edge arm z* = vec(x_k x_k'^T)."""
        return divmod(self.best_item, self.n_node_arms)

    @property
    def gap_min(self) -> float:
        """Smallest gap between the best edge arm and another."""
        return float(np.min(np.delete(self.gaps, self.best_item)))

    def edge_counts(self, assignments: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Counts of every edge arm k K + k' over the rounds of ``assignments`` (R x n, or n for one
        round): edge (i, j) of round r contributes to k K + k' with k = a[r, i], k' = a[r, j].

        Parameters
        ----------
        assignments : array_like of int, shape (R, n) or (n,)
            Arm index of every node (``graph.nodes`` order) in each of R rounds.

        Returns
        -------
        ndarray of int64, shape (K^2,)
            Observations of every edge arm, m R in total (the counts ``pull`` takes).

        Raises
        ------
        InvalidInputError
            Wrong shape, or arm indices that are not integers in 0..K-1.
        """
        a = self._check_assignments(assignments)
        K = self.n_node_arms
        codes = a[:, self.edges[:, 0]] * K + a[:, self.edges[:, 1]]
        return np.bincount(codes.ravel(), minlength=K * K).astype(np.int64)

    def pull(self, counts: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """Reward sums of a batch: ``counts[k K + k']`` observations of edge arm (x_k, x_k').

        Exact in law: the sum of c i.i.d. N(mu, sigma^2) rewards is drawn as c mu + sigma sqrt(c) xi.

        Parameters
        ----------
        counts : array_like of int, shape (K^2,)
            Nonnegative observation counts per edge arm (e.g. from :meth:`edge_counts`).
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        ndarray, shape (K^2,)
            Sum of the rewards of every edge arm (0 where its count is 0).

        Raises
        ------
        InvalidInputError
            Counts of the wrong shape, negative or not integers.
        """
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def play(self, assignments: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """Per-round, per-edge noisy rewards (R x m) of the joint assignments (R x n): the plain
        simulator, one Gaussian per observation (for checks and small runs).

        Parameters
        ----------
        assignments : array_like of int, shape (R, n) or (n,)
            Arm index of every node in each round.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        ndarray, shape (R, m)
            Reward of directed edge j (row j of ``edges``) in round r.

        Raises
        ------
        InvalidInputError
            Wrong shape, or arm indices that are not integers in 0..K-1.
        """
        a = self._check_assignments(assignments)
        R = self.means.reshape(self.n_node_arms, -1)
        mean = R[a[:, self.edges[:, 0]], a[:, self.edges[:, 1]]]
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def reward(self, assignment: npt.ArrayLike) -> float:
        """Global expected reward sum_{(i,j) in E} x_{a_i}^T M x_{a_j} of one joint assignment.

        Parameters
        ----------
        assignment : array_like of int, shape (n,)
            Arm index of every node, in ``graph.nodes`` order.

        Returns
        -------
        float
            The expected global reward r(a).

        Raises
        ------
        InvalidInputError
            Wrong length, or arm indices that are not integers in 0..K-1.
        """
        a = check_assignment(assignment, self.n_nodes, self.n_node_arms)
        return float(self.means.reshape(self.n_node_arms, -1)[a[self.edges[:, 0]], a[self.edges[:, 1]]].sum())

    def best_assignment(self, *, max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
        """The best joint assignment by brute force (:func:`~bandits.bilinear.assignments.brute_force_assignment`).

        Parameters
        ----------
        max_assignments : int
            Largest number K^n of assignments enumerated (default 10^6).

        Returns
        -------
        BruteForceResult
            The best assignment, r* and r_min.

        Raises
        ------
        InstanceTooLargeError
            K^n exceeds ``max_assignments``.
        """
        return brute_force_assignment(self.graph, self.X, self.M, max_assignments=max_assignments)

    def describe(self) -> dict[str, Any]:
        """The instance's summary for result tables (name, K, d, n, m, sigma, gap_min).

        Returns
        -------
        dict
            JSON-ready values keyed by those names.
        """
        return {"name": self.name, "K": self.n_node_arms, "d": self.dim, "n": self.n_nodes, "m": self.n_edges,
                "sigma": self.sigma, "gap_min": self.gap_min}

    def _check_assignments(self, assignments: npt.ArrayLike) -> npt.NDArray[np.int64]:
        a = np.asarray(assignments)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_nodes:
            raise InvalidInputError(
                f"assignments must have shape (R, {self.n_nodes}) (one arm per node), got {a.shape}")
        return check_assignment(a, self.n_nodes, self.n_node_arms)
