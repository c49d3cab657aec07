"""LinGame-C (Degenne, Ménard, Shang & Valko, ICML 2020, "Gamification of pure exploration for linear bandits").

The convex form of the game: 1 / T* = max over answers i and w in the simplex of inf_{lambda in not-i} sum_k w_k
d_k(theta, lambda) is also the maximum over W in the simplex of the I x K pairs (answer i, arm k) of
sum_i inf_{lambda^i in not-i} sum_k W_ik d_k(theta, lambda^i), a concave function of W (the rows of the answers
other than i*(theta) add 0: theta contradicts them), with d_k(theta, lambda) = (x_k^T (theta - lambda))^2 / (2 sigma^2)
for linear arms and d(mu_k, lambda_k) for K arms of an exponential family. One learner
(:class:`bandits.pure_exploration.adahedge.AdaHedge` over the I K pairs) plays W_t; the lambda-player
best-responds for every answer i to the row W_t,i: for the answer of the estimate, the closest alternative under
the row's weights (as :mod:`bandits.pure_exploration.samplers.lingame`; a row of zero weight, for which every
alternative is a best response, is answered as if uniform); for every other answer, the estimate itself (it already
contradicts that answer). The learner gains the optimistic gradients U_ik of all the pairs (those of LinGame, at
lambda^i), and C-tracking picks the pair (i, k) furthest behind its cumulative weight, argmax (sum_s W_s,ik - P_ik)
with P the pulls per pair; arm k is pulled.

The Frank–Wolfe sampling paper (Wang, Tzeng & Proutiere, NeurIPS 2021, Table 1) runs it as "LinGame-C". The rule
stores I K weights, so it refuses problems with more than :data:`MAX_PAIRS` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..adahedge import AdaHedge
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState
from .lingame import LinGameState

__all__ = ["MAX_PAIRS", "LinGameC"]

#: the most (answer, arm) pairs LinGame-C keeps weights, cumulative plays and pulls for
MAX_PAIRS = 1_000_000


@dataclass(frozen=True)
class LinGameC(Sampler):
    """LinGame-C (Degenne et al. 2020): one AdaHedge over the (answer, arm) pairs, best responses for every answer,
    optimistic gains, C-tracking of the pairs."""

    @property
    def name(self) -> str:
        """``lingame-c``."""
        return "lingame-c"

    def requires(self) -> tuple[str, ...]:
        """The learner gains LinGame's optimistic gradients; it tracks (answer, arm) pairs, so it pulls arms."""
        return ("arm_pull", "optimism")

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh LinGame-C state.

        Parameters
        ----------
        problem : Problem
            A problem offering ``optimism``, with at most :data:`MAX_PAIRS` (answer, arm) pairs.
        env : object
            The instance (unused).
        rng : numpy.random.Generator
            Unused (the rule is deterministic).

        Returns
        -------
        SamplerState
            The LinGame-C state.

        Raises
        ------
        InvalidInputError
            A problem with more than :data:`MAX_PAIRS` pairs.
        """
        pairs = problem.n_answers * problem.n_arms
        if pairs > MAX_PAIRS:
            raise InvalidInputError(f"lingame-c keeps a weight per (answer, arm) pair: {problem.n_answers:,} answers x "
                                    f"{problem.n_arms:,} arms = {pairs:,} pairs, above its cap of {MAX_PAIRS:,}; "
                                    "lingame keeps one per arm")
        return LinGameCState(problem)


class LinGameCState(LinGameState):
    """One LinGame-C run: the learner over the pairs, their cumulative plays and pulls.

    Parameters
    ----------
    problem : Problem
        The structure (offering ``optimism``).
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem, shared=True)
        self.learner = AdaHedge(problem.n_answers * problem.n_arms)
        self.plays = np.zeros((problem.n_answers, problem.n_arms))  # sum over steps of W_t
        self.pairs = np.zeros((problem.n_answers, problem.n_arms))  # pulls per (answer, arm)
        self._idle = np.zeros(problem.n_arms)

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        self.prepare(obs)
        self._idle = self.gains_at_estimate(obs)
        return SequentialState.plan(self, obs, n)

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        n_answers, K = self.plays.shape
        W = self.learner.weights().reshape(n_answers, K)
        U = np.tile(self._idle, (n_answers, 1))
        best = self.problem.answer_index(self._best)  # the answer's row (a set answer's rank)
        row = W[best]
        total = row.sum()
        U[best] = self.gains(obs, row / total if total > 0 else np.full(K, 1.0 / K))
        self.learner.update(-U.ravel())
        self.plays += W
        i, k = divmod(int(np.argmax(self.plays - self.pairs)), K)
        self.pairs[i, k] += 1
        return k
