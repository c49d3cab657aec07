"""The factored batches: how a rule's state plays joint actions in rounds (MF-TaS Alg. 2 in batch form).

* Initialisation: one pass over the covering set A0 (every N_{e,b} >= 1).
* Batches end on the policy's grid t -> max(t + 1, ceil(t (1 + growth))), t in rounds
  (:func:`bandits.core.tracking.next_checkpoint`, 1 % by default). A batch is either a
  forced-exploration batch (:func:`~bandits.multiagent.exploration.forced_plays` at the batch's end time) or R
  tracked rounds from the rule (:class:`RuleState`).

Batch sizes are in rounds; the runner's budget is in observations (rho per round). A budget below one full round
plays a partial round: one A0 action with only the first ``budget`` factors observed. This happens only at the very
end of a budget-limited run, and the statistics stay valid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

from ..core.validation import check_choice
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from .exploration import EXPLORATION, covering_set, exploration_level, forced_plays
from .joint_actions import GroupIndexer

__all__ = ["FactoredPulls", "RuleState"]


class FactoredPulls(Protocol):
    """What the batches read of their problem (:class:`bandits.multiagent.problem.FactoredProblem`)."""

    structure: FactorGraph
    indexer: GroupIndexer

    @property
    def n_arms(self) -> int:
        """Abar, the number of group actions (the problem's arms)."""


class RuleState(SamplerState):
    """The batches of a factored rule: the pass over A0, forced exploration, partial rounds, and around them the
    tracked rounds of a generic rule's state (the rule reads the factored problem through its pulls and capabilities).

    Parameters
    ----------
    problem : FactoredPulls
        The problem of the run (its structure and indexer).
    rule : SamplerState or callable
        The generic rule's state (:mod:`bandits.pure_exploration.samplers`), or a function that builds it from the
        covering set's pulls (shape (abs(A0), rho): the group actions each observes).
    cover : str
        The covering set's construction.
    exploration : str
        The forced exploration's level (``"paper"``, ``"dtracking"``, ``"none"``).

    Raises
    ------
    InvalidInputError
        ``rule`` is neither a sampler state nor callable, or an unknown cover or exploration.
    """

    def __init__(self, problem: FactoredPulls, rule: SamplerState | Callable[[npt.NDArray[np.int64]], SamplerState],
                 *, cover: str = "greedy", exploration: str = "none") -> None:
        if not (isinstance(rule, SamplerState) or callable(rule)):
            raise InvalidInputError(f"the factored batches run a sampler state (or a function of the covering set's "
                                    f"pulls that builds one), got {type(rule).__name__}")
        self.indexer, self.exploration = problem.indexer, check_choice(exploration, "exploration", EXPLORATION)
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
        return self._first_pass(budget)

    def _first_pass(self, budget: int) -> npt.NDArray[np.int64]:
        return self._play(self.cover.actions, np.ones(self.cover.size, dtype=np.int64), budget)

    def batch(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        """Forced exploration at the batch's end time t + n when some group action is under its level, else
        min(n, budget / rho) tracked rounds of the rule, or a partial round when not one round fits."""
        t = obs.time
        if t == 0:  # only a partial round so far
            return self._first_pass(obs.budget)
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
