"""Multi-agent bandit instances with a factored mean reward theta(a) = sum_e theta_e(a_e).

N agents, agent i has K_i actions; factor e has a scope S_e (agents, no repeats) and a mean table
theta_e of shape (K_i for i in S_e). Best joint action, m best joint actions and gaps come from
max-sum variable elimination (:mod:`optdesign.factored.inference.max_sum`), so their cost is exponential only in
the width of the elimination order, never in N. FactorGraph inherits its seeded generators (``FactorGraph.ring``
...) from :mod:`.generators` and its JSON format from :mod:`.json_format`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ...errors import InstanceTooLargeError, InvalidInputError
from ...validation import count_text
from ..inference.elimination import EliminationPlan, shared_plan
from .best_actions import FactorGraphBest
from .checks import broadcast_actions, check_actions, check_factors, check_metadata, make_rng
from .generators import FactorGraphGenerators, draw_tables
from .json_format import FactorGraphJSON

__all__ = ["FactorGraph"]

# brute-force helpers (enumerate every joint action) refuse more joint actions than this
ENUMERATION_LIMIT = 2_000_000


class FactorGraph(FactorGraphGenerators, FactorGraphJSON, FactorGraphBest):
    """A factored multi-agent bandit instance: ``n_actions`` K_i and ``factors`` (scope, means).

    Example: ``FactorGraph([2, 3, 2], [((0, 1), T01), ((1, 2), T12)])`` with ``T01`` of shape (2, 3) and ``T12``
    of shape (3, 2) is a line of three agents.

    Parameters
    ----------
    n_actions : sequence of int
        K_i >= 1 for every agent i = 0..N-1 (at least one agent with two actions).
    factors : sequence of (scope, means) pairs
        ``scope`` a tuple of distinct agents, ``means`` the real table theta_e of shape (K_i for i in scope),
        finite with entries of magnitude at most ``MAX_ABS_MEAN`` (1e100); every agent must be in some scope.
    metadata : dict, optional
        Free-form information (generator, seed, ...), copied; written to and read from the JSON format.

    Raises
    ------
    InvalidInputError
        Any of the conditions above violated (the message names the factor and what was expected).
    """

    def __init__(self, n_actions: Sequence[int], factors: Sequence[tuple[Sequence[int], ArrayLike]],
                 *, metadata: dict[str, Any] | None = None) -> None:
        self.n_actions = check_actions(n_actions)
        self.scopes, self.tables = check_factors(self.n_actions, factors)
        self.metadata = check_metadata(metadata)
        self._plans: dict[str | tuple[int, ...], EliminationPlan] = {}

    @classmethod
    def _from_checked(cls, n_actions: Sequence[int], scopes: Sequence[tuple[int, ...]],
                      tables: Sequence[np.ndarray]) -> FactorGraph:
        """An instance from parts checked by the caller (the generators: their own scopes, every agent covered,
        freshly drawn finite tables of the right shapes), without the per-factor checks of ``__init__``."""
        fg = cls.__new__(cls)
        fg.n_actions, fg.scopes, fg.tables = tuple(n_actions), tuple(scopes), tuple(tables)
        fg.metadata = {}
        fg._plans = {}
        return fg

    @classmethod
    def _generate(cls, n_agents: int, scopes: Sequence[tuple[int, ...]], K: int | Sequence[int], *,
                  seed: int | np.integer | None = None, means: str = "uniform", gap: float | None = None,
                  name: str = "graph") -> FactorGraph:
        """Seeded means on checked scopes (:func:`draw_means`), the generator recorded in the metadata."""
        n_actions = broadcast_actions(K, n_agents)
        rng = make_rng(seed)
        fg = draw_means(n_actions, scopes, rng, means=means, gap=gap)
        fg.metadata.update({"generator": name, "seed": seed, "means": means, "gap": gap})
        return fg

    # ---------------------------------------------------------------------------------------
    # sizes
    @property
    def n_agents(self) -> int:
        """N, the number of agents."""
        return len(self.n_actions)

    @property
    def n_factors(self) -> int:
        """The number of factors."""
        return len(self.scopes)

    @property
    def table_sizes(self) -> np.ndarray:
        """Entries of every factor's table (prod of K_i over its scope), an int64 array."""
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
    def plan(self, order: str | Sequence[int] = "auto") -> EliminationPlan:
        """The elimination plan for ``order`` (cached per order).

        Parameters
        ----------
        order : str or sequence of int
            ``"auto"`` (min-fill up to ``MIN_FILL_MAX_AGENTS`` agents, then min-degree), ``"min-fill"``,
            ``"min-degree"``, or a permutation of the agents (the order in which they are eliminated).

        Returns
        -------
        EliminationPlan
            The plan, shared by every later call with the same ``order``, and with every instance of the same
            structure (:func:`~optdesign.factored.inference.elimination.shared_plan`).

        Raises
        ------
        InvalidInputError
            ``order`` neither a heuristic name nor a permutation of 0..N-1.
        """
        try:
            key = order if isinstance(order, str) else tuple(order)
        except TypeError:
            raise InvalidInputError(f"order must be 'auto', a heuristic name or a permutation of the agents, "
                                    f"got {order!r}") from None
        if key not in self._plans:
            self._plans[key] = shared_plan(self.n_actions, self.scopes, key)
        return self._plans[key]

    def value(self, actions: ArrayLike) -> np.ndarray | float:
        """theta(a) for one joint action (length N) or for each row of an (M, N) array.

        Parameters
        ----------
        actions : array_like of int, shape (N,) or (M, N)
            Joint actions, a_i in 0..K_i-1.

        Returns
        -------
        float or numpy.ndarray, shape (M,)
            theta(a), a float for a single joint action.
        """
        a = self._check_joint(actions)
        vals = self.means[self.group_indices(a)].sum(axis=1)
        return float(vals[0]) if np.ndim(actions) == 1 else vals

    def group_indices(self, actions: ArrayLike) -> np.ndarray:
        """(M, n_factors) positions of each joint action's group actions in :attr:`means`.

        Parameters
        ----------
        actions : array_like of int, shape (N,) or (M, N)
            Joint actions, a_i in 0..K_i-1 (one action is one row).

        Returns
        -------
        numpy.ndarray of int64, shape (M, n_factors)
            Entry (m, e) is the flat position of a_e, the restriction of action m to factor e's scope.
        """
        return self.plan().group_indices(self._check_joint(actions))

    def split_tables(self, flat: ArrayLike) -> list[np.ndarray]:
        """Split a flat vector laid out like :attr:`means` into one array per factor (its table's shape).

        Parameters
        ----------
        flat : array_like, shape (Abar,)
            One value per group action, factor by factor (e.g. factor marginals of an allocation).

        Returns
        -------
        list of numpy.ndarray
            Views of ``flat``, one per factor, shaped like its table.

        Raises
        ------
        InvalidInputError
            ``flat`` not of shape (Abar,).
        """
        flat = np.asarray(flat)
        if flat.shape != (self.abar,):
            raise InvalidInputError(f"expected a flat vector of length Abar={self.abar}, got shape {flat.shape}")
        offsets = self.plan().factor_offsets
        return [flat[offsets[e]:offsets[e + 1]].reshape(t.shape) for e, t in enumerate(self.tables)]

    def deviation_matrix(self, actions: ArrayLike, *, with_best: bool = False) -> sp.csr_matrix:
        """Sparse (M, Abar) 0/1 matrix, one row per joint action a, over the flat group actions.

        Row a has a one at (e, a_e) for every factor with a_e != a*_e, and with ``with_best`` also
        at (e, a*_e): H @ (1 / wbar) is then sum_{e: a_e != a*_e} 1/wbar_{e,a_e} (regret bound), or
        sum_{e: a_e != a*_e} (1/wbar_{e,a_e} + 1/wbar_{e,a*_e}) (characteristic time).

        Parameters
        ----------
        actions : array_like of int, shape (N,) or (M, N)
            Joint actions a.
        with_best : bool
            Also mark a*'s group action (e, a*_e) on every deviating factor.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (M, Abar)
            The 0/1 matrix H.
        """
        idx = self.group_indices(actions)
        star = np.broadcast_to(self.group_indices(self.best_action()), idx.shape)
        dev = idx != star
        rows = np.nonzero(dev)[0]
        cols = idx[dev]
        if with_best:
            rows, cols = np.concatenate([rows, rows]), np.concatenate([cols, star[dev]])
        return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(idx.shape[0], self.abar))

    # ---------------------------------------------------------------------------------------
    # brute force (tests and exact methods on small instances)
    def joint_actions(self, limit: int = ENUMERATION_LIMIT) -> np.ndarray:
        """Every joint action as rows of a (prod K_i, N) array (C order); refuses huge instances.

        Parameters
        ----------
        limit : int
            The largest number of joint actions listed.

        Returns
        -------
        numpy.ndarray of int, shape (prod K_i, N)
            Row r is the r-th joint action in C order (the last agent's action varies fastest).

        Raises
        ------
        InstanceTooLargeError
            More than ``limit`` joint actions.
        """
        if self.n_joint_actions > limit:
            raise InstanceTooLargeError(
                f"{count_text(self.n_joint_actions)} joint actions exceed the enumeration limit {limit}"
            )
        rows: np.ndarray = np.indices(self.n_actions).reshape(self.n_agents, -1).T
        return rows

    # ---------------------------------------------------------------------------------------
    def _check_joint(self, actions: ArrayLike) -> np.ndarray:
        a = np.asarray(actions)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_agents or not np.issubdtype(a.dtype, np.integer):
            raise InvalidInputError(f"joint actions must be integer arrays of length N={self.n_agents}")
        if np.any(a < 0) or np.any(a >= np.asarray(self.n_actions)):
            raise InvalidInputError("joint action out of range: a_i must lie in 0..K_i-1")
        return a



def draw_means(n_actions: Sequence[int], scopes: Sequence[tuple[int, ...]], rng: np.random.Generator, *,
               means: str = "uniform", gap: float | None = None) -> FactorGraph:
    """Seeded mean tables on checked scopes (the mean models of :mod:`optdesign.factored.graph.generators`); planted
    tables (a* at 1) are scaled so that Delta_min equals ``gap`` (default 0.1), ``metadata["planted_best"]`` = a*."""
    flat, tables, star, planted_gap = draw_tables(n_actions, scopes, rng, means=means, gap=gap)
    fg = FactorGraph._from_checked(n_actions, scopes, tables)
    if star is None or planted_gap is None:
        return fg
    flat *= planted_gap / fg.gap_min()  # scales every table (views of flat)
    out = FactorGraph._from_checked(n_actions, scopes, tables)
    out.metadata["planted_best"] = star.tolist()
    return out
