"""The one table of stopping thresholds by name: ``name -> factory``, and the names each algorithm family accepts.

A name's threshold depends on the problem (``theory`` is :class:`bandits.core.stopping.LinearTheoryThreshold` for a
linear problem and a factored structure's own delta-correct threshold for a factored one; ``kk21`` is
:class:`bandits.core.stopping.Kk21Threshold` for Gaussian arms and :class:`bandits.core.stopping.Kk21ExpFamilyThreshold`
otherwise). A factory does not ask what kind of problem it faces: it reads what the run offers in a
:class:`ThresholdContext` (the number of items, the information A_0 of the initial pulls, the arms' family, a
problem's own theory threshold, the graph of a bilinear instance) and refuses, naming what it needs, when that is
not offered. Every place that turns a threshold name into a :class:`bandits.core.stopping.Threshold` goes through
:func:`make_threshold`, and every list of valid names comes from :data:`FAMILY_THRESHOLDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from .entries import load_object
from .stopping import (
    BilinearThreshold,
    Kk21ExpFamilyThreshold,
    Kk21Threshold,
    LinearTheoryThreshold,
    PracticalThreshold,
    SoareThreshold,
    Threshold,
)

__all__ = ["FAMILY_THRESHOLDS", "THRESHOLD_TABLE", "ThresholdContext", "ThresholdName", "check_threshold_option",
           "load_threshold", "make_threshold", "threshold_names"]


@dataclass(frozen=True)
class ThresholdContext:
    """What a run offers the threshold factories; a field left None is not offered.

    Parameters
    ----------
    n_items : int, optional
        The number of items (answers) whose best is sought.
    information : numpy.ndarray, optional
        A_0, the d x d information matrix of the initial pulls (offered by linear problems only).
    family : str, optional
        The name of the arms' one-parameter exponential family (offered by K-armed problems only).
    n_arms : int, optional
        The number K of arms.
    theory : callable, optional
        The problem's own delta-correct threshold (a factored structure's), built on demand.
    graph : tuple of int, optional
        ``(m, K)``: the directed edges and the arms per node of a graphical bilinear instance.
    n_pairs : int, optional
        The pairs of arms a wrong answer can misorder, when not the K - 1 of best-arm identification (top m:
        m (K - m)); Kaufmann & Koolen's union runs over them.
    """

    n_items: int | None = None
    information: np.ndarray | None = None
    family: str | None = None
    n_arms: int | None = None
    theory: Callable[[], Threshold] | None = None
    graph: tuple[int, int] | None = None
    n_pairs: int | None = None


@dataclass(frozen=True)
class ThresholdName:
    """One row of the table: a name, what it is meant for and its factory.

    Parameters
    ----------
    name : str
        The name users write (``threshold=NAME``).
    meant_for : str
        The problems it is proven or meant for, for messages (``"linear problems"``); empty: any problem.
    kinds : tuple of str
        The instance kinds it has a meaning on (empty: all), checked before a run.
    build : callable
        ``build(context) -> Threshold``.
    """

    name: str
    meant_for: str
    kinds: tuple[str, ...]
    build: Callable[[ThresholdContext], Threshold]


class _NotOffered(Exception):
    """A factory's need the context does not offer (``args[0]`` says what); :func:`make_threshold` names the row."""


def _needs(value: Any, what: str) -> Any:
    """``value`` when offered (not None); else :class:`_NotOffered` naming ``what`` the factory needs."""
    if value is None:
        raise _NotOffered(what)
    return value


def _soare(ctx: ThresholdContext) -> Threshold:
    """Soare et al.'s eq. 11 with K = the number of items (a linear problem: one that offers A_0)."""
    _needs(ctx.information, "an information matrix")
    return SoareThreshold(n_items=_needs(ctx.n_items, "the number of items"))


def _theory(ctx: ThresholdContext) -> Threshold:
    """The problem's own delta-correct threshold if it offers one, else the linear one from A_0."""
    if ctx.theory is not None:
        return ctx.theory()
    A0 = _needs(ctx.information, "the information matrix of the initial pulls or a theory threshold of its own")
    return LinearTheoryThreshold.from_matrix(A0)


def _kk21(ctx: ThresholdContext) -> Threshold:
    """Kaufmann & Koolen's bound: the Gaussian calibration for Gaussian arms, the exponential-family one else."""
    family = _needs(ctx.family, "the arms' exponential family")
    n_arms = _needs(ctx.n_arms, "the number of arms")
    return (Kk21Threshold if family == "gaussian" else Kk21ExpFamilyThreshold)(n_arms, ctx.n_pairs)


def _s1(ctx: ThresholdContext) -> Threshold:
    """Rizk et al.'s (S1) for the graph's m edges and K arms per node."""
    m, K = _needs(ctx.graph, "a graph of nodes")
    return BilinearThreshold(n_edges=m, n_node_arms=K)


#: every threshold name, its meaning and its factory
THRESHOLD_TABLE: dict[str, ThresholdName] = {row.name: row for row in (
    ThresholdName("practical", "", (), lambda ctx: PracticalThreshold()),
    ThresholdName("soare", "linear problems", ("linear",), _soare),
    ThresholdName("theory", "linear, factored, heteroscedastic or bounded problems",
                  ("linear", "factored", "bilinear", "heteroscedastic", "bounded"), _theory),
    ThresholdName("kk21", "K-armed problems", ("karmed",), _kk21),
    ThresholdName("s1", "graphical bilinear instances", ("bilinear",), _s1),
)}

#: the names each algorithm family accepts, in the order its messages list them
FAMILY_THRESHOLDS: dict[str, tuple[str, ...]] = {
    "linear": ("practical", "soare", "theory"),
    "glr": ("practical", "theory", "kk21", "soare"),
    "factored": ("practical", "theory"),
    "bilinear": ("s1", "practical", "theory"),
}
#: what a family's messages add to its names (the GLR stop also loads a threshold by its path)
_MORE = {"glr": " or package.module:Class"}


def threshold_names(family: str) -> tuple[str, ...]:
    """The threshold names an algorithm family accepts.

    Parameters
    ----------
    family : str
        A key of :data:`FAMILY_THRESHOLDS` (``linear``, ``glr``, ``factored``, ``bilinear``).

    Returns
    -------
    tuple of str
        The names, in the order messages list them.

    Raises
    ------
    InvalidInputError
        An unknown family.
    """
    if family not in FAMILY_THRESHOLDS:
        raise InvalidInputError(f"unknown algorithm family {family!r} of thresholds; valid: "
                                f"{', '.join(FAMILY_THRESHOLDS)}")
    return FAMILY_THRESHOLDS[family]


def check_threshold_option(value: str | Threshold, family: str = "linear") -> str | Threshold:
    """A threshold option: a :class:`Threshold` instance, or a name ``family`` accepts.

    Parameters
    ----------
    value : str or Threshold
        The option.
    family : str
        The algorithm family (:data:`FAMILY_THRESHOLDS`).

    Returns
    -------
    str or Threshold
        ``value``.

    Raises
    ------
    InvalidInputError
        Any other value, with the family's valid names, or an unknown family.
    """
    if isinstance(value, Threshold):
        return value
    names = threshold_names(family)
    if not isinstance(value, str) or value not in names:
        label = "GLR" if family == "glr" else family
        raise InvalidInputError(f"unknown {label} threshold {value!r}; threshold must be one of "
                                f"{', '.join(names)}{_MORE.get(family, '')}")
    return value


def make_threshold(value: str | Threshold, context: ThresholdContext, family: str = "linear") -> Threshold:
    """The threshold named ``value`` for what ``context`` offers (a Threshold instance is returned as is).

    Parameters
    ----------
    value : str or Threshold
        A name ``family`` accepts, or a threshold.
    context : ThresholdContext
        What the run offers the factory.
    family : str
        The algorithm family (:data:`FAMILY_THRESHOLDS`).

    Returns
    -------
    Threshold
        The threshold the name's factory builds from ``context`` (``value`` itself when it is one).

    Raises
    ------
    InvalidInputError
        An unknown name, or a problem that does not offer what the name needs.
    """
    checked = check_threshold_option(value, family)
    if isinstance(checked, Threshold):
        return checked
    row = THRESHOLD_TABLE[checked]
    try:
        return row.build(context)
    except _NotOffered as missing:
        raise InvalidInputError(f"the {row.name!r} threshold is for {row.meant_for}: it needs {missing.args[0]}, "
                                "which this problem does not offer") from None


def load_threshold(path: str) -> Threshold:
    """The threshold a ``"package.module:Class"`` path names: a Threshold instance, or a subclass built bare.

    Parameters
    ----------
    path : str
        ``"package.module:Name"``.

    Returns
    -------
    Threshold
        The threshold object.

    Raises
    ------
    InvalidInputError
        The path does not import, names no Threshold, or the class needs arguments.
    """
    found = load_object(path, "threshold")
    if isinstance(found, Threshold):
        return found
    if not (isinstance(found, type) and issubclass(found, Threshold)):
        raise InvalidInputError(f"threshold {path!r} is not a Threshold subclass or instance (bandits.core.stopping)")
    try:
        return found()
    except TypeError as exc:
        raise InvalidInputError(f"threshold {path!r} cannot be built without arguments: {exc}") from None
