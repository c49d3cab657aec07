"""The fixed-budget elimination rules: Successive Rejects and Sequential Halving, each run to a budget T given in
advance (their phases depend on T, so a budget grid takes one run per budget).

Both pull the surviving arms in phases (:mod:`bandits.fixed_budget.schedules`), estimate the means from the pulls
(:meth:`bandits.pure_exploration.Problem.estimate`, then each arm's value) and drop the empirically worst: Successive
Rejects one arm per phase, Sequential Halving the worse half per round; the recommendation is the last survivor. Ties
between estimates are ranked as the problem's answer ranks them: the lower index first (the answer of a K-armed
problem is argmax mu_hat, the first on a tie), so with two arms left the rule keeps the arm the estimate's answer would
name.

They run on K arms of one exponential family, on Gaussian arms of unequal variances and on arms with rewards in
[0, 1] (the setting of Audibert et al.'s analysis), and answer questions whose answers are arms
(:func:`bandits.pure_exploration.values.has_values`): best-arm identification (the instance's own question) and
epsilon-good identification (``problem="epsilon-good:epsilon=E"``: the survivor is scored by that question);
questions whose answers are sets of arms (top m, thresholding) are refused.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, cast

import numpy as np

from optdesign.errors import InvalidInputError

from ..pure_exploration.algorithm import ask, load_problem
from ..pure_exploration.policy import problem_of
from ..pure_exploration.problem import Problem
from ..pure_exploration.values import has_values
from .schedules import halving_rounds, successive_rejects_lengths

__all__ = ["BudgetOutcome", "BudgetRule", "SequentialHalving", "SuccessiveRejects", "ranked"]


@dataclass(frozen=True)
class BudgetOutcome:
    """What a run to one budget ends with.

    Parameters
    ----------
    recommendation : int
        The recommended answer (the last survivor).
    counts : numpy.ndarray of int
        Pulls per arm (their sum is at most the budget).
    """

    recommendation: int
    counts: np.ndarray

    @property
    def samples(self) -> int:
        """Pulls made."""
        return int(self.counts.sum())


def ranked(arms: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The arms from the largest estimate to the smallest, ties by the lower index first.

    Parameters
    ----------
    arms : numpy.ndarray of int
        Arm indices.
    mu : numpy.ndarray
        Estimates of every arm.

    Returns
    -------
    numpy.ndarray of int
        ``arms`` reordered.
    """
    arms = np.asarray(arms, dtype=np.int64)
    return arms[np.lexsort((arms, -np.asarray(mu, dtype=float)[arms]))]


@dataclass(frozen=True)
class BudgetRule(ABC):
    """A rule run to a budget T known in advance (a frozen dataclass of its options);
    :meth:`~bandits.fixed_budget.rules.BudgetRule.allocate` is one run.

    Parameters
    ----------
    problem : str, optional
        The question asked of the instance in place of its own (best-arm identification), as the sampling rules'
        ``problem`` option: ``"epsilon-good:epsilon=E"``; questions whose answers are not arms are refused.

    Raises
    ------
    InvalidInputError
        A problem option that does not load (:func:`bandits.pure_exploration.algorithm.load_problem`).
    """

    problem: str | None = None

    def __post_init__(self) -> None:
        """Check that the problem option names a question."""
        if self.problem is not None:
            load_problem(self.problem)

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name used by the CLI and in result tables."""

    @abstractmethod
    def minimum_budget(self, n_arms: int) -> int:
        """The smallest budget the rule runs to on K arms.

        Parameters
        ----------
        n_arms : int
            K.

        Returns
        -------
        int
            The smallest T.
        """

    @abstractmethod
    def allocate(self, problem: Problem, env: Any, budget: int, rng: np.random.Generator) -> BudgetOutcome:
        """One run to ``budget`` pulls.

        Parameters
        ----------
        problem : Problem
            The question (its estimate ranks the arms).
        env : object
            The instance, pulled through ``env.pull(counts, rng)``.
        budget : int
            The budget T (at least :meth:`minimum_budget`).
        rng : numpy.random.Generator
            The environment's noise.

        Returns
        -------
        BudgetOutcome
            The recommendation and the pulls made.
        """

    def question(self, env: Any) -> Problem:
        """The problem the rule answers on ``env``: the instance's own, or the ``problem`` option's.

        Parameters
        ----------
        env : object
            A K-armed instance.

        Returns
        -------
        Problem
            The question.

        Raises
        ------
        InvalidInputError
            A question whose answers are not arms (top m, thresholding), or one for another kind of instance.
        """
        problem = problem_of(env) if self.problem is None else ask(self.problem, env)
        if not has_values(problem):
            raise InvalidInputError(f"{self.name} recommends one arm: it answers best-arm identification and "
                                    f"epsilon-good identification, not {self.problem or type(problem).__name__} "
                                    "(answers that are sets of arms)")
        return problem

    def describe(self) -> dict[str, Any]:
        """The configuration as a flat record.

        Returns
        -------
        dict
            ``{"algorithm": name, option: value, ...}``.
        """
        return {"algorithm": self.name, **asdict(self)}


def _statistics(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Zero counts and reward statistics of the problem's shape: sums (K,), or (K, moments) where a batch reports
    more of the rewards (sums of squares; counts on a support)."""
    K, moments = problem.n_arms, problem.moments
    return np.zeros(K, dtype=np.int64), np.zeros(K if moments == 1 else (K, moments))


def _means(problem: Problem, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Every arm's estimated mean: the value of the answer that is that arm at the estimate."""
    theta = problem.estimate(counts, sums)
    return np.array([float(cast(float, problem.answer_value(k, theta))) for k in range(problem.n_arms)])


def _pull(env: Any, rng: np.random.Generator, arms: np.ndarray, each: int,
          counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Pull every arm of ``arms`` ``each`` times in one batch; add the batch to ``counts`` and ``sums`` and return the
    batch's reward statistics."""
    batch = np.zeros(counts.size, dtype=np.int64)
    batch[arms] = each
    got = np.asarray(env.pull(batch, rng), dtype=float) if each > 0 else np.zeros_like(sums)
    counts += batch
    sums += got
    return got


@dataclass(frozen=True)
class SuccessiveRejects(BudgetRule):
    """Successive Rejects (Audibert, Bubeck & Munos, COLT 2010): K - 1 phases; after phase k every survivor has n_k
    pulls (:func:`bandits.fixed_budget.schedules.successive_rejects_lengths`), then the empirically worst is
    rejected; the last survivor is recommended. Theorem 2: P(error) <= K(K - 1)/2 exp(-(T - K) / (log-bar(K) H_2)),
    H_2 = max_i i / Delta_(i)^2.

    Parameters
    ----------
    problem : str, optional
        As :class:`BudgetRule`.
    """

    @property
    def name(self) -> str:
        """``successive-rejects``."""
        return "successive-rejects"

    def minimum_budget(self, n_arms: int) -> int:
        """K + 1: the first phase then pulls every arm at least once (n_1 = 0 at T = K)."""
        return n_arms + 1

    def allocate(self, problem: Problem, env: Any, budget: int, rng: np.random.Generator) -> BudgetOutcome:
        K = problem.n_arms
        counts, sums = _statistics(problem)
        alive, done = np.arange(K), 0
        for n_k in successive_rejects_lengths(budget, K):
            _pull(env, rng, alive, int(n_k) - done, counts, sums)
            done = int(n_k)
            alive = np.sort(ranked(alive, _means(problem, counts, sums))[:-1])
        return BudgetOutcome(int(alive[0]), counts)


@dataclass(frozen=True)
class SequentialHalving(BudgetRule):
    """Sequential Halving (Karnin, Koren & Somekh, ICML 2013): ceil(log2 K) rounds; round r pulls each survivor
    t_r = floor(T / (|S_r| ceil(log2 K))) times and keeps the ceil(|S_r| / 2) with the best means of that round's
    pulls (Theorem 4.1: P(error) <= 3 log2 K exp(-T / (8 H_2 log2 K))); the last survivor is recommended.

    Parameters
    ----------
    problem : str, optional
        As :class:`BudgetRule`.
    reuse : bool
        Rank by every pull of an arm so far instead of the round's own (the paper's; its analysis needs the rounds
        independent).
    """

    reuse: bool = False

    @property
    def name(self) -> str:
        """``sequential-halving``."""
        return "sequential-halving"

    def minimum_budget(self, n_arms: int) -> int:
        """K ceil(log2 K): the first round then pulls every arm at least once."""
        return n_arms * (n_arms - 1).bit_length()

    def allocate(self, problem: Problem, env: Any, budget: int, rng: np.random.Generator) -> BudgetOutcome:
        K = problem.n_arms
        counts, sums = _statistics(problem)
        alive = np.arange(K)
        for _, t_r in halving_rounds(budget, K):
            before = counts.copy()
            got = _pull(env, rng, alive, t_r, counts, sums)
            mu = _means(problem, counts, sums) if self.reuse else _means(problem, counts - before, got)
            alive = np.sort(ranked(alive, mu)[: (alive.size + 1) // 2])
        return BudgetOutcome(int(alive[0]), counts)
