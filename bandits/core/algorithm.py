"""What every best-arm-identification algorithm provides: a sampling rule, a stopping rule and a
recommendation rule (the split of the papers, and of tidnabbil's Julia code).

An :class:`Algorithm` is an immutable configuration (name and options); ``start`` returns a
:class:`Policy`, the state of one run. The runner (:func:`bandits.run.run`) asks the policy for a
batch of pulls, feeds it the reward sums, then asks whether it stops::

    policy = algorithm.start(env, delta, rng)
    while not policy.stopped(delta):
        counts = policy.next_batch(budget_left)   # pulls per arm (a batch; 1 pull when sequential)
        policy.observe(counts, env.pull(counts, rng_env))
    policy.recommend()

A batch stands for pulls whose choice does not depend on each other's outcomes: static designs
advance to the next checkpoint of a geometric grid in one batch, and adaptive rules re-plan once
per batch (their lazy re-solve schedule). Policies whose sampling ignores delta set
``Algorithm.delta_independent`` so one trajectory yields stopping times for several deltas.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["Algorithm", "Environment", "Policy", "Question"]


class Environment(Protocol):
    """What the runner needs from an environment (every instance family provides it).

    Policies read more (a linear policy reads the arms ``X``, the items ``Z`` and ``sigma``); each
    algorithm family states what in the type of its ``start``.
    """

    #: the instance kind, a key of :data:`bandits.kinds.KINDS`
    kind: ClassVar[str]

    @property
    def n_arms(self) -> int:
        """Number of measurement arms: the length of the ``counts`` that ``pull`` takes."""
        ...

    @property
    def best_item(self) -> int:
        """Index of the best item, the answer a run is scored against."""
        ...

    def pull(self, counts: npt.ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch of pulls.

        Parameters
        ----------
        counts : array_like of int, shape (n_arms,)
            Pulls per arm in the batch (nonnegative integers).
        rng : numpy.random.Generator
            Source of the noise (the run's environment stream).

        Returns
        -------
        numpy.ndarray, shape (n_arms,)
            Entry k is the sum of the ``counts[k]`` rewards of arm k (0 for an arm not pulled).
        """
        ...


#: the environment type an algorithm runs on (an :class:`Environment`, possibly with more attributes)
EnvT = TypeVar("EnvT", bound=Environment)


class Question(Protocol):
    """What a run is scored by: the question its policy answers (every pure-exploration problem is one).

    The runner reads the instance's true parameter once, before the run, and judges the recommendation with
    ``correct`` (a question may accept several correct answers); ``answer`` is the one a result reports as best.
    """

    def true_parameter(self, env: Any) -> np.ndarray:
        """The parameter of the instance (never shown to a sampling rule).

        Parameters
        ----------
        env : object
            The instance.

        Returns
        -------
        numpy.ndarray
            Its parameter.
        """
        ...

    def answer(self, mu: np.ndarray) -> int:
        """The correct answer at ``mu`` (the first one when several are correct).

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        int
            The answer.
        """
        ...

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether ``answer`` is a correct answer at ``mu``.

        Parameters
        ----------
        answer : int
            A recommendation.
        mu : numpy.ndarray
            The true parameter.

        Returns
        -------
        bool
            True when it is correct.
        """
        ...


class Policy(ABC):
    """State of one run. ``solve_time`` accumulates seconds spent in optdesign solves; ``problem`` is the question
    the run answers (None: the instance's best item, :attr:`Environment.best_item`)."""

    solve_time: float = 0.0
    problem: Question | None = None

    @abstractmethod
    def next_batch(self, budget: int) -> np.ndarray:
        """Pull counts per arm for the next batch; their sum is in [1, budget].

        Parameters
        ----------
        budget : int
            Observations left before the run's ``max_samples`` (at least 1). A larger batch is cut to it
            by the runner, which then stops the run with ``stopped_by == "budget"``.

        Returns
        -------
        numpy.ndarray of int, shape (n_arms,)
            Pulls per arm; the choices in a batch do not depend on each other's outcomes.
        """

    @abstractmethod
    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Record a batch: ``sums[k]`` is the sum of the ``counts[k]`` rewards of arm k.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (n_arms,)
            Pulls per arm of the batch just made (what ``next_batch`` proposed, or a share of it).
        sums : numpy.ndarray of float, shape (n_arms,)
            Reward sums per arm of that batch (``Environment.pull``).
        """

    @abstractmethod
    def stopped(self, delta: float) -> bool:
        """The stopping rule at the current time for confidence ``delta``.

        Parameters
        ----------
        delta : float
            Confidence level in (0, 1): the error probability the stopping rule allows.

        Returns
        -------
        bool
            True when the run may stop and recommend.
        """

    @abstractmethod
    def recommend(self) -> int:
        """The recommendation rule: index of the item believed best.

        Returns
        -------
        int
            Index of the recommended item (a row of the items ``Z`` for linear instances).
        """

    @property
    def rounds(self) -> int | None:
        """Rounds in the problem's own time unit when it differs from samples (e.g. graph rounds)."""
        return None

    def survivors(self) -> np.ndarray | None:
        """The answers still in play, for a policy that eliminates (a stop may read them); None when it does not.

        Returns
        -------
        numpy.ndarray of int or None
            Indices of the surviving answers.
        """
        return None

    def stop_statistic(self) -> dict[str, Any]:
        """Optional trace entry describing the current stopping statistic.

        Returns
        -------
        dict
            Plain numbers naming the statistic (e.g. ``{"glr": ..., "best": ...}``); empty by default.
        """
        return {}


@dataclass(frozen=True)
class Algorithm(ABC, Generic[EnvT]):
    """An algorithm configuration; subclasses are frozen dataclasses of their options.

    ``EnvT`` is the environment type it runs on (``Algorithm[LinearInstance]`` for the linear ones).
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name used by the CLI and in result tables."""

    #: True when the sampling rule ignores delta (one trajectory serves several deltas)
    delta_independent = False

    @abstractmethod
    def start(self, env: EnvT, delta: float, rng: np.random.Generator) -> Policy:
        """A fresh policy for environment ``env`` (only its public fields) at confidence ``delta``.

        Parameters
        ----------
        env : Environment
            The instance to identify the best item of; oracle algorithms also read its true parameter.
        delta : float
            Confidence level in (0, 1) (the smallest one when the run checks several).
        rng : numpy.random.Generator
            The algorithm's own randomness (independent of the environment's noise).

        Returns
        -------
        Policy
            The state of one run, driven by :func:`bandits.run.run`.
        """

    def describe(self) -> dict[str, Any]:
        """The configuration as a flat record (the name and every option) for result tables.

        Returns
        -------
        dict
            ``{"algorithm": name, option: value, ...}``; options with a ``describe`` method (thresholds) are
            replaced by their description.
        """
        out: dict[str, Any] = {"algorithm": self.name}
        for key, value in asdict(self).items():
            out[key] = value.describe() if hasattr(value, "describe") else value
        return out
