"""Thresholding with a confidence level: which arms have means above a level tau, among K arms of one exponential
family (sign identification; the fixed-confidence counterpart of APT's question, Locatelli, Gutzeit & Carpentier
2016). An answer is the set of arms above tau, encoded as a bit mask; an alternative moves one arm across the level:

    f_k(w) = w_k d(mu_k, tau)

(:func:`optdesign.identification.level_pieces`), so the GLR statistic at the counts is min_k N_k d(mu_hat_k, tau) and
the oracle is the closed form T* = sum_k 1 / d(mu_k, tau), w*_k proportional to 1 / d(mu_k, tau)
(:func:`optdesign.threshold_characteristic_time`). LinGame's optimistic gains are taken at the least piece's closest
alternative, its arm moved to the level; Top-Two's TC challenger flips the side of the least-cost arm, which both
sides then pull.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from optdesign import threshold_characteristic_time
from optdesign.errors import InvalidInputError
from optdesign.identification import level_pieces

from .arm_questions import ArmLevels
from .families import ExponentialFamily
from .karmed import KArmedProblem
from .oracle import Oracle
from .questions import KArmedQuestion

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["ThresholdProblem"]


class ThresholdProblem(KArmedQuestion, ArmLevels):
    """Identify the arms whose means are above a level (module docstring); answers are bit masks.

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2; at most 62, the bits of an answer).
    level : float
        The level tau, inside the family's mean space.
    family : ExponentialFamily
        The reward family (Gaussian with its sigma by default, Bernoulli, Poisson or exponential).

    Raises
    ------
    InvalidInputError
        Fewer than two or more than 62 arms, or a level that is not finite or lies outside the family's mean space.
    """

    def __init__(self, n_arms: int, level: float = 0.0, family: ExponentialFamily | None = None) -> None:
        super().__init__(n_arms, family)
        if self.n_arms > 62:
            raise InvalidInputError(f"at most 62 arms (an answer is a 64-bit mask), got {self.n_arms}")
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not np.isfinite(level):
            raise InvalidInputError(f"level must be a finite number, got {level!r}")
        if self.family.name == "bernoulli" and not 0 < level < 1:
            raise InvalidInputError(f"the level of Bernoulli arms must lie strictly between 0 and 1, got {level!r}")
        if self.family.name in ("poisson", "exponential") and not level > 0:
            raise InvalidInputError(f"the level of {self.family.name} arms must be positive, got {level!r}")
        self.level = float(level)

    @classmethod
    def of_environment(cls, env: KArmedBandit, level: float = 0.0) -> ThresholdProblem:
        """The thresholding problem of a K-armed instance.

        Parameters
        ----------
        env : KArmedBandit
            The instance (its number of arms and its family).
        level : float
            The level tau.

        Returns
        -------
        ThresholdProblem
            The problem.
        """
        return cls(env.n_arms, level, env.family)

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The arms' means."""
        return np.asarray(mu, dtype=float)

    def _level_costs(self, mu: np.ndarray) -> np.ndarray:
        """d(mu_k, tau) (:func:`optdesign.identification.level_pieces` at unit weights)."""
        return level_pieces(mu, self.level, np.ones(self.n_arms), **self.family_args)[0]

    optimism = KArmedProblem.optimism  # LinGame's gains, at the best response's arm moved to the level

    def response(self, mu: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The closest alternative lambda of the least piece at (mu, w): its arm moved to the level."""
        lam = np.asarray(mu, dtype=float).copy()
        lam[self.pieces(mu, w, gradients=False).best_response] = self.level
        return lam

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) = sum_k 1 / d(mu_k, tau) and w*(mu) (:func:`optdesign.threshold_characteristic_time`).

        Parameters
        ----------
        mu : numpy.ndarray
            The means, none on the level.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* and the certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, outside the family's mean space, or with a mean on the level.
        """
        mu = self.family.check_means(self.check_parameter(mu))
        result = threshold_characteristic_time(mu, self.level, **self.family_args)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
