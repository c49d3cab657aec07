"""The factored sampling rules: sampling rules (:class:`bandits.pure_exploration.Sampler`) on a problem that offers
the ``factor_graph`` capability, run under the one GLR stop, and the batches they share (MF-TaS Alg. 2 in batch form).

* Initialisation: one pass over the covering set A0 (every N_{e,b} >= 1).
* Batches end on the policy's grid t -> max(t + 1, ceil(t (1 + growth))), t in rounds
  (:func:`bandits.core.tracking.next_checkpoint`, 1 % by default). A batch is either a
  forced-exploration batch (:func:`~bandits.multiagent.exploration.forced_plays` at the batch's end time) or R
  tracked rounds from the rule (:class:`RuleState`).
* Stopping: the GLR stop on the factored problem, whose GLR statistic is the factored GLRT Lambda_t > beta(t, delta)
  after every batch (the problem's ``glrt="exact"`` or ``"conservative"``, :mod:`bandits.multiagent.glrt`; the run
  option ``glrt=`` asks for it, :func:`glrt_problem`) and whose time is in rounds.
* Recommendation: a_hat = argmax_a sum_e theta_hat_e(a_e) by max-sum, reported as its mixed-radix code.

Batch sizes are in rounds; the runner's budget is in observations (rho per round). A budget below one full round
plays a partial round: one A0 action with only the first ``budget`` factors observed. This happens only at the very
end of a budget-limited run, and the statistics stay valid.
"""

from __future__ import annotations

import sys
import time
import warnings
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import shared_doc
from optdesign.errors import InvalidInputError

from ..core.stopping import Threshold
from ..core.thresholds import check_threshold_option
from ..core.validation import check_choice, check_growth
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, Sampler, SamplerState
from ..pure_exploration.stop import GLRStop
from .environment import FactoredBandit
from .exploration import COVERS, EXPLORATION, covering_set, exploration_level, forced_plays
from .glrt import GLRT_MODES
from .problem import FactoredProblem

__all__ = ["CoveredSampler", "FactoredSampler", "RuleState", "glrt_problem"]


# the options of the factored rules, documented once (substituted by _shared_doc)
_DOC = {
    "legacy": """    threshold, glrt, growth : optional
        Deprecated: options of the run, not of the rule (a DeprecationWarning). Give them to the run instead:
        ``bandits run NAME:threshold=theory,glrt=conservative,growth=0.02``, or in Python
        ``PureExploration(rule, GLRStop("theory"), growth=0.02, problem=glrt_problem("conservative"))``.
        :func:`bandits.run.run` still runs a rule given them under that stop.""",
    "cover": """    cover : str
        The covering set A0 played once first and by forced exploration: ``"greedy"`` (default), the max-sum
        greedy cover, or ``"build-a0"``, the paper's Alg. 4 (:mod:`bandits.multiagent.exploration`).""",
    "exploration": """    exploration : str
        Forced exploration (MF-TaS §6.2): ``"paper"``, A0 plays while some N_{e,b} < sqrt(t / abs(A0));
        ``"dtracking"``, the level sqrt(t) - Abar/2 of GK16's D-tracking; ``"none"``.""",
    "raises": """    Raises
    ------
    InvalidInputError
        An unknown cover or exploration option, or a bad deprecated run option.""",
}


_shared_doc = shared_doc(_DOC)


def glrt_problem(glrt: str) -> str:
    """The ``problem`` option of a run whose stop reads the factored GLR statistic ``glrt``.

    Parameters
    ----------
    glrt : str
        ``"exact"`` (the test Lambda_t > beta by best-first enumeration with certified bounds) or
        ``"conservative"`` (its lower bound D_min^2 / (2 sigma^2 H_max): one max-sum, stops later, still delta-PAC).

    Returns
    -------
    str
        ``"bandits.multiagent.problem:FactoredProblem:glrt=MODE"``.

    Raises
    ------
    InvalidInputError
        An unknown mode.
    """
    return f"{FactoredProblem.__module__}:{FactoredProblem.__name__}:glrt={check_choice(glrt, 'glrt', GLRT_MODES)}"


#: the run options a factored rule once took itself
_LEGACY = ("threshold", "glrt", "growth")


def _constructor_caller() -> int:
    """The stack level of the code that built the rule (past the dataclass ``__init__`` and the ``__post_init__``
    chain), for a warning that points at it."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_name in ("__init__", "__post_init__"):
        frame, level = frame.f_back, level + 1
    return level


@_shared_doc
@dataclass(frozen=True)
class FactoredSampler(Sampler):
    """A factored sampling rule: a state that plays joint actions, on a problem offering ``factor_graph``.

    It runs under the one GLR stop as every sampling rule does (:class:`bandits.pure_exploration.PureExploration`),
    in rounds of joint actions. Subclasses add their rule's options and give :meth:`state`.

    Parameters
    ----------
%(legacy)s

    Raises
    ------
    InvalidInputError
        A bad deprecated run option.
    """

    threshold: str | Threshold | None = None
    glrt: str | None = None
    growth: float | None = None

    def __post_init__(self) -> None:
        given = [name for name in _LEGACY if getattr(self, name) is not None]
        if given:
            warnings.warn(f"{type(self).__name__}({', '.join(given)}=...): options of the run, not of the rule; give "
                          "them to PureExploration (or after the name: NAME:threshold=...,glrt=...,growth=...)",
                          DeprecationWarning, stacklevel=_constructor_caller())
        if self.threshold is not None:
            check_threshold_option(self.threshold, "factored")
        if self.glrt is not None:
            check_choice(self.glrt, "glrt", GLRT_MODES)
        if self.growth is not None:
            check_growth(self.growth)

    def requires(self) -> tuple[str, ...]:
        """``("factor_graph",)``: the rule plays joint actions."""
        return ("factor_graph",)

    def run_options(self) -> dict[str, Any]:
        """The deprecated run options given to the rule, as PureExploration's.

        Returns
        -------
        dict
            ``stop``, ``growth`` and ``problem`` for those given.
        """
        out: dict[str, Any] = {} if self.threshold is None else {"stop": GLRStop(self.threshold)}
        if self.growth is not None:
            out["growth"] = self.growth
        if self.glrt is not None:
            out["problem"] = glrt_problem(self.glrt)
        return out

    def describe(self) -> dict[str, Any]:
        """The rule's options (the deprecated run options left out: the run records them)."""
        return {k: v for k, v in super().describe().items() if k not in _LEGACY}

    @abstractmethod
    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
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
        RuleState
            Plans the run's batches.
        """

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> RuleState:
        """The rule's state on the factored problem of the run.

        Raises
        ------
        InvalidInputError
            ``env`` is not a :class:`~bandits.multiagent.environment.FactoredBandit`.
        """
        if not isinstance(env, FactoredBandit):
            raise InvalidInputError(f"this algorithm runs on factored multi-agent instances (FactoredBandit), "
                                    f"got {type(env).__name__}")
        return self.state(cast(FactoredProblem, problem), env, rng)


@_shared_doc
@dataclass(frozen=True)
class CoveredSampler(FactoredSampler):
    """A factored rule with the covering set A0 and forced exploration among its options.

    Parameters
    ----------
%(cover)s
%(exploration)s
%(legacy)s

%(raises)s
    """

    cover: str = "greedy"
    exploration: str = "paper"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.cover, "cover", COVERS)
        self._check_exploration()

    def _check_exploration(self) -> None:
        check_choice(self.exploration, "exploration", EXPLORATION)


class RuleState(SamplerState):
    """The batches of a factored rule: the pass over A0, forced exploration, partial rounds, and around them the
    tracked rounds of a generic rule's state (the rule reads the factored problem through its pulls and capabilities).

    Parameters
    ----------
    problem : FactoredProblem
        The problem of the run (its structure, indexer and sigma).
    rule : SamplerState or callable
        The generic rule's state (:mod:`bandits.pure_exploration.samplers`), or a function that builds it from the
        covering set's pulls (shape (abs(A0), rho): the group actions each observes).
    cover : str
        The covering set's construction.
    exploration : str
        The forced exploration's level (``"paper"``, ``"dtracking"``, ``"none"``).
    """

    def __init__(self, problem: FactoredProblem, rule: SamplerState | Callable[[npt.NDArray[np.int64]], SamplerState],
                 *, cover: str = "greedy", exploration: str = "none") -> None:
        self.problem, self.indexer, self.exploration = problem, problem.indexer, exploration
        self.n_factors, self.abar = self.indexer.n_factors, problem.n_arms
        start = time.perf_counter()
        self.cover = covering_set(problem.structure, cover)
        self.cover_time = time.perf_counter() - start  # max-sum covers are optdesign calls
        self.forced_rounds = 0
        self.rule = rule if isinstance(rule, SamplerState) else rule(self.cover.flat)

    @property
    def solve_time(self) -> float:  # type: ignore[override]
        """Seconds in optdesign: the covering set's, and what the rule counts as its solves (its oracle, its
        Frank-Wolfe directions, its best responses: not its draws or its tracking)."""
        return self.cover_time + self.rule.solve_time

    def initial(self, problem: Problem, budget: int) -> npt.NDArray[np.int64]:
        """One play of every A0 action (a prefix of them, or a partial round, within ``budget`` observations)."""
        return self._play(self.cover.actions, np.ones(self.cover.size, dtype=np.int64), budget)

    def batch(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        """Forced exploration at the batch's end time t + n when some group action is under its level, else
        min(n, budget / rho) tracked rounds of the rule, or a partial round when not one round fits."""
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

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        return np.asarray(self.rule.plan(obs, n), dtype=np.int64)

    def _play(self, actions: npt.NDArray[np.int64], reps: npt.NDArray[np.int64], budget: int) -> npt.NDArray[np.int64]:
        cap = budget // self.n_factors
        if reps.sum() > cap:  # keep a prefix of the plays within the budget
            before = np.cumsum(reps) - reps
            reps = np.clip(cap - before, 0, reps)
        if reps.sum() == 0:
            return self._partial(budget)
        keep = reps > 0
        return self.indexer.counts(actions[keep], reps[keep])

    def _partial(self, budget: int) -> npt.NDArray[np.int64]:
        idx = self.cover.flat[0][:budget]
        return np.bincount(idx, minlength=self.abar).astype(np.int64)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The forced rounds (the batches' and the rule's) and the rule's own counters."""
        rule = self.rule.describe(statistic)
        return {"forced_rounds": self.forced_rounds + rule.get("forced_rounds", 0),
                **{k: v for k, v in rule.items() if k != "forced_rounds"}}

    def glr_upper_bound(self, statistic: GLRStatistic) -> float:
        """The rule's bound (:meth:`bandits.pure_exploration.sampler.SamplerState.glr_upper_bound`)."""
        return self.rule.glr_upper_bound(statistic)
