"""Sampling rules as plug-ins: a configuration (:class:`Sampler`) starts a state that plans batches of pulls.

The policy (:mod:`bandits.pure_exploration.policy`) owns the statistics and the stopping rule; a sampler only
answers "which n arms next?" from :class:`Observations` (counts, reward sums, the estimate at the batch's
start). Most rules pick one arm at a time: :class:`SequentialState` turns ``choose`` into a batch, advancing
the counts arm by arm while the estimate stays that of the batch's start (lazy updates on the policy's
geometric grid; ``growth=0`` gives batches of one pull and the exact sequential rule).

The tracking rules the samplers share (C- and D-tracking) are in :mod:`bandits.core.tracking` and re-exported here.
"""

from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..core.tracking import c_tracking, d_tracking, pull_by_pull
from .pieces import GLRStatistic, Pieces
from .problem import Problem

__all__ = ["Observations", "Sampler", "SamplerState", "SequentialState", "c_tracking", "d_tracking"]


@dataclass
class Observations:
    """What a sampler sees when it plans a batch.

    Parameters
    ----------
    problem : Problem
        The structure.
    counts : numpy.ndarray of int, shape (K,)
        Pulls per arm so far.
    sums : numpy.ndarray, shape (K,)
        Reward sums per arm so far.
    mu : numpy.ndarray
        The estimate from them (:meth:`~bandits.pure_exploration.Problem.estimate`).
    budget : int
        Observations the batch may use at most (the run's budget left).
    glr : callable, optional
        The policy's GLR statistic at these counts, computed once per time and shared with the stopping rule
        (None: :meth:`statistic` computes it).
    """

    problem: Problem
    counts: np.ndarray
    sums: np.ndarray
    mu: np.ndarray
    budget: int = sys.maxsize
    glr: Callable[[], GLRStatistic] | None = None

    @property
    def t(self) -> int:
        """Samples so far."""
        return int(self.counts.sum())

    @property
    def time(self) -> int:
        """The problem's time (:meth:`~bandits.pure_exploration.Problem.time`: samples, or rounds of joint actions)."""
        return self.problem.time(self.counts)

    def statistic(self) -> GLRStatistic:
        """The GLR statistic at the estimate and the counts (the stopping rule's, when the policy shares it).

        Returns
        -------
        GLRStatistic
            :meth:`~bandits.pure_exploration.Problem.glr` at (mu, counts).
        """
        return self.glr() if self.glr is not None else self.problem.glr(self.mu, self.counts)

    def pieces(self, w: np.ndarray | None = None, *, gradients: bool = True) -> Pieces:
        """The problem's pieces at the estimate and ``w`` (the counts by default).

        Parameters
        ----------
        w : numpy.ndarray, optional
            Weights over the arms; the counts when omitted (then the values are the GLR statistics).
        gradients : bool
            Also compute the per-arm divergences.

        Returns
        -------
        Pieces
            See :meth:`~bandits.pure_exploration.Problem.pieces`.
        """
        return self.problem.pieces(self.mu, self.counts if w is None else w, gradients=gradients)


@dataclass(frozen=True)
class Sampler(ABC):
    """A sampling rule's configuration (a frozen dataclass of its options); ``start`` begins one run."""

    #: True when the rule ignores delta, so one trajectory gives the stopping time of every delta
    delta_independent = True

    @property
    def name(self) -> str:
        """Short name of the rule (for result tables)."""
        return type(self).__name__.lower()

    def requires(self) -> tuple[str, ...]:
        """The problem capabilities the rule needs with these options (:mod:`bandits.pure_exploration.capabilities`).

        Returns
        -------
        tuple of str
            Capability names; by default ``arm_pull`` (the rule picks arms: a rule written with the problem's pulls,
            :mod:`bandits.pure_exploration.pulls`, says so by overriding this).
        """
        return ("arm_pull",)

    def run_options(self) -> dict[str, Any]:
        """Options of the run the configuration carries (a factored rule's deprecated ``threshold``, ``glrt``,
        ``growth``), as :class:`bandits.pure_exploration.PureExploration`'s keyword arguments.

        Returns
        -------
        dict
            Empty by default.
        """
        return {}

    @abstractmethod
    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh state for one run.

        Parameters
        ----------
        problem : Problem
            The structure the run identifies an answer of.
        env : object
            The instance; only oracle rules read its true parameter.
        rng : numpy.random.Generator
            The rule's own randomness.

        Returns
        -------
        SamplerState
            Plans the run's batches.
        """

    def describe(self) -> dict[str, Any]:
        """The configuration as a flat record.

        Returns
        -------
        dict
            ``{"sampler": name, option: value, ...}``.
        """
        return {"sampler": self.name, **asdict(self)}


class SamplerState(ABC):
    """The state of a sampling rule during one run: its first pulls, then a batch per checkpoint of the policy's
    grid (:func:`bandits.core.tracking.next_checkpoint`)."""

    #: seconds spent in optdesign (oracle solves), reported by the run
    solve_time: float = 0.0
    #: the GLR stop is checked only once the time reaches the policy's grid (a rule whose batches are shorter)
    grid_checks: bool = False

    @contextmanager
    def solving(self, counted: bool = True) -> Iterator[None]:
        """Add the seconds the block takes to :attr:`solve_time` (when ``counted``: a call that may or may not solve).

        Parameters
        ----------
        counted : bool
            Whether the block is a solve (an oracle, a direction or best response computed by optdesign).

        Yields
        ------
        None
            The block runs; its time is added even when it raises.
        """
        start = time.perf_counter()
        try:
            yield
        finally:
            if counted:
                self.solve_time += time.perf_counter() - start

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """The first pulls, before any observation: the problem's first pass
        (:meth:`~bandits.pure_exploration.Problem.initial_pulls`).

        Parameters
        ----------
        problem : Problem
            The structure.
        budget : int
            Observations the run may still make (the runner cuts a first pass larger than it).

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Pulls per arm.
        """
        return problem.initial_pulls()

    def batch(self, obs: Observations, n: int) -> np.ndarray:
        """The batch up to the next checkpoint, ``n`` time units away: :meth:`plan` of n pulls within the budget.

        Parameters
        ----------
        obs : Observations
            The statistics now and the budget left.
        n : int
            Time units to the next checkpoint (at least 1).

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm.
        """
        return self.plan(obs, min(n, obs.budget))

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Hook: the batch just observed (a rule that estimates from its own phases records it here).

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm of the batch.
        sums : numpy.ndarray, shape (K,)
            Their reward sums.
        """
        return None

    def survivors(self) -> np.ndarray | None:
        """The answers still in play, for a rule that eliminates (its stop reads them); None when it does not.

        Returns
        -------
        numpy.ndarray of int or None
            Indices of the surviving answers.
        """
        return None

    def own_test(self, delta: float) -> bool:
        """The rule's own published stopping test at ``delta`` (:class:`bandits.pure_exploration.stop.OwnTest`).

        Parameters
        ----------
        delta : float
            The confidence level.

        Returns
        -------
        bool
            True when the run may stop.

        Raises
        ------
        NotImplementedError
            The rule has no test of its own.
        """
        raise NotImplementedError(f"{type(self).__name__} has no stopping test of its own")

    def gap_index(self) -> float | None:
        """An upper confidence bound B(t) on the gap of the state's answer to its challenger, for a rule whose stop
        reads it (:class:`bandits.pure_exploration.stop.GapStop`); None when it has none yet.

        Returns
        -------
        float or None
            B(t).
        """
        return None

    def recommendation(self) -> int:
        """The answer the rule recommends under its own stop (:class:`bandits.pure_exploration.stop.RuleStop`).

        Returns
        -------
        int
            An answer.

        Raises
        ------
        NotImplementedError
            The rule has no stop of its own.
        """
        raise NotImplementedError(f"{type(self).__name__} has no stop of its own")

    def glr_upper_bound(self, statistic: GLRStatistic) -> float:
        """An upper bound on the GLR statistic the rule already knows (the stop is then decided without a search).

        Parameters
        ----------
        statistic : GLRStatistic
            The policy's statistic now.

        Returns
        -------
        float
            A value at least the statistic (inf: none known).
        """
        return float("inf")

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The rule's counters for the run's trace (none by default).

        Parameters
        ----------
        statistic : GLRStatistic or None
            The policy's GLR statistic now (None before it exists).

        Returns
        -------
        dict
            Plain numbers.
        """
        return {}

    @abstractmethod
    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """The next ``n`` pulls.

        Parameters
        ----------
        obs : Observations
            Counts, sums and estimate at the batch's start.
        n : int
            Batch size (at least 1).

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Pulls per arm summing to ``n``.
        """


class SequentialState(SamplerState):
    """A rule that picks one arm at a time; a batch repeats
    :meth:`~bandits.pure_exploration.sampler.SequentialState.choose` with the counts advancing."""

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return pull_by_pull(lambda counts: self.choose(obs, counts), obs.counts, n)

    @abstractmethod
    def choose(self, obs: Observations, counts: np.ndarray) -> int | np.ndarray:
        """The next arm (or the arms the next pull observes, :class:`bandits.pure_exploration.pulls.Pulls`).

        Parameters
        ----------
        obs : Observations
            The batch's start (its estimate is the one to use).
        counts : numpy.ndarray of int
            The counts now, with the batch's earlier pulls included.

        Returns
        -------
        int or numpy.ndarray of int
            Index of the arm to pull, or the distinct arms one pull observes.
        """
