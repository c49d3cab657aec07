"""The loop every factored best-arm-identification policy shares (MF-TaS Alg. 2 in batch form).

* Initialisation: one pass over the covering set A0 (every N_{e,b} >= 1).
* Batches on the geometric grid of rounds t -> next_checkpoint(t, growth) (1 % by default). A batch is
  either a forced-exploration batch (:func:`~bandits.multiagent.exploration.forced_plays` at the batch's
  end time) or R tracked rounds from the subclass's sampling rule (``_track``).
* Stopping: the factored GLRT Lambda_t > beta(t, delta) after every batch (``glrt="exact"`` or
  ``"conservative"``, :mod:`bandits.multiagent.glrt`), t in rounds.
* Recommendation: a_hat = argmax_a sum_e theta_hat_e(a_e) by max-sum, reported as its mixed-radix code.

Batch sizes are in rounds; the runner's budget is in observations (rho per round). A budget below one
full round plays a partial round: one A0 action with only the first ``budget`` factors observed. This
happens only at the very end of a budget-limited run, and the statistics stay valid.
"""

from __future__ import annotations

import time

import numpy as np

from optdesign.errors import InvalidInputError

from ..algorithm import Policy
from ..tracking import next_checkpoint
from .environment import FactoredBandit, encode_joint
from .exploration import covering_set, exploration_level, forced_plays
from .glrt import FactoredGLRT, FactoredStatistics, GLRState
from .thresholds import make_threshold


def check_env(env) -> FactoredBandit:
    if not isinstance(env, FactoredBandit):
        raise InvalidInputError(f"this algorithm runs on factored multi-agent instances (FactoredBandit), "
                                f"got {type(env).__name__}")
    return env


class FactoredPolicy(Policy):
    """Policy state shared by MF-TaS, uniform sampling, exact Track-and-Stop and GK Track-and-Stop."""

    def __init__(self, env, rng: np.random.Generator, *, threshold, glrt: str, cover: str, exploration: str,
                 growth: float):
        env = check_env(env)
        self.structure = env.structure
        self.indexer = env.indexer
        self.sigma = env.sigma
        self.n_factors = env.n_factors
        self.abar = env.n_arms
        self.rng = rng
        self.mode, self.exploration, self.growth = glrt, exploration, growth
        self.radices = self.structure.n_actions
        start = time.perf_counter()
        self.cover = covering_set(self.structure, cover)
        self.solve_time = time.perf_counter() - start  # max-sum covers are optdesign calls
        self.stats = FactoredStatistics(self.abar)
        self.glrt = FactoredGLRT(self.structure, self.indexer, sigma=self.sigma)
        self.threshold = make_threshold(threshold, self.structure)
        self._rounds = 0
        self._state: GLRState | None = None
        self._decided: dict[float, bool] = {}
        self.glrt_time = 0.0
        self.forced_rounds = 0

    # ------------------------------------------------------------------ sampling
    @property
    def rounds(self) -> int:
        return self._rounds

    def _track(self, rounds: int) -> np.ndarray:
        """Group counts of ``rounds`` tracked rounds (the algorithm's sampling rule)."""
        raise NotImplementedError

    def _record_joint(self, actions: np.ndarray, reps: np.ndarray) -> None:
        """Hook: joint actions played by initialisation or forced exploration."""

    def next_batch(self, budget: int) -> np.ndarray:
        per_round = self.n_factors
        if self._rounds == 0:
            return self._play(self.cover.actions, np.ones(self.cover.size, dtype=np.int64), budget)
        target = next_checkpoint(self._rounds, self.growth)
        level = exploration_level(self.exploration, target, self.cover.size, self.abar)
        reps = forced_plays(self.cover, self.stats.counts, level)
        if reps is not None:
            self.forced_rounds += int(reps.sum())
            return self._play(self.cover.actions, reps, budget)
        rounds = min(target - self._rounds, budget // per_round)
        if rounds == 0:
            return self._partial(budget)
        return self._track(rounds)

    def _play(self, actions: np.ndarray, reps: np.ndarray, budget: int) -> np.ndarray:
        cap = budget // self.n_factors
        if reps.sum() > cap:  # keep a prefix of the plays within the budget
            before = np.cumsum(reps) - reps
            reps = np.clip(cap - before, 0, reps)
        if reps.sum() == 0:
            return self._partial(budget)
        keep = reps > 0
        self._record_joint(actions[keep], reps[keep])
        return self.indexer.counts(actions[keep], reps[keep])

    def _partial(self, budget: int) -> np.ndarray:
        idx = self.indexer.flat(self.cover.actions[:1])[0][:budget]
        return np.bincount(idx, minlength=self.abar).astype(np.int64)

    # ------------------------------------------------------------------ statistics and stopping
    def observe(self, counts, sums) -> None:
        self.stats.add(counts, sums)
        self._rounds += self.indexer.rounds_in(counts)
        self._state = None
        self._decided = {}

    def state(self) -> GLRState:
        """The GLR state at the current statistics (computed once per batch)."""
        if self._state is None:
            start = time.perf_counter()
            self._state = self.glrt(self.stats.theta_hat(), self.stats.counts)
            self.glrt_time += time.perf_counter() - start
        return self._state

    def stopped(self, delta: float) -> bool:
        if self._rounds == 0 or np.any(self.stats.counts == 0):
            return False
        if delta not in self._decided:
            beta = self.threshold(self._rounds, delta, self.stats.counts)
            state = self.state()
            start = time.perf_counter()
            self._decided[delta] = state.conservative() > beta if self.mode == "conservative" else state.exceeds(beta)
            self.glrt_time += time.perf_counter() - start
        return self._decided[delta]

    def recommend(self) -> int:
        if self._rounds == 0:
            return 0
        return encode_joint(self.state().best, self.radices)

    def stop_statistic(self) -> dict:
        if self._rounds == 0:
            return {}
        state = self.state()
        return {"rounds": self._rounds, "forced_rounds": self.forced_rounds, "glr_conservative": state.conservative(),
                "glr_found": state.found}
