"""Symbolic variable elimination over a factored function sum_e f_e(a_e).

An :class:`EliminationPlan` fixes an elimination order of the agents and, for every step, the
index arithmetic that max-sum inference (:mod:`.max_sum`) and Factored Constraint
Reduction (:mod:`.constraint_reduction`) share. Step ``l`` eliminates agent ``i_l``: it gathers every
function (original factor or earlier message) whose scope holds ``i_l``, and defines the message

    u_l(z) = max_k  sum_{g in F_l} g(z, i_l = k),     z in prod_{j in Z_l} [K_j],

over the remaining scope ``Z_l`` (sorted agent ids). Its *rows* are the assignments of
``(Z_l, i_l)`` in C order, so row ``r`` has ``z = r // K_{i_l}`` and ``k = r % K_{i_l}``.
The cost of every use is ``sum_l prod_{j in Z_l + i_l} K_j`` rows, i.e. O(N K^{w+1}) with ``w`` the
width of the order (the largest ``|Z_l|``).

Functions are numbered in one flat vector: the factor tables first (factor ``e`` occupies
``factor_offsets[e] : factor_offsets[e+1]``, its table flattened in C order over its scope),
then the messages (message ``l`` at ``message_offsets[l]``, offset by the total table size).
Orders come from :mod:`.orders` (min-fill, min-degree) or from the caller.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp

from ...errors import InstanceTooLargeError, InvalidInputError
from ...runtime.deadline import check_budget
from ...validation import check_array_size
from .orders import _adjacency, _min_degree, interaction_graph, min_degree_order, order_from_heuristic

__all__ = ["EliminationPlan", "EliminationStep", "interaction_graph", "min_degree_order", "order_from_heuristic",
           "shared_plan"]

ORDER_HEURISTICS = ("min-fill", "min-degree")
# structures whose plans shared_plan keeps
SHARED_PLANS = 64
# the enclosing time budget (optdesign.runtime.deadline) is checked every this many steps while the index arrays
# are built
CHECK_EVERY = 64
# one step before its index arrays: (eliminated agent, scope of its message, (scope, flat offset) of every input)
StepSpec = tuple[int, tuple[int, ...], list[tuple[tuple[int, ...], int]]]
# min-fill gives narrower orders but networkx's implementation grows quadratically; beyond this
# many agents "auto" switches to min-degree (measured: min-fill 6.2 s, min-degree 2.4 s on a
# line of 10,000 agents).
MIN_FILL_MAX_AGENTS = 2000
# index entries (rows x inputs) a plan may hold: 4 bytes each (int32; 8 past 2^31 flat entries), so 3e8 is about
# 1.1 GiB (a ring of 10^5 agents with K = 10 needs 3e8); a wider order is refused before anything is allocated
MAX_PLAN_ENTRIES = 300_000_000
# memory per agent and per factor of a plan (the ordering heuristic's graphs, the steps and their small index
# arrays) and of max-sum inference over it, in float64 entries beyond the index arrays: about 1.1 + 1.2 KB per agent,
# measured on rings of 10^5 agents; checked before the ordering heuristic runs
PLAN_AGENT_ENTRIES, PLAN_FACTOR_ENTRIES = 240, 60


@dataclass(frozen=True)
class EliminationStep:
    """One elimination: agent ``variable`` leaves; the message keeps ``scope`` (shape ``shape``).

    ``index`` has one row per assignment of (scope, variable) and one column per input
    function; entries are positions in the flat function vector (factors, then messages).
    """

    #: the agent i_l eliminated at this step
    variable: int
    #: Z_l, the agents the message keeps (sorted ids)
    scope: tuple[int, ...]
    #: (K_j for j in scope), the message's table shape
    shape: tuple[int, ...]
    #: integer array, shape (rows, inputs): row r = (z, k) in C order, z = r // K_{i_l}, k = r % K_{i_l}; int32 when
    #: the flat function vector has fewer than 2^31 entries (half the memory of large plans), else int64
    index: np.ndarray

    @property
    def n_rows(self) -> int:
        """Rows of the step: the assignments of (scope, variable), prod of their K_j."""
        return self.index.shape[0]

    @property
    def message_size(self) -> int:
        """Entries of the message: the assignments of ``scope`` (1 for an empty scope)."""
        return math.prod(int(k) for k in self.shape)


class EliminationPlan:
    """Elimination order and shared index structure for factors with the given scopes.

    ``n_actions[i]`` is K_i; ``scopes[e]`` the agents of factor ``e``; ``order`` is ``"auto"``,
    ``"min-fill"``, ``"min-degree"`` (networkx treewidth heuristics) or an explicit permutation.
    Attributes: ``order`` (the agents in elimination order), ``steps`` (one :class:`EliminationStep` per agent),
    ``factor_offsets`` and ``message_offsets`` (positions in the flat function vector), ``roots`` (the steps
    whose message has an empty scope, one per connected component), ``width`` and ``n_rows``.

    Parameters
    ----------
    n_actions : sequence of int
        K_i for every agent (the caller checks them).
    scopes : sequence of sequence of int
        The agents of every factor, in the order of its table's axes.
    order : str or sequence of int
        ``"auto"`` (min-fill up to ``MIN_FILL_MAX_AGENTS`` agents, then min-degree), ``"min-fill"``,
        ``"min-degree"``, or a permutation of 0..N-1.

    Raises
    ------
    InvalidInputError
        An unknown heuristic or an order that is not a permutation of the agents.
    InstanceTooLargeError
        The order needs more than ``MAX_PLAN_ENTRIES`` index entries, or the plan for N agents exceeds the
        array size limit.
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out while the index arrays were built.
    """

    def __init__(self, n_actions: Sequence[int], scopes: Sequence[Sequence[int]], order: str | Sequence[int] = "auto"):
        n = len(n_actions)
        check_array_size(PLAN_AGENT_ENTRIES * float(n) + PLAN_FACTOR_ENTRIES * float(len(scopes)),
                         f"an elimination plan and max-sum inference over N = {n} agents and {len(scopes)} factors",
                         instead="use fewer agents")
        self.n_actions = tuple(int(k) for k in n_actions)
        self.scopes = tuple(tuple(int(i) for i in s) for s in scopes)
        sizes = [math.prod(self.n_actions[i] for i in s) for s in self.scopes]
        self.factor_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._by_shape: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] | None = None
        self.order = self._resolve_order(order)

        specs, message_offsets, entries, next_offset = self._symbolic_pass()
        if entries > MAX_PLAN_ENTRIES:
            widest = max(len(scope) for _, scope, _ in specs) + 1
            raise InstanceTooLargeError(
                f"variable elimination along this order needs {entries:.2e} index entries (limit "
                f"{MAX_PLAN_ENTRIES:.1e}, about {MAX_PLAN_ENTRIES * 8 / 2**30:.1f} GiB): the interaction graph is "
                f"too wide (a step joins {widest} agents) or too large for exact elimination"
            )
        local: dict[tuple, np.ndarray] = {}  # index pattern of an input within a step, shared by equal steps
        self._index_dtype = np.int32 if next_offset < 2**31 else np.int64
        steps = []
        for n, (var, scope, step_inputs) in enumerate(specs):
            if n % CHECK_EVERY == 0:
                check_budget("the construction of an elimination plan")
            steps.append(self._step(var, scope, step_inputs, local))
        self.steps = tuple(steps)
        self.message_offsets = np.asarray(message_offsets, dtype=np.int64)
        self.n_functions_flat = next_offset
        # messages with an empty scope are never consumed: their sum is the maximum
        self.roots = tuple(n for n, s in enumerate(steps) if not s.scope)
        self.width = max((len(s.scope) for s in steps), default=0)
        self.n_rows = int(sum(s.n_rows for s in steps))

    def _symbolic_pass(self) -> tuple[list[StepSpec], list[int], int, int]:
        """Scopes, inputs and offsets of every step along ``self.order``, the message offsets, the number of index
        entries and the flat size: what the plan needs, computed before anything is allocated (so that an order
        too wide is refused first)."""
        n = self.n_agents
        functions: list[tuple[int, ...]] = list(self.scopes)  # scope of every function so far
        offsets = list(self.factor_offsets[:-1])
        holders: list[set[int]] = [set() for _ in range(n)]  # live functions per agent
        for f, s in enumerate(self.scopes):
            for i in s:
                holders[i].add(f)
        next_offset = int(self.factor_offsets[-1])
        specs: list[StepSpec] = []
        message_offsets: list[int] = []
        entries = 0
        for n_done, var in enumerate(self.order):
            if n_done % (16 * CHECK_EVERY) == 0:
                check_budget("the construction of an elimination plan")
            inputs = sorted(holders[var])
            scope = tuple(sorted({j for f in inputs for j in functions[f]} - {var}))
            entries += math.prod(self.n_actions[j] for j in (*scope, var)) * max(len(inputs), 1)
            specs.append((var, scope, [(functions[f], offsets[f]) for f in inputs]))
            for f in inputs:
                for j in functions[f]:
                    holders[j].discard(f)
            new = len(functions)
            functions.append(scope)
            offsets.append(next_offset)
            message_offsets.append(next_offset)
            for j in scope:
                holders[j].add(new)
            next_offset += math.prod(self.n_actions[j] for j in scope)
        return specs, message_offsets, entries, next_offset

    # ----------------------------------------------------------------------------------------
    @property
    def n_agents(self) -> int:
        """N, the number of agents."""
        return len(self.n_actions)

    @property
    def table_size(self) -> int:
        """Total size of the factor tables (the paper's A-bar)."""
        return int(self.factor_offsets[-1])

    @property
    def n_messages_flat(self) -> int:
        """Total size of the messages (their entries follow the tables in the flat function vector)."""
        return self.n_functions_flat - self.table_size

    def group_indices(self, patterns: np.ndarray) -> np.ndarray:
        """(M, n_factors) flat positions of the group actions a_e of each joint action (rows of ``patterns``).

        Parameters
        ----------
        patterns : numpy.ndarray of int, shape (M, N)
            Joint actions, one per row, a_i in 0..K_i-1 (not checked here; ``FactorGraph.group_indices`` checks).

        Returns
        -------
        numpy.ndarray of int64, shape (M, n_factors)
            Entry (m, e) is ``factor_offsets[e]`` plus the C-order position of a_e in factor e's table.
        """
        out = np.empty((patterns.shape[0], len(self.scopes)), dtype=np.int64)
        for shape, (factors, agents) in self._factors_by_shape().items():
            strides = np.asarray([math.prod(shape[p + 1:]) for p in range(len(shape))], dtype=np.int64)
            out[:, factors] = self.factor_offsets[factors] + patterns[:, agents] @ strides
        return out

    def _factors_by_shape(self) -> dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]]:
        """Factors grouped by table shape: per shape, (factor ids, their agents as an (n, scope length) array), for
        index arithmetic over many factors at once (computed once per plan)."""
        if self._by_shape is None:
            groups: dict[tuple[int, ...], list[int]] = {}
            for e, scope in enumerate(self.scopes):
                groups.setdefault(tuple(self.n_actions[i] for i in scope), []).append(e)
            self._by_shape = {shape: (np.asarray(es, dtype=np.int64),
                                      np.asarray([self.scopes[e] for e in es], dtype=np.int64).reshape(len(es), -1))
                              for shape, es in groups.items()}
        return self._by_shape

    def group_selection(self) -> sp.csr_matrix:
        """P with (P log v)_{e,b} = sum_{i in S_e} log v_{i,b_i}: one row per group action, one column per
        (agent, action), agents' actions stacked in agent order.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (table_size, sum K_i)
            0/1 entries, one per agent of each group action's factor.
        """
        agent_offsets = np.concatenate([[0], np.cumsum(self.n_actions)]).astype(np.int64)
        rows, cols = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for shape, (factors, agents) in self._factors_by_shape().items():
            grid = np.indices(shape).reshape(len(shape), -1)
            r = (self.factor_offsets[factors][:, None] + np.arange(grid.shape[1])).ravel()
            for p in range(len(shape)):
                rows.append(r)
                cols.append((agent_offsets[agents[:, p]][:, None] + grid[p]).ravel())
        rows_a, cols_a = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(rows_a.size), (rows_a, cols_a)), shape=(self.table_size, int(agent_offsets[-1])))

    def group_sums(self, x: np.ndarray) -> np.ndarray:
        """sum_{i in S_e} x_{i,b_i} for every group action (e, b): ``group_selection() @ x`` without the matrix.

        Parameters
        ----------
        x : numpy.ndarray, shape (sum K_i,)
            One value per (agent, action), agents' actions stacked in agent order.

        Returns
        -------
        numpy.ndarray, shape (table_size,)
            The sums, flat over the factor tables.
        """
        agent_offsets = np.concatenate([[0], np.cumsum(self.n_actions)]).astype(np.int64)
        out = np.zeros(self.table_size)
        for shape, (factors, agents) in self._factors_by_shape().items():
            grid = np.indices(shape).reshape(len(shape), -1)
            rows = self.factor_offsets[factors][:, None] + np.arange(grid.shape[1])
            for p in range(len(shape)):
                out[rows] += x[agent_offsets[agents[:, p]][:, None] + grid[p]]
        return out

    def interaction_graph(self) -> nx.Graph:
        """Agents as nodes, an edge between agents that share a factor.

        Returns
        -------
        networkx.Graph
            :func:`interaction_graph` of the plan's scopes.
        """
        return interaction_graph(self.n_agents, self.scopes)

    def _resolve_order(self, order: str | Sequence[int]) -> tuple[int, ...]:
        n = self.n_agents
        if isinstance(order, str):
            if order == "auto":
                order = "min-fill" if n <= MIN_FILL_MAX_AGENTS else "min-degree"
            if order not in ORDER_HEURISTICS:
                raise InvalidInputError(
                    f"order must be 'auto', one of {ORDER_HEURISTICS} or a permutation, got {order!r}"
                )
            if order == "min-degree":  # adjacency read off the scopes: no networkx graph for 10^5 agents
                return _min_degree(_adjacency(n, self.scopes))
            return order_from_heuristic(self.interaction_graph(), order)
        try:
            perm = tuple(int(i) for i in order)
        except (TypeError, ValueError):
            raise InvalidInputError("order must be a heuristic name or a sequence of agent ids") from None
        if sorted(perm) != list(range(n)):
            raise InvalidInputError(f"order must be a permutation of 0..{n - 1}")
        return perm

    def _step(self, var: int, scope: tuple[int, ...], inputs: list[tuple[tuple[int, ...], int]],
              local: dict[tuple, np.ndarray]) -> EliminationStep:
        """Row index arrays: for every assignment of (scope, var), the input functions' entries.

        ``local`` caches the position pattern of an input in the rows by (step shape, input axes): every step of a
        chain or ring has the same few patterns, so long plans pay the index arithmetic once per pattern."""
        full = (*scope, var)
        shape = tuple(self.n_actions[j] for j in full)
        n_rows = math.prod(shape)
        position = {j: p for p, j in enumerate(full)}
        index = np.empty((n_rows, len(inputs)), dtype=self._index_dtype)
        for c, (fscope, offset) in enumerate(inputs):
            key = (shape, tuple(position[j] for j in fscope))
            pattern = local.get(key)
            if pattern is None:
                grid = np.indices(shape).reshape(len(full), n_rows)  # row r -> assignment of `full`
                pattern = np.ravel_multi_index(tuple(grid[p] for p in key[1]),
                                               tuple(shape[p] for p in key[1])).astype(self._index_dtype)
                local[key] = pattern
            np.add(pattern, offset, out=index[:, c])
        return EliminationStep(var, scope, shape[:-1], index)


@functools.lru_cache(maxsize=SHARED_PLANS)
def shared_plan(n_actions: tuple[int, ...], scopes: tuple[tuple[int, ...], ...],
                order: str | tuple[int, ...] = "auto") -> EliminationPlan:
    """The plan of a structure, built once and shared by every instance of it (a plan reads no means: a bandit's
    plug-in estimates, one factor graph per re-solve, all use the same).

    Parameters
    ----------
    n_actions : tuple of int
        K_i for every agent.
    scopes : tuple of tuple of int
        The agents of every factor.
    order : str or tuple of int
        As for :class:`EliminationPlan`.

    Returns
    -------
    EliminationPlan
        The plan, the same object for equal arguments (the last ``SHARED_PLANS`` structures are kept).
    """
    return EliminationPlan(n_actions, scopes, order)
