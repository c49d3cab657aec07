"""Top-m and thresholding identification on linear arms with Gaussian noise: the questions of
:mod:`bandits.pure_exploration.top_m` and :mod:`bandits.pure_exploration.threshold` asked of the items z^T theta of a
linear or transductive instance (pulls of the arms X, answers about the items Z; Réda, Kaufmann & Delahaye-Duriez,
AISTATS 2021, for top m; Tirinzoni & Degenne's sign identification for thresholding).

Each alternative set is a union of halfspaces {lambda : y_j^T lambda <= c_j}
(:class:`~bandits.core.alternatives.Halfspaces`), so the pieces, their gradients and closest alternatives are those of
best-item identification with gap_j = y_j^T theta - c_j in place of y_j^T theta:

* top m: the pairs (i in S, j not in S) of the answer S, y = z_i - z_j, c = 0; piece (i, j) stands for S - {i} + {j};
* thresholding against tau: one piece per item, y = s_k z_k, c = s_k tau (s_k = +1 above the level, -1 otherwise);
  piece k stands for the answer with item k on the other side.

Answers are bit masks over the items. The oracle is the certified min-max design of
:func:`optdesign.linear_top_m_characteristic_time` or :func:`optdesign.linear_threshold_characteristic_time`. The
rules that read only the pieces (Track-and-Stop, Frank–Wolfe sampling, Lazy TaS, LinGame, LinGame-C, uniform, oracle
weights) run on both, and Top-Two, whose challenger is the leader's least-cost piece
(:meth:`~bandits.pure_exploration.linear.LinearProblem.halfspaces` of any answer) and whose one pull per pair lowers the
variance of that piece's normal (:meth:`~bandits.pure_exploration.linear.LinearProblem.duel_direction`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from optdesign import linear_threshold_characteristic_time, linear_top_m_characteristic_time
from optdesign.errors import InvalidInputError
from optdesign.validation import as_count, check_array_size

from ..core.alternatives import Halfspaces
from .linear import LinearProblem
from .oracle import Oracle
from .problem import Problem
from .questions import LevelSets, SetAnswers, TopSets
from .values import Values

if TYPE_CHECKING:
    from ..core.environments import LinearBandit

__all__ = ["LinearThresholdProblem", "LinearTopMProblem"]

#: the most items a thresholding answer covers (one bit each in a 64-bit mask)
MAX_MASK_ITEMS = 62


class LinearQuestion(SetAnswers, LinearProblem):
    """A question other than the best item asked of a linear instance: set answers over the items, T* as the lower
    bound of study reports."""

    answer_value = Values.answer_value  # a set of items has no value of its own

    lower_bound = Problem.lower_bound  # the oracle's certified T* in samples

    def true_parameter(self, env: LinearBandit) -> np.ndarray:
        """theta, ties among the items allowed (the question's answer may still be unique)."""
        return self.check_parameter(env.theta)

    @property
    def n_members(self) -> int:
        """The items (a set answer's members)."""
        return int(self.Z.shape[0])

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The items' values z^T theta."""
        return self.Z @ np.asarray(mu, dtype=float)

    def duel_direction(self, leader: int, challenger: int) -> np.ndarray:
        """z_i - z_j for a swap of item i for item j (top m), z_k for an item k moved across the level."""
        i, j = self.duel_pulls(self.check_answer(leader), self.check_answer(challenger))
        return self.Z[i] - self.Z[j] if i != j else self.Z[i]


class LinearTopMProblem(LinearQuestion, TopSets):
    """Identify the m items of largest z^T theta by pulling the arms (module docstring); answers are bit masks.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms (spanning R^d).
    Z : array_like, shape (M, d), optional
        The items; None means X.
    m : int
        The answer's size, 1 <= m < M.
    sigma : float
        Standard deviation of one reward.

    Raises
    ------
    InvalidInputError
        Malformed or non-spanning arms, items of another dimension, a bad sigma, or m outside [1, M).
    InstanceTooLargeError
        More pairs (i in the top m, j outside) than fit in memory.
    """

    def __init__(self, X: ArrayLike, Z: ArrayLike | None = None, m: int = 1, sigma: float = 1.0) -> None:
        super().__init__(X, Z, sigma)
        self.m = as_count(m, "m (the size of the answer)")
        M, d = self.Z.shape
        if not self.m < M:
            raise InvalidInputError(f"m must be below the number of items M = {M}, got {m}")
        check_array_size(float(self.m) * (M - self.m) * d, f"top-{self.m} identification of {M} items (its pairs)")

    @classmethod
    def of_environment(cls, env: LinearBandit, m: int = 1) -> LinearTopMProblem:
        """The top-m question of a linear instance (its arms, items and noise level).

        Parameters
        ----------
        env : LinearBandit
            The instance.
        m : int
            The answer's size.

        Returns
        -------
        LinearTopMProblem
            The problem.
        """
        return cls(env.X, env.Z, m, env.sigma)

    def halfspaces(self, mu: np.ndarray, answer: int | None = None) -> Halfspaces:
        """The pairs (i in S, j not in S) of the answer S (at mu by default): y = z_i - z_j, gap = y^T mu, standing
        for S - {i} + {j}."""
        mu = np.asarray(mu, dtype=float)
        best = self.answer(mu) if answer is None else self.check_answer(answer)
        pairs, answers = self.swap_pairs(best, self.Z.shape[0])
        Y = self.Z[pairs[:, 0]] - self.Z[pairs[:, 1]]
        return Halfspaces(best, answers, Y @ mu, Y)

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(theta) and w*(theta), certified (:func:`optdesign.linear_top_m_characteristic_time`).

        Parameters
        ----------
        mu : numpy.ndarray
            theta, with the m-th and (m+1)-th largest z^T theta distinct.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* over the arms and the certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, or a tie at the m-th item.
        """
        result = linear_top_m_characteristic_time(self.X, self.Z, self.check_parameter(mu), self.m, sigma=self.sigma,
                                                  solver="CLARABEL")
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)


class LinearThresholdProblem(LinearQuestion, LevelSets):
    """Identify which items have z^T theta above a level by pulling the arms (module docstring); answers are bit
    masks.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms (spanning R^d).
    Z : array_like, shape (M, d), optional
        The items (at most 62); None means X.
    level : float
        The level tau.
    sigma : float
        Standard deviation of one reward.

    Raises
    ------
    InvalidInputError
        Malformed or non-spanning arms, items of another dimension or more than 62, a bad sigma or level.
    """

    def __init__(self, X: ArrayLike, Z: ArrayLike | None = None, level: float = 0.0, sigma: float = 1.0) -> None:
        super().__init__(X, Z, sigma)
        if self.Z.shape[0] > MAX_MASK_ITEMS:
            raise InvalidInputError(f"at most {MAX_MASK_ITEMS} items (an answer is a 64-bit mask), got "
                                    f"{self.Z.shape[0]}")
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not np.isfinite(level):
            raise InvalidInputError(f"level must be a finite number, got {level!r}")
        self.level = float(level)

    @classmethod
    def of_environment(cls, env: LinearBandit, level: float = 0.0) -> LinearThresholdProblem:
        """The thresholding question of a linear instance (its arms, items and noise level).

        Parameters
        ----------
        env : LinearBandit
            The instance.
        level : float
            The level tau.

        Returns
        -------
        LinearThresholdProblem
            The problem.
        """
        return cls(env.X, env.Z, level, env.sigma)

    def halfspaces(self, mu: np.ndarray, answer: int | None = None) -> Halfspaces:
        """One piece per item: y = s_k z_k, gap = s_k (z_k^T mu - tau), s_k = +1 for the items the answer (at mu by
        default) places above the level, -1 for the others."""
        margin = self.scores(mu) - self.level
        best = self.answer(mu) if answer is None else self.check_answer(answer)
        side = np.where(np.right_shift(best, np.arange(margin.size)) & 1, 1.0, -1.0)
        return Halfspaces(best, best ^ np.left_shift(1, np.arange(margin.size)), side * margin, side[:, None] * self.Z)

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(theta) and w*(theta), certified (:func:`optdesign.linear_threshold_characteristic_time`).

        Parameters
        ----------
        mu : numpy.ndarray
            theta, with no z^T theta on the level.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* over the arms and the certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, or an item on the level.
        """
        result = linear_threshold_characteristic_time(self.X, self.Z, self.check_parameter(mu), self.level,
                                                      sigma=self.sigma, solver="CLARABEL")
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
