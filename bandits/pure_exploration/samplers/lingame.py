"""LinGame (Degenne, Ménard, Shang & Valko, ICML 2020, "Gamification of pure exploration for linear bandits").

A learner (:class:`bandits.pure_exploration.samplers.games.AdaHedge` over the arms) plays w_t; the lambda-player
best-responds with the piece minimising f_j(w_t) at the estimate (closest alternative lambda); the learner gains
the optimistic gradient of that piece, U_k = min((|x_k^T (theta_hat - lambda)| + sigma sqrt(2 c_t) ||x_k||_{A^{-1}})^2
/ (2 sigma^2), c_t) with c_t = log t and A = sum_k N_k x_k x_k^T (the authors' implementation); the arm pulled
C-tracks the cumulative sum of the w_t.

K-armed problems use the analogous upper confidence on d(mu_k, lambda_k): U_k = min(max(d(u_k, lambda_k),
d(l_k, lambda_k)), c_t) with [l_k, u_k] = {m : N_k d(mu_k, m) <= c_t} (for Gaussian arms this is the linear
formula with the arms e_k). The estimate, t and the confidence widths are those of the batch's start.

``learners="one"`` keeps one learner for every answer; ``"per-answer"`` one learner per answer of the estimate
(the authors' LinGame code keys its learners by the current answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ...alternatives import Directions
from ..families import Gaussian
from ..karmed import KArmedProblem
from ..linear import LinearProblem
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState, c_tracking
from .games import AdaHedge

__all__ = ["LEARNERS", "LinGame", "kl_confidence"]

#: one learner for all answers, or one per answer of the estimate
LEARNERS = ("one", "per-answer")
#: bisection steps of the K-armed confidence bounds
BISECTION_STEPS = 50


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

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh LinGame state (learners created on first use).

        Parameters
        ----------
        problem : Problem
            A linear or K-armed problem.
        env : object
            The instance (unused).
        rng : numpy.random.Generator
            Unused (the rule is deterministic).

        Returns
        -------
        SamplerState
            The LinGame state.

        Raises
        ------
        InvalidInputError
            A problem that is neither linear nor K-armed.
        """
        if not isinstance(problem, (LinearProblem, KArmedProblem)):
            raise InvalidInputError(f"lingame runs on linear or K-armed problems, not {type(problem).__name__}")
        return LinGameState(problem, self.learners == "one")


def kl_confidence(family: Any, mu: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The confidence interval {m : d(mu_k, m) <= level_k} of every arm (closed form for Gaussian arms,
    bisection on [0, 1] otherwise).

    Parameters
    ----------
    family : ExponentialFamily
        The arms' family.
    mu : numpy.ndarray, shape (K,)
        The means.
    level : numpy.ndarray, shape (K,)
        The divergence allowed per arm (c_t / N_k).

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper)`` bounds per arm.
    """
    if isinstance(family, Gaussian):
        width = family.sigma * np.sqrt(2.0 * level)
        return mu - width, mu + width
    bounds = []
    for edge in (0.0, 1.0):
        inside, outside = mu.copy(), np.full(mu.shape, edge)
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (inside + outside)
            ok = family.kl(mu, mid) <= level
            inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
        bounds.append(inside)
    return bounds[0], bounds[1]


class LinGameState(SequentialState):
    """One LinGame run: the learner(s), the cumulative plays, the batch's confidence widths.

    Parameters
    ----------
    problem : LinearProblem or KArmedProblem
        The structure.
    shared : bool
        One learner for all answers (else one per answer).
    """

    def __init__(self, problem: LinearProblem | KArmedProblem, shared: bool) -> None:
        self.problem, self.shared = problem, shared
        self.learners: dict[int, AdaHedge] = {}
        self.cumulative: np.ndarray | None = None
        self._c = 1.0
        self._key = 0
        self._best = 0
        self._directions: Directions | None = None  # of the batch's estimate (linear problems)
        self._widths = np.zeros(0)
        self._bounds = (np.zeros(0), np.zeros(0))

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self.cumulative is None:
            self.cumulative = obs.counts.astype(float)
        self.prepare(obs)
        self._key = 0 if self.shared else self._best
        if self._key not in self.learners:
            self.learners[self._key] = AdaHedge(self.problem.n_arms)
        return super().plan(obs, n)

    def prepare(self, obs: Observations) -> None:
        """The batch's c_t = log t, the estimate's answer and the confidence widths (K-armed: intervals) of the arms.

        Parameters
        ----------
        obs : Observations
            The batch's start.
        """
        problem = self.problem
        t = max(obs.t, 2)
        self._c = float(np.log(t))
        self._best = problem.answer(obs.mu)
        counts = np.maximum(obs.counts, 1e-300)
        if isinstance(problem, LinearProblem):
            self._directions = Directions(problem.Z, obs.mu)
            A = problem.information(obs.counts)
            H = np.linalg.pinv(A, hermitian=True)
            norms = np.einsum("kd,kd->k", problem.X @ H, problem.X)
            self._widths = problem.sigma * np.sqrt(2.0 * self._c * np.maximum(norms, 0.0))
        else:
            self._bounds = kl_confidence(problem.family, obs.mu, self._c / counts)

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        learner = self.learners[self._key]
        w = learner.weights()
        gains = self.gains(obs, w)
        learner.update(-gains)
        assert self.cumulative is not None
        self.cumulative += w
        return c_tracking(self.cumulative, counts)

    def gains(self, obs: Observations, w: np.ndarray) -> np.ndarray:
        """The optimistic gradient U of the best response to w at the batch's estimate.

        Parameters
        ----------
        obs : Observations
            The batch's start.
        w : numpy.ndarray, shape (K,)
            The learner's play.

        Returns
        -------
        numpy.ndarray, shape (K,)
            U_k in [0, c_t].
        """
        problem = self.problem
        if isinstance(problem, LinearProblem):
            alternatives = problem.alternatives(obs.mu, w, directions=self._directions)
            response = int(np.argmin(alternatives.values))  # the best response: the piece of least value
            return self._linear_gains(np.abs(problem.X @ alternatives.displacement(response)))
        pieces = problem.pieces(obs.mu, w, gradients=False)
        b, a = pieces.best, int(pieces.challenger)
        lam = obs.mu.astype(float).copy()
        total = w[b] + w[a]
        lam[[a, b]] = (w[b] * obs.mu[b] + w[a] * obs.mu[a]) / total if total > 0 else 0.5 * (obs.mu[a] + obs.mu[b])
        return self._karmed_gains(lam)

    def gains_at_estimate(self, obs: Observations) -> np.ndarray:
        """The optimistic gradient U at lambda = the estimate: the best response of an answer the estimate already
        contradicts (linear: c_t ||x_k||^2_{A^{-1}}; K-armed: max(d(l_k, mu_k), d(u_k, mu_k)); capped at c_t).

        Parameters
        ----------
        obs : Observations
            The batch's start.

        Returns
        -------
        numpy.ndarray, shape (K,)
            U_k in [0, c_t].
        """
        if isinstance(self.problem, LinearProblem):
            return self._linear_gains(np.zeros(self.problem.n_arms))
        return self._karmed_gains(np.asarray(obs.mu, dtype=float))

    def _linear_gains(self, shift: np.ndarray) -> np.ndarray:
        """min((shift_k + width_k)^2 / (2 sigma^2), c_t) for the shifts |x_k^T (theta_hat - lambda)|."""
        assert isinstance(self.problem, LinearProblem)
        return np.minimum((shift + self._widths) ** 2 / (2.0 * self.problem.sigma**2), self._c)

    def _karmed_gains(self, lam: np.ndarray) -> np.ndarray:
        """min(max(d(l_k, lambda_k), d(u_k, lambda_k)), c_t) for the batch's confidence intervals [l_k, u_k]."""
        assert isinstance(self.problem, KArmedProblem)
        lower, upper = self._bounds
        family = self.problem.family
        return np.minimum(np.maximum(family.kl(lower, lam), family.kl(upper, lam)), self._c)
