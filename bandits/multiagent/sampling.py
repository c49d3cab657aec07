"""The factored sampling rules: sampling rules (:class:`bandits.pure_exploration.Sampler`) on a problem that offers
the ``factor_graph`` capability, run under the one GLR stop in the factored batches (:mod:`bandits.multiagent.batches`).

* Stopping: the GLR stop on the factored problem, whose GLR statistic is the factored GLRT Lambda_t > beta(t, delta)
  after every batch (the problem's ``glrt="exact"`` or ``"conservative"``, :mod:`bandits.multiagent.glrt`; the run
  option ``glrt=`` asks for it, :func:`glrt_problem`) and whose time is in rounds.
* Recommendation: a_hat = argmax_a sum_e theta_hat_e(a_e) by max-sum, reported as its mixed-radix code.
"""

from __future__ import annotations

import sys
import warnings
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from optdesign import shared_doc
from optdesign.errors import InvalidInputError

from ..core.stopping import Threshold
from ..core.thresholds import check_threshold_option
from ..core.validation import check_choice, check_growth
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Sampler
from ..pure_exploration.stop import GLRStop
from .batches import RuleState
from .environment import FactoredBandit
from .exploration import COVERS, EXPLORATION
from .glrt import GLRT_MODES
from .problem import FactoredProblem

__all__ = ["CoveredSampler", "FactoredSampler", "glrt_problem"]


# the options of the factored rules, documented once (substituted by _shared_doc)
_DOC = {
    "legacy": """    threshold, glrt, growth : optional
        Deprecated: options of the run, not of the rule (a DeprecationWarning). Give them to the run instead:
        ``bandits run NAME:threshold=theory,glrt=conservative,growth=0.02``, or in Python
        ``PureExploration(rule, GLRStop("theory"), growth=0.02, problem=glrt_problem("conservative"))``.
        :func:`bandits.run.run` still runs a rule given them under that stop.""",
    "cover": """    cover : str
        The covering set A0 played once first and by forced exploration: ``"greedy"`` (default), the max-sum
        greedy cover, or ``"build-a0"``, the paper's Alg. 4 (:mod:`bandits.multiagent.exploration`).""",
    "exploration": """    exploration : str
        Forced exploration (MF-TaS §6.2): ``"paper"``, A0 plays while some N_{e,b} < sqrt(t / abs(A0));
        ``"dtracking"``, the level sqrt(t) - Abar/2 of GK16's D-tracking; ``"none"``.""",
    "raises": """    Raises
    ------
    InvalidInputError
        An unknown cover or exploration option, or a bad deprecated run option.""",
}


_shared_doc = shared_doc(_DOC)


def glrt_problem(glrt: str) -> str:
    """The ``problem`` option of a run whose stop reads the factored GLR statistic ``glrt``.

    Parameters
    ----------
    glrt : str
        ``"exact"`` (the test Lambda_t > beta by best-first enumeration with certified bounds) or
        ``"conservative"`` (its lower bound D_min^2 / (2 sigma^2 H_max): one max-sum, stops later, still delta-PAC).

    Returns
    -------
    str
        ``"bandits.multiagent.problem:FactoredProblem:glrt=MODE"``.

    Raises
    ------
    InvalidInputError
        An unknown mode.
    """
    return f"{FactoredProblem.__module__}:{FactoredProblem.__name__}:glrt={check_choice(glrt, 'glrt', GLRT_MODES)}"


#: the run options a factored rule once took itself
_LEGACY = ("threshold", "glrt", "growth")


def _constructor_caller() -> int:
    """The stack level of the code that built the rule (past the dataclass ``__init__`` and the ``__post_init__``
    chain), for a warning that points at it."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_name in ("__init__", "__post_init__"):
        frame, level = frame.f_back, level + 1
    return level


@_shared_doc
@dataclass(frozen=True)
class FactoredSampler(Sampler):
    """A factored sampling rule: a state that plays joint actions, on a problem offering ``factor_graph``.

    It runs under the one GLR stop as every sampling rule does (:class:`bandits.pure_exploration.PureExploration`),
    in rounds of joint actions. Subclasses add their rule's options and give :meth:`state`.

    Parameters
    ----------
%(legacy)s

    Raises
    ------
    InvalidInputError
        A bad deprecated run option.
    """

    threshold: str | Threshold | None = None
    glrt: str | None = None
    growth: float | None = None

    def __post_init__(self) -> None:
        given = [name for name in _LEGACY if getattr(self, name) is not None]
        if given:
            warnings.warn(f"{type(self).__name__}({', '.join(given)}=...): options of the run, not of the rule; give "
                          "them to PureExploration (or after the name: NAME:threshold=...,glrt=...,growth=...)",
                          DeprecationWarning, stacklevel=_constructor_caller())
        if self.threshold is not None:
            check_threshold_option(self.threshold, "factored")
        if self.glrt is not None:
            check_choice(self.glrt, "glrt", GLRT_MODES)
        if self.growth is not None:
            check_growth(self.growth)

    def requires(self) -> tuple[str, ...]:
        """``("factor_graph",)``: the rule plays joint actions."""
        return ("factor_graph",)

    def run_options(self) -> dict[str, Any]:
        """The deprecated run options given to the rule, as PureExploration's.

        Returns
        -------
        dict
            ``stop``, ``growth`` and ``problem`` for those given.
        """
        out: dict[str, Any] = {} if self.threshold is None else {"stop": GLRStop(self.threshold)}
        if self.growth is not None:
            out["growth"] = self.growth
        if self.glrt is not None:
            out["problem"] = glrt_problem(self.glrt)
        return out

    def describe(self) -> dict[str, Any]:
        """The rule's options (the deprecated run options left out: the run records them)."""
        return {k: v for k, v in super().describe().items() if k not in _LEGACY}

    @abstractmethod
    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """The rule's state for one run.

        Parameters
        ----------
        problem : FactoredProblem
            The problem of the run.
        env : FactoredBandit
            The instance (only oracle rules read its truth).
        rng : numpy.random.Generator
            The rule's randomness.

        Returns
        -------
        RuleState
            Plans the run's batches.
        """

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> RuleState:
        """The rule's state on the factored problem of the run.

        Raises
        ------
        InvalidInputError
            ``env`` is not a :class:`~bandits.multiagent.environment.FactoredBandit`.
        """
        if not isinstance(env, FactoredBandit):
            raise InvalidInputError(f"this algorithm runs on factored multi-agent instances (FactoredBandit), "
                                    f"got {type(env).__name__}")
        return self.state(cast(FactoredProblem, problem), env, rng)


@_shared_doc
@dataclass(frozen=True)
class CoveredSampler(FactoredSampler):
    """A factored rule with the covering set A0 and forced exploration among its options.

    Parameters
    ----------
%(cover)s
%(exploration)s
%(legacy)s

%(raises)s
    """

    cover: str = "greedy"
    exploration: str = "paper"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.cover, "cover", COVERS)
        self._check_exploration()

    def _check_exploration(self) -> None:
        check_choice(self.exploration, "exploration", EXPLORATION)
