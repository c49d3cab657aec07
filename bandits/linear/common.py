"""Pieces shared by the linear best-arm-identification algorithms: the growth check of their grid of checks, a
policy base class holding the GLR statistic (computed once per time), and one whose stopping rule is the linear
GLRT (its threshold by name from :mod:`bandits.core.thresholds`)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol

import numpy as np

from ..core import validation
from ..core.algorithm import Policy
from ..core.statistics import GLR, LinearStatistics, spanning_subset
from ..core.stopping import Threshold
from ..core.thresholds import ThresholdContext, make_threshold

__all__ = ["GLRPolicy", "LinearGLRPolicy", "LinearModel", "linear_items"]


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


#: why the linear and factored algorithms refuse growth = 0 (:func:`bandits.core.validation.check_growth`)
GRID_ONLY = ("this algorithm checks its own stopping rule once per batch, on a geometric grid of times (the grid "
             "saves a GLR over all alternatives at every pull); a small growth such as 0.001 comes close, and on "
             "K-armed or linear instances the GLR stop (stop='glr:growth=0') checks after every pull")


def check_growth(growth: float, name: str = "growth") -> float:
    """``growth`` of a grid of checks (:func:`bandits.core.validation.check_growth`), 0 refused (:data:`GRID_ONLY`).

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


class GLRPolicy(Policy):
    """Policy state with linear sufficient statistics over the arms and the GLR statistic over the items, computed
    once per time (every observation clears it); :meth:`glr_ready` says when the statistic exists.

    Parameters
    ----------
    env : LinearModel
        The instance (its arms, items and noise level).
    """

    def __init__(self, env: LinearModel) -> None:
        self.X, self.Z, self.sigma = env.X, linear_items(env), env.sigma
        self.stats = LinearStatistics(self.X)
        self.solve_time = 0.0
        self._glr: GLR | None = None

    @property
    def n(self) -> int:
        """Observations so far."""
        return self.stats.n

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Add the batch to the sufficient statistics."""
        self.stats.add(counts, sums)
        self._glr = None

    @abstractmethod
    def glr_ready(self) -> bool:
        """Whether the GLR statistic is computed now (the pulls must make A invertible).

        Returns
        -------
        bool
            True when :meth:`glr` returns the statistic.
        """

    def glr(self) -> GLR | None:
        """The GLR statistic over the items at the current time (computed once per time).

        Returns
        -------
        GLR or None
            None while :meth:`glr_ready` is false.
        """
        if not self.glr_ready():
            return None
        if self._glr is None:
            self._glr = self.stats.glr(self.Z, self.sigma)
        return self._glr


class LinearGLRPolicy(GLRPolicy):
    """Policy state with linear sufficient statistics and the GLRT stopping rule
    Lambda_t > beta(t, delta) over the items Z (recommendation: argmax_z z^T theta_hat).

    Subclasses provide the sampling rule (``next_batch``); the first batch is usually
    :meth:`initial_batch`, one pull of each of d spanning arms, before which the rule never stops.

    Parameters
    ----------
    env : LinearModel
        The instance (its arms, items and noise level).
    threshold : str or Threshold
        beta(t, delta): ``"practical"``, ``"soare"`` (eq. 11 with K = |Z|), ``"theory"`` (delta-correct under
        adaptive sampling, from the spanning pulls' information) or a :class:`bandits.core.stopping.Threshold`.
    """

    def __init__(self, env: LinearModel, threshold: str | Threshold) -> None:
        super().__init__(env)
        self.initial = spanning_subset(self.X)
        A0 = self.X[self.initial].T @ self.X[self.initial]
        self.threshold = make_threshold(threshold, ThresholdContext(n_items=self.Z.shape[0], information=A0))

    def initial_batch(self) -> np.ndarray:
        """One pull of each of the d spanning arms (:func:`bandits.core.statistics.spanning_subset`): A is invertible.

        Returns
        -------
        numpy.ndarray of int64, shape (K,)
            The pulls.
        """
        counts = np.zeros(self.X.shape[0], dtype=np.int64)
        counts[self.initial] = 1
        return counts

    def glr_ready(self) -> bool:
        """True once the d spanning pulls are made (the first batch).

        Returns
        -------
        bool
            Whether :meth:`glr` returns the statistic.
        """
        return self.n >= len(self.initial)

    def stopped(self, delta: float) -> bool:
        """Lambda_t > beta(t, delta, A_t); never before the spanning pulls."""
        glr = self.glr()
        if glr is None:
            return False
        return glr.value > self.threshold(self.n, delta, self.stats.A)

    def recommend(self) -> int:
        """The empirical best item (0 before the spanning pulls)."""
        glr = self.glr()
        return 0 if glr is None else glr.best

    def stop_statistic(self) -> dict[str, Any]:
        """``{"glr": Lambda_t, "best": z_hat}`` (empty before the spanning pulls)."""
        glr = self.glr()
        return {} if glr is None else {"glr": glr.value, "best": glr.best}
