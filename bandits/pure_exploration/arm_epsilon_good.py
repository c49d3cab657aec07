"""Epsilon-good arm identification on arms whose parameter holds more than the means (Gaussian arms of unequal
variances, known to the learner or not; arms with rewards in [0, 1]): any arm whose mean is within epsilon of the best
(additive epsilon; Garivier & Kaufmann 2021, Jourdan, Degenne & Kaufmann 2023).

The recommendation is the empirical best arm b; b is not epsilon-good where some arm j has lambda_j >= lambda_b +
epsilon, one piece per other arm j, min over x of w_b g_b(x) + w_j g_j(x + epsilon) (g_k the cost per pull of moving
arm k's mean; 0 where mu_j - epsilon >= mu_b).

* Unequal variances: both divergences depend on the gap alone, so moving arm j's mean to x + epsilon costs what moving
  a mean epsilon lower to x costs, and the piece of (b, j) is the pair piece of best-arm identification with every
  other arm's mean lowered by epsilon
  (:meth:`bandits.pure_exploration.heteroscedastic.HeteroscedasticProblem.arm_pieces` at the shifted parameter),
  gradients included; T* is best-arm identification's at the lowered means
  (:func:`optdesign.heteroscedastic_characteristic_time`).
* Rewards in [0, 1]: a lowered distribution would leave [0, 1], so KL_inf is read at the shifted mean instead,
  K+(F_j, x + epsilon) (:func:`optdesign.identification.bounded_pieces` with ``shift``), and T* is
  :func:`optdesign.bounded_characteristic_time` with ``epsilon`` (the equalisation, or cutting planes where its
  certified gap is too wide: a shifted pair that leaves [0, 1] keeps a piece positive at zero weight).

The characteristic time is the smallest over the strictly epsilon-good answers i of their max-min (certified);
epsilon = 0 is best-arm identification. The ``theory`` thresholds are those of best-arm identification: a wrong
answer b leaves the piece of (b, a), a the best arm, below the two arms' deviations (the unknown-variance caps hold
for every arm at once; the betting caps and Kaufmann & Koolen's union run over the K - 1 pairs of b).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InvalidInputError
from optdesign.identification import (
    bounded_characteristic_time,
    bounded_pieces,
    check_shift,
    heteroscedastic_characteristic_time,
)
from optdesign.validation import as_nonnegative

from .arm_pairs import ORACLE_TOL, ArmPairsProblem
from .bounded import BoundedProblem
from .environment import BoundedBandit, HeteroscedasticBandit
from .heteroscedastic import HeteroscedasticProblem
from .oracle import Oracle
from .values import checked_index

__all__ = ["BoundedEpsilonGoodProblem", "EpsilonGoodArms", "HeteroscedasticEpsilonGoodProblem"]


class EpsilonGoodArms(ArmPairsProblem):
    """What epsilon-good identification adds to an arms' model (module docstring): several correct answers, and an
    oracle over single arms. A subclass sets ``epsilon`` and puts this class before the model in its bases."""

    epsilon: float

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the answer's mean is at least the best mean minus epsilon."""
        means = self.arm_means(mu)
        return bool(means[checked_index(answer, self._K, "an arm")] >= means.max() - self.epsilon)

    def true_parameter(self, env: Any) -> np.ndarray:
        """The instance's parameter, ties between arms allowed (several answers may be correct).

        Parameters
        ----------
        env : object
            The instance.

        Returns
        -------
        numpy.ndarray
            theta.
        """
        return self.parameter_of(env)

    @staticmethod
    def single_answer(m: int) -> None:
        """Refuse an answer's size other than one.

        Parameters
        ----------
        m : int
            The size a caller asks for.

        Raises
        ------
        InvalidInputError
            m other than 1 (epsilon-good answers are single arms).
        """
        if m != 1:
            raise InvalidInputError(f"epsilon-good answers are single arms (m = 1), got m = {m}")


class BoundedEpsilonGoodProblem(EpsilonGoodArms, BoundedProblem):
    """Identify an arm within epsilon of the best among arms with rewards in [0, 1] (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    support : array_like, shape (L,)
        The reward values the instance reports counts of, in [0, 1].
    epsilon : float
        The slack, in [0, 1).

    Raises
    ------
    InvalidInputError
        An epsilon outside [0, 1), or what :class:`BoundedProblem` refuses.
    """

    def __init__(self, n_arms: int, support: Any, epsilon: float = 0.0) -> None:
        super().__init__(n_arms, support)
        self.epsilon = check_shift(epsilon)

    @classmethod
    def of_environment(cls, env: BoundedBandit, epsilon: float = 0.0) -> BoundedEpsilonGoodProblem:
        """The epsilon-good problem of an instance: its number of arms and its support.

        Parameters
        ----------
        env : BoundedBandit
            The instance.
        epsilon : float
            The slack.

        Returns
        -------
        BoundedEpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, env.support, epsilon)

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        """The pieces {lambda_j >= lambda_b + epsilon} of the answer b against every other arm j, KL_inf read at the
        shifted mean (:func:`optdesign.identification.bounded_pieces`).

        Parameters
        ----------
        mu : numpy.ndarray
            theta, the distributions row by row.
        w : numpy.ndarray, shape (K,)
            Weights or counts.
        best : int or None
            The answer b (None: the empirical best).
        gradients : bool
            Also the gradients (else None).

        Returns
        -------
        tuple
            ``(b, values, gradients)``: values of shape (K - 1,) (0 where mu_j - epsilon >= mu_b), gradients of shape
            (K - 1, K).
        """
        best, values, G, _ = bounded_pieces(self._probs(mu), self.support, w, best=best, gradients=gradients,
                                            shift=self.epsilon)
        return best, values, G

    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* of the easiest strictly epsilon-good answer, certified (module docstring; m = 1 only, ``bound``: to
        a gap of 1e-6 rather than a run's 1e-4); InvalidInputError for m other than 1."""
        self.single_answer(m)
        result = bounded_characteristic_time(self._probs(self.check_parameter(mu)), self.support, epsilon=self.epsilon,
                                             method="equalise", tol=1e-6 if bound else ORACLE_TOL)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)


class HeteroscedasticEpsilonGoodProblem(EpsilonGoodArms, HeteroscedasticProblem):
    """Identify an arm within epsilon of the best among Gaussian arms of unequal variances (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    epsilon : float
        The slack, >= 0, in the means' unit.
    statistic : str
        ``"ev"`` (the EV-GLR) or ``"plugin"`` (unknown variances).
    sigmas : array_like, optional
        The standard deviations when the learner knows them.

    Raises
    ------
    InvalidInputError
        A negative or non-numeric epsilon, or what :class:`HeteroscedasticProblem` refuses.
    """

    def __init__(self, n_arms: int, epsilon: float = 0.0, statistic: str = "ev",
                 sigmas: ArrayLike | None = None) -> None:
        super().__init__(n_arms, statistic, sigmas)
        self.epsilon = as_nonnegative(epsilon, "epsilon")

    @classmethod
    def of_environment(cls, env: HeteroscedasticBandit, statistic: str = "ev", known: bool = False,
                       epsilon: float = 0.0) -> HeteroscedasticEpsilonGoodProblem:
        """The epsilon-good problem of an instance: its number of arms, and its sigmas when ``known``.

        Parameters
        ----------
        env : HeteroscedasticBandit
            The instance.
        statistic : str
            ``"ev"`` or ``"plugin"`` (unknown variances).
        known : bool
            The learner is given the variances.
        epsilon : float
            The slack.

        Returns
        -------
        HeteroscedasticEpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, epsilon, statistic, env.sigmas if known else None)

    def _lowered(self, mu: np.ndarray, answer: int) -> np.ndarray:
        """theta with every mean but the answer's lowered by epsilon."""
        theta = np.array(mu, dtype=float)
        theta[: self._K] -= self.epsilon
        theta[answer] += self.epsilon
        return theta

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        """The pieces {lambda_j >= lambda_b + epsilon} of the answer b against every other arm j: best-arm
        identification's at the parameter with the other means lowered by epsilon.

        Parameters
        ----------
        mu : numpy.ndarray
            theta = (means, variances).
        w : numpy.ndarray, shape (K,)
            Weights or counts.
        best : int or None
            The answer b (None: the empirical best).
        gradients : bool
            Also the gradients (else None).

        Returns
        -------
        tuple
            ``(b, values, gradients)``: values of shape (K - 1,) (other arms in increasing index; 0 where
            mu_j - epsilon >= mu_b), gradients of shape (K - 1, K).
        """
        b = int(np.argmax(self.arm_means(mu))) if best is None else int(best)
        return super().arm_pieces(self._lowered(mu, b), w, b, gradients)

    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* of the easiest strictly epsilon-good answer, certified (module docstring; m = 1 only).

        Parameters
        ----------
        mu : numpy.ndarray
            theta = (means, variances), some arm strictly within epsilon of the best.
        m : int
            Must be 1 (epsilon-good answers are single arms).
        bound : bool
            The lower bound of the learner's model rather than its statistic's pieces.

        Returns
        -------
        Oracle
            T* (Garivier & Kaufmann's convention), the weights of its answer and the least certified lower bound.

        Raises
        ------
        InvalidInputError
            m other than 1, or no arm strictly epsilon-good (epsilon = 0 and a tie for the best mean).
        """
        self.single_answer(m)
        known = self.known if bound else not self.log_divergence
        theta = self.check_parameter(mu)
        means = self.arm_means(theta)
        answers = [i for i in range(self._K) if np.all(np.delete(means, i) - self.epsilon < means[i])]
        if not answers:
            raise InvalidInputError("no arm is strictly epsilon-good (a tie for the best mean at epsilon = 0)")
        results = [heteroscedastic_characteristic_time(*self._split(self._lowered(theta, i)), known_variances=known,
                                                       method="equalise") for i in answers]
        best = min(results, key=lambda r: r.value)
        return Oracle(T=best.value, weights=best.weights, lower_bound=min(r.lower_bound for r in results))
