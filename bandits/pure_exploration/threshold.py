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

from .families import ExponentialFamily
from .karmed import KArmedProblem
from .oracle import Oracle
from .pieces import Pieces
from .questions import KArmedQuestion, LevelSets

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["ThresholdProblem"]


class ThresholdProblem(KArmedQuestion, LevelSets):
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

    @property
    def n_answers(self) -> int:
        return 2**self.n_arms

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The arms' means."""
        return np.asarray(mu, dtype=float)

    def answer(self, mu: np.ndarray) -> int:
        return self.above_set(mu)

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the answer holds exactly the arms above the level (:meth:`is_level_set`)."""
        return self.is_level_set(answer, mu)

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        best = self.answer(mu)
        family, sigma = self.family_args
        values, G = level_pieces(mu, self.level, w, family=family, sigma=sigma)
        answers = best ^ np.left_shift(1, np.arange(self.n_arms))
        return Pieces(best=best, answers=answers, values=values, gradients=G if gradients else None)

    optimism = KArmedProblem.optimism  # LinGame's gains, at the best response's arm moved to the level

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The leader with the side of its arm of least transportation cost flipped: N_k d(mu_k, tau), 0 for an arm
        the leader places on the other side of mu_k (Top-Two on thresholding; both sides then pull that arm)."""
        return self._least_flip(mu, counts, leader, penalised=False)

    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The least flip's cost plus log N_k (TCI on thresholding)."""
        return self._least_flip(mu, counts, leader, penalised=True)

    def _least_flip(self, mu: np.ndarray, counts: np.ndarray, leader: int, *, penalised: bool) -> int:
        family, sigma = self.family_args
        counts = np.asarray(counts, dtype=float)
        costs, _ = level_pieces(np.asarray(mu, dtype=float), self.level, counts, family=family, sigma=sigma)
        return self.least_flip(mu, counts, leader, costs, penalised=penalised)

    def response(self, mu: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The closest alternative lambda of the least piece at (mu, w): its arm moved to the level."""
        mu, w = self.check_shapes(mu, w)
        family, sigma = self.family_args
        values, _ = level_pieces(mu, self.level, w, family=family, sigma=sigma)
        lam = np.asarray(mu, dtype=float).copy()
        lam[int(np.argmin(values))] = self.level
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
        family, sigma = self.family_args
        result = threshold_characteristic_time(mu, self.level, family=family, sigma=sigma)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
