"""Epsilon-good arm identification: any arm whose mean is within epsilon of the best (Garivier & Kaufmann,
"Non-asymptotic sequential tests for overlapping hypotheses", 2021; Jourdan, Degenne & Kaufmann, NeurIPS 2023), on
Gaussian, Bernoulli, Poisson or exponential arms. Several answers are correct: every arm i with
mu_i >= max_k mu_k - epsilon.

The recommendation is the empirical best arm b; the alternatives where b is not epsilon-good are the pieces
{lambda : lambda_j >= lambda_b + epsilon}, one per other arm j, each the closest move of the pair (b, j) with a shift
(:func:`optdesign.identification.pair_pieces` with ``shifts``): for Gaussian arms

    f_j(w) = (mu_b - mu_j + epsilon)_+^2 / (2 sigma^2 (1 / w_b + 1 / w_j)),

for the other families a one-dimensional minimisation with one stationary point
(:mod:`optdesign.identification.shifted`). The characteristic time is the smallest over the correct answers (the
easiest to certify) of their max-min: for Gaussian arms the best arm's, the pairs model of
:class:`optdesign.identification.PairsModel` with every shift epsilon, and for the others
:func:`optdesign.identification.epsilon_good_characteristic_time`, every epsilon-good arm solved and certified.
epsilon = 0 is best-arm identification.

The Top-Two rules run on it through the transportation costs of the pairs (``pair_costs``, ``pair_share``): with the
empirical best as leader that is EB-TC-epsilon (Jourdan, Degenne & Kaufmann, NeurIPS 2023).

``kind="multiplicative"`` asks for an arm with mu_i >= (1 - epsilon) max_k mu_k instead (positive means, epsilon < 1):
the pieces {lambda : lambda_j >= lambda_b / (1 - epsilon)} are scaled rather than shifted (``scales`` of
:func:`optdesign.identification.pair_pieces`), and T* is the equalisation's on every family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.identification import PairsModel, epsilon_ends, epsilon_good_characteristic_time, pair_pieces
from optdesign.validation import unique_argmax

from .families import ExponentialFamily, Gaussian
from .karmed import KArmedProblem
from .oracle import Oracle
from .pieces import Pieces, with_leader
from .questions import KArmedQuestion
from .values import Values

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["EpsilonGoodProblem"]


class EpsilonGoodProblem(KArmedQuestion):
    """Identify an arm within epsilon of the best among K arms of one family (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    epsilon : float
        The slack, >= 0: in the means' unit (additive), or a fraction of the best mean below 1 (multiplicative).
    family : ExponentialFamily
        The arms' family: Gaussian (the default, sigma = 1), Bernoulli, Poisson or exponential.
    kind : str
        ``"additive"`` (default: mu_i >= max mu - epsilon) or ``"multiplicative"`` (mu_i >= (1 - epsilon) max mu).

    Raises
    ------
    InvalidInputError
        Fewer than two arms, a negative or non-finite epsilon, an unknown kind, or a Bernoulli or multiplicative
        epsilon of 1 or more.
    """

    def __init__(self, n_arms: int, epsilon: float = 0.0, family: ExponentialFamily | None = None,
                 kind: str = "additive") -> None:
        super().__init__(n_arms, family if family is not None else Gaussian())
        # the pieces {lambda_j >= c lambda_b + s}: (s, c) = (epsilon, 1) or (0, 1 / (1 - epsilon))
        self._shift, self._scale = epsilon_ends(epsilon, kind)
        epsilon = float(epsilon)
        if epsilon >= 1 and self.family.name == "bernoulli":
            raise InvalidInputError(f"a Bernoulli epsilon must be below 1 (every arm is epsilon-good), got {epsilon}")
        self.epsilon, self.kind = epsilon, kind
        self._model: PairsModel | None = None
        self._model_best = -1

    @classmethod
    def of_environment(cls, env: KArmedBandit, epsilon: float = 0.0, kind: str = "additive") -> EpsilonGoodProblem:
        """The epsilon-good problem of a K-armed instance.

        Parameters
        ----------
        env : KArmedBandit
            The instance (its number of arms and its family).
        epsilon : float
            The slack.
        kind : str
            ``"additive"`` or ``"multiplicative"``.

        Returns
        -------
        EpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, epsilon, env.family, kind)

    # an answer is an arm: its mean is its value, it reads as its index, it is checked as one, and Top-Two pulls it
    check_answer = Values.check_answer
    answer_value = KArmedProblem.answer_value
    describe_answer = KArmedProblem.describe_answer
    duel_pulls = KArmedProblem.duel_pulls

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the arm's mean is within epsilon of the largest (additively, or as a fraction of it)."""
        mu = np.asarray(mu, dtype=float)
        return bool(self._scale * mu[int(answer)] + self._shift >= mu.max())

    def _pairs(self, best: int) -> np.ndarray:
        others = np.delete(np.arange(self.n_arms), best)
        return np.column_stack([np.full(others.size, best), others])

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        best = self.answer(mu)
        pairs = self._pairs(best)
        values, G = pair_pieces(mu, pairs, w, **self.family_args, shifts=self._shift, scales=self._scale)
        return Pieces(best=best, answers=pairs[:, 1], values=values, gradients=G if gradients else None)

    def pair_costs(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> np.ndarray:
        """Capability ``pair_costs``: W_B,j, the piece of the pair (B, j) at the counts, the GLR of "B stays
        epsilon-good against j" (0 when it does not at the estimate), inf at B. With the empirical best as leader, the
        Top-Two challenger argmin_j W_B,j is EB-TC-epsilon's (Jourdan, Degenne & Kaufmann, NeurIPS 2023).

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls (or weights) per arm.
        leader : int
            The arm B.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The costs.
        """
        mu, counts = self.check_shapes(mu, counts)
        leader = self.check_answer(leader)
        values, _ = pair_pieces(mu, self._pairs(leader), counts, **self.family_args, shifts=self._shift,
                                scales=self._scale)
        return with_leader(values, leader)

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """Capability ``pair_share``: N_B d(mu_B, x) / W_B,C at the pair's closest alternative (x for the leader,
        c x + s for the challenger; 1/2 when the pair carries no information): the information-directed beta.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per arm.
        leader, challenger : int
            The arms B and C.

        Returns
        -------
        float
            A number in [0, 1].
        """
        mu, counts = self.check_shapes(mu, counts)
        leader, challenger = self.check_answer(leader), self.check_answer(challenger)
        values, G = pair_pieces(mu, np.array([[leader, challenger]]), counts, **self.family_args,
                                shifts=self._shift, scales=self._scale)
        lead = float(counts[leader] * G[0, leader])
        return lead / float(values[0]) if values[0] > 0 else 0.5

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) and w*(mu), certified: for additive epsilon on Gaussian arms the best arm's shifted pairs in the cvxpy
        model of
        :class:`optdesign.identification.PairsModel` (built once per best arm, re-solved), else
        :func:`optdesign.identification.epsilon_good_characteristic_time`.

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
            A parameter of the wrong length, non-finite, outside the family's mean space, or with a tie for the best
            arm.
        SolverError
            No solver answered, or a root did not converge.
        """
        mu = self.family.check_means(self.check_parameter(mu))
        best = unique_argmax(mu, "the arms' means")
        if not isinstance(self.family, Gaussian) or self.kind == "multiplicative":
            time = epsilon_good_characteristic_time(mu, self.epsilon, **self.family_args, kind=self.kind)
            return Oracle(T=time.value, weights=time.weights, lower_bound=time.lower_bound)
        if self._model is None or self._model_best != best:  # compiled once per best arm, re-solved at new means
            self._model, self._model_best = PairsModel(self.n_arms, self._pairs(best), **self.family_args), best
        result = self._model.solve(mu, shifts=self.epsilon)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
