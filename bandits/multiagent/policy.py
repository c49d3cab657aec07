"""The loop every factored best-arm-identification policy shares (MF-TaS Alg. 2 in batch form).

* Initialisation: one pass over the covering set A0 (every N_{e,b} >= 1).
* Batches on the geometric grid of rounds t -> next_checkpoint(t, growth) (1 % by default). A batch is
  either a forced-exploration batch (:func:`~bandits.multiagent.exploration.forced_plays` at the batch's
  end time) or R tracked rounds from the subclass's sampling rule (``_track``).
* Stopping: the GLR stopping rule of every pure-exploration policy
  (:class:`bandits.pure_exploration.policy.GLRPolicyBase`) on the factored problem, whose GLR statistic is the
  factored GLRT Lambda_t > beta(t, delta) after every batch (``glrt="exact"`` or ``"conservative"``,
  :mod:`bandits.multiagent.glrt`) and whose time is in rounds.
* Recommendation: a_hat = argmax_a sum_e theta_hat_e(a_e) by max-sum, reported as its mixed-radix code.

Batch sizes are in rounds; the runner's budget is in observations (rho per round). A budget below one
full round plays a partial round: one A0 action with only the first ``budget`` factors observed. This
happens only at the very end of a budget-limited run, and the statistics stay valid.
"""

from __future__ import annotations

import time
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import shared_doc
from optdesign.errors import InvalidInputError

from ..core.stopping import Threshold
from ..core.tracking import next_checkpoint
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import GLRPolicyBase, GLRStop
from .environment import FactoredBandit
from .exploration import covering_set, exploration_level, forced_plays
from .glrt import GLRState
from .problem import FactoredGLR, FactoredProblem

__all__ = ["FactoredPolicy"]


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
        Relative step in (0, 1] of the grid of rounds t -> max(t + 1, ceil(t (1 + growth))) on which batches
        end: the stopping rule is checked and the sampling rule re-planned at each (0.01: every 1 percent).""",
    "raises": """    Raises
    ------
    InvalidInputError
        An unknown threshold, glrt, cover or exploration option, or a growth outside (0, 1].""",
}


_shared_doc = shared_doc(_DOC)


def check_env(env: object) -> FactoredBandit:
    """``env`` itself when it is a :class:`FactoredBandit`, else InvalidInputError."""
    if not isinstance(env, FactoredBandit):
        raise InvalidInputError(f"this algorithm runs on factored multi-agent instances (FactoredBandit), "
                                f"got {type(env).__name__}")
    return env


@_shared_doc
class FactoredPolicy(GLRPolicyBase):
    """Policy state shared by MF-TaS, uniform sampling, exact Track-and-Stop and GK Track-and-Stop.

    The loop of the module docstring; a subclass supplies the sampling rule (``_track``). ``rounds`` counts
    joint actions played (the paper's tau), ``forced_rounds`` those of forced exploration, ``glrt_time``
    the seconds spent in the stopping rule. The options are required here; their defaults are the algorithms'.

    Parameters
    ----------
    env : FactoredBandit
        The instance; the policy reads its structure, indexer and sigma only.
    rng : numpy.random.Generator
        The policy's randomness (its joint-action draws).
%(threshold)s
%(glrt)s
%(cover)s
%(exploration)s
%(growth)s

    Raises
    ------
    InvalidInputError
        ``env`` is not a :class:`~bandits.multiagent.environment.FactoredBandit`.
    """

    problem: FactoredProblem

    def __init__(self, env: FactoredBandit, rng: np.random.Generator, *, threshold: str | Threshold, glrt: str,
                 cover: str, exploration: str, growth: float) -> None:
        env = check_env(env)
        super().__init__(FactoredProblem(env.structure, env.sigma, glrt=glrt), GLRStop(threshold), growth)
        self.structure = env.structure
        self.indexer = env.indexer
        self.sigma = env.sigma
        self.n_factors = env.n_factors
        self.abar = env.n_arms
        self.rng = rng
        self.exploration = exploration
        self.radices = self.structure.n_actions
        start = time.perf_counter()
        self.cover = covering_set(self.structure, cover)
        self.solve_time = time.perf_counter() - start  # max-sum covers are optdesign calls
        self.glrt_time = 0.0
        self.forced_rounds = 0

    # ------------------------------------------------------------------ sampling
    @property
    def rounds(self) -> int:
        """Joint actions played so far (a partial round is not counted)."""
        return self.problem.time(self.counts)

    def _track(self, rounds: int) -> npt.NDArray[np.int64]:
        """Group counts of ``rounds`` tracked rounds (the algorithm's sampling rule)."""
        raise NotImplementedError

    def _record_joint(self, actions: npt.NDArray[np.int64], reps: npt.NDArray[np.int64]) -> None:
        """Hook: joint actions played by initialisation or forced exploration."""

    def next_batch(self, budget: int) -> npt.NDArray[np.int64]:
        """Group counts of the next batch: the pass over A0, forced exploration or tracked rounds up to the next
        checkpoint; the batch fits in ``budget`` observations (rho per round, a partial round below one)."""
        per_round = self.n_factors
        rounds_so_far = self.rounds
        if rounds_so_far == 0:
            return self._play(self.cover.actions, np.ones(self.cover.size, dtype=np.int64), budget)
        target = next_checkpoint(rounds_so_far, self.growth)
        level = exploration_level(self.exploration, target, self.cover.size, self.abar)
        reps = forced_plays(self.cover, self.counts, level)
        if reps is not None:
            self.forced_rounds += int(reps.sum())
            return self._play(self.cover.actions, reps, budget)
        rounds = min(target - rounds_so_far, budget // per_round)
        if rounds == 0:
            return self._partial(budget)
        return self._track(rounds)

    def _play(self, actions: npt.NDArray[np.int64], reps: npt.NDArray[np.int64],
              budget: int) -> npt.NDArray[np.int64]:
        cap = budget // self.n_factors
        if reps.sum() > cap:  # keep a prefix of the plays within the budget
            before = np.cumsum(reps) - reps
            reps = np.clip(cap - before, 0, reps)
        if reps.sum() == 0:
            return self._partial(budget)
        keep = reps > 0
        self._record_joint(actions[keep], reps[keep])
        return self.indexer.counts(actions[keep], reps[keep])

    def _partial(self, budget: int) -> npt.NDArray[np.int64]:
        idx = self.indexer.flat(self.cover.actions[:1])[0][:budget]
        return np.bincount(idx, minlength=self.abar).astype(np.int64)

    # ------------------------------------------------------------------ the GLR stop, timed
    def theta_hat(self) -> np.ndarray:
        """The estimate theta_hat per group action (the problem's: sums / counts, 0 where unobserved).

        Returns
        -------
        numpy.ndarray, shape (Abar,)
            The empirical means.
        """
        return self.mu

    def statistic(self) -> GLRStatistic:
        """The factored GLRT at the current statistics (computed once per batch, its time counted in glrt_time).

        Returns
        -------
        GLRStatistic
            A :class:`~bandits.multiagent.problem.FactoredGLR`.
        """
        if self._statistic is not None:
            return self._statistic
        start = time.perf_counter()
        statistic = super().statistic()
        self.glrt_time += time.perf_counter() - start
        return statistic

    def state(self) -> GLRState:
        """The GLR state at the current statistics (computed once per batch).

        Returns
        -------
        GLRState
            The empirical best a_hat and the resumable search for Lambda_t.
        """
        return cast(FactoredGLR, self.statistic()).state

    def stopped(self, delta: float) -> bool:
        # the factored GLRT Lambda_t > beta(t, delta), t in rounds; False until every N_{e,b} >= 1
        if self.ready():
            self.statistic()  # timed on its own
        start = time.perf_counter()
        out = super().stopped(delta)
        self.glrt_time += time.perf_counter() - start
        return out

    def stop_statistic(self) -> dict[str, Any]:
        """Rounds, forced rounds, the conservative GLR and the smallest ratio listed (empty before any round)."""
        if self.rounds == 0:
            return {}
        return {"rounds": self.rounds, "forced_rounds": self.forced_rounds, **self.statistic().describe()}
