"""A pure-exploration algorithm = a problem (from the instance) x a sampling rule x the GLR stopping rule.

:class:`bandits.pure_exploration.algorithm.PureExploration` is the :class:`bandits.core.algorithm.Algorithm` that puts
them together, so every
sampling rule runs under the same stopping rule and threshold (the field's standard comparison), and a rule
that ignores delta gives the stopping times of several deltas from one trajectory.

Stopping (:class:`GLRStop`): stop at the first checked time t with GLR_t > beta(t, delta), where
GLR_t = min_j f_j(N_t) at the estimate (the problem's pieces at the counts: Garivier & Kaufmann 2016, Sec. 3.2,
and its linear form in :mod:`bandits.core.statistics`), and recommend the answer at the estimate. Thresholds:
``practical`` log((1 + log t) / delta) (GK16 Sec. 6, not proven delta-correct), ``theory`` (linear problems:
the self-normalised bound of :class:`bandits.core.stopping.LinearTheoryThreshold`), ``kk21`` (K-armed problems: the
mixture-martingale bound of :class:`bandits.core.stopping.Kk21Threshold` for Gaussian arms, of
:class:`bandits.core.stopping.Kk21ExpFamilyThreshold` for the other exponential families), any
:class:`bandits.core.stopping.Threshold`, or one named ``package.module:Class`` (a Threshold subclass, built without
arguments, or a Threshold instance).

Batches: after one pull of each of the problem's initial arms, the policy asks its sampler for batches of
max(1, ceil(growth t)) pulls (``growth`` 1 % by default: the estimate is refreshed and the GLR checked once per
batch, so the stopping time overshoots by under 1 %); ``growth=0`` checks after every pull.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.algorithm import Policy
from ..core.stopping import Threshold
from ..core.thresholds import (
    THRESHOLD_TABLE,
    check_threshold_option,
    load_threshold,
    make_threshold,
    threshold_names,
)
from ..core.validation import check_growth
from .karmed import KArmedProblem
from .linear import LinearProblem
from .pieces import GLRStatistic
from .problem import Problem
from .sampler import Observations, SamplerState

__all__ = ["GLRPolicyBase", "GLRStop", "PureExplorationPolicy", "check_stop_options", "problem_of"]

#: the problem classes of the instance kinds this package simulates (others give their own: :func:`problem_of`)
BUILT_IN_PROBLEMS: dict[str, type[Problem]] = {"karmed": KArmedProblem, "linear": LinearProblem}
#: the threshold names of the GLR stopping rule (:data:`bandits.core.thresholds.FAMILY_THRESHOLDS`)
STOP_THRESHOLDS = threshold_names("glr")


@dataclass(frozen=True)
class GLRStop:
    """The GLR stopping rule with a threshold beta(t, delta).

    Parameters
    ----------
    threshold : str or Threshold
        ``"practical"`` (default), ``"theory"`` (linear problems), ``"kk21"`` (K-armed problems), ``"soare"``
        (Soare et al.'s eq. 11 with K the number of items; linear problems), a threshold object, or
        ``"package.module:Class"`` naming one (imported and checked here).

    Raises
    ------
    InvalidInputError
        An unknown threshold name, or a plug-in path that does not import or names no Threshold.
    """

    threshold: str | Threshold = "practical"

    def __post_init__(self) -> None:
        """Refuse an unknown threshold name; import a plug-in threshold."""
        if isinstance(self.threshold, Threshold):
            return
        if ":" in str(self.threshold):
            object.__setattr__(self, "threshold", load_threshold(str(self.threshold)))
        else:
            check_threshold_option(self.threshold, "glr")

    def check_kind(self, kind: str) -> None:
        """Refuse a named threshold on an instance kind it is not meant for (before any run).

        Parameters
        ----------
        kind : str
            The instance kind (``"karmed"``, ``"linear"``, ...).

        Raises
        ------
        InvalidInputError
            ``"theory"`` or ``"soare"`` on a non-linear instance, ``"kk21"`` on a non-K-armed one.
        """
        row = THRESHOLD_TABLE[self.threshold] if isinstance(self.threshold, str) else None
        if row is not None and row.kinds and kind not in row.kinds:
            raise InvalidInputError(f"the {self.threshold!r} GLR threshold is for {row.meant_for}, "
                                    f"not {kind} instances")

    def make(self, problem: Problem, initial_counts: np.ndarray) -> Threshold:
        """The threshold for a run of ``problem`` that started with ``initial_counts``.

        Parameters
        ----------
        problem : Problem
            The structure.
        initial_counts : numpy.ndarray of int
            The pulls made before the sampling rule runs (they fix the theory threshold's A_0).

        Returns
        -------
        Threshold
            The callable beta(t, delta, A).

        Raises
        ------
        InvalidInputError
            ``"theory"`` or ``"soare"`` on a problem without an information matrix, ``"kk21"`` on a problem other
            than a K-armed one.
        """
        return make_threshold(self.threshold, problem.threshold_context(initial_counts), "glr")

    def describe(self) -> dict[str, Any]:
        """The rule as a flat record.

        Returns
        -------
        dict
            ``{"stop": "glr", "threshold": name}``.
        """
        name = self.threshold.name if isinstance(self.threshold, Threshold) else self.threshold
        return {"stop": "glr", "threshold": name}


def check_stop_options(stop: object, growth: float) -> None:
    """Refuse a stop that is not a :class:`GLRStop` or a batch growth outside [0, 1].

    Parameters
    ----------
    stop : object
        The stopping rule given.
    growth : float
        The relative batch size given.

    Raises
    ------
    InvalidInputError
        Either is wrong.
    """
    if not isinstance(stop, GLRStop):
        raise InvalidInputError(f"stop must be a GLRStop, got {type(stop).__name__}")
    check_growth(growth)


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

    Counts and reward sums per arm; the estimate, the GLR statistic (:meth:`Problem.glr`) and the information matrix
    are computed once per time, the stopping decision once per time and delta. The GLR exists once the counts
    identify the parameter (every initial arm pulled for an unstructured problem, spanning arms for a linear one);
    the threshold is made at that moment, from those counts, and reads the problem's time (:meth:`Problem.time`).

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
        self.sums = np.zeros(K)
        self._threshold: Threshold | None = None
        self._ready = False
        self._mu: np.ndarray | None = None
        self._statistic: GLRStatistic | None = None
        self._information: np.ndarray | None = None
        self._decided: dict[float, bool] = {}

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

    def record(self, counts: np.ndarray, sums: np.ndarray) -> None:
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

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.record(counts, sums)

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
            self._statistic = self.problem.glr(self.mu, self.counts)
        return self._statistic

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
            self._decided[delta] = self.statistic().exceeds(self.beta(delta))
        return self._decided[delta]

    def recommend(self) -> int:
        return self.statistic().answer if self.counts.sum() else 0

    def stop_statistic(self) -> dict[str, Any]:
        """The GLR statistic and the current answer.

        Returns
        -------
        dict
            ``{"glr": value, "best": answer}`` (the problem's own record once the GLR exists).
        """
        return dict(self.statistic().describe()) if self.ready() else {"glr": 0.0, "best": self.recommend()}


class PureExplorationPolicy(GLRPolicyBase):
    """One run of a sampler: its initial pulls, then the sampler's batches, under the GLR stop.

    Parameters
    ----------
    problem : Problem
        The structure.
    state : SamplerState
        The sampling rule's state.
    stop : GLRStop
        The stopping rule.
    growth : float
        Relative batch size (0: one pull per batch).
    """

    def __init__(self, problem: Problem, state: SamplerState, stop: GLRStop, growth: float) -> None:
        super().__init__(problem, stop, growth)
        self.state = state
        self._initial = np.zeros(problem.n_arms, dtype=np.int64)
        self._initial[problem.initial_arms()] = 1

    @property
    def solve_time(self) -> float:  # type: ignore[override]
        """Seconds the sampler spent in optdesign."""
        return self.state.solve_time

    def next_batch(self, budget: int) -> np.ndarray:
        if self.counts.sum() == 0:
            return self._initial.copy()
        t = int(self.counts.sum())
        n = min(budget, max(1, math.ceil(self.growth * t)))
        obs = Observations(self.problem, self.counts.copy(), self.sums.copy(), self.mu)
        return np.asarray(self.state.plan(obs, n), dtype=np.int64)
