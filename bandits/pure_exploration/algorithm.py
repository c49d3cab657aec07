"""A sampling rule under the GLR stopping rule, as an algorithm the runner, ``bandits run`` and studies take.

The policy of one run is :class:`bandits.pure_exploration.policy.PureExplorationPolicy`: the problem (the
instance's own, or the ``problem`` option's), the sampler's state and the GLR stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm, Policy
from ..core.entries import check_options, load_object, split_algorithm
from .policy import PureExplorationPolicy, problem_of
from .problem import Problem
from .question_table import PROBLEMS, QUESTIONS
from .requirements import require
from .sampler import Sampler
from .stop import GLRStop, check_stop_options

__all__ = ["PureExploration", "as_algorithm", "ask", "load_problem"]


@dataclass(frozen=True)
class PureExploration(Algorithm[Any]):
    """A sampling rule under the GLR stopping rule, on K-armed or linear instances.

    Parameters
    ----------
    sampler : Sampler
        The sampling rule (:mod:`bandits.pure_exploration.samplers`).
    stop : GLRStop
        The stopping rule (GLR with the practical threshold by default).
    growth : float
        Relative batch size: the estimate is refreshed and the stop checked on the grid
        t -> max(t + 1, ceil(t (1 + growth))) (0.01 by default; 0 checks after every pull).
    problem : str or type, optional
        The question asked of the instance in place of its own problem (:func:`problem_of`): a name of
        :data:`~bandits.pure_exploration.question_table.PROBLEMS` with options (``"top-m:m=3"``), a :class:`Problem`
        subclass or its ``"package.module:Class"`` path, built with ``of_environment(env, **options)`` (another
        question, estimator or statistic on the same instances); None: the instance's own.

    Raises
    ------
    InvalidInputError
        A sampler or stop of the wrong type, ``growth`` outside [0, 1], or a problem that is not a Problem
        subclass of a known kind.
    """

    sampler: Sampler
    stop: GLRStop = field(default_factory=GLRStop)
    growth: float = 0.01
    problem: str | type | None = None

    def __post_init__(self) -> None:
        """Check the options."""
        if not isinstance(self.sampler, Sampler):
            raise InvalidInputError(f"sampler must be a Sampler, got {type(self.sampler).__name__}")
        check_stop_options(self.stop, self.growth)
        self._problem_class()

    def _problem_class(self, kind: str | None = None) -> type[Problem] | None:
        """The problem class the option names for instances of ``kind`` (None: the instance's own)."""
        return None if self.problem is None else load_problem(self.problem, kind)[0]

    def check_kind(self, kind: str) -> None:
        """Refuse an instance kind the problem option does not run on.

        Parameters
        ----------
        kind : str
            The instance kind.

        Raises
        ------
        InvalidInputError
            The problem class is for another kind.
        """
        cls = self._problem_class(kind)
        if cls is not None:
            _refuse_other_kind(cls, kind)

    @property
    def name(self) -> str:
        """The sampler's name."""
        return self.sampler.name

    @property
    def delta_independent(self) -> bool:  # type: ignore[override]
        """As the sampler."""
        return self.sampler.delta_independent

    def question(self, env: Any) -> Problem | None:
        """The problem the ``problem`` option asks of ``env`` (None: the instance's own).

        Parameters
        ----------
        env : object
            The instance.

        Returns
        -------
        Problem or None
            The problem, built with ``of_environment(env, **options)``.

        Raises
        ------
        InvalidInputError
            The problem is for another kind of instance.
        """
        return None if self.problem is None else ask(self.problem, env)

    def start(self, env: Any, delta: float, rng: np.random.Generator) -> Policy:
        question = self.question(env)
        problem = problem_of(env) if question is None else question
        require(problem, self.sampler.name, self.sampler.requires())
        return PureExplorationPolicy(problem, self.sampler.start(problem, env, rng), self.stop, self.growth)

    def describe(self) -> dict[str, Any]:
        """Sampler, stop and batch growth as one flat record.

        Returns
        -------
        dict
            ``{"algorithm": name, sampler options..., "stop": "glr", "threshold": ..., "growth": ...}``.
        """
        sampler = self.sampler.describe()
        sampler.pop("sampler", None)
        record = {"algorithm": self.name, **sampler, **self.stop.describe(), "growth": self.growth}
        cls = self._problem_class()
        if cls is not None:
            path = f"{cls.__module__}:{cls.__qualname__}"
            record["problem"] = self.problem if isinstance(self.problem, str) else path
        return record


def as_algorithm(rule: Algorithm[Any] | Sampler) -> Algorithm[Any]:
    """A sampling rule under the GLR stop, with the run options its configuration carries
    (:meth:`~bandits.pure_exploration.Sampler.run_options`); an algorithm itself.

    Parameters
    ----------
    rule : Algorithm or Sampler
        What to run.

    Returns
    -------
    Algorithm
        :class:`PureExploration` of a sampler, else ``rule``.
    """
    return PureExploration(rule, **rule.run_options()) if isinstance(rule, Sampler) else rule


def ask(problem: str | type, env: Any) -> Problem:
    """The problem a ``problem`` option asks of an instance (:func:`load_problem`, then ``of_environment``).

    Parameters
    ----------
    problem : str or type
        The option: ``"NAME:key=value,..."``, ``"package.module:Class"`` or the class.
    env : object
        The instance.

    Returns
    -------
    Problem
        The problem, built with ``of_environment(env, **options)``.

    Raises
    ------
    InvalidInputError
        A bad option (:func:`load_problem`), or a problem for another kind of instance.
    """
    kind = getattr(env, "kind", "")
    cls, options = load_problem(problem, kind)
    _refuse_other_kind(cls, kind)
    return cls.of_environment(env, **options)


def _refuse_other_kind(cls: type[Problem], kind: str) -> None:
    if cls.kind != kind:
        raise InvalidInputError(f"problem {cls.__name__} runs on {cls.kind} instances, not {kind}")


def load_problem(problem: str | type, kind: str | None = None) -> tuple[type[Problem], dict[str, Any]]:
    """The problem class and options a ``problem`` option names: ``"NAME:key=value,..."`` (a name of
    :data:`~bandits.pure_exploration.question_table.PROBLEMS`), ``"package.module:Class"``, or the class itself,
    checked.

    Parameters
    ----------
    problem : str or type
        The option.
    kind : str, optional
        The instance kind the question is asked of (a name of
        :data:`~bandits.pure_exploration.question_table.PROBLEMS` has a class per kind); None: the first kind whose
        class takes the options (a run checks them again against its instance's kind).

    Returns
    -------
    tuple
        A :class:`bandits.pure_exploration.Problem` subclass with a ``kind`` (the instances it runs on) and the
        options for its ``of_environment``.

    Raises
    ------
    InvalidInputError
        An unknown name or option, a name not asked of ``kind`` instances, a path that does not import, no Problem
        subclass, or a class naming no known kind.
    """
    if not isinstance(problem, str):
        return _checked(problem, problem, {}), {}
    name, options = split_algorithm(problem)
    if ":" in name or "." in name:
        return _checked(problem, load_object(name, "problem"), options), options
    if name not in PROBLEMS:
        raise InvalidInputError(f"unknown problem {name!r}: a name ({', '.join(PROBLEMS)}) with options, "
                                "or a path that must read package.module:Name")
    preset = QUESTIONS[name].preset  # a name's own choice of a class option (multiplicative-epsilon-good)
    if set(preset) & set(options):
        raise InvalidInputError(f"problem {name} sets {', '.join(sorted(set(preset) & set(options)))} itself")
    options = {**preset, **options}
    by_kind = PROBLEMS[name]
    if kind is not None and kind not in by_kind:
        raise InvalidInputError(f"problem {name} is asked of {' and '.join(by_kind)} instances, not {kind}")
    if kind is not None:
        return _checked(problem, load_object(by_kind[kind], "problem"), options), options
    refusals = []  # no kind yet: options some kind's class takes (an arms' model option) pass, checked again per run
    for path in by_kind.values():
        try:
            return _checked(problem, load_object(path, "problem"), options), options
        except InvalidInputError as exc:
            refusals.append(exc)
    raise refusals[0]


def _checked(problem: object, cls: object, options: dict[str, Any]) -> type[Problem]:
    """``cls`` as a Problem subclass of a known kind whose ``of_environment`` takes ``options``."""
    if not (isinstance(cls, type) and issubclass(cls, Problem)):
        raise InvalidInputError(f"problem {problem!r} is not a Problem subclass (bandits.pure_exploration.Problem)")
    if not (isinstance(cls.kind, str) and cls.kind):
        raise InvalidInputError(f"problem {cls.__name__} has kind {cls.kind!r}; a problem's class attribute kind "
                                "names the instances it runs on (karmed, linear, factored, ...)")
    if options:
        check_options(cls.of_environment, options, f"problem {cls.__name__}")
    return cls
