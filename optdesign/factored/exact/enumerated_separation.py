"""Separation of exact T* by enumeration, for instances with few joint actions.

The oracle of constraint generation, max over a != a* of H(a) / Delta(a)^2 with H(a) = sum_e h_e(a_e) and
Delta(a) = sum_e g_e(a_e) (MF-TaS eq. 1 at fixed wbar), is exact by Pareto variable elimination
(:func:`.separation.most_violated`) at any size. With at most ``MAX_JOINT_ACTIONS`` joint actions it is cheaper to
read H and Delta of every joint action at once from their group positions (|A| x n_factors, laid out once per
structure) and keep the k largest ratios: the same answer (exact, ties in any order), about 0.03 ms instead of 3 ms
at 729 joint actions (``python benchmarks/bench_exact_tas.py``: a bandit re-solving T* separates at every re-solve).
The same table lists the joint actions in value order and the best one through each group action (the starting
working set of :mod:`.working_set`) without a max-sum pass.
"""

from __future__ import annotations

import functools

import numpy as np

from ..inference.elimination import EliminationPlan
from .separation import Separation

__all__ = ["MAX_JOINT_ACTIONS", "EnumeratedSeparation"]

#: joint actions up to which separation enumerates (about 1 ms per call there; Pareto elimination beyond)
MAX_JOINT_ACTIONS = 20_000


class EnumeratedSeparation:
    """Every joint action of a plan's structure with its group positions, to separate by enumeration.

    Build it with :meth:`for_plan` (one per structure, shared like the plan).

    Parameters
    ----------
    plan : EliminationPlan
        The structure's plan; its tables' layout gives the group positions.
    """

    def __init__(self, plan: EliminationPlan):
        self.n_actions = plan.n_actions
        self.actions = np.indices(plan.n_actions).reshape(plan.n_agents, -1).T.astype(np.int64)  # row r: code r
        self.positions = plan.group_indices(self.actions)

    @classmethod
    @functools.lru_cache(maxsize=16)
    def for_plan(cls, plan: EliminationPlan) -> EnumeratedSeparation:
        """The enumeration of ``plan``'s structure, built once per plan.

        Parameters
        ----------
        plan : EliminationPlan
            The structure's plan.

        Returns
        -------
        EnumeratedSeparation
            Shared by every later call with the same plan.
        """
        return cls(plan)

    def best_first(self, means: np.ndarray, n: int) -> np.ndarray:
        """The ``n`` joint actions of largest theta(a) = sum_e means_e(a_e), best first (a* is the first).

        Parameters
        ----------
        means : numpy.ndarray, shape (plan.table_size,)
            The group means, flat over the factor tables.
        n : int
            How many joint actions (at most all of them).

        Returns
        -------
        numpy.ndarray of int64, shape (min(n, |A|), N)
            The joint actions in nonincreasing theta(a) (ties in code order).
        """
        values = means[self.positions].sum(axis=1)
        n = min(n, values.size)
        top = np.argpartition(-values, n - 1)[:n] if n < values.size else np.arange(values.size)
        return np.array(self.actions[top[np.argsort(-values[top], kind="stable")]])

    def best_through(self, means: np.ndarray) -> np.ndarray:
        """For every flat table entry (factor e, group action b), the joint action of largest theta(a) with a_e = b.

        Parameters
        ----------
        means : numpy.ndarray, shape (plan.table_size,)
            The group means, flat over the factor tables.

        Returns
        -------
        numpy.ndarray of int64, shape (plan.table_size, N)
            Row j is the best joint action through entry j (every entry lies on some joint action).
        """
        order = np.argsort(-means[self.positions].sum(axis=1), kind="stable")
        # the entries of distinct factors are distinct numbers: the first row of each entry in value order
        _, first = np.unique(self.positions[order].T, return_index=True)
        return np.array(self.actions[order[first % order.size]])

    def separate(self, h: np.ndarray, gap: np.ndarray, best: np.ndarray, *, k: int, threshold: float,
                 delta_min: float) -> Separation:
        """The exact max of H(a) / Delta(a)^2 over a != a* and the k joint actions with the largest ratios.

        Parameters
        ----------
        h : numpy.ndarray, shape (plan.table_size,)
            Nonnegative terms h_e(b) of H.
        gap : numpy.ndarray, shape (plan.table_size,)
            Local gaps g_e(b) of Delta (Delta(a*) = 0, Delta(a) > 0 elsewhere).
        best : numpy.ndarray, shape (N,)
            a*, excluded.
        k : int
            How many joint actions to return at most.
        threshold : float
            Only joint actions with a ratio at least this are returned.
        delta_min : float
            The smallest gap, recorded in the result.

        Returns
        -------
        Separation
            ``max_ratio`` (exact), the up to k joint actions reaching ``threshold`` with the largest ratios, best
            first, and their ratios; no elimination work (counters 0).
        """
        H, D = h[self.positions].sum(axis=1), gap[self.positions].sum(axis=1)
        star = int(np.ravel_multi_index(tuple(int(b) for b in best), self.n_actions))
        D[star] = 1.0
        ratios = H / D**2
        ratios[star] = -np.inf
        top = np.argpartition(-ratios, k - 1)[:k] if k < ratios.size else np.arange(ratios.size)
        top = top[np.argsort(-ratios[top], kind="stable")]
        top = top[ratios[top] >= threshold]
        best_ratio = float(ratios.max())
        return Separation(max_ratio=best_ratio, actions=self.actions[top].copy(), ratios=ratios[top].copy(),
                          exact=True, upper_bound=best_ratio, best_action=np.asarray(best).copy(),
                          delta_min=float(delta_min), n_states=0, n_pairs=0, peak_frontier=0, n_passes=0)
