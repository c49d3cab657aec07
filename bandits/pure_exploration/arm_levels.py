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
from .arm_questions import ArmQuestion
from .bounded import BoundedProblem
from .heteroscedastic import HeteroscedasticProblem
from .oracle import Oracle
from .pieces import Pieces
from .questions import LevelSets

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext

__all__ = ["ArmLevelsProblem", "BoundedLevelsProblem", "HeteroscedasticLevelsProblem"]


class ArmLevelsProblem(LevelSets, ArmQuestion):
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

    @property
    def n_answers(self) -> int:
        return 2**self.arms.n_arms

    def answer(self, mu: np.ndarray) -> int:
        return self.above_set(mu)

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the answer holds exactly the arms above the level (:meth:`is_level_set`)."""
        return self.is_level_set(answer, mu)

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        best = self.answer(mu)
        costs = self.arms.level_costs(mu, self.level)
        answers = best ^ np.left_shift(1, np.arange(self.n_arms))
        return Pieces(best=best, answers=answers, values=w * costs, gradients=np.diag(costs) if gradients else None)

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The leader with the side of its arm of least cost N_k d_k(tau) flipped (0 for an arm the leader places on
        the other side of its mean)."""
        return self._least_flip(mu, counts, leader, penalised=False)

    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The least flip's cost plus log N_k (TCI)."""
        return self._least_flip(mu, counts, leader, penalised=True)

    def _least_flip(self, mu: np.ndarray, counts: np.ndarray, leader: int, *, penalised: bool) -> int:
        costs = np.asarray(counts, dtype=float) * self.arms.level_costs(mu, self.level)
        return self.least_flip(mu, counts, leader, costs, penalised=penalised)

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
        """The arms' ``theory`` threshold read per arm (:meth:`ArmPairsProblem.level_threshold`), when they have one."""
        return self.own_threshold(self.arms.level_threshold())


class BoundedLevelsProblem(ArmLevelsProblem):
    """Thresholding on arms with rewards in [0, 1], KL_inf pieces (:class:`ArmLevelsProblem`)."""

    kind = "bounded"
    arms_class = BoundedProblem


class HeteroscedasticLevelsProblem(ArmLevelsProblem):
    """Thresholding on Gaussian arms of unknown variances, EV-GLR pieces (:class:`ArmLevelsProblem`)."""

    kind = "heteroscedastic"
    arms_class = HeteroscedasticProblem
