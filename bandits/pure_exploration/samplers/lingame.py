"""LinGame (Degenne, Ménard, Shang & Valko, ICML 2020, "Gamification of pure exploration for linear bandits").

A learner (:class:`bandits.pure_exploration.adahedge.AdaHedge` over the arms) plays w_t; the lambda-player
best-responds with the piece minimising f_j(w_t) at the estimate (closest alternative lambda); the learner gains
the optimistic gradient of that piece, U_k = min((|x_k^T (theta_hat - lambda)| + sigma sqrt(2 c_t) ||x_k||_{A^{-1}})^2
/ (2 sigma^2), c_t) with c_t = log t (t the problem's time) and A = sum_k N_k x_k x_k^T (the authors'
implementation); the pull C-tracks the cumulative sum of the w_t: the pull of largest sum over its arms of
(cumulative - N) (:meth:`~bandits.pure_exploration.Problem.best_pull`: argmax over the arms, a max-sum over joint
actions on factored problems, whose learner is AdaHedge over joint actions,
:meth:`~bandits.pure_exploration.Problem.learner`).

K-armed problems use the analogous upper confidence on d(mu_k, lambda_k): U_k = min(max(d(u_k, lambda_k),
d(l_k, lambda_k)), c_t) with [l_k, u_k] = {m : N_k d(mu_k, m) <= c_t} (for Gaussian arms this is the linear
formula with the arms e_k). The rule runs on every problem offering this ``optimism``
(:mod:`bandits.pure_exploration.capabilities`). The estimate, t and the confidence widths are those of the batch's
start.

``learners="one"`` keeps one learner for every answer; ``"per-answer"`` one learner per answer of the estimate
(the authors' LinGame code keys its learners by the current answer). ``steps="round"`` takes one learner step per
pull (the paper); ``"batch"`` one lazy step per batch, its gain counted n times for a batch of n pulls drawn
independently from the learner (:meth:`~bandits.pure_exploration.Problem.draw_pulls`: the counts track the cumulative
plays up to O(sqrt t)), for problems whose pulls are too many to step through one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.validation import check_choice
from ..adahedge import AdaHedge
from ..optimism import Optimism
from ..pieces import GLRStatistic
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState

__all__ = ["LEARNERS", "STEPS", "LinGame"]

#: one learner for all answers, or one per answer of the estimate
LEARNERS = ("one", "per-answer")
#: one learner step per pull, or one per batch
STEPS = ("round", "batch")


@dataclass(frozen=True)
class LinGame(Sampler):
    """LinGame (Degenne et al. 2020): AdaHedge against the best response, optimistic gains, C-tracking.

    Parameters
    ----------
    learners : str
        ``"one"`` learner for all answers or one ``"per-answer"`` of the estimate.
    steps : str
        ``"round"`` (a learner step per pull, default) or ``"batch"`` (one lazy step per batch, the pulls drawn from
        the learner).

    Raises
    ------
    InvalidInputError
        An unknown ``learners`` or ``steps`` value.
    """

    learners: str = "one"
    steps: str = "round"

    def __post_init__(self) -> None:
        """Check the options."""
        check_choice(self.learners, "learners", LEARNERS)
        check_choice(self.steps, "steps", STEPS)

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
            The draws of ``steps="batch"`` (the round-by-round rule is deterministic).

        Returns
        -------
        SamplerState
            The LinGame state.
        """
        return LinGameState(problem, self.learners == "one", rng, lazy=self.steps == "batch")


class LinGameState(SequentialState):
    """One LinGame run: the learner(s), the cumulative plays, the batch's optimism.

    Parameters
    ----------
    problem : Problem
        The structure (offering ``optimism``).
    shared : bool
        One learner for all answers (else one per answer).
    rng : numpy.random.Generator, optional
        The draws of lazy steps.
    lazy : bool
        One learner step per batch (``steps="batch"``).
    """

    def __init__(self, problem: Problem, shared: bool, rng: np.random.Generator | None = None, *,
                 lazy: bool = False) -> None:
        self.problem, self.shared, self.rng, self.lazy = problem, shared, rng, lazy
        self.learners: dict[int, AdaHedge] = {}
        self.cumulative: np.ndarray | None = None
        self.steps = 0  # learner steps taken
        self._key = 0
        self._best = 0
        self._optimism: Optimism | None = None

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self.cumulative is None:
            self.cumulative = obs.counts.astype(float)
        self.prepare(obs)
        self._key = 0 if self.shared else self._best
        if self._key not in self.learners:
            self.learners[self._key] = self.problem.learner()
        if not self.lazy:
            return super().plan(obs, n)
        assert self.rng is not None
        learner = self.learners[self._key]
        w = learner.weights()
        gains = self.gains(obs, w)
        pulls = self.problem.draw_pulls(learner, self.rng, n)  # from the distribution whose marginals are w
        learner.update(-n * gains)
        self.cumulative += n * w
        self.steps += 1
        return pulls

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """``{"lingame_steps": learner steps so far}``."""
        return {"lingame_steps": self.steps}

    def prepare(self, obs: Observations) -> None:
        """The batch's c_t = log t and the problem's optimism at the estimate (its answer, its confidence widths).

        Parameters
        ----------
        obs : Observations
            The batch's start.
        """
        with self.solving(self.problem.searches_solve):
            self._optimism = self.problem.optimism(obs.mu, obs.counts, float(np.log(max(obs.time, 2))))
        self._best = self._optimism.best

    def choose(self, obs: Observations, counts: np.ndarray) -> int | np.ndarray:
        learner = self.learners[self._key]
        w = learner.weights()
        gains = self.gains(obs, w)
        learner.update(-gains)
        assert self.cumulative is not None
        self.cumulative += w
        self.steps += 1
        return self.problem.best_pull(self.cumulative - counts)

    def gains(self, obs: Observations, w: np.ndarray) -> np.ndarray:
        """U of the best response to the play ``w`` at the batch's estimate (:meth:`Optimism.gains`; solve time where
        the problem's searches solve)."""
        assert self._optimism is not None
        with self.solving(self.problem.searches_solve):
            return self._optimism.gains(w)

    def gains_at_estimate(self, obs: Observations) -> np.ndarray:
        """U at lambda = the batch's estimate (:meth:`Optimism.at_estimate`)."""
        assert self._optimism is not None
        return self._optimism.at_estimate()
