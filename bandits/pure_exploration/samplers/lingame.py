"""LinGame (Degenne, Ménard, Shang & Valko, ICML 2020, "Gamification of pure exploration for linear bandits").

A learner (:class:`bandits.pure_exploration.samplers.games.AdaHedge` over the arms) plays w_t; the lambda-player
best-responds with the piece minimising f_j(w_t) at the estimate (closest alternative lambda); the learner gains
the optimistic gradient of that piece, U_k = min((|x_k^T (theta_hat - lambda)| + sigma sqrt(2 c_t) ||x_k||_{A^{-1}})^2
/ (2 sigma^2), c_t) with c_t = log t and A = sum_k N_k x_k x_k^T (the authors' implementation); the arm pulled
C-tracks the cumulative sum of the w_t.

K-armed problems use the analogous upper confidence on d(mu_k, lambda_k): U_k = min(max(d(u_k, lambda_k),
d(l_k, lambda_k)), c_t) with [l_k, u_k] = {m : N_k d(mu_k, m) <= c_t} (for Gaussian arms this is the linear
formula with the arms e_k). The rule runs on every problem offering this ``optimism``
(:mod:`bandits.pure_exploration.capabilities`). The estimate, t and the confidence widths are those of the batch's
start.

``learners="one"`` keeps one learner for every answer; ``"per-answer"`` one learner per answer of the estimate
(the authors' LinGame code keys its learners by the current answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..capabilities import Optimism
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState, c_tracking
from .games import AdaHedge

__all__ = ["LEARNERS", "LinGame"]

#: one learner for all answers, or one per answer of the estimate
LEARNERS = ("one", "per-answer")


@dataclass(frozen=True)
class LinGame(Sampler):
    """LinGame (Degenne et al. 2020): AdaHedge against the best response, optimistic gains, C-tracking.

    Parameters
    ----------
    learners : str
        ``"one"`` learner for all answers or one ``"per-answer"`` of the estimate.

    Raises
    ------
    InvalidInputError
        An unknown ``learners`` value.
    """

    learners: str = "one"

    def __post_init__(self) -> None:
        """Check the options."""
        if self.learners not in LEARNERS:
            raise InvalidInputError(f"unknown learners {self.learners!r}; valid: {', '.join(LEARNERS)}")

    @property
    def name(self) -> str:
        """``lingame``."""
        return "lingame"

    def requires(self) -> tuple[str, ...]:
        """LinGame's learner gains optimistic gradients."""
        return ("optimism",)

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh LinGame state (learners created on first use).

        Parameters
        ----------
        problem : Problem
            A problem offering ``optimism`` (linear and K-armed ones).
        env : object
            The instance (unused).
        rng : numpy.random.Generator
            Unused (the rule is deterministic).

        Returns
        -------
        SamplerState
            The LinGame state.
        """
        return LinGameState(problem, self.learners == "one")


class LinGameState(SequentialState):
    """One LinGame run: the learner(s), the cumulative plays, the batch's optimism.

    Parameters
    ----------
    problem : Problem
        The structure (offering ``optimism``).
    shared : bool
        One learner for all answers (else one per answer).
    """

    def __init__(self, problem: Problem, shared: bool) -> None:
        self.problem, self.shared = problem, shared
        self.learners: dict[int, AdaHedge] = {}
        self.cumulative: np.ndarray | None = None
        self._key = 0
        self._best = 0
        self._optimism: Optimism | None = None

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self.cumulative is None:
            self.cumulative = obs.counts.astype(float)
        self.prepare(obs)
        self._key = 0 if self.shared else self._best
        if self._key not in self.learners:
            self.learners[self._key] = AdaHedge(self.problem.n_arms)
        return super().plan(obs, n)

    def prepare(self, obs: Observations) -> None:
        """The batch's c_t = log t and the problem's optimism at the estimate (its answer, its confidence widths).

        Parameters
        ----------
        obs : Observations
            The batch's start.
        """
        self._optimism = self.problem.optimism(obs.mu, obs.counts, float(np.log(max(obs.t, 2))))
        self._best = self._optimism.best

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        learner = self.learners[self._key]
        w = learner.weights()
        gains = self.gains(obs, w)
        learner.update(-gains)
        assert self.cumulative is not None
        self.cumulative += w
        return c_tracking(self.cumulative, counts)

    def gains(self, obs: Observations, w: np.ndarray) -> np.ndarray:
        """U of the best response to the play ``w`` at the batch's estimate (:meth:`Optimism.gains`)."""
        assert self._optimism is not None
        return self._optimism.gains(w)

    def gains_at_estimate(self, obs: Observations) -> np.ndarray:
        """U at lambda = the batch's estimate (:meth:`Optimism.at_estimate`)."""
        assert self._optimism is not None
        return self._optimism.at_estimate()
