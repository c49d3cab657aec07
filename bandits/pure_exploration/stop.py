"""The GLR stopping rule and its threshold, shared by every pure-exploration policy.

Stopping (:class:`GLRStop`): stop at the first checked time t with GLR_t > beta(t, delta), where
GLR_t = min_j f_j(N_t) at the estimate (the problem's pieces at the counts: Garivier & Kaufmann 2016, Sec. 3.2,
and its linear form in :mod:`bandits.core.statistics`), and recommend the answer at the estimate. Thresholds:
``practical`` log((1 + log t) / delta) (GK16 Sec. 6, not proven delta-correct), ``theory`` (linear problems:
the self-normalised bound of :class:`bandits.core.stopping.LinearTheoryThreshold`), ``kk21`` (K-armed problems: the
mixture-martingale bound of :class:`bandits.core.stopping.Kk21Threshold` for Gaussian arms, of
:class:`bandits.core.stopping.Kk21ExpFamilyThreshold` for the other exponential families), any
:class:`bandits.core.stopping.Threshold`, or one named ``package.module:Class`` (a Threshold subclass, built without
arguments, or a Threshold instance).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.stopping import Threshold
from ..core.thresholds import THRESHOLD_TABLE, check_threshold_option, load_threshold, make_threshold, threshold_names
from ..core.validation import check_growth
from .problem import Problem
from .sampler import SamplerState

__all__ = ["STOP_THRESHOLDS", "EliminationStop", "GLRStop", "GapStop", "OwnTest", "RuleStop", "check_stop_options"]

#: the threshold names of the GLR stopping rule (:data:`bandits.core.thresholds.FAMILY_THRESHOLDS`)
STOP_THRESHOLDS = threshold_names("glr")


@dataclass(frozen=True)
class GLRStop:
    """The GLR stopping rule with a threshold beta(t, delta).

    Parameters
    ----------
    threshold : str or Threshold
        ``"practical"`` (default), ``"theory"`` (linear problems), ``"kk21"`` (K-armed problems), ``"soare"``
        (Soare et al.'s eq. 11 with K the number of items; linear problems), a threshold object, or
        ``"package.module:Class"`` naming one (imported and checked here).

    Raises
    ------
    InvalidInputError
        An unknown threshold name, or a plug-in path that does not import or names no Threshold.
    """

    threshold: str | Threshold = "practical"

    def __post_init__(self) -> None:
        """Refuse an unknown threshold name; import a plug-in threshold."""
        if isinstance(self.threshold, Threshold):
            return
        if ":" in str(self.threshold):
            object.__setattr__(self, "threshold", load_threshold(str(self.threshold)))
        else:
            check_threshold_option(self.threshold, "glr")

    def check_kind(self, kind: str) -> None:
        """Refuse a named threshold on an instance kind it is not meant for (before any run).

        Parameters
        ----------
        kind : str
            The instance kind (``"karmed"``, ``"linear"``, ...).

        Raises
        ------
        InvalidInputError
            ``"theory"`` or ``"soare"`` on a non-linear instance, ``"kk21"`` on a non-K-armed one.
        """
        row = THRESHOLD_TABLE[self.threshold] if isinstance(self.threshold, str) else None
        if row is not None and row.kinds and kind not in row.kinds:
            raise InvalidInputError(f"the {self.threshold!r} GLR threshold is for {row.meant_for}, "
                                    f"not {kind} instances")

    def make(self, problem: Problem, initial_counts: np.ndarray) -> Threshold:
        """The threshold for a run of ``problem`` that started with ``initial_counts``.

        Parameters
        ----------
        problem : Problem
            The structure.
        initial_counts : numpy.ndarray of int
            The pulls made before the sampling rule runs (they fix the theory threshold's A_0).

        Returns
        -------
        Threshold
            The callable beta(t, delta, A).

        Raises
        ------
        InvalidInputError
            ``"theory"`` or ``"soare"`` on a problem without an information matrix, ``"kk21"`` on a problem other
            than a K-armed one.
        """
        return make_threshold(self.threshold, problem.threshold_context(initial_counts), "glr")

    def describe(self) -> dict[str, Any]:
        """The rule as a flat record.

        Returns
        -------
        dict
            ``{"stop": "glr", "threshold": name}``.
        """
        name = self.threshold.name if isinstance(self.threshold, Threshold) else self.threshold
        return {"stop": "glr", "threshold": name}


def check_stop_options(stop: object, growth: float) -> None:
    """Refuse a stop that is not a :class:`GLRStop` or a batch growth outside [0, 1].

    Parameters
    ----------
    stop : object
        The stopping rule given.
    growth : float
        The relative batch size given.

    Raises
    ------
    InvalidInputError
        Either is wrong.
    """
    if not isinstance(stop, GLRStop):
        raise InvalidInputError(f"stop must be a GLRStop, got {type(stop).__name__}")
    check_growth(growth)


class RuleStop(ABC):
    """A published stopping rule that reads what the sampling rule's state declares (its survivors, its gap index);
    the run recommends the state's :meth:`~bandits.pure_exploration.sampler.SamplerState.recommendation`."""

    @abstractmethod
    def stopped(self, state: SamplerState, delta: float) -> bool:
        """Whether the run may stop now.

        Parameters
        ----------
        state : SamplerState
            The rule's state.
        delta : float
            The confidence level (elimination and gap stops have it in the rule's widths already).

        Returns
        -------
        bool
            True when the run may stop.
        """

    def check(self, state: SamplerState) -> None:
        """Refuse a state that does not declare what the stop reads (nothing by default).

        Parameters
        ----------
        state : SamplerState
            The rule's state.
        """
        return None

    def describe(self) -> dict[str, Any]:
        """The rule as a flat record.

        Returns
        -------
        dict
            ``{"stop": "own"}``: the algorithm's own published stop.
        """
        return {"stop": "own"}


@dataclass(frozen=True)
class EliminationStop(RuleStop):
    """Stop when one answer survives (delta is already in the rule's confidence widths) and recommend it: the phased
    linear algorithms (Soare et al.'s XY-Adaptive, RAGE, ALBA), whose state declares its survivors
    (:meth:`bandits.pure_exploration.sampler.SamplerState.survivors`)."""

    def stopped(self, state: SamplerState, delta: float) -> bool:
        survivors = state.survivors()
        return survivors is not None and len(survivors) == 1

    def check(self, state: SamplerState) -> None:
        """Refuse a state without survivors.

        Parameters
        ----------
        state : SamplerState
            The rule's state.

        Raises
        ------
        InvalidInputError
            The rule does not eliminate.
        """
        if state.survivors() is None:
            raise InvalidInputError(f"{type(state).__name__} does not eliminate answers: it cannot stop by elimination")


@dataclass(frozen=True)
class GapStop(RuleStop):
    """Stop when the state's gap index B(t), an upper confidence bound on the gap between its challenger and its
    leader, is at most ``epsilon`` (LinGapE, Xu, Honda & Sugiyama, AISTATS 2018; B(t) <= epsilon gives an
    epsilon-best answer with probability 1 - delta).

    Parameters
    ----------
    epsilon : float
        The tolerance (>= 0).
    """

    epsilon: float = 0.0

    def stopped(self, state: SamplerState, delta: float) -> bool:
        bound = state.gap_index()
        return bound is not None and bound <= self.epsilon


@dataclass(frozen=True)
class OwnTest(RuleStop):
    """A published test that only the rule's state can decide (:meth:`~bandits.pure_exploration.SamplerState.own_test`):
    e.g. Fiez et al.'s static allocations, after each batch k, GLR > log(1 / delta_k) with delta_k shrinking with k."""

    def stopped(self, state: SamplerState, delta: float) -> bool:
        return state.own_test(delta)
