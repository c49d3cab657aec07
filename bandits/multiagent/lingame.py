"""LinGame over joint actions on factor graphs (``joint-lingame``): the generic LinGame rule
(:mod:`bandits.pure_exploration.samplers.lingame`; Degenne, Ménard, Shang & Valko, ICML 2020) on the factored problem,
inside the factored batches (:mod:`bandits.multiagent.batches`: the pass over A0, forced exploration).

The factored problem gives the rule its three parts. The learner is AdaHedge over the joint actions
(:class:`bandits.multiagent.gibbs.FactoredAdaHedge`): the gains are linear in the factor entries, so its distribution
is a Gibbs distribution and its play w the factor marginals, a point of the marginal polytope. The gains are the
optimistic gradients at the best response to w (:class:`bandits.multiagent.optimism.FactoredOptimism`). The pull
C-tracks the cumulative marginals: argmax_a sum_e (cumulative_{e,a_e} - N_{e,a_e}), one max-sum
(:meth:`bandits.multiagent.problem.FactoredProblem.best_pull`). The estimate, t (in rounds) and the confidence widths
are those of the batch's start.

``steps="round"`` takes one step per round (on one agent the K-armed rule's pulls from the same observations,
``tests/test_joint_lingame.py``); ``"batch"`` one lazy step per batch, whose gain is counted R times for a batch of R
rounds and whose R rounds are independent draws from the learner's distribution (ancestral sampling: the group counts
have expectation R w, so N tracks the cumulative marginals up to O(sqrt t), as exact TaS's draws track its
allocation); ``"auto"`` (default) is ``"round"`` up to :data:`~bandits.multiagent.fw_game.ENUMERATED_MAX` joint
actions, else ``"batch"``. The paper's learner needs no forced exploration (the bonus explores); the default here is
the D-tracking level sqrt(t) - Abar/2, as for the factored Top-Two, which never acts before t > (Abar/2)^2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import check_choice
from ..pure_exploration.samplers.lingame import LinGameState
from .batches import RuleState
from .environment import FactoredBandit
from .fw_game import enumerated
from .problem import FactoredProblem
from .sampling import CoveredSampler, _shared_doc

__all__ = ["STEPS", "JointLinGame"]

#: one learner step per round, one per batch, or by the structure's size
STEPS = ("auto", "round", "batch")


@_shared_doc
@dataclass(frozen=True)
class JointLinGame(CoveredSampler):
    """LinGame on a factor graph: AdaHedge over joint actions against the best response, optimistic gains,
    C-tracking of the cumulative marginals (module docstring), factored GLRT stop.

    Parameters
    ----------
    steps : str
        ``"round"`` (a learner step per round), ``"batch"`` (one lazy step per batch, the rounds drawn from the
        learner) or ``"auto"`` (default: ``"round"`` on structures of at most
        :data:`~bandits.multiagent.fw_game.ENUMERATED_MAX` joint actions).
%(cover)s
%(exploration)s Default ``"dtracking"``.
%(legacy)s

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

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """After the pass over A0, each batch plays the game's steps (the generic LinGame's state)."""
        lazy = self.steps == "batch" or (self.steps == "auto" and not enumerated(problem.glrt))
        game = LinGameState(problem, True, rng, lazy=lazy)
        return RuleState(problem, game, cover=self.cover, exploration=self.exploration)
