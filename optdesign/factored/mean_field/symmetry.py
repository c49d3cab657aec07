"""Automorphisms of a factored structure (the K_i and the factor scopes) and the orbits of agents they generate.

A permutation sigma of the agents is an automorphism when K_{sigma(i)} = K_i and it maps the multiset of scopes
(as sets) onto itself. Agents in one orbit of the group the automorphisms generate can share their mean-field
allocation without loss (derivation: the *Notes* page of the documentation, section "Symmetry reduction of the
mean-field program"). A ring, a torus or a complete graph with one K is a single orbit; a star has two.

Generators are proposed from the structure -- agents that are twins (swapping them maps every scope they touch
onto a scope) and the rotation of a cycle -- or given by the caller, and every one is checked before it is used,
so a proposal can only make the reduction weaker, never wrong.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ...errors import InvalidInputError
from ...runtime.deadline import check_budget
from ..inference.elimination import interaction_graph

__all__ = ["Structure", "agent_orbits", "cycle_rotation", "twin_swaps"]

# the enclosing time budget is checked every this many agents
CHECK_EVERY = 1024


class Structure:
    """The K_i and the factor scopes of a factored instance, with the checks that permutations respect them.

    Attributes: ``n_actions`` (int64 array), ``scopes`` (each as a sorted tuple) and ``touching`` (per agent, the
    factors whose scope holds it).

    Parameters
    ----------
    n_actions : sequence of int
        K_i for every agent.
    scopes : sequence of sequence of int
        The factor scopes (their order within a scope does not matter here).
    """

    def __init__(self, n_actions: Sequence[int], scopes: Sequence[Sequence[int]]):
        self.n_actions = np.asarray(n_actions, dtype=np.int64)
        self.scopes = [tuple(sorted(int(i) for i in s)) for s in scopes]
        self.touching: list[list[int]] = [[] for _ in range(self.n_actions.size)]
        for e, s in enumerate(self.scopes):
            for i in s:
                self.touching[i].append(e)
        self._counts = Counter(self.scopes)

    @property
    def n_agents(self) -> int:
        """N, the number of agents."""
        return int(self.n_actions.size)

    def is_automorphism(self, perm: np.ndarray) -> bool:
        """True when ``perm`` (agent i -> perm[i]) preserves the K_i and the multiset of scopes.

        Parameters
        ----------
        perm : numpy.ndarray of int, shape (N,)
            The candidate permutation; anything that is not a permutation of 0..N-1 gives False.

        Returns
        -------
        bool
            Whether ``perm`` is an automorphism of the structure.
        """
        if perm.shape != (self.n_agents,) or not np.array_equal(np.sort(perm), np.arange(self.n_agents)):
            return False
        if not np.array_equal(self.n_actions[perm], self.n_actions):
            return False
        return Counter(tuple(sorted(int(perm[i]) for i in s)) for s in self.scopes) == self._counts

    def swap_is_automorphism(self, i: int, j: int) -> bool:
        """The transposition (i j), checked on the factors touching i or j only (the others are fixed).

        Parameters
        ----------
        i, j : int
            The two agents swapped.

        Returns
        -------
        bool
            Whether swapping i and j is an automorphism.
        """
        if self.n_actions[i] != self.n_actions[j]:
            return False
        swap = {i: j, j: i}
        touched = sorted(set(self.touching[i]) | set(self.touching[j]))
        before = Counter(self.scopes[e] for e in touched)
        after = Counter(tuple(sorted(swap.get(a, a) for a in self.scopes[e])) for e in touched)
        return before == after



def twin_swaps(structure: Structure) -> list[tuple[int, int]]:
    """Transpositions of agents with the same K and the same factors up to the swap (e.g. the leaves of a star,
    the agents of a complete graph), each checked; agents are grouped by their open and closed neighbourhoods.

    Parameters
    ----------
    structure : Structure
        The K_i and scopes.

    Returns
    -------
    list of (int, int)
        Checked transpositions (first member of a group, other member); they generate the twin symmetries found.

    Raises
    ------
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out.
    """
    groups: dict = defaultdict(list)
    for i in range(structure.n_agents):
        if i % CHECK_EVERY == 0:
            check_budget("the search for twin agents")
        scopes = [structure.scopes[e] for e in structure.touching[i]]
        open_ = tuple(sorted(tuple(a for a in s if a != i) for s in scopes))
        closed = tuple(sorted({a for s in scopes for a in s} | {i}))
        groups["open", int(structure.n_actions[i]), open_].append(i)
        groups["closed", int(structure.n_actions[i]), closed, len(scopes)].append(i)
    swaps = []
    for members in groups.values():
        swaps += [(members[0], j) for j in members[1:] if structure.swap_is_automorphism(members[0], j)]
    return swaps


def cycle_rotation(structure: Structure) -> np.ndarray | None:
    """The rotation of the agents along their cycle when the interaction graph is one cycle and it is an
    automorphism (every scope is then an edge of the cycle or a single agent), else None.

    Parameters
    ----------
    structure : Structure
        The K_i and scopes.

    Returns
    -------
    numpy.ndarray of int64, shape (N,), or None
        The rotation (agent i -> perm[i]) one step along the cycle starting at agent 0, if it is an automorphism.
    """
    g = interaction_graph(structure.n_agents, structure.scopes)
    n = structure.n_agents
    if n < 3 or any(d != 2 for _, d in g.degree()) or not nx.is_connected(g):
        return None
    order = [0]
    previous, current = None, 0
    for _ in range(n - 1):
        current, previous = next(j for j in g.neighbors(current) if j != previous), current
        order.append(current)
    perm = np.empty(n, dtype=np.int64)
    perm[order] = np.roll(order, -1)
    return perm if structure.is_automorphism(perm) else None


def agent_orbits(n_actions: Sequence[int], scopes: Sequence[Sequence[int]], generators: object = None) -> np.ndarray:
    """Orbit label of every agent (0..r-1, in order of first appearance) under a group of automorphisms.

    ``generators=None`` proposes them from the structure (:func:`twin_swaps`, :func:`cycle_rotation`); otherwise
    it is a sequence of permutations (agent i -> perm[i]), each of which must be an automorphism.

    Parameters
    ----------
    n_actions : sequence of int
        K_i for every agent.
    scopes : sequence of sequence of int
        The factor scopes.
    generators : sequence of sequence of int, optional
        Agent permutations generating the group; None proposes them from the structure.

    Returns
    -------
    numpy.ndarray of int, shape (N,)
        The orbit label of every agent; agents with one label can share their allocation.

    Raises
    ------
    InvalidInputError
        ``generators`` not a sequence of permutations, or one that is not an automorphism.
    """
    structure = Structure(n_actions, scopes)
    n = structure.n_agents
    pairs: list[np.ndarray] = []
    if generators is None:
        swaps = twin_swaps(structure)
        if swaps:
            pairs.append(np.asarray(swaps, dtype=np.int64))
        rotation = cycle_rotation(structure)
        if rotation is not None:
            pairs.append(np.stack([np.arange(n), rotation], axis=1))
    else:
        if isinstance(generators, (str, bytes)) or not hasattr(generators, "__iter__"):
            raise InvalidInputError(f"symmetry must be 'auto', None or a sequence of agent permutations, got "
                                    f"{generators!r}")
        for g, perm in enumerate(generators):
            try:
                perm = np.asarray(perm, dtype=np.int64)
            except (TypeError, ValueError):
                raise InvalidInputError(f"symmetry generator {g} is not a sequence of agent ids") from None
            if not structure.is_automorphism(perm):
                raise InvalidInputError(
                    f"symmetry generator {g} is not an automorphism: it must permute the {n} agents, keep every K_i "
                    "and map the factor scopes onto the factor scopes"
                )
            pairs.append(np.stack([np.arange(n), perm], axis=1))
    edges = np.concatenate(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
    graph = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    return np.argsort(np.argsort(first))[labels]
