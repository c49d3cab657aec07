"""Building blocks of the elimination algorithms (XY-Adaptive, RAGE, ALBA): a rule state made of phases planned
before they start and estimated from their own samples, run by the one pure-exploration policy under its own stop
(one survivor), and the dominance test of Soare et al.'s Lemma 4 (the share of a planned phase that fits a budget is
:func:`bandits.core.tracking.portion`)."""

from __future__ import annotations

import itertools
from abc import abstractmethod
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import optdesign as od
from optdesign import single_threaded_blas

from ..core.statistics import LinearStatistics
from ..core.tracking import portion
from ..pure_exploration.linear import LinearProblem
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import EliminationStop
from .common import LinearModel, linear_items

__all__ = ["PhasedState", "Survivors", "dominated", "phased_policy"]

_DOMINANCE_CHUNK = 4_000_000  # entries of the item x item block held in memory at once


def dominated(Z: np.ndarray, theta: np.ndarray, M: np.ndarray, width: float) -> np.ndarray:
    """Mask of the rows z of ``Z`` dominated by another row z' (Lemma 4 of Soare et al.):
    (z' - z)^T theta > width * ||z' - z||_M, with M = A^{-1} (or any covariance proxy).

    Parameters
    ----------
    Z : numpy.ndarray, shape (M, d)
        The candidate items (e.g. the survivors).
    theta : numpy.ndarray, shape (d,)
        The estimate.
    M : numpy.ndarray, shape (d, d)
        The covariance proxy of the estimate.
    width : float
        The confidence multiplier (e.g. c sqrt(log(c' n^2 K^2 / delta)) in Lemma 4).

    Returns
    -------
    numpy.ndarray of bool, shape (M,)
        True for the rows some other row dominates; the empirical best is never dominated.
    """
    s = Z @ theta
    G = Z @ M @ Z.T
    g = np.diag(G)
    out = np.zeros(Z.shape[0], dtype=bool)
    step = max(1, _DOMINANCE_CHUNK // max(1, Z.shape[0]))
    for lo in range(0, Z.shape[0], step):
        rows = slice(lo, lo + step)
        var = np.maximum(g[rows, None] + g[None, :] - 2.0 * G[rows], 0.0)
        out[rows] = np.any(s[None, :] - s[rows, None] > width * np.sqrt(var), axis=1)
    return out


def smallest_passing(ok: Callable[[int], bool], cap: int) -> int:
    """The smallest m in [1, cap] with ok(m), by doubling then bisection (ok monotone); cap when none passes."""
    lo, hi = 0, 1  # invariant: ok(lo) is false
    while not ok(hi):
        if hi >= cap:
            return cap
        lo, hi = hi, min(2 * hi, cap)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def greedy_pulls(X: np.ndarray, Y: np.ndarray, A: np.ndarray, counts: np.ndarray) -> Iterator[tuple[int, float]]:
    """Soare et al.'s greedy XY pulls from the information ``A``, one at a time (``counts`` and ``A`` updated in
    place): after the m-th pull, (m, max_y y^T A^{-1} y). Exact ties of the min-max scores go to the least pulled of
    the tied arms (then the first): from A_0 = I in d >= 4 every single pull leaves some e_i - e_j at its current
    variance, all arms tie, and always taking the first of them (plain argmin) would pull one arm forever."""
    for m in itertools.count(1):
        scores = od.greedy_scores(X, Y, A)  # max_y y^T (A + x x^T)^{-1} y for every arm x
        ties = np.flatnonzero(scores <= scores.min() * (1.0 + 1e-12))
        k = int(ties[np.argmin(counts[ties])])
        counts[k] += 1
        A += np.outer(X[k], X[k])
        yield m, float(scores[k])


class Survivors:
    """Items under elimination: ``active`` indexes the survivors among the items Z, ``theta`` is the latest estimate
    (None before the first); the best survivor is the recommendation."""

    active: np.ndarray
    theta: np.ndarray | None
    Z: np.ndarray

    def survivors(self) -> np.ndarray:
        """The surviving items.

        Returns
        -------
        numpy.ndarray of int
            Indices into Z.
        """
        return self.active

    def recommendation(self) -> int:
        """The survivor with the largest estimated value (the first survivor before any estimate).

        Returns
        -------
        int
            An index into Z.
        """
        if self.active.size == 1 or self.theta is None:
            return int(self.active[0])
        return int(self.active[np.argmax(self.Z[self.active] @ self.theta)])


class PhasedState(Survivors, SamplerState):
    """A rule made of phases, each a fixed allocation planned before it starts and estimated from its own samples
    only. Subclasses plan (``_plan_phase``) and eliminate (``_end_phase``); the survivors ``active`` index the items
    Z, and the run stops when one survives (:class:`bandits.pure_exploration.stop.EliminationStop`). A batch is the
    rest of the phase under way (the phases, not the policy's grid, decide when the survivors change).

    Parameters
    ----------
    env : LinearModel
        The instance (arms, items, noise level).
    delta : float
        Confidence level in (0, 1) of the eliminations.
    """

    def __init__(self, env: LinearModel, delta: float) -> None:
        self.X, self.Z, self.sigma = env.X, linear_items(env), env.sigma
        self.delta = float(delta)
        self.active = np.arange(self.Z.shape[0])
        self.n_total = 0
        self.phases: list[dict[str, Any]] = []  # one record per completed phase
        self.solve_time = 0.0
        self.theta: np.ndarray | None = None  # estimate of the last completed phase
        self._plan: np.ndarray | None = None
        self._stats: LinearStatistics | None = None

    @property
    def phase(self) -> int:
        """Index (from 1) of the phase under way or about to start."""
        return len(self.phases) + 1

    @abstractmethod
    def _plan_phase(self, budget: int) -> np.ndarray:
        """Pull counts of the whole next phase (may exceed ``budget``: the run then stops on it)."""

    @abstractmethod
    def _end_phase(self, stats: LinearStatistics) -> dict[str, Any]:
        """Estimate from the phase's statistics, update ``active``; returns the phase record."""

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """The first phase's pulls (a share when the budget is smaller)."""
        return self._rest_of_phase(budget)

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return self._rest_of_phase(obs.budget)

    def _rest_of_phase(self, budget: int) -> np.ndarray:
        if self._plan is None or self._stats is None:
            with self.solving(), single_threaded_blas():  # d x d algebra: threads cost more than they save
                self._plan = self._plan_phase(budget)
            self._stats = LinearStatistics(self.X)
        return portion(self._plan - self._stats.counts, budget)

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Add the batch to the phase's statistics; when the phase is complete, eliminate and record it.

        Raises
        ------
        RuntimeError
            No phase under way (``observe`` must follow a batch).
        """
        plan, stats = self._plan, self._stats
        if plan is None or stats is None:  # a batch always plans the phase it pulls
            raise RuntimeError("observe() before a batch")
        stats.add(counts, sums)
        self.n_total += int(np.sum(counts))
        if np.all(stats.counts >= plan):
            before = self.active.copy()
            record = self._end_phase(stats)
            self.phases.append({"phase": self.phase, "samples": int(plan.sum()), "total": self.n_total,
                                "active": before.tolist(), "survivors": self.active.tolist(), **record})
            self._plan = None
            self._stats = None

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """``{"phase": index, "active": survivors}``."""
        return {"phase": self.phase, "active": int(self.active.size)}


def phased_policy(env: LinearModel, state: PhasedState) -> PureExplorationPolicy:
    """The one pure-exploration policy running a phased rule under its own stop (one survivor).

    Parameters
    ----------
    env : LinearModel
        The instance.
    state : PhasedState
        The rule's state.

    Returns
    -------
    PureExplorationPolicy
        The policy of the run.
    """
    return PureExplorationPolicy(LinearProblem(env.X, env.Z, env.sigma), state, EliminationStop(), 0.01)
