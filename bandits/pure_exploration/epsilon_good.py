"""Epsilon-good arm identification: any arm whose mean is within epsilon of the best, on Gaussian arms (Garivier &
Kaufmann, "Non-asymptotic sequential tests for overlapping hypotheses", 2021; Jourdan, Degenne & Kaufmann, NeurIPS
2023). Several answers are correct: every arm i with mu_i >= max_k mu_k - epsilon.

The recommendation is the empirical best arm b; the alternatives where b is not epsilon-good are the pieces
{lambda : lambda_j >= lambda_b + epsilon}, one per other arm j, each the closest move of the pair (b, j) with a shift:

    f_j(w) = (mu_b - mu_j + epsilon)_+^2 / (2 sigma^2 (1 / w_b + 1 / w_j))

(:func:`optdesign.identification.pair_pieces` with ``shifts``). The characteristic time is the largest over the
correct answers of their pieces' max-min; for Gaussian arms the best arm's pieces dominate every other answer's (its
shifted gaps are the largest, pair by pair), so T* is that of the best arm: the pairs model of
:class:`optdesign.identification.PairsModel` with every shift epsilon. epsilon = 0 is best-arm identification.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.identification import PairsModel, pair_pieces
from optdesign.validation import unique_argmax

from .families import ExponentialFamily, Gaussian
from .karmed import KArmedProblem
from .oracle import Oracle
from .pieces import Pieces
from .questions import KArmedQuestion

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["EpsilonGoodProblem"]


class EpsilonGoodProblem(KArmedQuestion):
    """Identify an arm within epsilon of the best among K Gaussian arms (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    epsilon : float
        The slack, >= 0 (additive, in the means' unit).
    family : Gaussian
        The arms' family (Gaussian with its sigma; the default is sigma = 1).

    Raises
    ------
    InvalidInputError
        Fewer than two arms, a negative or non-finite epsilon, or a family other than Gaussian.
    """

    def __init__(self, n_arms: int, epsilon: float = 0.0, family: ExponentialFamily | None = None) -> None:
        super().__init__(n_arms, family if family is not None else Gaussian())
        if not isinstance(self.family, Gaussian):
            raise InvalidInputError(f"epsilon-good identification is given for Gaussian arms, not {self.family.name}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not (
                np.isfinite(epsilon) and epsilon >= 0):
            raise InvalidInputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.sigma = float(self.family.sigma)
        self._model: PairsModel | None = None
        self._model_best = -1

    @classmethod
    def of_environment(cls, env: KArmedBandit, epsilon: float = 0.0) -> EpsilonGoodProblem:
        """The epsilon-good problem of a Gaussian K-armed instance.

        Parameters
        ----------
        env : KArmedBandit
            The instance (its number of arms and its family).
        epsilon : float
            The slack.

        Returns
        -------
        EpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, epsilon, env.family)

    # an answer is an arm: its mean is its value, and it reads as its index
    answer_value = KArmedProblem.answer_value
    describe_answer = KArmedProblem.describe_answer

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the arm's mean is within epsilon of the largest."""
        mu = np.asarray(mu, dtype=float)
        return bool(mu[int(answer)] >= mu.max() - self.epsilon)

    def _pairs(self, best: int) -> np.ndarray:
        others = np.delete(np.arange(self.n_arms), best)
        return np.column_stack([np.full(others.size, best), others])

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        best = self.answer(mu)
        pairs = self._pairs(best)
        values, G = pair_pieces(mu, pairs, w, sigma=self.sigma, shifts=self.epsilon)
        return Pieces(best=best, answers=pairs[:, 1], values=values, gradients=G if gradients else None)

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) and w*(mu): the best arm's shifted pairs in the cvxpy model of
        :class:`optdesign.identification.PairsModel`, certified.

        Parameters
        ----------
        mu : numpy.ndarray
            The means, with a unique best.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* and the certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, non-finite, or with a tie for the best arm.
        SolverError
            No solver answered.
        """
        mu = self.check_parameter(mu)
        best = unique_argmax(mu, "the arms' means")
        if self._model is None or self._model_best != best:  # compiled once per best arm, re-solved at new means
            self._model, self._model_best = PairsModel(self.n_arms, self._pairs(best), sigma=self.sigma), best
        result = self._model.solve(mu, shifts=self.epsilon)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
