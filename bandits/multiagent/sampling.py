"""What every factored sampling rule shares (MF-TaS Alg. 2 in batch form), as a state of the one
pure-exploration policy (:class:`bandits.pure_exploration.policy.PureExplorationPolicy`).

* Initialisation: one pass over the covering set A0 (every N_{e,b} >= 1).
* Batches end on the policy's grid t -> max(t + 1, ceil(t (1 + growth))), t in rounds
  (:func:`bandits.core.tracking.next_checkpoint`, 1 % by default). A batch is either a
  forced-exploration batch (:func:`~bandits.multiagent.exploration.forced_plays` at the batch's end time) or R
  tracked rounds from the rule (:meth:`FactoredState.plan`).
* Stopping: the policy's GLR stop on the factored problem, whose GLR statistic is the factored GLRT
  Lambda_t > beta(t, delta) after every batch (``glrt="exact"`` or ``"conservative"``, :mod:`bandits.multiagent.glrt`)
  and whose time is in rounds.
* Recommendation: a_hat = argmax_a sum_e theta_hat_e(a_e) by max-sum, reported as its mixed-radix code.

Batch sizes are in rounds; the runner's budget is in observations (rho per round). A budget below one full round
plays a partial round: one A0 action with only the first ``budget`` factors observed. This happens only at the very
end of a budget-limited run, and the statistics stay valid.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import shared_doc
from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm
from ..core.stopping import Threshold
from ..core.validation import check_growth
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import GLRStop
from .environment import FactoredBandit
from .exploration import check_cover, check_exploration, covering_set, exploration_level, forced_plays
from .glrt import GLRState, check_glrt_mode
from .problem import FactoredGLR, FactoredProblem
from .thresholds import check_threshold

__all__ = ["CoveredAlgorithm", "FactoredAlgorithm", "FactoredState", "RuleState", "check_env"]


# the options of the factored algorithms, documented once (substituted by _shared_doc)
_DOC = {
    "threshold": """    threshold : str or Threshold
        The stopping threshold beta(t, delta), t in rounds: ``"practical"`` (default), GK16's
        log((1 + log t) / delta) used in MF-TaS's experiments (§7.1), not proven delta-correct; ``"theory"``,
        the delta-correct :class:`~bandits.multiagent.thresholds.FactoredTheoryThreshold`; or an instance,
        called as ``beta(t, delta, counts)``.""",
    "glrt": """    glrt : str
        The GLR statistic of the stopping rule (:mod:`bandits.multiagent.glrt`): ``"exact"`` (default), the
        test Lambda_t > beta by best-first enumeration with certified bounds, or ``"conservative"``, the lower
        bound D_min^2 / (2 sigma^2 H_max) (one max-sum; stops later, still delta-PAC).""",
    "cover": """    cover : str
        The covering set A0 played once first and by forced exploration: ``"greedy"`` (default), the max-sum
        greedy cover, or ``"build-a0"``, the paper's Alg. 4 (:mod:`bandits.multiagent.exploration`).""",
    "exploration": """    exploration : str
        Forced exploration (MF-TaS §6.2): ``"paper"``, A0 plays while some N_{e,b} < sqrt(t / abs(A0));
        ``"dtracking"``, the level sqrt(t) - Abar/2 of GK16's D-tracking; ``"none"``.""",
    "growth": """    growth : float
        Relative step in [0, 1] of the grid of rounds t -> max(t + 1, ceil(t (1 + growth))) on which batches
        end: the stopping rule is checked and the sampling rule re-planned at each (0.01: every 1 percent; 0:
        every round).""",
    "raises": """    Raises
    ------
    InvalidInputError
        An unknown threshold, glrt, cover or exploration option, or a growth outside [0, 1].""",
}


_shared_doc = shared_doc(_DOC)


def check_env(env: object) -> FactoredBandit:
    """The instance of a factored rule's run.

    Parameters
    ----------
    env : object
        The instance given.

    Returns
    -------
    FactoredBandit
        ``env`` itself.

    Raises
    ------
    InvalidInputError
        ``env`` is not a :class:`FactoredBandit`.
    """
    if not isinstance(env, FactoredBandit):
        raise InvalidInputError(f"this algorithm runs on factored multi-agent instances (FactoredBandit), "
                                f"got {type(env).__name__}")
    return env


@_shared_doc
@dataclass(frozen=True)
class FactoredAlgorithm(Algorithm[FactoredBandit]):
    """A factored sampling rule under the GLR stop: the options of the stop and of the grid, and the rule's state.

    Subclasses add their rule's options and give :meth:`state`; ``start`` puts the state, the factored problem
    (its GLRT mode) and the GLR stop into the one pure-exploration policy.

    Parameters
    ----------
%(threshold)s
%(glrt)s
%(growth)s

    Raises
    ------
    InvalidInputError
        An unknown threshold or glrt option, or a growth outside [0, 1].
    """

    threshold: str | Threshold = "practical"
    glrt: str = "exact"
    growth: float = 0.01
    delta_independent = True  # no factored sampling rule reads delta

    def __post_init__(self) -> None:
        check_threshold(self.threshold)
        check_glrt_mode(self.glrt)
        check_growth(self.growth)

    @abstractmethod
    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """The rule's state for one run.

        Parameters
        ----------
        problem : FactoredProblem
            The problem of the run.
        env : FactoredBandit
            The instance (only oracle rules read its truth).
        rng : numpy.random.Generator
            The rule's randomness.

        Returns
        -------
        FactoredState
            Plans the run's batches.
        """

    def start(self, env: FactoredBandit, delta: float, rng: np.random.Generator) -> PureExplorationPolicy:
        """The pure-exploration policy of the rule's state on ``env``'s factored problem, under the GLR stop.

        Raises
        ------
        InvalidInputError
            ``env`` is not a :class:`~bandits.multiagent.environment.FactoredBandit`.
        """
        env = check_env(env)
        problem = FactoredProblem(env.structure, env.sigma, glrt=self.glrt)
        return PureExplorationPolicy(problem, self.state(problem, env, rng), GLRStop(self.threshold), self.growth)


@_shared_doc
@dataclass(frozen=True)
class CoveredAlgorithm(FactoredAlgorithm):
    """A factored rule with the covering set A0 and forced exploration among its options.

    Parameters
    ----------
%(threshold)s
%(glrt)s
%(growth)s
%(cover)s
%(exploration)s

%(raises)s
    """

    cover: str = "greedy"
    exploration: str = "paper"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_cover(self.cover)
        self._check_exploration()

    def _check_exploration(self) -> None:
        check_exploration(self.exploration)


class FactoredState(SamplerState):
    """The batches of a factored rule: the pass over A0, forced exploration, partial rounds; the rule's tracked
    rounds in :meth:`plan` (R rounds, as group counts).

    Parameters
    ----------
    problem : FactoredProblem
        The problem of the run (its structure, indexer and sigma).
    rng : numpy.random.Generator
        The rule's randomness (its joint-action draws).
    cover : str
        The covering set's construction.
    exploration : str
        The forced exploration's level (``"paper"``, ``"dtracking"``, ``"none"``).
    """

    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, *, cover: str = "greedy",
                 exploration: str = "none") -> None:
        self.problem = problem
        self.structure = problem.structure
        self.indexer = problem.indexer
        self.sigma = problem.sigma
        self.n_factors = self.indexer.n_factors
        self.abar = problem.n_arms
        self.radices = self.structure.n_actions
        self.rng = rng
        self.exploration = exploration
        start = time.perf_counter()
        self.cover = covering_set(self.structure, cover)
        self.solve_time = time.perf_counter() - start  # max-sum covers are optdesign calls
        self.forced_rounds = 0

    @staticmethod
    def glr_state(obs: Observations) -> GLRState:
        """The factored GLRT's state at the batch's start (the stopping rule's, computed once per batch).

        Parameters
        ----------
        obs : Observations
            The batch's start.

        Returns
        -------
        GLRState
            a_hat and the resumable search for Lambda_t.
        """
        return cast(FactoredGLR, obs.statistic()).state

    def initial(self, problem: Problem, budget: int) -> npt.NDArray[np.int64]:
        """One play of every A0 action (a prefix of them, or a partial round, within ``budget`` observations)."""
        return self._play(self.cover.actions, np.ones(self.cover.size, dtype=np.int64), budget)

    def batch(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        """Forced exploration at the batch's end time t + n when some group action is under its level, else
        min(n, budget / rho) tracked rounds (:meth:`plan`), or a partial round when not one round fits."""
        t = obs.time
        if t == 0:  # only a partial round so far
            return self.initial(self.problem, obs.budget)
        level = exploration_level(self.exploration, t + n, self.cover.size, self.abar)
        reps = forced_plays(self.cover, obs.counts, level)
        if reps is not None:
            self.forced_rounds += int(reps.sum())
            return self._play(self.cover.actions, reps, obs.budget)
        rounds = min(n, obs.budget // self.n_factors)
        if rounds == 0:
            return self._partial(obs.budget)
        return self.plan(obs, rounds)

    @abstractmethod
    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        """Group counts of ``n`` tracked rounds (the rule's sampling).

        Parameters
        ----------
        obs : Observations
            The batch's start.
        n : int
            Rounds (at least 1).

        Returns
        -------
        numpy.ndarray of int, shape (Abar,)
            Observations per group action (rho per round).
        """

    def _play(self, actions: npt.NDArray[np.int64], reps: npt.NDArray[np.int64],
              budget: int) -> npt.NDArray[np.int64]:
        cap = budget // self.n_factors
        if reps.sum() > cap:  # keep a prefix of the plays within the budget
            before = np.cumsum(reps) - reps
            reps = np.clip(cap - before, 0, reps)
        if reps.sum() == 0:
            return self._partial(budget)
        keep = reps > 0
        return self.indexer.counts(actions[keep], reps[keep])

    def _partial(self, budget: int) -> npt.NDArray[np.int64]:
        idx = self.indexer.flat(self.cover.actions[:1])[0][:budget]
        return np.bincount(idx, minlength=self.abar).astype(np.int64)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """``{"forced_rounds": rounds of forced exploration so far}``."""
        return {"forced_rounds": self.forced_rounds}


class RuleState(FactoredState):
    """The factored batches around a generic rule's state, whose plan gives the tracked rounds (the rule reads the
    factored problem through its pulls and capabilities).

    Parameters
    ----------
    problem : FactoredProblem
        The problem of the run.
    rng : numpy.random.Generator
        The rule's randomness.
    rule : SamplerState
        The generic rule's state (:mod:`bandits.pure_exploration.samplers`).
    cover : str
        The covering set's construction.
    exploration : str
        The forced exploration's level.
    """

    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, rule: SamplerState, *,
                 cover: str = "greedy", exploration: str = "none") -> None:
        super().__init__(problem, rng, cover=cover, exploration=exploration)
        self.rule = rule

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        start = time.perf_counter()
        counts = np.asarray(self.rule.plan(obs, n), dtype=np.int64)
        self.solve_time += time.perf_counter() - start
        return counts

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The forced rounds and the rule's own counters.

        Parameters
        ----------
        statistic : GLRStatistic or None
            The policy's GLR statistic now.

        Returns
        -------
        dict
            Plain numbers.
        """
        return {**super().describe(statistic), **self.rule.describe(statistic)}
