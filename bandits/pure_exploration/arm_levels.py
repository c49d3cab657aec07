"""Thresholding with a confidence level on arms whose parameter holds more than the means (Gaussian arms of unknown
variances, arms with rewards in [0, 1]): which arms have means above a level tau.

An answer is the set of arms above tau, as a bit mask; an alternative moves one arm's mean across the level, so the
pieces are f_k(w) = w_k d_k(tau), d_k the arms' own cost per pull (KL_inf for bounded arms; the Gaussian divergence
minimised over the unknown variance, or the plug-in one, for unequal variances:
:meth:`bandits.pure_exploration.arm_pairs.ArmPairsProblem.level_costs`). The GLR statistic is min_k N_k d_k(tau) at
the estimate, and the oracle is the closed form T* = sum_k 1 / d_k(tau), w*_k proportional to 1 / d_k(tau), exact
(the pieces are equal at w*; :func:`optdesign.identification.certified_bracket` confirms it). The ``theory``
threshold bounds each piece by its arm's cap (:mod:`bandits.pure_exploration.cap_bounds`): an arm on the wrong side
of the level has N_k d(F_hat_k, tau) <= N_k d(F_hat_k, mu_k). Top-Two's challenger flips the side of the arm of least
cost (plus log N_k for TCI), which both sides then pull.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.identification import certified_bracket

from .arm_pairs import ArmPairsProblem
from .arm_questions import ArmLevels, ArmQuestion
from .bounded import BoundedProblem
from .heteroscedastic import HeteroscedasticProblem
from .oracle import Oracle

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext

__all__ = ["ArmLevelsProblem", "BoundedLevelsProblem", "HeteroscedasticLevelsProblem"]


class ArmLevelsProblem(ArmLevels, ArmQuestion):
    """Identify the arms whose means are above a level (module docstring); answers are bit masks.

    Parameters
    ----------
    arms : ArmPairsProblem
        The arms' model (:class:`bandits.pure_exploration.bounded.BoundedProblem`,
        :class:`bandits.pure_exploration.heteroscedastic.HeteroscedasticProblem`): estimate, means, costs, threshold.
    level : float
        The level tau (strictly inside (0, 1) for bounded arms).

    Raises
    ------
    InvalidInputError
        More than 62 arms, or a level that is not finite (or outside (0, 1) for bounded arms).
    """

    def __init__(self, arms: ArmPairsProblem, level: float = 0.5) -> None:
        self._ask(arms)
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not np.isfinite(level):
            raise InvalidInputError(f"level must be a finite number, got {level!r}")
        if isinstance(arms, BoundedProblem) and not 0 < level < 1:
            raise InvalidInputError(f"the level of arms with rewards in [0, 1] must lie strictly between 0 and 1, got "
                                    f"{level!r}")
        self.level = float(level)

    @classmethod
    def of_environment(cls, env: Any, level: float = 0.5) -> ArmLevelsProblem:
        """The thresholding problem of an instance, in its arms' own model.

        Parameters
        ----------
        env : BoundedBandit or HeteroscedasticBandit
            The instance.
        level : float
            The level tau.

        Returns
        -------
        ArmLevelsProblem
            The problem.
        """
        return cls(cast(ArmPairsProblem, cls.arms_class.of_environment(env)), level)

    def _level_costs(self, mu: np.ndarray) -> np.ndarray:
        """The arms' model's d_k(tau) (:meth:`ArmPairsProblem.level_costs`)."""
        return self.arms.level_costs(mu, self.level)

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T* = sum_k 1 / d_k(tau) and w* proportional to 1 / d_k(tau), certified (module docstring).

        Parameters
        ----------
        mu : numpy.ndarray
            The arms' parameter, no mean on the level.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* and its certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter the arms' model refuses, or an arm whose mean is on the level.
        """
        costs = self.arms.level_costs(self.check_parameter(mu), self.level)
        if not np.all(costs > 0):
            raise InvalidInputError("an arm's mean is on the level: no finite number of pulls tells its side")
        w = (1.0 / costs) / np.sum(1.0 / costs)
        lower, T = certified_bracket(w * costs, np.diag(costs))
        return Oracle(T=T, weights=w, lower_bound=lower)

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """The arms' ``theory`` threshold read per arm
        (:meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.level_threshold`), when they have one."""
        return self.own_threshold(self.arms.level_threshold())


class BoundedLevelsProblem(ArmLevelsProblem):
    """Thresholding on arms with rewards in [0, 1], KL_inf pieces (:class:`ArmLevelsProblem`)."""

    kind = "bounded"
    arms_class = BoundedProblem


class HeteroscedasticLevelsProblem(ArmLevelsProblem):
    """Thresholding on Gaussian arms of unknown variances, EV-GLR pieces (:class:`ArmLevelsProblem`)."""

    kind = "heteroscedastic"
    arms_class = HeteroscedasticProblem
