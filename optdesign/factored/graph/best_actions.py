"""a*, gaps and the m best joint actions of a factor graph, by max-sum (:mod:`optdesign.factored.inference.max_sum`).

FactorGraph inherits these queries from :class:`FactorGraphBest`. a*, its value and the runner-up come from a
max-sum pass that does not store its local regrets (a fraction of the time and memory on large graphs:
:meth:`~optdesign.factored.inference.max_sum.MaxSum.runner_up`); listing more joint actions in gap order builds the
pass with them (:meth:`~optdesign.factored.inference.max_sum.MaxSum.iter_best`). Both passes are cached.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InvalidInputError
from ...validation import as_count
from ..inference.max_sum import MaxSum
from .checks import _brief

if TYPE_CHECKING:
    from ..inference.elimination import EliminationPlan

__all__ = ["TIE_RTOL", "FactorGraphBest"]

# relative tolerance under which two joint actions count as tied for the best
TIE_RTOL = 1e-12


class FactorGraphBest:
    """Max-sum queries of :class:`~optdesign.factored.FactorGraph` (a base class: call them on a FactorGraph,
    e.g. ``fg.best_action()``, ``fg.gap_min()``, ``fg.m_best(5)``)."""

    if TYPE_CHECKING:  # provided by FactorGraph
        @property
        def n_factors(self) -> int: ...

        @property
        def means(self) -> np.ndarray: ...

        def plan(self, order: str = "auto") -> EliminationPlan: ...

        def group_indices(self, actions: ArrayLike) -> np.ndarray: ...

    @cached_property
    def _maxsum(self) -> MaxSum:
        return MaxSum(self.plan(), self.means)

    @property
    def _best_pass(self) -> MaxSum:
        """The max-sum pass with the stored regrets if it was built, else one without them (a*, its value and the
        runner-up only: a fraction of the time and memory on large graphs)."""
        if "_maxsum" in self.__dict__:
            return self._maxsum
        if "_light_maxsum" not in self.__dict__:
            self.__dict__["_light_maxsum"] = MaxSum(self.plan(), self.means, keep_regrets=False)
        light: MaxSum = self.__dict__["_light_maxsum"]
        return light

    def _best_two(self) -> list[tuple[np.ndarray, float]]:
        """[(a*, 0), (runner-up, its gap)] as :meth:`iter_best` lists them, cached (just a* for one joint action)."""
        if "_best_two_cache" not in self.__dict__:
            search = self._best_pass
            second = search.runner_up()
            self.__dict__["_best_two_cache"] = [(search.best_action.copy(), 0.0)] + (
                [] if second is None else [(second[1], second[0])])
        best: list[tuple[np.ndarray, float]] = self.__dict__["_best_two_cache"]
        return [(a.copy(), g) for a, g in best]


    def best_action(self) -> np.ndarray:
        """a* = argmax_a theta(a) by max-sum; raises InvalidInputError if it is not unique.

        Returns
        -------
        numpy.ndarray of int64, shape (N,)
            a* (a copy).
        """
        self.gap_min()  # checks uniqueness
        best: np.ndarray = self._best_pass.best_action.copy()
        return best

    @property
    def best_value(self) -> float:
        """theta(a*), the largest mean reward (by max-sum)."""
        return self._best_pass.value

    def gap(self, actions: ArrayLike) -> np.ndarray | float:
        """Delta(a) = sum_e (theta_e(a*_e) - theta_e(a_e)), summed factor-wise for accuracy.

        Parameters
        ----------
        actions : array_like of int, shape (N,) or (M, N)
            Joint actions a.

        Returns
        -------
        float or numpy.ndarray, shape (M,)
            Delta(a) >= 0, a float for a single joint action (a* is not checked for uniqueness here).
        """
        idx = self.group_indices(actions)
        star = self.group_indices(self._best_pass.best_action)
        vals = (self.means[star] - self.means[idx]).sum(axis=1)
        return float(vals[0]) if np.ndim(actions) == 1 else vals

    def gap_min(self) -> float:
        """Delta_min = theta(a*) - theta(second best); raises if a* is not unique.

        Returns
        -------
        float
            Delta_min > 0 (computed once, then cached).

        Raises
        ------
        InvalidInputError
            A single joint action, or a tie for the best: Delta_min at most ``TIE_RTOL`` times the mean scale.
        """
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
        return float(self.__dict__["_gap_min"])

    def m_best(self, m: int, *, check_unique: bool = True) -> list[tuple[np.ndarray, float]]:
        """The m best joint actions with their gaps, a* first (gap 0), in nondecreasing gap.

        Fewer are returned only if the instance has fewer than m joint actions.

        Parameters
        ----------
        m : int
            How many, at least 1.
        check_unique : bool
            Refuse an instance whose a* is not unique (:meth:`gap_min`) first.

        Returns
        -------
        list of (numpy.ndarray, float)
            (joint action, Delta) pairs; the gaps are sums of max-sum regrets (:mod:`.inference`).

        Raises
        ------
        InvalidInputError
            ``m`` not a positive integer; with ``check_unique``, a tie for the best.
        """
        m = as_count(m, "m")
        if check_unique:
            self.gap_min()
        if m <= 2 and "_maxsum" not in self.__dict__:  # a* and the runner-up need no stored regrets
            return self._best_two()[:m]
        return [(action, gap) for gap, action in itertools.islice(self._maxsum.iter_best(), int(m))]

    def iter_best(self) -> Iterator[tuple[float, np.ndarray]]:
        """Iterator over (gap, joint action) in nondecreasing gap (best-first enumeration).

        Returns
        -------
        iterator of (float, numpy.ndarray)
            Every joint action once, a* first, lazily (no check that a* is unique).
        """
        return self._maxsum.iter_best()

