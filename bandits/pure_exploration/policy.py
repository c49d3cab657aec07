"""A pure-exploration algorithm = a problem (from the instance) x a sampling rule x the GLR stopping rule.

:class:`bandits.pure_exploration.algorithm.PureExploration` is the :class:`bandits.core.algorithm.Algorithm` that puts
them together, so every
sampling rule runs under the same stopping rule and threshold (the field's standard comparison), and a rule
that ignores delta gives the stopping times of several deltas from one trajectory.

Stopping: :class:`bandits.pure_exploration.stop.GLRStop`.

Batches: after the sampler's first pulls (one of each of the problem's initial arms by default), the policy asks
its sampler for a batch up to the next time of the grid t -> max(t + 1, ceil(t (1 + growth)))
(:func:`bandits.core.tracking.next_checkpoint`; t in the problem's time: samples, or rounds of joint actions on
factored problems), within the budget left (``growth`` 1 %
by default: the estimate is refreshed and the GLR checked once per batch, so the stopping time overshoots by under
1 %); ``growth=0`` checks after every pull. The factored rules run under this same policy
(:mod:`bandits.multiagent.batches`).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.algorithm import Policy
from ..core.stopping import Threshold
from ..core.tracking import next_checkpoint
from .bounded import BoundedProblem
from .cap_bounds import least_bound
from .heteroscedastic import HeteroscedasticProblem
from .karmed import KArmedProblem
from .linear import LinearProblem
from .pieces import GLRStatistic
from .problem import Problem
from .sampler import Observations, SamplerState
from .stop import GLRStop, RuleStop

__all__ = ["GLRPolicyBase", "PureExplorationPolicy", "problem_of"]

#: the problem classes of the instance kinds this package simulates (others give their own: :func:`problem_of`)
BUILT_IN_PROBLEMS: dict[str, type[Problem]] = {"karmed": KArmedProblem, "linear": LinearProblem,
                                               "heteroscedastic": HeteroscedasticProblem, "bounded": BoundedProblem}


def problem_of(env: Any) -> Problem:
    """The pure-exploration problem of an instance (what a learner may know of it: no true parameter).

    K-armed and linear instances have the problems of this package; an environment of another kind gives its own
    with a ``problem()`` method (a factored instance its :class:`bandits.multiagent.problem.FactoredProblem`).

    Parameters
    ----------
    env : object
        An environment of a kind with a pure-exploration problem: a
        :class:`bandits.pure_exploration.environment.KArmedBandit`, a :class:`bandits.core.environments.LinearBandit`
        or an environment with a ``problem()`` method (a :class:`bandits.multiagent.environment.FactoredBandit`).

    Returns
    -------
    Problem
        Its problem.

    Raises
    ------
    InvalidInputError
        An instance of another kind.
    """
    own = getattr(env, "problem", None)
    if callable(own):
        problem: Problem = own()
        return problem
    kind = getattr(env, "kind", None)
    if kind in BUILT_IN_PROBLEMS:
        return BUILT_IN_PROBLEMS[kind].of_environment(env)
    raise InvalidInputError(f"no pure-exploration problem for a {type(env).__name__} (K-armed, linear or factored "
                            "instances, or an environment with a problem() method)")


class GLRPolicyBase(Policy):
    """The statistics and the GLR stopping rule of a run, shared by every policy under it.

    Counts and reward sums per arm; the estimate, the GLR statistic (:meth:`~bandits.pure_exploration.Problem.glr`)
    and the information matrix are computed once per time, the stopping decision once per time and delta. The GLR
    exists once the counts identify the parameter (every initial arm pulled for an unstructured problem, spanning arms
    for a linear one); the threshold is made at that moment, from those counts, and reads the problem's time
    (:meth:`~bandits.pure_exploration.Problem.time`).

    Parameters
    ----------
    problem : Problem
        The structure (its GLR statistic, answer and time).
    stop : GLRStop
        The stopping rule.
    growth : float
        Relative batch size (0: one pull per batch).
    """

    problem: Problem

    def __init__(self, problem: Problem, stop: GLRStop, growth: float) -> None:
        self.problem, self.stop, self.growth = problem, stop, growth
        K = problem.n_arms
        self.counts = np.zeros(K, dtype=np.int64)
        self.sums = np.zeros(K if problem.moments == 1 else (K, problem.moments))
        self._threshold: Threshold | None = None
        self._ready = False
        self._mu: np.ndarray | None = None
        self._statistic: GLRStatistic | None = None
        self._information: np.ndarray | None = None
        self._decided: dict[float, bool] = {}
        self.glrt_time = 0.0  # seconds in the GLR statistic and the stopping decisions

    @property
    def mu(self) -> np.ndarray:
        """The estimate at the current counts (computed once per time)."""
        if self._mu is None:
            self._mu = self.problem.estimate(self.counts, self.sums)
        return self._mu

    def information(self) -> np.ndarray | None:
        """The problem's information matrix at the counts (computed once per time; None when unstructured).

        Returns
        -------
        numpy.ndarray or None
            A d x d matrix for linear problems.
        """
        if self._information is None:
            self._information = self.problem.information(self.counts)
        return self._information

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Add a batch to the statistics and forget what was computed at the previous time.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm of the batch.
        sums : numpy.ndarray, shape (K,)
            Their reward sums.
        """
        self.counts += counts
        self.sums += sums
        self._mu = self._statistic = self._information = None
        self._decided = {}

    def ready(self) -> bool:
        """Whether the counts identify the parameter (every initial arm pulled; spanning arms for linear ones).

        Returns
        -------
        bool
            True once the GLR statistic is defined (and the threshold made).
        """
        if not self._ready and self.counts.sum() > 0:
            A = self.information()
            if A is None:
                self._ready = bool(np.all(self.counts[self.problem.initial_arms()] > 0))
            else:
                self._ready = bool(np.linalg.matrix_rank(A) == A.shape[0])
            if self._ready:
                self._threshold = self.stop.make(self.problem, self.counts)
        return self._ready

    def statistic(self) -> GLRStatistic:
        """The problem's GLR statistic at the estimate and the counts (computed once per time).

        Returns
        -------
        GLRStatistic
            Its answer and its threshold test.
        """
        if self._statistic is None:
            start = time.perf_counter()
            self._statistic = self.problem.glr(self.mu, self.counts)
            self.glrt_time += time.perf_counter() - start
        return self._statistic

    @property
    def rounds(self) -> int | None:
        """Pulls made when a pull observes several arms (:meth:`~bandits.pure_exploration.Problem.rounds`), else
        None."""
        return self.problem.rounds(self.counts)

    def known_upper_bound(self) -> float:
        """An upper bound on the GLR statistic known without computing it (inf by default: none).

        Returns
        -------
        float
            When at most the threshold, the stop is refused without the statistic's search.
        """
        return float("inf")

    def glr(self) -> float:
        """The GLR statistic min_j f_j(N) at the estimate (0 until :meth:`ready`).

        Returns
        -------
        float
            The statistic in nats.
        """
        return self.statistic().value if self.ready() else 0.0

    def beta(self, delta: float) -> float:
        """The threshold beta(t, delta) now, t the problem's time (inf until :meth:`ready`).

        Parameters
        ----------
        delta : float
            The confidence level.

        Returns
        -------
        float
            The threshold.
        """
        if not self.ready() or self._threshold is None:
            return float("inf")
        return self._threshold(self.problem.time(self.counts), delta,
                               self.problem.threshold_argument(self.counts, self.information()))

    def stopped(self, delta: float) -> bool:
        if not self.ready():
            return False
        if delta not in self._decided:
            statistic = self.statistic()
            start = time.perf_counter()
            beta = self.beta(delta)
            self._decided[delta] = self.known_upper_bound() > least_bound(beta) and statistic.exceeds(beta)
            self.glrt_time += time.perf_counter() - start
        return self._decided[delta]

    def recommend(self) -> int:
        return self.statistic().answer if self.counts.sum() else 0

    def stop_statistic(self) -> dict[str, Any]:
        """The GLR statistic and the current answer.

        Returns
        -------
        dict
            ``{"glr": value, "best": answer}`` (the problem's own record once the GLR exists), after the rounds
            when a pull observes several arms.
        """
        rounds = self.rounds
        head = {} if rounds is None else {"rounds": rounds}
        return {**head, **(self.statistic().describe() if self.ready() else {"glr": 0.0, "best": self.recommend()})}


class PureExplorationPolicy(GLRPolicyBase):
    """One run of a sampler: its first pulls, then its batches on the problem's grid, under the GLR stop (which the
    sampler may spare a search by an upper bound it knows:
    :meth:`~bandits.pure_exploration.SamplerState.glr_upper_bound`).

    Parameters
    ----------
    problem : Problem
        The structure.
    state : SamplerState
        The sampling rule's state.
    stop : GLRStop or RuleStop
        The stopping rule: the GLR stop, or the rule's own published stop (reading its state; the state recommends).
    growth : float
        Relative batch size (0: one pull per batch).

    Raises
    ------
    InvalidInputError
        A rule stop that reads what the state does not declare (e.g. elimination without survivors).
    """

    def __init__(self, problem: Problem, state: SamplerState, stop: GLRStop | RuleStop, growth: float) -> None:
        if isinstance(stop, RuleStop):
            stop.check(state)
        super().__init__(problem, stop if isinstance(stop, GLRStop) else GLRStop(), growth)
        self.state = state
        self.own = stop if isinstance(stop, RuleStop) else None
        self._next_check, self._at_checkpoint = 0, True

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        super().observe(counts, sums)
        self.state.observe(counts, sums)
        if self.state.grid_checks:  # batches shorter than the grid: the stop waits for the next checkpoint
            t = self.problem.time(self.counts)
            self._at_checkpoint = t >= self._next_check
            if self._at_checkpoint:
                self._next_check = next_checkpoint(t, self.growth)

    def stopped(self, delta: float) -> bool:
        if self.own is not None:
            return self.own.stopped(self.state, delta)
        if self.state.grid_checks and not self._at_checkpoint:
            return False
        return super().stopped(delta)

    def recommend(self) -> int:
        if self.own is not None:
            return self.state.recommendation()
        return super().recommend()

    def survivors(self) -> np.ndarray | None:
        return self.state.survivors()

    @property
    def solve_time(self) -> float:  # type: ignore[override]
        """Seconds the sampler spent in optdesign."""
        return self.state.solve_time

    def next_batch(self, budget: int) -> np.ndarray:
        if self.counts.sum() == 0:
            return np.asarray(self.state.initial(self.problem, budget), dtype=np.int64)
        t = self.problem.time(self.counts)
        return np.asarray(self.state.batch(self.observations(budget), next_checkpoint(t, self.growth) - t),
                          dtype=np.int64)

    def observations(self, budget: int = sys.maxsize) -> Observations:
        """What the sampler sees now: a copy of the statistics, the estimate, the GLR statistic (shared) and the budget.

        Parameters
        ----------
        budget : int
            Observations the next batch may use.

        Returns
        -------
        Observations
            The sampler's view.
        """
        return Observations(self.problem, self.counts.copy(), self.sums.copy(), self.mu, budget, self.statistic)

    def known_upper_bound(self) -> float:
        return self.state.glr_upper_bound(self.statistic())

    def stop_statistic(self) -> dict[str, Any]:
        """The GLR record (:meth:`GLRPolicyBase.stop_statistic`) and the sampling rule's counters.

        Returns
        -------
        dict
            Plain numbers.
        """
        if self.own is not None:
            return self.state.describe(None)
        return {**super().stop_statistic(), **self.state.describe(self.statistic() if self.ready() else None)}
