"""LinGame over joint actions on factor graphs (``joint-lingame``).

LinGame (Degenne, Ménard, Shang & Valko, ICML 2020, "Gamification of pure exploration for linear bandits";
K-armed form :mod:`bandits.pure_exploration.samplers.lingame`) with the joint actions as arms. The learner is AdaHedge
over joint actions (:class:`bandits.multiagent.gibbs.FactoredAdaHedge`): the gains below are linear in the factor
entries, so its distribution is a Gibbs distribution and its play w the factor marginals, a point of the marginal
polytope. Per batch of the factored loop (:mod:`bandits.multiagent.sampling`) the estimate theta_hat, t and the
confidence widths are those of the batch's start; each step

* the lambda-player best-responds at (theta_hat, w): the alternative a != a_hat of least
  f_a(w) = D(a)^2 / (2 sigma^2 H_w(a)) (:func:`bandits.multiagent.fw_game.near_tied_pieces` with no slack:
  enumeration on small structures, the Pareto elimination on large ones), with w floored at :data:`W_FLOOR`;
* its closest alternative lambda minimises sum_{e,b} w_{e,b} (theta_hat_{e,b} - lambda_{e,b})^2 / (2 sigma^2) subject
  to sum_e lambda_e(a_e) >= sum_e lambda_e(a_hat_e): by Lagrange, the entries (e, a_hat_e) and (e, a_e) of the
  factors a changes move towards each other by c / w_{e,b}, c = D(a) / H_w(a), and no other entry moves; so
  (theta_hat - lambda)_{e,b}^2 / (2 sigma^2) is the piece's gradient (:func:`bandits.multiagent.problem.
  joint_piece_gradients`), and the shift is read from it;
* the learner gains the optimistic gradient U_{e,b} = min((abs(theta_hat_{e,b} - lambda_{e,b})
  + sigma sqrt(2 c_t / N_{e,b}))^2 / (2 sigma^2), c_t), c_t = log t (the entries off the changed factors get the
  confidence bonus alone, as all do when the estimate has no unique best joint action); its loss is -U;
* the cumulative marginals grow by w, and the pull C-tracks them: argmax_a sum_e (cumulative_{e,a_e} - N_{e,a_e}),
  one max-sum (on one agent, :func:`~bandits.pure_exploration.sampler.c_tracking`).

``steps="round"`` takes one step per round (the K-armed rule: on one agent the same pulls from the same
observations, ``tests/test_joint_lingame.py``); ``"batch"`` one lazy step per batch, whose gain is counted R times
for a batch of R rounds and whose R rounds are independent draws from the learner's distribution (ancestral
sampling: the group counts have expectation R w, so N tracks the cumulative marginals up to O(sqrt t), as exact
TaS's draws track its allocation); ``"auto"`` (default) is ``"round"`` up to
:data:`~bandits.multiagent.fw_game.ENUMERATED_MAX` joint actions, else ``"batch"``. The paper's learner needs no
forced exploration (the bonus explores); the default here is the policy's D-tracking level sqrt(t) - Abar/2, as for
the factored Top-Two, which never acts before t > (Abar/2)^2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from optdesign.factored import MaxSum

from ..core.validation import check_choice
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.sampler import Observations
from .environment import FactoredBandit
from .fw_game import enumerated, is_tied, near_tied_pieces
from .gibbs import FactoredAdaHedge
from .glrt import GLRState
from .problem import FactoredProblem
from .sampling import CoveredAlgorithm, FactoredState, _shared_doc

__all__ = ["STEPS", "W_FLOOR", "JointLinGame"]

#: one learner step per round, one per batch, or by the structure's size
STEPS = ("auto", "round", "batch")
#: the learner's marginals are floored here in H_w (a marginal that underflowed to 0 would make H infinite)
W_FLOOR = 1e-150


@_shared_doc
@dataclass(frozen=True)
class JointLinGame(CoveredAlgorithm):
    """LinGame on a factor graph: AdaHedge over joint actions against the best response, optimistic gains,
    C-tracking of the cumulative marginals (module docstring), factored GLRT stop.

    Parameters
    ----------
    steps : str
        ``"round"`` (a learner step per round), ``"batch"`` (one lazy step per batch, the rounds drawn from the
        learner) or ``"auto"`` (default: ``"round"`` on structures of at most
        :data:`~bandits.multiagent.fw_game.ENUMERATED_MAX` joint actions).
%(threshold)s
%(glrt)s
%(cover)s
%(exploration)s Default ``"dtracking"``.
%(growth)s

    Raises
    ------
    InvalidInputError
        An unknown steps, threshold, glrt, cover or exploration option, or a growth outside [0, 1].
    """

    steps: str = "auto"
    exploration: str = "dtracking"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.steps, "steps", STEPS)

    @property
    def name(self) -> str:
        """``"joint-lingame"``."""
        return "joint-lingame"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """After the pass over A0, each batch plays the game's steps."""
        return _LinGameState(problem, rng, self, cover=self.cover, exploration=self.exploration)


class _LinGameState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, rule: JointLinGame,
                 **options: Any) -> None:
        super().__init__(problem, rng, **options)
        self.elimination = problem.glrt.plan
        self.lazy = rule.steps == "batch" or (rule.steps == "auto" and not enumerated(problem.glrt))
        self.learner = FactoredAdaHedge(self.elimination)
        self.cumulative: np.ndarray | None = None  # sum of the plays w, from the first tracked round's counts
        self.response: np.ndarray | None = None  # the last best response (seeds the next search)
        self.steps = 0

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        state = self.glr_state(obs)
        counts = obs.counts.copy()
        rounds = n
        if self.cumulative is None:
            self.cumulative = counts.astype(float)
        c = float(np.log(max(obs.time, 2)))
        width = self.sigma * np.sqrt(2.0 * c / counts)
        start = time.perf_counter()
        if self.lazy:
            w = self.learner.weights()
            gains = self._gains(state, w, width, c)
            draws = self.learner.sample(self.rng, rounds)  # the distribution whose marginals are w
            self.learner.update(-rounds * gains)
            self.cumulative += rounds * w
            self.steps += 1
            self.solve_time += time.perf_counter() - start
            return self.indexer.counts(draws, np.ones(rounds, dtype=np.int64))
        played = np.zeros(self.abar, dtype=np.int64)
        for _ in range(rounds):
            w = self.learner.weights()
            self.learner.update(-self._gains(state, w, width, c))
            self.cumulative += w
            action = MaxSum(self.elimination, self.cumulative - counts, keep_regrets=False).best_action
            flat = self.indexer.flat(action[None, :])[0]
            counts[flat] += 1
            played[flat] += 1
        self.steps += rounds
        self.solve_time += time.perf_counter() - start
        return played

    def _gains(self, state: GLRState, w: np.ndarray, width: np.ndarray, c: float) -> np.ndarray:
        """U = min((abs(theta_hat - lambda) + width)^2 / (2 sigma^2), c_t) at the best response to w."""
        shift = np.zeros(self.abar)
        if not is_tied(state):
            floored = np.maximum(w, W_FLOOR)
            at_w = self.problem.glr_state(state.theta, floored)
            near = near_tied_pieces(at_w, floored, slack=0.0, limit=1, candidates=self.response)
            self.response = near.actions[:1]
            shift = self.sigma * np.sqrt(2.0 * near.gradients[0])  # the gradient is (theta_hat - lambda)^2 / 2 s^2
        return np.minimum((shift + width) ** 2 / (2.0 * self.sigma**2), c)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        return {**super().describe(statistic), "lingame_steps": self.steps}
