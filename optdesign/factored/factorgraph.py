"""Multi-agent bandit instances with a factored mean reward theta(a) = sum_e theta_e(a_e).

N agents, agent i has K_i actions; factor e has a scope S_e (agents, no repeats) and a mean table
theta_e of shape (K_i for i in S_e). Best joint action, m best joint actions and gaps come from
max-sum variable elimination (:mod:`optdesign.factored.inference`), so their cost is exponential only in
the width of the elimination order, never in N.

JSON format (``FORMAT``, version ``FORMAT_VERSION``)::

    {"format": "optdesign.factorgraph", "version": 1,
     "n_actions": [K_0, ..., K_{N-1}],
     "factors": [{"scope": [i, j, ...], "means": nested list of shape (K_i, K_j, ...)}, ...],
     "metadata": {...free-form: generator, seed, ...}}
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.sparse as sp

from ..errors import InstanceTooLargeError, InvalidInputError
from ..validation import as_count, count_text
from .construction import (
    as_size,
    broadcast_actions,
    check_actions,
    check_count,
    check_factors,
    check_gap,
    check_generated_size,
    check_metadata,
    check_scopes,
    make_rng,
    scope_arrays,
    table_bound,
)
from .elimination import EliminationPlan
from .inference import MaxSum

FORMAT = "optdesign.factorgraph"
FORMAT_VERSION = 1
# relative tolerance under which two joint actions count as tied for the best
TIE_RTOL = 1e-12
# brute-force helpers (enumerate every joint action) refuse more joint actions than this
ENUMERATION_LIMIT = 2_000_000
MEAN_MODELS = ("uniform", "planted")


class FactorGraph:
    """A factored multi-agent bandit instance: ``n_actions`` K_i and ``factors`` (scope, means).

    Example: ``FactorGraph([2, 3, 2], [((0, 1), T01), ((1, 2), T12)])`` with ``T01`` of shape
    (2, 3) and ``T12`` of shape (3, 2) is a line of three agents.
    """

    def __init__(self, n_actions: Sequence[int], factors: Sequence[tuple[Sequence[int], np.ndarray]],
                 *, metadata: dict | None = None):
        self.n_actions = check_actions(n_actions)
        self.scopes, self.tables = check_factors(self.n_actions, factors)
        self.metadata = check_metadata(metadata)
        self._plans: dict = {}

    @classmethod
    def _from_checked(cls, n_actions: tuple[int, ...], scopes: Sequence[tuple[int, ...]],
                      tables: Sequence[np.ndarray]) -> FactorGraph:
        """An instance from parts checked by the caller (the generators: their own scopes, every agent covered,
        freshly drawn finite tables of the right shapes), without the per-factor checks of ``__init__``."""
        fg = cls.__new__(cls)
        fg.n_actions, fg.scopes, fg.tables = tuple(n_actions), tuple(scopes), tuple(tables)
        fg.metadata = {}
        fg._plans = {}
        return fg

    # ---------------------------------------------------------------------------------------
    # sizes
    @property
    def n_agents(self) -> int:
        return len(self.n_actions)

    @property
    def n_factors(self) -> int:
        return len(self.scopes)

    @property
    def table_sizes(self) -> np.ndarray:
        return np.asarray([t.size for t in self.tables], dtype=np.int64)

    @property
    def abar(self) -> int:
        """A-bar: total number of group actions (sum of the factor table sizes)."""
        return int(self.table_sizes.sum())

    @property
    def n_joint_actions(self) -> int:
        """|A| = prod K_i as an exact Python integer (may be astronomically large)."""
        out = 1
        for k in self.n_actions:
            out *= k
        return out

    @property
    def means(self) -> np.ndarray:
        """All group means in one flat vector (factor by factor, each table in C order)."""
        return np.concatenate([t.ravel() for t in self.tables])

    def __repr__(self) -> str:
        ks = set(self.n_actions)
        k = ks.pop() if len(ks) == 1 else "mixed"
        return f"FactorGraph(N={self.n_agents}, K={k}, factors={self.n_factors}, Abar={self.abar})"

    # ---------------------------------------------------------------------------------------
    # inference
    def plan(self, order="auto") -> EliminationPlan:
        """The elimination plan for ``order`` (cached per order)."""
        try:
            key = order if isinstance(order, str) else tuple(order)
        except TypeError:
            raise InvalidInputError(f"order must be 'auto', a heuristic name or a permutation of the agents, "
                                    f"got {order!r}") from None
        if key not in self._plans:
            self._plans[key] = EliminationPlan(self.n_actions, self.scopes, order)
        return self._plans[key]

    @cached_property
    def _maxsum(self) -> MaxSum:
        return MaxSum(self.plan(), self.means)

    def value(self, actions) -> np.ndarray | float:
        """theta(a) for one joint action (length N) or for each row of an (M, N) array."""
        a = self._check_joint(actions)
        vals = self.means[self.group_indices(a)].sum(axis=1)
        return float(vals[0]) if np.ndim(actions) == 1 else vals

    def group_indices(self, actions) -> np.ndarray:
        """(M, n_factors) positions of each joint action's group actions in :attr:`means`."""
        return self.plan().group_indices(self._check_joint(actions))

    def split_tables(self, flat) -> list[np.ndarray]:
        """Split a flat vector laid out like :attr:`means` into one array per factor (its table's shape)."""
        flat = np.asarray(flat)
        if flat.shape != (self.abar,):
            raise InvalidInputError(f"expected a flat vector of length Abar={self.abar}, got shape {flat.shape}")
        offsets = self.plan().factor_offsets
        return [flat[offsets[e]:offsets[e + 1]].reshape(t.shape) for e, t in enumerate(self.tables)]

    def deviation_matrix(self, actions, *, with_best: bool = False) -> sp.csr_matrix:
        """Sparse (M, Abar) 0/1 matrix, one row per joint action a, over the flat group actions.

        Row a has a one at (e, a_e) for every factor with a_e != a*_e, and with ``with_best`` also
        at (e, a*_e): H @ (1 / wbar) is then sum_{e: a_e != a*_e} 1/wbar_{e,a_e} (regret bound), or
        sum_{e: a_e != a*_e} (1/wbar_{e,a_e} + 1/wbar_{e,a*_e}) (characteristic time).
        """
        idx = self.group_indices(actions)
        star = np.broadcast_to(self.group_indices(self.best_action()), idx.shape)
        dev = idx != star
        rows = np.nonzero(dev)[0]
        cols = idx[dev]
        if with_best:
            rows, cols = np.concatenate([rows, rows]), np.concatenate([cols, star[dev]])
        return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(idx.shape[0], self.abar))

    def best_action(self) -> np.ndarray:
        """a* = argmax_a theta(a) by max-sum; raises InvalidInputError if it is not unique."""
        self.gap_min()  # checks uniqueness
        return self._maxsum.best_action.copy()

    @property
    def best_value(self) -> float:
        return self._maxsum.value

    def gap(self, actions) -> np.ndarray | float:
        """Delta(a) = sum_e (theta_e(a*_e) - theta_e(a_e)), summed factor-wise for accuracy."""
        idx = self.group_indices(actions)
        star = self.group_indices(self._maxsum.best_action)
        vals = (self.means[star] - self.means[idx]).sum(axis=1)
        return float(vals[0]) if np.ndim(actions) == 1 else vals

    def gap_min(self) -> float:
        """Delta_min = theta(a*) - theta(second best); raises if a* is not unique."""
        if "_gap_min" not in self.__dict__:
            best = self.m_best(2, check_unique=False)
            if len(best) < 2:
                raise InvalidInputError("an instance with a single joint action has no gap")
            gap = best[1][1]
            if gap <= TIE_RTOL * max(1.0, float(np.abs(self.means).max()) * self.n_factors):
                raise InvalidInputError(
                    f"the best joint action is not unique: {_brief(best[0][0])} and {_brief(best[1][0])} "
                    f"tie at value {self.best_value:.6g}"
                )
            self.__dict__["_gap_min"] = gap
        return self.__dict__["_gap_min"]

    def m_best(self, m: int, *, check_unique: bool = True) -> list[tuple[np.ndarray, float]]:
        """The m best joint actions with their gaps, a* first (gap 0), in nondecreasing gap.

        Fewer are returned only if the instance has fewer than m joint actions.
        """
        m = as_count(m, "m")
        if check_unique:
            self.gap_min()
        return [(action, gap) for gap, action in itertools.islice(self._maxsum.iter_best(), int(m))]

    def iter_best(self):
        """Iterator over (gap, joint action) in nondecreasing gap (best-first enumeration)."""
        return self._maxsum.iter_best()

    # ---------------------------------------------------------------------------------------
    # brute force (tests and exact methods on small instances)
    def joint_actions(self, limit: int = ENUMERATION_LIMIT) -> np.ndarray:
        """Every joint action as rows of a (prod K_i, N) array (C order); refuses huge instances."""
        if self.n_joint_actions > limit:
            raise InstanceTooLargeError(
                f"{count_text(self.n_joint_actions)} joint actions exceed the enumeration limit {limit}"
            )
        return np.indices(self.n_actions).reshape(self.n_agents, -1).T

    # ---------------------------------------------------------------------------------------
    # JSON
    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "n_actions": list(self.n_actions),
            "factors": [{"scope": list(s), "means": t.tolist()} for s, t in zip(self.scopes, self.tables, strict=True)],
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict) -> FactorGraph:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidInputError(f"not a factor-graph document (expected format {FORMAT!r})")
        if data.get("version") != FORMAT_VERSION:
            raise InvalidInputError(f"unsupported factor-graph format version {data.get('version')!r}")
        try:
            factors = [(f["scope"], f["means"]) for f in data["factors"]]  # checked by the constructor
            return cls(data["n_actions"], factors, metadata=data.get("metadata"))
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"malformed factor-graph document: missing or bad field {exc}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> FactorGraph:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidInputError(f"cannot read factor graph from {path}: {exc}") from None
        return cls.from_dict(data)

    # ---------------------------------------------------------------------------------------
    # generators
    @classmethod
    def from_edges(cls, n_agents: int, edges, K=2, *, seed=None, means: str = "uniform",
                   gap: float | None = None, name: str = "graph") -> FactorGraph:
        """One pairwise factor per edge (i, j) with seeded means (see :func:`draw_means`)."""
        check_count(n_agents, "N", 1)
        n_edges = len(edges) if isinstance(edges, Sequence) and not isinstance(edges, str) else 1
        check_generated_size(n_agents, n_edges, as_size(n_edges) * table_bound(K), f"{name} instance")
        return cls._generate(n_agents, check_scopes(edges, n_agents), K, seed=seed, means=means, gap=gap, name=name)

    @classmethod
    def _generate(cls, n_agents: int, scopes: list[tuple[int, ...]], K, *, seed=None, means: str = "uniform",
                  gap: float | None = None, name: str = "graph") -> FactorGraph:
        """Seeded means on checked scopes (:func:`draw_means`), the generator recorded in the metadata."""
        n_actions = broadcast_actions(K, n_agents)
        rng = make_rng(seed)
        fg = draw_means(n_actions, scopes, rng, means=means, gap=gap)
        fg.metadata.update({"generator": name, "seed": seed, "means": means, "gap": gap})
        return fg

    @classmethod
    def line(cls, N: int, K=2, **kw) -> FactorGraph:
        """Agents 0..N-1 with factors (i, i+1)."""
        check_count(N, "N", 2)
        check_generated_size(N, N - 1, as_size(N - 1) * table_bound(K), "line instance")
        return cls._generate(N, list(zip(range(N - 1), range(1, N), strict=True)), K, name="line", **kw)

    @classmethod
    def ring(cls, N: int, K=2, **kw) -> FactorGraph:
        """A line closed by the factor (N-1, 0)."""
        check_count(N, "N", 3)
        check_generated_size(N, N, as_size(N) * table_bound(K), "ring instance")
        return cls._generate(N, [*zip(range(N - 1), range(1, N), strict=True), (N - 1, 0)], K, name="ring", **kw)

    @classmethod
    def star(cls, N: int, K=2, **kw) -> FactorGraph:
        """Agent 0 is the hub, with factors (0, i) for i = 1..N-1."""
        check_count(N, "N", 2)
        check_generated_size(N, N - 1, as_size(N - 1) * table_bound(K), "star instance")
        return cls._generate(N, list(zip(itertools.repeat(0), range(1, N))), K, name="star", **kw)

    @classmethod
    def grid(cls, rows: int, cols: int, K=2, **kw) -> FactorGraph:
        """A rows x cols lattice; agent r*cols + c, factors between horizontal/vertical neighbours."""
        check_count(rows, "rows", 1)
        check_count(cols, "cols", 1)
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
    def from_networkx(cls, graph: nx.Graph, K=2, **kw) -> FactorGraph:
        """One pairwise factor per edge of ``graph``; agents are its nodes in ``list(graph)`` order."""
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
    def single_agent(cls, means) -> FactorGraph:
        """A plain multi-armed bandit: one agent, one factor with the given arm means."""
        arr = np.asarray(means, dtype=float)
        if arr.ndim != 1 or arr.size < 2:
            raise InvalidInputError("means must be a 1-D array of at least two arm means")
        return cls([arr.size], [((0,), arr)], metadata={"generator": "single-agent"})

    # ---------------------------------------------------------------------------------------
    def _check_joint(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_agents or not np.issubdtype(a.dtype, np.integer):
            raise InvalidInputError(f"joint actions must be integer arrays of length N={self.n_agents}")
        if np.any(a < 0) or np.any(a >= np.asarray(self.n_actions)):
            raise InvalidInputError("joint action out of range: a_i must lie in 0..K_i-1")
        return a


def draw_means(n_actions, scopes, rng: np.random.Generator, *, means: str = "uniform",
               gap: float | None = None) -> FactorGraph:
    """Seeded mean tables on the given scopes.

    * ``"uniform"``: every theta_e(b) i.i.d. uniform on [0, 1) (the MF-TaS experiments).
      Gaps shrink quickly as the graph grows.
    * ``"planted"``: a* drawn uniformly; theta_e(a*_e) = 1 and every other entry uniform on
      [0, 1), so a* is the unique best and every factor that deviates costs a positive amount;
      the tables are then scaled so that Delta_min equals ``gap`` exactly (default 0.1).
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
        return FactorGraph._from_checked(n_actions, scopes, tables)
    gap = check_gap(gap)
    ks = np.asarray(n_actions, dtype=np.int64)
    star = rng.integers(ks)  # the same numbers as one rng.integers(K_i) per agent
    offsets = np.concatenate([[0], np.cumsum(sizes[:-1], dtype=np.int64)])
    for factors, agents in groups:  # flat position of each table's entry at a*: C order within the table
        position = np.zeros(len(factors), dtype=np.int64)
        for column in agents.T:
            position = position * ks[column] + star[column]
        flat[offsets[factors] + position] = 1.0
    fg = FactorGraph._from_checked(n_actions, scopes, tables)
    flat *= gap / fg.gap_min()  # scales every table (views of flat)
    out = FactorGraph._from_checked(n_actions, scopes, tables)
    out.metadata["planted_best"] = star.tolist()
    return out


def _brief(action: np.ndarray, shown: int = 20) -> str:
    """A joint action for a message: its first ``shown`` entries, and how many more there are."""
    head = action[:shown].tolist()
    return str(head) if action.size <= shown else f"{str(head)[:-1]}, ... ({action.size - shown} more)]"
