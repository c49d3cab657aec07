"""Which runs the compiled loops take, and their arguments: a K-armed instance's own question (best-arm identification)
for Gaussian or Bernoulli arms with a rule of :data:`~bandits.pure_exploration.compiled.plan.RULES` and options it
implements (also the additive epsilon-good question on Gaussian arms, with a rule that reads only the empirical best's
pieces: every rule but the Thompson and UCB leaders and the Thompson challenger), or a linear instance's with round
robin, Track-and-Stop, FWS, Lazy TaS, LinGame or LinGame-C; and a GLR threshold of the form
a + c log(b + log(max(t, floor) / s)) (:meth:`~bandits.core.stopping.Threshold.log_log_form`). Anything else runs on
the reference path.
Importing this module does not import numba."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..environment import KArmedBandit
from ..epsilon_good import EpsilonGoodProblem
from ..families import Bernoulli, Gaussian
from ..karmed import KArmedProblem
from ..samplers.frank_wolfe import FrankWolfe
from ..samplers.lazy_tas import LazyTrackAndStop
from ..samplers.lingame import LinGame
from ..samplers.lingame_c import MAX_PAIRS, LinGameC
from ..samplers.top_two import TopTwo
from ..samplers.track_and_stop import TrackAndStop
from ..samplers.uniform import RoundRobin

__all__ = ["FLOOR", "NEVER", "RULES", "CompiledRun", "compiled_budget_run_of", "compiled_run_of"]

#: the compiled rules by code (read by the loops :mod:`bandits.pure_exploration.compiled.loop` and ``linear``)
ROUND_ROBIN, TRACK_AND_STOP, TOP_TWO, FRANK_WOLFE, LAZY, LINGAME, LINGAME_C = 0, 1, 2, 4, 5, 6, 7
#: the code of each compiled rule by its registry name
RULES = {"round-robin": ROUND_ROBIN, "track-and-stop": TRACK_AND_STOP, "top-two": TOP_TWO, "fws": FRANK_WOLFE,
         "lazy-tas": LAZY, "lingame": LINGAME, "lingame-c": LINGAME_C}
#: the cost floor (benchmarks only): pulls in a fixed cycle, no rule work, so a run pays the draws, the statistics
#: and the stop alone
FLOOR = 3
#: Top-Two leaders and challengers by code
EB, TS, UCB = 0, 1, 2
TC, TCI, TS_CHALLENGER = 0, 1, 2
_LEADERS = {"eb": EB, "ts": TS, "ucb": UCB}
_CHALLENGERS = {"tc": TC, "tci": TCI, "ts": TS_CHALLENGER}
#: the threshold row of a run that never stops (a fixed-budget run: beta = inf at every t)
NEVER = np.array([[np.inf, 0.0, 1.0, 1.0, 1.0]])


@dataclass(frozen=True)
class CompiledRun:
    """The arguments of one compiled run but its generators (:func:`bandits.pure_exploration.compiled.loop.karmed_run`).

    Parameters
    ----------
    family : int
        0 Gaussian, 1 Bernoulli (0 for a linear run: its noise is Gaussian).
    sigma : float
        The Gaussian standard deviation (1 for Bernoulli arms, unused).
    means : numpy.ndarray
        The arms' means.
    rule : int
        The rule's code.
    options : numpy.ndarray
        The rule's option vector.
    growth : float
        The batch growth.
    forms : numpy.ndarray, shape (D, 5)
        The threshold's constants per delta.
    max_samples : int
        The budget.
    arms : tuple of numpy.ndarray, optional
        (X, Z) of a linear instance (:func:`bandits.pure_exploration.compiled.linear.linear_run`); None for K arms.
    checkpoints : numpy.ndarray, optional
        The budgets at which a fixed-budget run reads its answer (K-armed runs only); None for a fixed-confidence run.
    shift : float
        0 for best-arm identification, epsilon for the additive epsilon-good question on Gaussian arms (K-armed runs
        only: :func:`bandits.pure_exploration.compiled.loop.shifted`).
    """

    family: int
    sigma: float
    means: np.ndarray
    rule: int
    options: np.ndarray
    growth: float
    forms: np.ndarray
    max_samples: int
    arms: tuple[np.ndarray, np.ndarray] | None = None
    checkpoints: np.ndarray | None = None
    shift: float = 0.0


def _rule(sampler: Any, linear: bool, spanning: Any, small: bool = True) -> tuple[int, list[float]] | None:
    """The rule code and options of a sampler the loop implements (None: the reference path); a linear loop runs
    round robin, Track-and-Stop, Top-Two with the EB leader and the TC or TCI challenger (its beta and selection stay
    at their defaults there), FWS, Lazy TaS, LinGame (a learner step per pull) and LinGame-C (``spanning``: the
    problem's exploration arms; ``small``: at most MAX_PAIRS (answer, arm) pairs, the learners' storage)."""
    kind = type(sampler)
    if kind is LazyTrackAndStop:
        return LAZY, [float(sampler.fw_steps), float(sampler.tolerance), *map(float, spanning)]
    if linear and kind is FrankWolfe and sampler.game == "simplex":
        return FRANK_WOLFE, [float(sampler.refresh), float(sampler.inverse_update == "as-published")]
    if kind is LinGame and sampler.steps == "round" and (sampler.learners == "one" or small):
        return LINGAME, [float(sampler.learners == "one")]
    if kind is LinGameC and small:  # else the reference refuses it
        return LINGAME_C, [0.0]
    linear_top_two = kind is TopTwo and sampler.leader == "eb" and sampler.challenger in ("tc", "tci")
    if linear and kind not in (RoundRobin, TrackAndStop) and not linear_top_two:
        return None
    if kind is RoundRobin:
        return ROUND_ROBIN, [0.0]
    if kind is TrackAndStop and sampler.tol is None:  # else the reference path refuses a tolerance
        return TRACK_AND_STOP, [0.0 if sampler.tracking == "D" else 1.0, float(sampler.resolve_growth)]
    if kind is TopTwo:
        beta = -1.0 if sampler.beta == "ids" else float(sampler.beta)
        return TOP_TWO, [_LEADERS[sampler.leader], _CHALLENGERS[sampler.challenger], beta,
                   0.0 if sampler.selection == "tracking" else 1.0]
    if kind is FrankWolfe and sampler.inverse_update == "exact" and sampler.game == "simplex":
        return FRANK_WOLFE, [0.0]
    return None


def compiled_run_of(algorithm: Any, env: Any, problem: Any, deltas: list[float],
                    max_samples: int) -> CompiledRun | None:
    """The compiled run of ``algorithm`` on ``env`` when the loop implements it, else None.

    Parameters
    ----------
    algorithm : Algorithm
        The configured algorithm (a :class:`bandits.pure_exploration.algorithm.PureExploration` to qualify).
    env : object
        The instance (a :class:`KArmedBandit` of Gaussian or Bernoulli arms to qualify).
    problem : Problem
        The run's problem (best-arm identification's :class:`KArmedProblem`, or the additive epsilon-good question
        on Gaussian arms, to qualify).
    deltas : list of float
        The confidence levels.
    max_samples : int
        The budget (at least K to qualify: the first pass is never cut).

    Returns
    -------
    CompiledRun or None
        The arguments, or None for the reference path.
    """
    from ...core.environments import LinearBandit
    from ..algorithm import PureExploration
    from ..linear import LinearProblem

    if not (isinstance(algorithm, PureExploration) and max_samples >= env.n_arms):
        return None
    if type(env) is LinearBandit and type(problem) is LinearProblem:
        return _linear_run_of(algorithm, env, problem, deltas, max_samples)
    rule = _karmed_rule(algorithm, env, problem)
    forms = None if rule is None else _forms(algorithm, problem, env.n_arms, deltas)
    if rule is None or forms is None:
        return None
    return _karmed_run(env, rule, float(algorithm.growth), forms, int(max_samples), shift=_shift(problem))


def compiled_budget_run_of(algorithm: Any, env: Any, problem: Any, budgets: np.ndarray) -> CompiledRun | None:
    """The compiled fixed-budget run of an anytime rule on a K-armed instance (:func:`compiled_run_of`'s rules,
    instances and question), its answer read at every budget of one trajectory that never stops, else None.

    Parameters
    ----------
    algorithm : Algorithm
        The configured rule (a :class:`bandits.pure_exploration.algorithm.PureExploration` to qualify).
    env : object
        The instance (a :class:`KArmedBandit` of Gaussian or Bernoulli arms to qualify).
    problem : Problem
        The run's problem (best-arm identification's :class:`KArmedProblem`, or the additive epsilon-good question
        on Gaussian arms, to qualify).
    budgets : numpy.ndarray of int
        The checkpoints, increasing, the first at least K.

    Returns
    -------
    CompiledRun or None
        The arguments (threshold row :data:`NEVER`, budget the last checkpoint), or None for the reference path.
    """
    from ..algorithm import PureExploration

    if not (isinstance(algorithm, PureExploration) and budgets[0] >= env.n_arms):
        return None
    rule = _karmed_rule(algorithm, env, problem)
    if rule is None:
        return None
    return _karmed_run(env, rule, float(algorithm.growth), NEVER, int(budgets[-1]),
                       np.ascontiguousarray(budgets, dtype=np.int64), _shift(problem))


def _karmed_rule(algorithm: Any, env: Any, problem: Any) -> tuple[int, list[float]] | None:
    """The rule code and options of a K-armed run the loop implements: best-arm identification on Gaussian or
    Bernoulli arms with a rule of :data:`RULES`, or the additive epsilon-good question on Gaussian arms with a rule
    that reads only the empirical best's pieces (None: the reference path)."""
    if not (type(env) is KArmedBandit and type(env.family) in (Gaussian, Bernoulli)):
        return None
    if type(problem) is KArmedProblem:
        return _rule(algorithm.sampler, False, problem.exploration_arms(), problem.n_answers * env.n_arms <= MAX_PAIRS)
    sampler = algorithm.sampler
    if not (type(problem) is EpsilonGoodProblem and problem.kind == "additive" and type(env.family) is Gaussian
            and problem.family == env.family):
        return None
    if type(sampler) is TopTwo and not (sampler.leader == "eb" and sampler.challenger in ("tc", "tci")):
        return None  # a Thompson or UCB leader, or a Thompson challenger, reads pieces of other answers
    return _rule(sampler, False, problem.exploration_arms(), False)  # LinGame and LinGame-C do not run on it


def _shift(problem: Any) -> float:
    """epsilon for the epsilon-good question, else 0 (the pieces' means, :func:`loop.shifted`)."""
    return float(problem.epsilon) if type(problem) is EpsilonGoodProblem else 0.0


def _karmed_run(env: Any, rule: tuple[int, list[float]], growth: float, forms: np.ndarray, max_samples: int,
                checkpoints: np.ndarray | None = None, shift: float = 0.0) -> CompiledRun:
    """The arguments of a K-armed loop on ``env``."""
    family = env.family
    gaussian = isinstance(family, Gaussian)
    return CompiledRun(0 if gaussian else 1, family.sigma if gaussian else 1.0,
                       np.ascontiguousarray(env.means, dtype=float), rule[0], np.asarray(rule[1], dtype=float),
                       growth, forms, max_samples, checkpoints=checkpoints, shift=shift)


def _forms(algorithm: Any, problem: Any, n_arms: int, deltas: list[float]) -> np.ndarray | None:
    """The threshold's constants per delta (the threshold made after a first pass over the arms), or None when it
    has no log-log form."""
    threshold = algorithm.stop.make(problem, np.ones(n_arms, dtype=np.int64))
    forms = [threshold.log_log_form(d) for d in deltas]
    return None if any(form is None for form in forms) else np.asarray(forms, dtype=float)


def _linear_run_of(algorithm: Any, env: Any, problem: Any, deltas: list[float], max_samples: int) -> CompiledRun | None:
    """The compiled run of a linear instance's own question, or None."""
    rule = _rule(algorithm.sampler, True, problem.exploration_arms(), problem.n_answers * env.n_arms <= MAX_PAIRS)
    forms = _forms(algorithm, problem, env.n_arms, deltas) if rule is not None else None
    if rule is None or forms is None:
        return None
    X, Z = (np.ascontiguousarray(a, dtype=float) for a in (problem.X, problem.Z))
    return CompiledRun(0, float(problem.sigma), np.ascontiguousarray(env.means, dtype=float), rule[0],
                       np.asarray(rule[1], dtype=float), float(algorithm.growth), forms, int(max_samples), (X, Z))
