"""Epsilon-good identification on linear arms with Gaussian noise: any item z_i with z_i^T theta >= max_j z_j^T theta -
epsilon is a correct answer (Jourdan & Degenne, "Choosing answers in epsilon-best-answer identification for linear
bandits", ICML 2022), asked by pulling the arms X of a linear or transductive instance.

The recommendation is the empirical best item b (the first on a tie). The alternatives where b is not epsilon-good
are the halfspaces {lambda : lambda^T z_j >= lambda^T z_b + epsilon}, one per item j unlike z_b: those of best-item
identification (:class:`~bandits.core.alternatives.Directions`, y_j = z_b - z_j) with gap_j = y_j^T theta + epsilon
in place of y_j^T theta, so the pieces, their gradients and closest alternatives are best-item identification's with
the gaps shifted, and every rule that reads the pieces or the halfspaces runs on it (Track-and-Stop, Frank–Wolfe
sampling with its design inverse, Lazy TaS, LinGame, LinGame-C, Top-Two, uniform, oracle weights). An item equal to
z_b is never epsilon better than it and has no piece. epsilon = 0 is best-item identification, piece for piece.

The oracle is the certified min-max design of :func:`optdesign.linear_epsilon_good_characteristic_time`: the smallest
T*_i over the epsilon-good items (several answers are correct, and the lower bound takes the easiest one to certify,
which on linear arms need not be the best item).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from optdesign import linear_epsilon_good_characteristic_time
from optdesign.errors import InvalidInputError
from optdesign.validation import as_nonnegative

from ..core.alternatives import Halfspaces
from .linear import LinearProblem
from .oracle import Oracle
from .problem import Problem

if TYPE_CHECKING:
    from ..core.environments import LinearBandit

__all__ = ["LinearEpsilonGoodProblem"]


class LinearEpsilonGoodProblem(LinearProblem):
    """Identify an item within epsilon of the best by pulling the arms (module docstring); answers are items.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms (spanning R^d).
    Z : array_like, shape (M, d), optional
        The items (at least two); None means X.
    epsilon : float
        The additive slack, >= 0 (0: best-item identification).
    sigma : float
        Standard deviation of one reward.
    kind : str
        ``"additive"`` only: z^T theta may be negative on linear items, where a fraction of the best value is not a
        slack (the multiplicative question is asked of K-armed instances).

    Raises
    ------
    InvalidInputError
        Malformed or non-spanning arms, items of another dimension or fewer than two, a bad sigma, a negative or
        non-finite epsilon, or another kind.
    """

    def __init__(self, X: ArrayLike, Z: ArrayLike | None = None, epsilon: float = 0.0, sigma: float = 1.0,
                 kind: str = "additive") -> None:
        super().__init__(X, Z, sigma)
        epsilon = as_nonnegative(epsilon, "epsilon")
        if kind != "additive":
            raise InvalidInputError(f"epsilon-good identification on linear arms is additive, got kind {kind!r} "
                                    "(z^T theta may be negative; the multiplicative question is K-armed)")
        self.epsilon = float(epsilon)

    @classmethod
    def of_environment(cls, env: LinearBandit, epsilon: float = 0.0,
                       kind: str = "additive") -> LinearEpsilonGoodProblem:
        """The epsilon-good question of a linear instance (its arms, items and noise level).

        Parameters
        ----------
        env : LinearBandit
            The instance.
        epsilon : float
            The additive slack.
        kind : str
            ``"additive"`` (the only kind on linear arms).

        Returns
        -------
        LinearEpsilonGoodProblem
            The problem.
        """
        return cls(env.X, env.Z, epsilon, env.sigma, kind)

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the item's value is within epsilon of the largest, z_a^T theta + epsilon >= max_j z_j^T theta."""
        scores = self.Z @ np.asarray(mu, dtype=float)
        return bool(scores[self.check_answer(answer)] + self.epsilon >= scores.max())

    def halfspaces(self, mu: np.ndarray, answer: int | None = None) -> Halfspaces:
        """Best-item identification's halfspaces of the answer b (at mu by default) with the gaps shifted by epsilon:
        y_j = z_b - z_j, gap_j = y_j^T mu + epsilon, for every item j unlike z_b.

        Parameters
        ----------
        mu : numpy.ndarray, shape (d,)
            A parameter theta.
        answer : int, optional
            The answer b (a Top-Two leader other than the estimate's best item may have negative gaps).

        Returns
        -------
        Halfspaces
            The answer, the pieces' answers (the items that would beat b by epsilon), normals and gaps.
        """
        base = super().halfspaces(mu, answer)
        if self.epsilon == 0:
            return base
        keep = np.any(base.Y != 0, axis=1)
        return Halfspaces(base.best, base.answers[keep], base.gaps[keep] + self.epsilon, base.Y[keep])

    def true_parameter(self, env: LinearBandit) -> np.ndarray:
        """theta; a tie for the best item is allowed when epsilon > 0 (the best items are all correct answers)."""
        return super().true_parameter(env) if self.epsilon == 0 else self.check_parameter(env.theta)

    lower_bound = Problem.lower_bound  # the oracle's certified T*: the easiest epsilon-good item's

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(theta) and w*(theta), certified (:func:`optdesign.linear_epsilon_good_characteristic_time`).

        Parameters
        ----------
        mu : numpy.ndarray
            theta (for epsilon = 0 with a unique best item).

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* over the arms (of the easiest answer) and the certified lower
            bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, or a tie for the best item when epsilon = 0.
        """
        result = linear_epsilon_good_characteristic_time(self.X, self.Z, self.check_parameter(mu), self.epsilon,
                                                         sigma=self.sigma, solver="CLARABEL")
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
