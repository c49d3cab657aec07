"""Seeded factor-graph generators: named structures (line, ring, star, grid, edge lists, networkx graphs) with
mean tables drawn from a mean model.

The structures are the named constructors of :class:`~optdesign.factored.FactorGraph`, which inherits
them from :class:`FactorGraphGenerators` (call them as ``FactorGraph.ring(...)``). Every generator checks its
arguments and the size of what it would allocate first, then draws all the tables from one
``numpy.random.default_rng(seed)`` stream, and records how the instance was made in its ``metadata``
(``generator``, ``seed``, ``means``, ``gap``). The mean models:

* ``"uniform"``: every theta_e(b) i.i.d. uniform on [0, 1) (the MF-TaS experiments); gaps shrink quickly as
  the graph grows.
* ``"planted"``: a* drawn uniformly; theta_e(a*_e) = 1 and every other entry uniform on [0, 1), so a* is the
  unique best and every factor that deviates costs a positive amount; the tables are then scaled so that
  Delta_min equals ``gap`` exactly (default 0.1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import networkx as nx
import numpy as np
from numpy.typing import ArrayLike

from ...docstrings import shared_doc
from ...errors import InvalidInputError
from ...validation import as_count
from .checks import (
    _brief,
    as_size,
    check_gap,
    check_generated_size,
    check_scopes,
    scope_arrays,
    table_bound,
)

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

__all__ = ["FactorGraphGenerators", "GeneratorOptions"]

MEAN_MODELS = ("uniform", "planted")


class GeneratorOptions(TypedDict, total=False):
    """The options every generator passes on to the seeded draw (the keys of their ``**kw``), all optional."""

    #: seeds ``numpy.random.default_rng``; None (the default) draws fresh OS entropy
    seed: int | np.integer | None
    #: the mean model, ``"uniform"`` (default) or ``"planted"``
    means: str
    #: the planted Delta_min (planted model only; None means 0.1)
    gap: float | None


# the parameter, return and error descriptions the generators share (substituted by _shared_doc; the placeholders
# sit at the docstrings' indentation, so every line after the first carries the method-level indent)
_DOC = {
    "K": """K : int or sequence of int
            Actions per agent: one count K for every agent, or one K_i per agent (length N).""",
    "kw": """**kw : optional
            The seeded draw, the same keys for every generator: ``seed`` (int or None) seeds
            ``numpy.random.default_rng``, None draws fresh OS entropy; ``means`` is the mean model,
            ``"uniform"`` (default) or ``"planted"`` (:mod:`optdesign.factored.graph.generators`); ``gap`` (float,
            planted model only) is the planted Delta_min, default 0.1.""",
    "returns": """FactorGraph
            The instance, its ``metadata`` recording the generator, ``seed``, ``means`` and ``gap`` (and with
            ``"planted"`` the planted best joint action, ``planted_best``).""",
    "invalid": """InvalidInputError
            Counts below their minimum, a bad K, seed, mean model or gap, an agent in no factor, or an instance
            above the array size limit.""",
}



_shared_doc = shared_doc(_DOC)


class FactorGraphGenerators:
    """The seeded named constructors of :class:`~optdesign.factored.FactorGraph` (a base class:
    call them on FactorGraph, e.g. ``FactorGraph.ring(10, 3, seed=0)``)."""

    metadata: dict[str, Any]  # set by FactorGraph

    @classmethod
    @_shared_doc
    def from_edges(cls, n_agents: int, edges: Sequence[Sequence[int]], K: int | Sequence[int] = 2, *,
                   seed: int | np.integer | None = None, means: str = "uniform", gap: float | None = None,
                   name: str = "graph") -> Self:
        """One factor per edge (i, j) with seeded means (mean models: :mod:`optdesign.factored.graph.generators`).

        Parameters
        ----------
        n_agents : int
            N >= 1, the agents 0..N-1; each must appear in some edge.
        edges : sequence of sequence of int
            The factor scopes, usually pairs (i, j); a longer tuple gives a factor of higher arity.
        %(K)s
        seed : int or None
            Seeds ``numpy.random.default_rng``; None draws fresh OS entropy.
        means : str
            The mean model, ``"uniform"`` or ``"planted"`` (:mod:`optdesign.factored.graph.generators`).
        gap : float, optional
            The planted Delta_min (planted model only; default 0.1).
        name : str
            The generator recorded in ``metadata["generator"]`` and named in size errors.

        Returns
        -------
        %(returns)s

        Raises
        ------
        %(invalid)s Also: a scope that is empty, repeats an agent or names one outside 0..N-1.
        """
        as_count(n_agents, "N")
        n_edges = len(edges) if isinstance(edges, Sequence) and not isinstance(edges, str) else 1
        check_generated_size(n_agents, n_edges, as_size(n_edges) * table_bound(K), f"{name} instance")
        return cls._generate(n_agents, check_scopes(edges, n_agents), K, seed=seed, means=means, gap=gap, name=name)

    @classmethod
    def _generate(cls, n_agents: int, scopes: Sequence[tuple[int, ...]], K: int | Sequence[int], *,
                  seed: int | np.integer | None = None, means: str = "uniform", gap: float | None = None,
                  name: str = "graph") -> Self:
        """Seeded means on checked scopes, the generator recorded in the metadata (FactorGraph implements it)."""
        raise NotImplementedError

    @classmethod
    @_shared_doc
    def line(cls, N: int, K: int | Sequence[int] = 2, **kw: Unpack[GeneratorOptions]) -> Self:
        """Agents 0..N-1 with factors (i, i+1).

        Parameters
        ----------
        N : int
            Number of agents, at least 2.
        %(K)s
        %(kw)s

        Returns
        -------
        %(returns)s

        Raises
        ------
        %(invalid)s
        """
        as_count(N, "N", minimum=2)
        check_generated_size(N, N - 1, as_size(N - 1) * table_bound(K), "line instance")
        return cls._generate(N, list(zip(range(N - 1), range(1, N), strict=True)), K, name="line", **kw)

    @classmethod
    @_shared_doc
    def ring(cls, N: int, K: int | Sequence[int] = 2, **kw: Unpack[GeneratorOptions]) -> Self:
        """A line closed by the factor (N-1, 0).

        Parameters
        ----------
        N : int
            Number of agents, at least 3.
        %(K)s
        %(kw)s

        Returns
        -------
        %(returns)s

        Raises
        ------
        %(invalid)s

        Examples
        --------
        >>> from optdesign import FactorGraph
        >>> fg = FactorGraph.ring(5, 3, seed=0)
        >>> fg
        FactorGraph(N=5, K=3, factors=5, Abar=45)
        >>> fg.scopes[-1], fg.metadata["generator"]
        ((4, 0), 'ring')
        """
        as_count(N, "N", minimum=3)
        check_generated_size(N, N, as_size(N) * table_bound(K), "ring instance")
        return cls._generate(N, [*zip(range(N - 1), range(1, N), strict=True), (N - 1, 0)], K, name="ring", **kw)

    @classmethod
    @_shared_doc
    def star(cls, N: int, K: int | Sequence[int] = 2, **kw: Unpack[GeneratorOptions]) -> Self:
        """Agent 0 is the hub, with factors (0, i) for i = 1..N-1.

        Parameters
        ----------
        N : int
            Number of agents (the hub and N - 1 leaves), at least 2.
        %(K)s
        %(kw)s

        Returns
        -------
        %(returns)s

        Raises
        ------
        %(invalid)s
        """
        as_count(N, "N", minimum=2)
        check_generated_size(N, N - 1, as_size(N - 1) * table_bound(K), "star instance")
        return cls._generate(N, list(zip(itertools.repeat(0), range(1, N))), K, name="star", **kw)

    @classmethod
    @_shared_doc
    def grid(cls, rows: int, cols: int, K: int | Sequence[int] = 2, **kw: Unpack[GeneratorOptions]) -> Self:
        """A rows x cols lattice; agent r*cols + c, factors between horizontal/vertical neighbours.

        Parameters
        ----------
        rows : int
            Rows of the lattice, at least 1.
        cols : int
            Columns of the lattice, at least 1 (rows x cols >= 2 agents).
        %(K)s
        %(kw)s

        Returns
        -------
        %(returns)s The scopes are the pairs (i, j), i < j, in sorted order.

        Raises
        ------
        %(invalid)s
        """
        as_count(rows, "rows")
        as_count(cols, "cols")
        if rows * cols < 2:
            raise InvalidInputError("a grid needs at least two agents")
        n_edges = rows * (cols - 1) + cols * (rows - 1)
        check_generated_size(rows * cols, n_edges, as_size(n_edges) * table_bound(K), f"grid{rows}x{cols} instance")
        agent = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
        first = np.concatenate([agent[:, :-1].ravel(), agent[:-1].ravel()])  # horizontal, then vertical pairs
        second = np.concatenate([agent[:, 1:].ravel(), agent[1:].ravel()])
        order = np.lexsort((second, first))  # sorted (i, j) pairs, i < j
        scopes = list(zip(first[order].tolist(), second[order].tolist(), strict=True))
        return cls._generate(rows * cols, scopes, K, name=f"grid{rows}x{cols}", **kw)

    @classmethod
    @_shared_doc
    def from_networkx(cls, graph: nx.Graph, K: int | Sequence[int] = 2, **kw: Unpack[GeneratorOptions]) -> Self:
        """One pairwise factor per edge of ``graph``; agents are its nodes in ``list(graph)`` order.

        Parameters
        ----------
        graph : networkx.Graph
            At least two nodes, no self-loops; every node must have an edge. Parallel edges of a multigraph give
            one factor.
        %(K)s
        %(kw)s

        Returns
        -------
        %(returns)s ``metadata["node_labels"]`` holds ``str`` of every node, in agent order.

        Raises
        ------
        %(invalid)s Also: not a networkx graph, fewer than two nodes, self-loops.
        """
        if not isinstance(graph, nx.Graph) or graph.number_of_nodes() < 2:
            raise InvalidInputError("graph must be a networkx graph with at least two nodes")
        if nx.number_of_selfloops(graph):
            raise InvalidInputError("graph has self-loops; a factor cannot repeat an agent")
        index = {v: i for i, v in enumerate(graph.nodes)}
        edges = sorted({tuple(sorted((index[u], index[v]))) for u, v in graph.edges})
        fg = cls.from_edges(len(index), edges, K, name="networkx", **kw)
        fg.metadata["node_labels"] = [str(v) for v in graph.nodes]
        return fg

    @classmethod
    def single_agent(cls, means: ArrayLike) -> Self:
        """A plain multi-armed bandit: one agent, one factor with the given arm means.

        Parameters
        ----------
        means : array_like, shape (K,)
            The K >= 2 arm means, finite reals.

        Returns
        -------
        FactorGraph
            N = 1 agent with K actions, ``metadata["generator"] == "single-agent"``.

        Raises
        ------
        InvalidInputError
            ``means`` not 1-D or with fewer than two entries (the constructor refuses NaN or infinite ones).
        """
        arr = np.asarray(means, dtype=float)
        if arr.ndim != 1 or arr.size < 2:
            raise InvalidInputError("means must be a 1-D array of at least two arm means")
        # cls is FactorGraph (this class is its base), whose constructor takes these arguments
        return cls([arr.size], [((0,), arr)], metadata={"generator": "single-agent"})  # type: ignore[call-arg]



def draw_tables(n_actions: Sequence[int], scopes: Sequence[tuple[int, ...]], rng: np.random.Generator, *,
                means: str = "uniform",
                gap: float | None = None) -> tuple[np.ndarray, list[np.ndarray], np.ndarray | None, float | None]:
    """The seeded tables on checked scopes: (flat draw, tables as views of it, planted a* or None, checked gap).

    All the tables come from one ``rng.random`` draw in factor order (the same numbers as one draw per table),
    then, for the planted model, a* from one ``rng.integers`` draw, its entries set to 1 (scaled by the caller).
    """
    if means not in MEAN_MODELS:
        raise InvalidInputError(f"means must be one of {MEAN_MODELS}, got {means!r}")
    shapes = [tuple(n_actions[i] for i in s) for s in scopes]
    sizes = [math.prod(shape) for shape in shapes]
    abar = as_size(sum(sizes))
    check_generated_size(len(n_actions), len(scopes), abar, "drawing the mean tables")
    # one draw for every table, in factor order: the same numbers as one rng.random(shape) per factor
    flat = rng.random(int(abar))
    ends = itertools.accumulate(sizes)
    tables = [flat[end - size:end].reshape(shape) for end, size, shape in zip(ends, sizes, shapes, strict=True)]
    groups = scope_arrays(scopes)
    covered = np.zeros(len(n_actions), dtype=bool)
    for _, agents in groups:
        covered[agents.ravel()] = True
    if not covered.all():
        raise InvalidInputError(f"agents {_brief(np.flatnonzero(~covered))} appear in no factor")
    if means == "uniform":
        if gap is not None:
            raise InvalidInputError("gap is only meaningful for the planted mean model")
        return flat, tables, None, None
    checked_gap = check_gap(gap)
    ks = np.asarray(n_actions, dtype=np.int64)
    star = rng.integers(ks)  # the same numbers as one rng.integers(K_i) per agent
    offsets = np.concatenate([[0], np.cumsum(sizes[:-1], dtype=np.int64)])
    for factors, agents in groups:  # flat position of each table's entry at a*: C order within the table
        position = np.zeros(len(factors), dtype=np.int64)
        for column in agents.T:
            position = position * ks[column] + star[column]
        flat[offsets[factors] + position] = 1.0
    return flat, tables, star, checked_gap
