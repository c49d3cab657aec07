"""The Top-Two sampling rules: pull a leader or a challenger (Russo 2016; Jourdan, Degenne, Baudry, de Heide &
Kaufmann, NeurIPS 2022; Jourdan & Degenne, NeurIPS 2023).

Each pull picks a leader B (a guess of the best arm), a challenger C != B (the alternative most worth
testing against it) and then one of the two, the leader with proportion beta.

Leaders (``leader``):

* ``"eb"``: the empirical best, argmax_k mu_hat_k (EB-TC, Jourdan et al. 2022);
* ``"ts"``: the best arm of one posterior draw (Russo's TTTS): N(mu_hat_k, sigma^2 / N_k) for Gaussian arms,
  Beta(1 + S_k, 1 + N_k - S_k) for Bernoulli ones (S_k the reward sum);
* ``"ucb"``: the largest upper confidence index U_k = max{q >= mu_hat_k : N_k d(mu_hat_k, q) <= log t}
  (TTUCB, Jourdan & Degenne 2023): mu_hat_k + sqrt(2 sigma^2 log t / N_k) for Gaussian arms, the KL-UCB
  index (by bisection) for Bernoulli ones.

Challengers (``challenger``), with W_B,j = N_B d(mu_B, m) + N_j d(mu_j, m) at the weighted mean m of the two
(the GLR of "B beats j", 0 when mu_B <= mu_j):

* ``"tc"``: the transportation cost, argmin_{j != B} W_B,j (the best response of the pieces at (mu_hat, N) when
  B is the empirical best);
* ``"tci"``: argmin_{j != B} W_B,j + log N_j (EB-TCI, Jourdan et al. 2022: the penalty favours arms pulled
  less; with the ``"tc"`` challenger an arm whose mean is underestimated early, say a Bernoulli arm with a few
  zeros, can go unpulled for a long time, a heavy tail of EB-TC's stopping time that the penalty removes). On
  other questions the penalty is the log of the information the challenger's piece has received (the problem's
  ``penalised_challenger``): the swapped pair's harmonic count on top m, where the TC challenger can test two
  equal arms forever while the leader holds a worse one, and the direction's on linear problems;
* ``"ts"``: the answer of posterior draws re-sampled until it differs from B (Russo's TTTS: the best arm of a
  draw on K arms, its top set or its side of the level on the other questions, its best item on linear arms), at
  most :data:`TS_DRAWS` draws, then ``"tc"``.

Choice between them (``beta``, ``selection``): ``beta`` a number in (0, 1), or ``"ids"``, the
information-directed selection of You, Qin, Wang & Yang (COLT 2023), beta = N_B d(mu_B, m) / W_B,C: the share
of the leader in the information of the pair (for Gaussian arms N_C / (N_B + N_C)). Its balance point is GK16's
optimality condition sum_j d(mu_B, m_j) / d(mu_j, m_j) = 1, so no beta need be tuned. ``selection="tracking"``
(TTUCB's tracking, one per leader): pull B when its pulls as leader are at most the sum of the betas of the
rounds it led, this one included; ``"sampling"``: pull B with probability beta (the rule's rng).

The estimate and the posterior are those of the batch's start; the counts advance within a batch, so the
challenger and beta follow the pulls. The two sides' pulls are the problem's ``top_two_pulls``
(:mod:`bandits.pure_exploration.pulls`), and the challenger its ``challenger`` or ``penalised_challenger``
(:mod:`bandits.pure_exploration.capabilities`):

* K-armed problems play the two arms (or, on set answers, an arm where the two differ on each side) and derive the
  challengers from their ``pair_costs`` or give their own (top m, thresholding);
* factored problems play the two joint actions, with the exact best response as challenger
  (:mod:`bandits.multiagent.top_two` runs the rule lazily, one pair per batch);
* linear and transductive problems (best item, top m, thresholding) test the pair of items with one pull, the arm
  that most reduces the variance of the pair's gap estimate (the "G" pull of L-T3C, the linear Top-Two of the
  public code of Degenne, Menard, Shang & Valko's LinGame experiments, ICML 2020; with the TC challenger it is a
  greedy step on the least piece, the step FWS takes on a smooth optimum), so ``beta`` and ``selection`` keep their
  defaults there.

The Thompson-sampling leader and challenger also need the problem's ``posterior_draws`` (on linear problems theta
~ N(theta_hat, sigma^2 A^{-1})), the UCB leader its ``upper_indices`` and the IDS beta its ``pair_share``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ...core.validation import check_choice, check_top_two_beta
from ..pieces import GLRStatistic
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState

__all__ = ["CHALLENGERS", "LEADERS", "SELECTIONS", "TS_DRAWS", "TopTwo", "TopTwoState"]

#: the leader rules, challenger rules and selections of :class:`TopTwo`
LEADERS = ("eb", "ts", "ucb")
CHALLENGERS = ("tc", "tci", "ts")
SELECTIONS = ("tracking", "sampling")
#: posterior draws the ``"ts"`` challenger tries before falling back to ``"tc"``
TS_DRAWS = 1000


@dataclass(frozen=True)
class TopTwo(Sampler):
    """A Top-Two rule: a leader, a challenger, and the leader with proportion beta (module docstring).

    Parameters
    ----------
    leader : str
        ``"eb"`` (empirical best), ``"ts"`` (Thompson sampling) or ``"ucb"`` (upper confidence index).
    challenger : str
        ``"tc"`` (transportation cost), ``"tci"`` (plus log N_j) or ``"ts"`` (re-sampling).
    beta : float or str
        The leader's proportion in (0, 1), or ``"ids"`` (information-directed selection).
    selection : str
        ``"tracking"`` (per-leader tracking of beta) or ``"sampling"`` (a coin of bias beta).

    Raises
    ------
    InvalidInputError
        An unknown leader, challenger or selection, or a beta outside (0, 1) other than ``"ids"``.
    """

    leader: str = "eb"
    challenger: str = "tc"
    beta: float | str = 0.5
    selection: str = "tracking"

    def __post_init__(self) -> None:
        """Check the options."""
        check_choice(self.leader, "leader", LEADERS)
        check_choice(self.challenger, "challenger", CHALLENGERS)
        check_choice(self.selection, "selection", SELECTIONS)
        check_top_two_beta(self.beta)

    @property
    def name(self) -> str:
        """``top-two``."""
        return "top-two"

    def requires(self) -> tuple[str, ...]:
        """A challenger of a leader answer (``tc``, and ``ts`` after TS_DRAWS draws that all answer the leader),
        its penalised form (``tci``), and what the leader and beta options read."""
        needs = ["penalised_challenger" if self.challenger == "tci" else "challenger"]
        if "ts" in (self.leader, self.challenger):
            needs.append("posterior_draws")
        if self.leader == "ucb":
            needs.append("upper_indices")
        if self.beta == "ids":
            needs.append("pair_share")
        return tuple(needs)

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh state for one run.

        Parameters
        ----------
        problem : Problem
            The structure, offering :meth:`requires`.
        env : object
            The instance (unused).
        rng : numpy.random.Generator
            Posterior draws and the selection coin.

        Returns
        -------
        SamplerState
            The rule's state.

        Raises
        ------
        InvalidInputError
            A beta or selection other than the default on a problem whose pair is tested by one pull.
        """
        if problem.duel_sides == 1 and (self.beta != 0.5 or self.selection != "tracking"):
            raise InvalidInputError(f"top-two: beta and selection share the pulls between a leader's and a "
                                    f"challenger's side, but on {type(problem).__name__} one pull tests the pair; "
                                    f"leave them at their defaults")
        return TopTwoState(self, problem, rng)


class TopTwoState(SequentialState):
    """One run: the per-leader tracking counters and the batch's fixed leader (``eb``, ``ucb``).

    Parameters
    ----------
    rule : TopTwo
        The options.
    problem : Problem
        The structure, offering what ``rule.requires()`` names.
    rng : numpy.random.Generator
        Posterior draws and the selection coin.
    lazy : bool
        One leader, challenger and beta per batch, at its start, the batch shared between the two by tracking (or
        one binomial draw): the rule where a challenger is costly (factored problems). Default: one per pull.
    """

    def __init__(self, rule: TopTwo, problem: Problem, rng: np.random.Generator, *, lazy: bool = False) -> None:
        self.rule, self.problem, self.rng, self.lazy = rule, problem, rng, lazy
        self.leader_pulls: dict[int, float] = {}  # per leader: its pulls in the rounds it led
        self.beta_sums: dict[int, float] = {}  # per leader: the sum of beta over those rounds
        self._batch_leader: int | None = None
        self.ts_leaders = 0  # lazy batches whose posterior leader differed from the empirical answer

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """The batch's leader when it does not depend on draws, then one Top-Two pull at a time (or, lazy, the
        batch's pair shared once).

        Parameters
        ----------
        obs : Observations
            Counts, sums and estimate at the batch's start.
        n : int
            Batch size.

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm (pulls per arm when a pull is one arm).
        """
        leader = self.rule.leader
        self._batch_leader = (self.problem.answer(obs.mu) if leader == "eb"
                              else self.problem.answer(self._ucb(obs)) if leader == "ucb" else None)
        if not self.lazy:
            return super().plan(obs, n)
        B = self._leader(obs)
        if leader == "ts" and B != obs.statistic().answer:
            self.ts_leaders += 1
        C = self._challenger(obs, obs.counts, B)
        n_leader = n
        if C is not None:
            beta = self._beta(obs.mu, obs.counts, B, C)
            n_leader = (int(self.rng.binomial(n, beta)) if self.rule.selection == "sampling"
                        else sum(self._tracked(B, beta) for _ in range(n)))
        batch = np.zeros(self.problem.n_arms, dtype=np.int64)
        if C is None:
            batch[self.problem.answer_pull(B)] += n_leader
            return batch
        lead, chal = self.problem.top_two_pulls(B, C, obs.counts)
        batch[lead] += n_leader
        batch[chal] += n - n_leader
        return batch

    def choose(self, obs: Observations, counts: np.ndarray) -> int | np.ndarray:
        B = self._leader(obs)
        C = self._challenger(obs, counts, B)
        if C is None:
            return self.problem.answer_pull(B)
        beta = self._beta(obs.mu, counts, B, C)
        lead, chal = self.problem.top_two_pulls(B, C, counts)
        if self.rule.selection == "sampling":
            return lead if self.rng.random() < beta else chal
        return lead if self._tracked(B, beta) else chal

    def _tracked(self, B: int, beta: float) -> bool:
        """Per-leader tracking of beta: whether B's pulls as leader are at most the sum of the betas it led with."""
        total = self.beta_sums[B] = self.beta_sums.get(B, 0.0) + beta
        pulls = self.leader_pulls.get(B, 0.0)
        if pulls <= total:
            self.leader_pulls[B] = pulls + 1
            return True
        return False

    def _leader(self, obs: Observations) -> int:
        """The batch's leader, or the answer of one posterior draw (TS)."""
        return self._batch_leader if self._batch_leader is not None else \
            self.problem.answer(self._draws(obs, 1)[0])

    def _draws(self, obs: Observations, size: int) -> np.ndarray:
        """``size`` posterior draws of the parameter, shape (size, K)."""
        return self.problem.posterior_draws(obs.mu, obs.counts, obs.sums, size, self.rng)

    def _ucb(self, obs: Observations) -> np.ndarray:
        """U_k = max{q >= mu_k : N_k d(mu_k, q) <= log t} (the problem's upper indices)."""
        return self.problem.upper_indices(obs.mu, obs.counts, float(np.log(max(obs.t, 2))))

    def _challenger(self, obs: Observations, counts: np.ndarray, B: int) -> int | None:
        """The challenger of leader B by the rule's option (solve time where the problem's searches solve)."""
        with self.solving(self.problem.searches_solve):
            if self.rule.challenger == "ts":
                for _ in range(TS_DRAWS // 100):
                    for draw in self._draws(obs, 100):
                        answer = self.problem.answer(draw)
                        if answer != B:
                            return int(answer)
            if self.rule.challenger == "tci":
                return self.problem.penalised_challenger(obs.mu, counts, B)
            return self.problem.challenger(obs.mu, counts, B)

    def _beta(self, mu: np.ndarray, counts: np.ndarray, B: int, C: int) -> float:
        """The fixed beta, or IDS: the leader's share of the pair's information (the problem's ``pair_share``)."""
        if self.rule.beta != "ids":
            return float(self.rule.beta)
        return self.problem.pair_share(mu, counts, B, C)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The lazy TS rule's count of batches led by a posterior draw's answer other than the estimate's."""
        return {"ts_leaders": self.ts_leaders} if self.lazy and self.rule.leader == "ts" else {}
