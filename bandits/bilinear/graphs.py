"""Graphs of a graphical bilinear bandit (Rizk et al. 2021, Sec. 2 and 6-7): the directed edge list the
rewards are observed on, and the star, complete, circle and matching graphs of the experiments.

An undirected networkx graph stands for its symmetric directed version (edge {i, j} gives (i, j) and
(j, i), so m = 2 abs(E), as the paper counts); a DiGraph is taken as given.
"""

from __future__ import annotations

from collections.abc import Hashable

import networkx as nx
import numpy as np
import numpy.typing as npt

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.validation import check_choice, check_graph_size

__all__ = ["GRAPHS", "directed_edges", "make_graph"]

#: the graph families of :func:`make_graph` (Rizk et al. Sec. 6-7)
GRAPHS = ("star", "complete", "circle", "matching")


def directed_edges(graph: nx.Graph) -> tuple[list[Hashable], npt.NDArray[np.int64]]:
    """Nodes (in ``graph.nodes`` order) and the m x 2 array of directed edges as node positions.

    An undirected graph contributes both orientations of each edge; a DiGraph its edges as given.
    Self-loops, multigraphs and edgeless graphs are rejected.

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        The graph of the bandit; its node labels may be any hashable values.

    Returns
    -------
    nodes : list
        The node labels in ``graph.nodes`` order (position i is node i of an assignment).
    edges : ndarray of int64, shape (m, 2)
        Directed edges (i, j) as node positions: the undirected edges in ``graph.edges`` order, then
        their reversed copies (m = 2 abs(E)); a DiGraph's edges as given.

    Raises
    ------
    InvalidInputError
        Not a networkx graph, a multigraph, a self-loop, or no edge at all.
    """
    if not isinstance(graph, nx.Graph):
        raise InvalidInputError(f"graph must be a networkx Graph or DiGraph, got {type(graph).__name__}")
    if graph.is_multigraph():
        raise InvalidInputError("graph must be a simple Graph or DiGraph, not a multigraph")
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise InvalidInputError(f"graph must have no self-loops (an edge pairs two distinct nodes); found {loops[:3]}")
    if graph.number_of_edges() == 0:
        raise InvalidInputError("graph has no edges: there is nothing to observe")
    nodes = list(graph.nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    pairs = [(pos[u], pos[v]) for u, v in graph.edges]
    if not graph.is_directed():
        pairs += [(j, i) for i, j in pairs]
    return nodes, np.array(pairs, dtype=np.int64).reshape(-1, 2)


def make_graph(kind: str, m: int) -> nx.Graph:
    """The graphs of Rizk et al. Sec. 6-7 with m directed edges: star (m/2 + 1 nodes), complete
    ((1 + sqrt(4m + 1))/2 nodes), circle (m/2 nodes, at least 3) and matching (m nodes, m/2 pairs).

    Parameters
    ----------
    kind : str
        One of :data:`GRAPHS`: ``"star"``, ``"complete"``, ``"circle"`` or ``"matching"``.
    m : int
        Number of directed edges (both orientations of an undirected edge count): even, n(n - 1) for a
        complete graph, at least 6 for a circle.

    Returns
    -------
    networkx.Graph
        An undirected graph on nodes 0..n-1 (the star's centre is node 0; the matching pairs 2i and 2i + 1).

    Raises
    ------
    InvalidInputError
        An unknown kind, m not an integer >= 2, or an m that the family cannot have.
    InstanceTooLargeError
        A graph whose nodes and edges exceed the array size limit.
    """
    check_choice(kind, "graph", GRAPHS)
    m = as_count(m, "m (number of directed edges)", minimum=2, floats=True)
    nodes = {"star": m / 2 + 1, "complete": (1 + np.sqrt(4.0 * m + 1)) / 2, "circle": m / 2}.get(kind, m)
    check_graph_size(nodes, m / 2 + m / 4, f"{kind} graph with m = {m} directed edges")  # + the m x 2 edge array
    if kind == "complete":
        n = round((1 + np.sqrt(4 * m + 1)) / 2)
        if n * (n - 1) != m:
            raise InvalidInputError(f"a complete graph has m = n(n-1) directed edges (2, 6, 12, 20, ...); got m={m}")
        return nx.complete_graph(n)
    if m % 2:
        raise InvalidInputError(f"a {kind} graph has an even number m of directed edges; got m={m}")
    if kind == "star":
        return nx.star_graph(m // 2)  # centre 0 and m/2 leaves
    if kind == "circle":
        if m < 6:
            raise InvalidInputError(f"a circle needs at least 3 nodes, i.e. m >= 6 directed edges; got m={m}")
        return nx.cycle_graph(m // 2)
    graph = nx.Graph()
    graph.add_edges_from((2 * i, 2 * i + 1) for i in range(m // 2))
    return graph

