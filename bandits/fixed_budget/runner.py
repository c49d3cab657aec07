"""Fixed-budget runs: (rule, instance, budgets T_1 < T_2 < ..., seed) -> one result per budget.

The question is the one of fixed confidence turned around: not "how many pulls until the GLR stop at level delta?"
but "how often is the recommendation wrong after T pulls?", for every T of a grid. Two kinds of rules answer it:

* an **anytime** rule, a sampling rule of :mod:`bandits.pure_exploration.samplers` (Top-Two EB-TC, Track-and-Stop with
  its forced exploration, FWS, round robin = uniform sampling, ...) run without a stopping rule: ONE trajectory per
  seed, read at every budget, the recommendation there being the empirical best answer, the problem's answer at the
  estimate (:meth:`bandits.pure_exploration.Problem.answer`). Every budget ends a batch, and the rule re-plans after
  every pull by default (``growth = 0``, the rule as published), so the trajectory up to T is the run a fixed-budget
  run to T alone makes: reading it at T gives that run's recommendation (tested). With ``growth > 0`` the batches
  follow the policy's grid, cut at the budgets;
* a rule run to a budget known in advance (:mod:`bandits.fixed_budget.rules`: Successive Rejects, Sequential
  Halving), whose phases depend on T: one run per budget, each on the run's seed (the same noise stream).

A recommendation is scored by the question's own ``correct`` (several answers may be correct, e.g. epsilon-good), and,
where an answer is one arm or item (:mod:`bandits.pure_exploration.values`), by its simple regret
value(i*(mu)) - value(recommendation). The seed feeds ``numpy.random.SeedSequence`` as in :func:`bandits.run.run`:
one child drives the environment's noise, the other the rule's own draws. Budgets count pulls of single arms (K-armed
and linear instances); an anytime run on Gaussian or Bernoulli K-armed arms takes the compiled loop
(:func:`bandits.pure_exploration.compiled.compiled_budget_run_of`), the same trajectory as the reference. An anytime
run's last budget is held to the run-time rule of :mod:`bandits.core.run_time` (a rule run to a budget draws a phase's
rewards as one sum per arm, so any budget ends at once).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.environments import as_counts
from ..core.run_time import RunTime
from ..core.seeds import split_seed
from ..pure_exploration.algorithm import PureExploration
from ..pure_exploration.capabilities import offered
from ..pure_exploration.policy import PureExplorationPolicy, problem_of
from ..pure_exploration.problem import Problem
from ..pure_exploration.values import has_values
from .rules import BudgetRule
from .schedules import check_budgets

__all__ = ["BudgetResult", "check_run_budgets", "minimum_budget", "question_of", "run_fixed_budget"]

#: the confidence level handed to a sampling rule's start (anytime rules ignore it; nothing stops)
UNUSED_DELTA = 0.5

Seed = int | np.integer | np.random.SeedSequence | None


@dataclass
class BudgetResult:
    """The recommendation of a run at one budget T.

    Parameters
    ----------
    algorithm : str
        The rule's name.
    instance : str
        The environment's name.
    T : int
        The budget.
    seed : int or None
        The run's seed (None for a SeedSequence or no seed).
    samples : int
        Pulls made by T (T for an anytime rule; at most T for an elimination rule).
    recommendation : int
        The recommended answer.
    best : int
        The question's answer at the true parameter.
    correct : bool
        Whether the recommendation is a correct answer (the question's ``correct``).
    simple_regret : float or None
        value(best) - value(recommendation) where an answer is one arm or item, else None.
    wall_time : float
        Seconds from the run's start to T (an anytime rule's trajectory) or of the run to T.
    config : dict
        The rule's configuration.
    """

    algorithm: str
    instance: str
    T: int
    seed: int | None
    samples: int
    recommendation: int
    best: int
    correct: bool
    simple_regret: float | None
    wall_time: float
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Reading:
    """The recommendation at one budget, the pulls made by then and the seconds it took."""

    T: int
    recommendation: int
    samples: int
    seconds: float


def question_of(algorithm: PureExploration | BudgetRule, env: Any) -> Problem:
    """The question a fixed-budget run of ``algorithm`` answers on ``env``: its ``problem`` option's, else the
    instance's own.

    Parameters
    ----------
    algorithm : PureExploration or BudgetRule
        The rule.
    env : object
        The instance.

    Returns
    -------
    Problem
        The question, which scores the recommendations.

    Raises
    ------
    InvalidInputError
        A question for another kind of instance, or one a budget rule cannot answer (answers that are not arms).
    """
    if isinstance(algorithm, BudgetRule):
        return algorithm.question(env)
    if not isinstance(algorithm, PureExploration):
        raise InvalidInputError(f"{getattr(algorithm, 'name', type(algorithm).__name__)} is not a fixed-budget rule: "
                                "fixed-budget runs take the sampling rules (anytime) and successive-rejects, "
                                "sequential-halving")
    asked = algorithm.question(env)
    return problem_of(env) if asked is None else asked


def minimum_budget(algorithm: PureExploration | BudgetRule, env: Any) -> int:
    """The smallest budget a fixed-budget run of ``algorithm`` on ``env`` takes: the first pass of an anytime rule
    (K pulls on K arms), K + 1 for Successive Rejects, K ceil(log2 K) for Sequential Halving.

    Parameters
    ----------
    algorithm : PureExploration or BudgetRule
        The rule.
    env : object
        The instance.

    Returns
    -------
    int
        The smallest budget T.

    Raises
    ------
    InvalidInputError
        Not a fixed-budget rule, or a question it cannot answer on ``env``.
    """
    question = question_of(algorithm, env)
    if isinstance(algorithm, BudgetRule):
        return algorithm.minimum_budget(question.n_arms)
    return int(question.initial_pulls().sum())


def check_run_budgets(algorithm: PureExploration | BudgetRule, env: Any, budgets: Any) -> tuple[int, ...]:
    """What a fixed-budget run checks before its first pull: the rule, its question on ``env`` (pulls of single arms)
    and the budgets (increasing integers, the first at least :func:`~bandits.fixed_budget.runner.minimum_budget`).

    Parameters
    ----------
    algorithm : PureExploration or BudgetRule
        The rule.
    env : object
        The instance.
    budgets : int or sequence of int
        The budgets.

    Returns
    -------
    tuple of int
        The budgets.

    Raises
    ------
    InvalidInputError
        Not a fixed-budget rule, a question it cannot answer, an instance whose pulls observe several arms at once
        (a joint action), or budgets that are not increasing integers or fall below the minimum.
    """
    question = question_of(algorithm, env)
    if "arm_pull" not in offered(question):
        raise InvalidInputError(f"{algorithm.name}: fixed-budget runs count pulls of single arms; a pull of "
                                f"{type(question).__name__} observes several arms at once")
    return check_budgets(budgets, minimum_budget(algorithm, env), f"{algorithm.name} on {question.n_arms} arms")


def run_fixed_budget(algorithm: PureExploration | BudgetRule, env: Any, budgets: Any, seed: Seed = None, *,
                     compiled: bool = True) -> list[BudgetResult]:
    """Run ``algorithm`` on ``env`` to every budget of ``budgets`` (module docstring).

    Parameters
    ----------
    algorithm : PureExploration or BudgetRule
        A sampling rule (run anytime, its stop never consulted) or a rule run to a budget.
    env : object
        A K-armed or linear instance (Successive Rejects and Sequential Halving: K-armed).
    budgets : int or sequence of int
        The budgets T_1 < T_2 < ..., each at least :func:`minimum_budget`.
    seed : int, SeedSequence or None
        The run's seed.
    compiled : bool
        Let an anytime run on K arms take the compiled loop when it qualifies (False forces the reference).

    Returns
    -------
    list of BudgetResult
        One per budget, in order.

    Raises
    ------
    InvalidInputError
        Not a fixed-budget rule, budgets that are not increasing integers or fall below the minimum, a question the
        rule cannot answer, an instance whose pulls observe several arms at once (a joint action), or an anytime run
        whose last budget would take more than a year at the rate of its first seconds (the run-time rule of
        :mod:`bandits.core.run_time`; Ctrl-C ends a run with KeyboardInterrupt, on the compiled loop too).
    RuntimeError
        A rule proposed an empty batch or one past the next budget (a bug of the rule).

    Examples
    --------
    >>> from bandits.fixed_budget import SuccessiveRejects, run_fixed_budget
    >>> from bandits.instances import parse_instance
    >>> env = parse_instance("bernoulli:means=0.9/0.1")
    >>> [r.correct for r in run_fixed_budget(SuccessiveRejects(), env, [50, 100], seed=0)]
    [True, True]
    """
    budgets = check_run_budgets(algorithm, env, budgets)
    question = question_of(algorithm, env)
    if isinstance(algorithm, BudgetRule):
        readings = _per_budget(algorithm, question, env, budgets, seed)
    else:
        readings = _anytime(algorithm, env, budgets, seed, compiled)
    mu = question.true_parameter(env)
    best = int(question.answer(mu))
    values = has_values(question)
    name, config = algorithm.name, algorithm.describe()
    if isinstance(algorithm, PureExploration):  # its GLR stop is never consulted
        config = {k: v for k, v in config.items() if k not in algorithm.stop.describe()}
    instance = getattr(env, "name", type(env).__name__)
    plain = int(seed) if isinstance(seed, (int, np.integer)) else None
    return [BudgetResult(algorithm=name, instance=instance, T=r.T, seed=plain, samples=r.samples,
                         recommendation=r.recommendation, best=best,
                         correct=bool(question.correct(r.recommendation, mu)),
                         simple_regret=_regret(question, best, r.recommendation, mu) if values else None,
                         wall_time=r.seconds, config=config) for r in readings]


def _regret(question: Problem, best: int, recommendation: int, mu: np.ndarray) -> float:
    """value(best) - value(recommendation) (:meth:`bandits.pure_exploration.values.Values.answer_value`)."""
    return float(cast(float, question.answer_value(best, mu)) - cast(float, question.answer_value(recommendation, mu)))


def _fresh(seed: Seed) -> Seed:
    """The seed as given, a SeedSequence as a copy in its current state (spawning advances a sequence, and each run
    to a budget spawns the same children)."""
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size,
                                      n_children_spawned=seed.n_children_spawned)
    return seed


def _per_budget(rule: BudgetRule, question: Problem, env: Any, budgets: tuple[int, ...],
                seed: Seed) -> list[_Reading]:
    """One run of ``rule`` per budget, each on the run's own noise stream."""
    readings = []
    for T in budgets:
        env_rng, _ = split_seed(_fresh(seed))
        start = time.perf_counter()
        outcome = rule.allocate(question, env, T, env_rng)
        readings.append(_Reading(T, outcome.recommendation, outcome.samples, time.perf_counter() - start))
    return readings


def _anytime(algorithm: PureExploration, env: Any, budgets: tuple[int, ...], seed: Seed,
             compiled: bool) -> list[_Reading]:
    """One trajectory of a sampling rule, its answer read at every budget (the compiled loop when it qualifies), under
    the run-time rule of :mod:`bandits.core.run_time` (measured from the first pull)."""
    from ..pure_exploration.compiled import compiled_budget_run_of, run_compiled_budget

    env_rng, alg_rng = split_seed(_fresh(seed))
    start = time.perf_counter()
    policy = cast(PureExplorationPolicy, algorithm.start(env, UNUSED_DELTA, alg_rng))
    plan = compiled_budget_run_of(algorithm, env, policy.problem, np.asarray(budgets)) if compiled else None
    if plan is not None:
        answers, reached = run_compiled_budget(plan, env_rng, alg_rng, start, algorithm.name)
        return [_Reading(T, int(a), T, float(s)) for T, a, s in zip(budgets, answers, reached, strict=True)]
    readings, t, run_time = [], 0, RunTime(budgets[-1], algorithm.name)
    for T in budgets:
        while t < T:
            counts = as_counts(policy.next_batch(T - t), env.n_arms)
            size = int(counts.sum())
            if not 1 <= size <= T - t:
                raise RuntimeError(f"{algorithm.name} proposed a batch of {size} pulls with {T - t} left before the "
                                   f"budget {T}")
            policy.observe(counts, env.pull(counts, env_rng))
            t += size
            run_time.check(t)
        readings.append(_Reading(T, int(policy.problem.answer(policy.mu)), t, time.perf_counter() - start))
    return readings
