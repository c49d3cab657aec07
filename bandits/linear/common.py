"""Pieces shared by the linear best-arm-identification algorithms: initial spanning pulls, the
threshold by name, a policy base class holding the GLR statistic (computed once per time), and one whose
stopping rule is the linear GLRT."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Protocol

import numpy as np
from scipy.linalg import qr

from optdesign.errors import InvalidInputError

from ..algorithm import Policy
from ..statistics import GLR, LinearStatistics
from ..stopping import THRESHOLDS, LinearTheoryThreshold, PracticalThreshold, SoareThreshold, Threshold

__all__ = ["GLRPolicy", "LinearGLRPolicy", "LinearModel", "linear_items", "spanning_arms"]


class LinearModel(Protocol):
    """What a linear policy reads from its instance (:class:`bandits.environments.LinearBandit` is one)."""

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


def spanning_arms(X: np.ndarray) -> np.ndarray:
    """Indices of d arms spanning R^d (pivoted QR of X^T), pulled once each to make A invertible.

    Soare et al. start every static allocation and every XY-Adaptive phase from A_0 = one pull of
    each canonical arm; on their instance pivoted QR picks d such arms.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms (spanning R^d).

    Returns
    -------
    numpy.ndarray of int, shape (d,)
        Sorted row indices of the d arms.
    """
    d = X.shape[1]
    _, _, piv = qr(X.T, pivoting=True, mode="economic")
    return np.sort(piv[:d])


def make_threshold(name: str | Threshold, env: LinearModel, A0: np.ndarray) -> Threshold:
    """A threshold object from its name (``practical``, ``soare``, ``theory``) or as given (``soare`` counts the
    items of ``env``, ``theory`` starts from the information ``A0``); InvalidInputError on another name."""
    if isinstance(name, Threshold):
        return name
    if name == "practical":
        return PracticalThreshold()
    if name == "soare":
        return SoareThreshold(n_items=linear_items(env).shape[0])
    if name == "theory":
        return LinearTheoryThreshold.from_matrix(A0)
    raise InvalidInputError(f"threshold must be one of {', '.join(THRESHOLDS)}; got {name!r}")


def check_growth(growth: float) -> float:
    """``growth`` as a float when it lies in (0, 1] (relative step of a checkpoint grid), else InvalidInputError."""
    if not (np.isfinite(growth) and 0 < growth <= 1):
        raise InvalidInputError(f"growth (relative step of the checkpoint grid) must lie in (0, 1], got {growth}")
    return float(growth)


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
        adaptive sampling, from the spanning pulls' information) or a :class:`bandits.stopping.Threshold`.
    """

    def __init__(self, env: LinearModel, threshold: str | Threshold) -> None:
        super().__init__(env)
        self.initial = spanning_arms(self.X)
        A0 = self.X[self.initial].T @ self.X[self.initial]
        self.threshold = make_threshold(threshold, env, A0)

    def initial_batch(self) -> np.ndarray:
        """One pull of each of the d spanning arms (:func:`spanning_arms`), which makes A invertible.

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
