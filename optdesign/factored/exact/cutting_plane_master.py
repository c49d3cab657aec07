"""The master of constraint generation: a program with one row per joint action, restricted to a working set.

:class:`CuttingPlaneMaster` holds the working set W of joint actions a != a* and their scaled rows, solves the
master (the program on W: a relaxation) over junction-tree clique tables, evaluates the objective over ALL joint
actions at an iterate by exact separation (:func:`optdesign.factored.exact.separation.most_violated`) and gives the two
weak-duality lower bounds; :func:`optdesign.factored.exact.constraint_generation.generate` runs the loop on it. Exact T*
(``CharTimeMaster`` in :mod:`optdesign.factored.exact.generated`) and the regret bound (``RegretMaster`` in
:mod:`optdesign.factored.regret.lower_bound`) are its two subclasses.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ...errors import InstanceTooLargeError
from ...runtime.solvers import SolveInfo
from ..graph.factor_graph import FactorGraph
from ..inference.elimination import EliminationPlan
from ..inference.marginals import marginal_maps
from .rescaling import Reference, ScaledAllocation
from .separation import MAX_STATES, Separation, most_violated
from .working_set import SeenJointActions, check_working_set

__all__ = ["CuttingPlaneMaster", "Iterate"]

# the top-k separation's state budget; past it, violated joint actions come from this upper share of the range
# [master value, exact maximum] by default (the exact maximum itself gets the full budget, separation.MAX_STATES)
TOP_K_STATES = 2_000_000
TOP_SHARE = 0.5


@functools.lru_cache(maxsize=16)
def shared_marginal_maps(plan: EliminationPlan) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """:func:`~optdesign.factored.inference.marginals.marginal_maps` once per plan (plans are shared per structure,
    so a bandit's re-solves on its plug-in estimates build them once); the masters only read them."""
    return marginal_maps(plan)


@dataclass(frozen=True)
class Iterate:
    """One master solve: raw clique tables ``y`` (the next reference), exactly consistent ones ``exact`` with factor
    marginals ``wbar``, multipliers ``lam`` of the working-set rows (summing to one), the solver's optimum ``z``."""

    #: The solver's clique tables (or counts), flat over the junction tree's cliques: the next pass's centre.
    y: np.ndarray
    #: The same repaired to exactly consistent tables (:func:`~.marginals.consistent_clique_weights`).
    exact: np.ndarray
    #: The factor marginals of ``exact``, flat over the factor tables (``fg.abar`` entries).
    wbar: np.ndarray
    #: The rows' multipliers as a distribution over the working set (in the order rows were added).
    lam: np.ndarray
    #: The master's optimum, in the units of the program's value.
    z: float
    #: Solver, status and time of the solve.
    info: SolveInfo


class CuttingPlaneMaster(ABC):
    """A program with one row per joint action a != a*, restricted to a working set W (module docstring).

    Subclasses give the scaled rows of joint actions, the master solve, the value over all joint actions at an
    iterate (with the most violated joint actions) and the two weak-duality bounds. W starts empty (:meth:`add`).

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique. Its elimination plan (default order) defines the clique tables.
    solver : str, optional
        Conic solver of the master (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.

    Raises
    ------
    InvalidInputError
        A tie for the best joint action (from ``fg.gap_min``).
    """

    #: Past the top-k state budget, violated joint actions come from [threshold + top_share (max - threshold), max].
    top_share: float = TOP_SHARE
    #: ... and k is divided by this while that search still overflows.
    top_shrink: int = 10

    def __init__(self, fg: FactorGraph, solver: str | None):
        check_working_set(fg)  # W holds dense rows of N agents: refused before the plan is built
        self.fg, self.solver = fg, solver
        self.plan = fg.plan()
        self.F, self.C, self.R = shared_marginal_maps(self.plan)
        self.best = fg.best_action()
        self.star = fg.group_indices(self.best)[0]
        self.dmin = fg.gap_min()  # raises if a* is not unique
        factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
        self.gap_terms = fg.means[self.star][factor_of] - fg.means  # Delta(a) = sum_e gap_terms[a_e]
        self.factor_of = factor_of
        self.actions = np.zeros((0, fg.n_agents), dtype=np.int64)
        self.seen = SeenJointActions(fg.n_actions)  # the joint actions of W, without a copy of their rows
        self.rows = sp.csr_matrix((0, self.n_columns))

    @property
    def size(self) -> int:
        """Scalars of the master at the current working set: clique tables, their inverse marginals, one row each.

        Returns
        -------
        int
            plan rows + columns + working-set rows (the size :func:`optdesign.runtime.solvers.setup_seconds` reads).
        """
        return int(self.plan.n_rows + self.n_columns + self.actions.shape[0])

    @property
    def n_columns(self) -> int:
        """Columns of the rows: one per entry of the factor tables (``fg.abar``)."""
        return self.fg.abar

    @abstractmethod
    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        """One row per joint action, in the units the master's constraints use.

        Parameters
        ----------
        actions : numpy.ndarray, shape (M, N)
            Joint actions other than a*.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (M, n_columns)
            Their rows, scaled as the master's constraints use them.
        """

    @abstractmethod
    def solve(self, reference: Reference) -> Iterate:
        """Solve the master on W centred on ``reference``.

        Parameters
        ----------
        reference : Reference
            The centre of the solve's scaled allocation (:mod:`optdesign.factored.exact.rescaling`).

        Returns
        -------
        Iterate
            The solver's point, its exact repair, the rows' multipliers and the master's optimum.
        """

    @abstractmethod
    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        """(objective at ``it.wbar`` over all joint actions, the separation with the k most violated).

        Parameters
        ----------
        it : Iterate
            The master's solution.
        k : int
            How many of the most violated joint actions the separation returns.

        Returns
        -------
        value : float
            The program's objective at ``it.exact``, over all joint actions (an upper bound on the optimum).
        separation : Separation
            The separation, whose ``actions`` are the k most violated joint actions.
        """

    @abstractmethod
    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """Cauchy–Schwarz lower bound with s = c / wbar^2.

        Parameters
        ----------
        c : numpy.ndarray
            The multipliers' combination of the scaled rows, sum_a lambda_a (row of a), over the columns.
        wbar : numpy.ndarray
            Factor marginals at which s is taken.

        Returns
        -------
        float
            A lower bound on the optimum over all joint actions (0 when the bound is void).
        """

    @abstractmethod
    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        """The same bound at the minimiser of sum c / w (one smooth solve).

        Parameters
        ----------
        c : numpy.ndarray
            As in :meth:`dual_bound`.
        reference : Reference
            The centre of that solve.

        Returns
        -------
        float
            :meth:`dual_bound` at the minimiser's marginals, where it is tight.
        """

    def start(self) -> Reference:
        """Reference of the first solve: uniform clique tables.

        Returns
        -------
        Reference
            Centred on the uniform distribution of every clique table.
        """
        sizes = np.asarray([step.n_rows for step in self.plan.steps])
        return self.reference(1.0 / np.repeat(sizes, sizes))

    def reference(self, y: np.ndarray) -> Reference:
        """The reference centred on clique tables ``y``.

        Parameters
        ----------
        y : numpy.ndarray
            Clique tables (an iterate's ``y``).

        Returns
        -------
        Reference
            ``y`` and its factor marginals, floored.
        """
        return Reference.around(y, self.F)

    def add(self, actions: np.ndarray) -> int:
        """Add the joint actions not yet in W; returns how many were new.

        Parameters
        ----------
        actions : numpy.ndarray, shape (M, N)
            Joint actions other than a*; those already in W are skipped, duplicates added once.

        Returns
        -------
        int
            The number of joint actions added (0: W is complete for them).
        """
        actions = self.seen.add(np.asarray(actions, dtype=np.int64).reshape(-1, self.fg.n_agents))
        if not actions.shape[0]:
            return 0
        self.actions = np.vstack([self.actions, actions])
        self.rows = sp.vstack([self.rows, self.scaled_rows(actions)]).tocsr()
        return int(actions.shape[0])

    def violated(self, h: np.ndarray, k: int, threshold: float) -> Separation:
        """Exact separation of H(a) / Delta(a)^2 for per-entry costs ``h`` and the k most violated joint actions.

        Near-ties just above ``threshold`` can make the top-k search explode (ring N = 50, K = 10: 60-76 s per
        call). So the top-k search gets a small state budget; past it, the exact maximum is found alone (k = 1,
        the strongest pruning) and the k actions are taken from the upper part of the violation range,
        [threshold + top_share (max - threshold), max], with k / s, k / s^2, ..., 1 (s = ``top_shrink``) if that
        still overflows, starting at k / s when ``top_share`` is 0 (the range whose top-k search overflowed).

        Parameters
        ----------
        h : numpy.ndarray
            Nonnegative costs h_e(b), flat over the factor tables (H(a) = sum_e h_e(a_e)).
        k : int
            How many joint actions to return.
        threshold : float
            Only joint actions with a ratio at least this are returned (the master's value: violated rows).

        Returns
        -------
        Separation
            The exact maximum (when ``exact``) and up to k violated joint actions, W's last k as candidates.
        """
        def run(k: int, floor: float, max_states: int = MAX_STATES) -> Separation:
            return most_violated(self.plan, h, self.gap_terms, delta_min=self.dmin, k=k, threshold=floor,
                                 candidates=self.actions[-k:], max_states=max_states)
        if k > 1:
            try:
                return run(k, threshold, TOP_K_STATES)
            except InstanceTooLargeError:
                pass
        best = run(1, threshold)
        if k == 1 or not best.exact or best.max_ratio <= threshold:
            return best
        floor = threshold + self.top_share * (best.max_ratio - threshold)
        if floor <= threshold:  # run(k, threshold) overflowed above
            k = max(1, k // self.top_shrink)
        while k > 1:
            try:
                return replace(run(k, floor, TOP_K_STATES), max_ratio=best.max_ratio, exact=best.exact,
                               upper_bound=best.upper_bound)
            except InstanceTooLargeError:
                k = max(1, k // self.top_shrink)
        return best

    def support(self, it: Iterate) -> np.ndarray:
        """The joint actions whose rows carry ``it``: positive multipliers (W only grows, so rows keep their index).

        Parameters
        ----------
        it : Iterate
            A solution of this master.

        Returns
        -------
        numpy.ndarray, shape (M, N)
            The joint actions whose multiplier exceeds 1e-9 of the largest (a warm start's working set).
        """
        return self.actions[:it.lam.size][it.lam > 1e-9 * it.lam.max()]

    def multipliers(self, dual: ArrayLike | None) -> np.ndarray:
        """The rows' multipliers as a distribution over W (uniform if the solver gave none).

        Parameters
        ----------
        dual : array_like, optional
            The solver's dual values of the working-set rows (negative rounding is clipped to 0).

        Returns
        -------
        numpy.ndarray, shape (len(W),)
            Nonnegative weights summing to one.
        """
        lam = np.clip(np.asarray(dual if dual is not None else np.zeros(0), dtype=float).ravel(), 0.0, None)
        if lam.size != self.actions.shape[0] or lam.sum() <= 0:
            return np.full(self.actions.shape[0], 1.0 / max(self.actions.shape[0], 1))
        return lam / lam.sum()

    def polytope(self, alloc: ScaledAllocation) -> list:
        """Clique tables of one distribution: one unit of mass per root, consistent on separators.

        Parameters
        ----------
        alloc : ScaledAllocation
            The master's scaled clique tables.

        Returns
        -------
        list of cvxpy.Constraint
            Its cones, the unit masses and the separator consistency rows.
        """
        constraints = [*alloc.constraints, alloc.linear(self.R) == 1]
        if self.C.shape[0]:
            constraints.append(alloc.linear(self.C, normalise=True) == 0)
        return constraints
