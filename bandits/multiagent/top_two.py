"""Top-Two sampling on factored multi-agent bandits: every round plays a leader or a challenger joint action.

The Top-Two rules of the K-armed problem (:mod:`bandits.pure_exploration.samplers.top_two`; Russo 2016, Jourdan et
al. 2022) carry over to a factor graph because its pieces have the K-armed shape: the piece of an alternative a
(:mod:`bandits.multiagent.problem`) reads the counts only at the entries (e, a_hat_e) and (e, a_e) of the factors
that a changes, exactly as a K-armed piece reads the leader's count and the challenger's. Playing the leader joint
action adds one observation to each of its entries, playing the challenger to each of its own, so a round of
either is one "arm" of the K-armed rule. Per batch of the factored loop (:mod:`bandits.multiagent.batches`):

* leader B: ``"ts"`` (default), the max-sum of one posterior draw theta_e(b) ~ N(theta_hat_e(b), sigma^2 / N_e,b);
  or ``"eb"``, the empirical best a_hat (max-sum of theta_hat);
* challenger C (transportation cost): for B = a_hat, the best response argmin_{a != a_hat} D(a)^2 / (2 sigma^2 H(a))
  at the counts, found exactly without listing every joint action (:mod:`bandits.multiagent.best_response`: the
  GLRT's search, then the Pareto elimination of exact T*'s separation); for a TS leader
  B != a_hat, a_hat itself, whose cost against B is zero;
* B with proportion beta: a number in (0, 1), or ``"ids"`` (information-directed selection, You, Qin, Wang & Yang,
  COLT 2023): the leader's share of the information of the pair at its closest alternative, which is
  sum_{e changed} 1 / N_{e,B_e} divided by H(C) = sum_{e changed} (1 / N_{e,B_e} + 1 / N_{e,C_e})
  (N_C / (N_B + N_C) with one agent, the K-armed Gaussian IDS); ``selection="tracking"`` plays B while its pulls
  as leader are at most the sum of the betas of the rounds it led (one counter per leader), ``"sampling"`` draws
  the number of leader rounds of the batch from a binomial.

With the TS leader and the TC challenger this is T3C (Shang, de Heide, Ménard, Kaufmann & Valko, AISTATS 2020):
an entry with few observations has a large 1 / N in H, so the alternatives through it become challengers. Batched,
though, the leader is drawn once per batch, and a run can follow a wrong empirical best for long (one run on the
line N = 5, K = 3 of mftas_synthetic.toml took 3.0e6 rounds against 1.7e4-4.2e4 for the others). The default
forced exploration is therefore GK16's D-tracking level (``exploration="dtracking"``: A0 plays while some
N_{e,b} < sqrt(t) - Abar/2), which never acts before t > Abar^2/4 and then keeps every group action observed
about sqrt(t) times; that run then stops at 3.2e4 rounds. On structures of a hundred agents and more the posterior
draw's best joint action differs from a_hat in about 40 % of batches, and T3C's rounds grow (7.0x the exact lower
bound on the planted line of 200 agents, 15.9x on the ring of 200: benchmarks/RESULTS.md §6), where the ``"eb"``
leader (2.6x on that line) and Frank–Wolfe sampling (:mod:`bandits.multiagent.frank_wolfe`) stay within 2.7x.

The pair is computed at the batch's start (the estimate and the counts of the last checkpoint); ``growth`` sets
the batches (0.01: pairs re-computed on a 1 % grid of rounds; a tiny growth gives one round per batch and the
sequential rule). With one agent, ``leader="eb"`` and ``exploration="none"`` the rule picks the pulls of the
K-armed EB-TC / IDS rule. Per batch the cost is the best response (shared with the stopping rule's search) plus,
for ``"ts"``, one max-sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validation import check_choice, check_top_two_beta
from ..pure_exploration.samplers.top_two import TopTwo, TopTwoState
from .alternatives import leader_share
from .batches import RuleState
from .environment import FactoredBandit
from .problem import FactoredProblem
from .sampling import CoveredSampler, _shared_doc

__all__ = ["JOINT_LEADERS", "JOINT_SELECTIONS", "JointTopTwo", "leader_share"]

#: the leader rules and the selections of :class:`JointTopTwo`
JOINT_LEADERS = ("eb", "ts")
JOINT_SELECTIONS = ("tracking", "sampling")


@_shared_doc
@dataclass(frozen=True)
class JointTopTwo(CoveredSampler):
    """Top-Two on a factor graph: a leader joint action, its exact best response, beta between them (module
    docstring), factored GLRT stop.

    Parameters
    ----------
    leader : str
        ``"ts"`` (the best joint action of a posterior draw, default) or ``"eb"`` (the empirical best).
    beta : float or str
        The leader's proportion in (0, 1), or ``"ids"`` (information-directed selection, default).
    selection : str
        ``"tracking"`` (per-leader tracking of beta, default) or ``"sampling"`` (a binomial draw per batch).
%(cover)s
%(exploration)s Default ``"dtracking"`` (module docstring).
%(legacy)s

    Raises
    ------
    InvalidInputError
        An unknown leader, selection, threshold, glrt, cover or exploration option, a beta outside (0, 1) other than
        ``"ids"``, or a growth outside [0, 1].
    """

    leader: str = "ts"
    beta: float | str = "ids"
    selection: str = "tracking"
    exploration: str = "dtracking"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.leader, "leader", JOINT_LEADERS)
        check_choice(self.selection, "selection", JOINT_SELECTIONS)
        check_top_two_beta(self.beta)

    @property
    def name(self) -> str:
        """``"joint-top-two"``."""
        return "joint-top-two"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """After the pass over A0, each batch plays the leader and its challenger (the generic Top-Two's lazy state)."""
        rule = TopTwo(leader=self.leader, challenger="tc", beta=self.beta, selection=self.selection)
        return RuleState(problem, TopTwoState(rule, problem, rng, lazy=True), cover=self.cover,
                         exploration=self.exploration)
