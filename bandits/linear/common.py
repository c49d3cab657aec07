"""Pieces shared by the linear best-arm-identification algorithms: the growth check of their grid of checks, a
policy base class holding the GLR statistic (computed once per time), and one whose stopping rule is the linear
GLRT (its threshold by name from :mod:`bandits.core.thresholds`)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..core import validation

__all__ = ["GRID_ONLY", "LinearModel", "check_growth", "linear_items"]


class LinearModel(Protocol):
    """What a linear policy reads from its instance (:class:`bandits.core.environments.LinearBandit` is one)."""

    @property
    def X(self) -> np.ndarray:
        """The measurement arms, shape (K, d)."""
        ...

    @property
    def Z(self) -> np.ndarray | None:
        """The items whose best is sought, shape (M, d); None stands for ``X``."""
        ...

    @property
    def sigma(self) -> float:
        """Standard deviation of the reward noise."""
        ...


def linear_items(env: LinearModel) -> np.ndarray:
    """The items of ``env``: its ``Z``, or its arms ``X`` when ``Z`` is None.

    Parameters
    ----------
    env : LinearModel
        A linear instance.

    Returns
    -------
    numpy.ndarray, shape (M, d)
        The rows whose best item a run identifies.
    """
    return env.X if env.Z is None else env.Z


#: why the linear and factored algorithms refuse growth = 0 (``bandits.core.validation.check_growth``)
GRID_ONLY = ("this algorithm checks its own stopping rule once per batch, on a geometric grid of times (the grid "
             "saves a GLR over all alternatives at every pull); a small growth such as 0.001 comes close, and on "
             "K-armed or linear instances the GLR stop (stop='glr:growth=0') checks after every pull")


def check_growth(growth: float, name: str = "growth") -> float:
    """``growth`` of a grid of checks (``bandits.core.validation.check_growth``), 0 refused (:data:`GRID_ONLY`).

    Parameters
    ----------
    growth : float
        The option's value.
    name : str
        The option's name in messages.

    Returns
    -------
    float
        ``growth`` as a float, in (0, 1].

    Raises
    ------
    InvalidInputError
        Not a number in (0, 1].
    """
    return validation.check_growth(growth, name, refuse_zero=GRID_ONLY)
