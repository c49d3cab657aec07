"""Top-Two sampling on factored multi-agent bandits: every round plays a leader or a challenger joint action.

The Top-Two rules of the K-armed problem (:mod:`bandits.pure_exploration.samplers.top_two`; Russo 2016, Jourdan et
al. 2022) carry over to a factor graph because its pieces have the K-armed shape: the piece of an alternative a
(:mod:`bandits.multiagent.problem`) reads the counts only at the entries (e, a_hat_e) and (e, a_e) of the factors
that a changes, exactly as a K-armed piece reads the leader's count and the challenger's. Playing the leader joint
action adds one observation to each of its entries, playing the challenger to each of its own, so a round of
either is one "arm" of the K-armed rule. Per batch of the factored loop (:mod:`bandits.multiagent.sampling`):

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

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from optdesign.errors import InvalidInputError
from optdesign.factored import MaxSum

from ..core.validation import check_choice, check_top_two_beta
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.sampler import Observations
from .best_response import exact_best_response
from .environment import FactoredBandit
from .glrt import GLRState
from .joint_actions import encode_joint
from .problem import FactoredProblem
from .sampling import CoveredAlgorithm, FactoredState, _shared_doc

__all__ = ["JOINT_LEADERS", "JOINT_SELECTIONS", "JointTopTwo", "leader_share"]

#: the leader rules and the selections of :class:`JointTopTwo`
JOINT_LEADERS = ("eb", "ts")
JOINT_SELECTIONS = ("tracking", "sampling")


def leader_share(counts: np.ndarray, leader_entries: np.ndarray, challenger_entries: np.ndarray) -> float:
    """The IDS proportion of the leader: sum 1 / N_{e,B_e} over the factors where B and C differ, over H(C).

    Parameters
    ----------
    counts : numpy.ndarray, shape (Abar,)
        Observations per group action (positive at the entries read).
    leader_entries : numpy.ndarray of int, shape (F,)
        The flat group action of the leader in every factor.
    challenger_entries : numpy.ndarray of int, shape (F,)
        The same for the challenger.

    Returns
    -------
    float
        The share in [0, 1]; 1/2 when the two joint actions agree on every factor.

    Raises
    ------
    InvalidInputError
        Entry arrays of different shapes or outside the counts, or a count read that is not positive.
    """
    leader_entries, challenger_entries = np.asarray(leader_entries), np.asarray(challenger_entries)
    if leader_entries.shape != challenger_entries.shape or leader_entries.ndim != 1:
        raise InvalidInputError(f"the leader's and the challenger's entries must be vectors of one shape, got "
                                f"{leader_entries.shape} and {challenger_entries.shape}")
    read = np.concatenate([leader_entries, challenger_entries])
    if read.size and (read.min() < 0 or read.max() >= counts.size or np.any(counts[read] <= 0)):
        raise InvalidInputError("leader_share reads counts that are missing or not positive")
    changed = leader_entries != challenger_entries
    lead = float(np.sum(1.0 / counts[leader_entries[changed]]))
    chal = float(np.sum(1.0 / counts[challenger_entries[changed]]))
    return lead / (lead + chal) if lead + chal > 0 else 0.5


@_shared_doc
@dataclass(frozen=True)
class JointTopTwo(CoveredAlgorithm):
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
%(threshold)s
%(glrt)s
%(cover)s
%(exploration)s Default ``"dtracking"`` (module docstring).
%(growth)s

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

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """After the pass over A0, each batch plays the leader and its challenger."""
        return _TopTwoState(problem, rng, self, cover=self.cover, exploration=self.exploration)


class _TopTwoState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, rule: JointTopTwo,
                 **options: Any) -> None:
        super().__init__(problem, rng, **options)
        self.rule = rule
        self.leader_pulls: dict[int, float] = {}  # per leader code: its pulls in the rounds it led
        self.beta_sums: dict[int, float] = {}  # per leader code: the sum of beta over those rounds
        self.ts_leaders = 0  # batches whose posterior leader differed from a_hat

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        leader, challenger = self._pair(self.glr_state(obs), obs.counts)
        if challenger is None:  # a single joint action: nothing to test against
            return self.indexer.counts(leader[None, :], np.array([n]))
        flat = self.indexer.flat(np.stack([leader, challenger]))
        beta = (leader_share(obs.counts, flat[0], flat[1]) if self.rule.beta == "ids"
                else float(self.rule.beta))
        n_leader = self._leader_rounds(encode_joint(leader, self.radices), beta, n)
        reps = np.array([n_leader, n - n_leader])
        keep = reps > 0
        return self.indexer.counts(np.stack([leader, challenger])[keep], reps[keep])

    def _pair(self, state: GLRState, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(leader, challenger) at the batch's start; the challenger is None when there is no alternative."""
        if self.rule.leader == "ts":
            N = counts.astype(float)
            draw = state.theta + self.sigma / np.sqrt(N) * self.rng.standard_normal(N.size)
            leader = MaxSum(self.structure.plan(), draw).best_action
            if not np.array_equal(leader, state.best):
                self.ts_leaders += 1
                return leader, state.best
        start = time.perf_counter()
        challenger = exact_best_response(state).action
        self.solve_time += time.perf_counter() - start  # the search and optdesign's Pareto elimination
        return state.best, challenger

    def _leader_rounds(self, code: int, beta: float, rounds: int) -> int:
        """Rounds of the batch given to the leader: per-leader tracking of beta, or a binomial draw."""
        if self.rule.selection == "sampling":
            return int(self.rng.binomial(rounds, beta))
        pulls, total = self.leader_pulls.get(code, 0.0), self.beta_sums.get(code, 0.0)
        n = 0
        for _ in range(rounds):
            total += beta
            if pulls <= total:
                pulls += 1
                n += 1
        self.leader_pulls[code], self.beta_sums[code] = pulls, total
        return n

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        out = super().describe(statistic)
        if self.rule.leader == "ts":
            out["ts_leaders"] = self.ts_leaders
        return out
