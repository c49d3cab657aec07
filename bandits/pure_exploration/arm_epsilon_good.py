"""Epsilon-good arm identification on arms whose parameter holds more than the means (Gaussian arms of unequal
variances, known to the learner or not; arms with rewards in [0, 1]): any arm whose mean is within epsilon of the best
(Garivier & Kaufmann 2021, Jourdan, Degenne & Kaufmann 2023), or within a fraction epsilon of it.

The recommendation is the empirical best arm b; b is not epsilon-good where some arm j has lambda_j >= lambda_b +
epsilon, one piece per other arm j, min over x of w_b g_b(x) + w_j g_j(x + epsilon) (g_k the cost per pull of moving
arm k's mean; 0 where mu_j - epsilon >= mu_b).

* Unequal variances: both divergences depend on the gap in standard deviations alone, so moving arm j's mean to
  c x + s costs what moving an arm of mean (mu_j - s) / c and deviation sigma_j / c to x costs, and the piece of
  (b, j) is the pair piece of best-arm identification with every other arm so moved (additive: the means lowered by
  epsilon; multiplicative: means and deviations divided by c = 1 / (1 - epsilon))
  (:meth:`bandits.pure_exploration.heteroscedastic.HeteroscedasticProblem.arm_pieces` at the moved parameter),
  gradients included; T* is best-arm identification's at the moved parameter
  (:func:`optdesign.heteroscedastic_characteristic_time`).
* Rewards in [0, 1]: a lowered distribution would leave [0, 1], so KL_inf is read at the shifted mean instead,
  K+(F_j, x + epsilon) (:func:`optdesign.identification.bounded_pieces` with ``shift``), and T* is
  :func:`optdesign.bounded_characteristic_time` with ``epsilon`` (the equalisation, or cutting planes where its
  certified gap is too wide: a shifted pair that leaves [0, 1] keeps a piece positive at zero weight). The
  multiplicative question's scaled pieces read K+(F_j, x / (1 - epsilon)) (``scale``).

The multiplicative question (``kind="multiplicative"``: mu_b >= (1 - epsilon) max mu, a positive best mean) has the
pieces {lambda_j >= lambda_b / (1 - epsilon)}.

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
    epsilon_ends,
    heteroscedastic_characteristic_time,
)

from .arm_pairs import ORACLE_TOL, ArmPairsProblem
from .bounded import BoundedProblem
from .environment import BoundedBandit, HeteroscedasticBandit
from .heteroscedastic import HeteroscedasticProblem
from .oracle import Oracle
from .values import checked_index

__all__ = ["BoundedEpsilonGoodProblem", "EpsilonGoodArms", "HeteroscedasticEpsilonGoodProblem"]


class EpsilonGoodArms(ArmPairsProblem):
    """What epsilon-good identification adds to an arms' model (module docstring): several correct answers, and an
    oracle over single arms. A subclass sets ``epsilon`` and ``ends`` and puts this class before the model in its
    bases."""

    epsilon: float
    #: (s, c): an answer b is correct where c mu_b + s >= max mu ((epsilon, 1) additively)
    ends: tuple[float, float]

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the answer's mean is at least the best mean minus epsilon (or (1 - epsilon) times it)."""
        means, (shift, scale) = self.arm_means(mu), self.ends
        return bool(means[checked_index(answer, self._K, "an arm")] >= (means.max() - shift) / scale)

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
    kind : str
        ``"additive"`` (default: mu_b >= max mu - epsilon) or ``"multiplicative"`` (mu_b >= (1 - epsilon) max mu).

    Raises
    ------
    InvalidInputError
        An epsilon outside [0, 1), an unknown kind, or what :class:`BoundedProblem` refuses.
    """

    def __init__(self, n_arms: int, support: Any, epsilon: float = 0.0, kind: str = "additive") -> None:
        super().__init__(n_arms, support)
        self.ends = epsilon_ends(check_shift(epsilon), kind)
        self.epsilon, self.kind = float(epsilon), kind

    @classmethod
    def of_environment(cls, env: BoundedBandit, epsilon: float = 0.0,
                       kind: str = "additive") -> BoundedEpsilonGoodProblem:
        """The epsilon-good problem of an instance: its number of arms and its support.

        Parameters
        ----------
        env : BoundedBandit
            The instance.
        epsilon : float
            The slack.
        kind : str
            ``"additive"`` or ``"multiplicative"``.

        Returns
        -------
        BoundedEpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, env.support, epsilon, kind)

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        """The pieces {lambda_j >= c lambda_b + s} of the answer b against every other arm j, KL_inf read at the
        moved mean (:func:`optdesign.identification.bounded_pieces`; (s, c) = ``ends``).

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
            ``(b, values, gradients)``: values of shape (K - 1,) (0 where mu_j >= c mu_b + s), gradients of shape
            (K - 1, K).
        """
        shift, scale = self.ends
        best, values, G, _ = bounded_pieces(self._probs(mu), self.support, w, best=best, gradients=gradients,
                                            shift=shift, scale=scale)
        return best, values, G

    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* of the easiest strictly epsilon-good answer, certified (module docstring; m = 1 only, ``bound``: to
        a gap of 1e-6 rather than a run's 1e-4); InvalidInputError for m other than 1."""
        self.single_answer(m)
        result = bounded_characteristic_time(self._probs(self.check_parameter(mu)), self.support, epsilon=self.epsilon,
                                             kind=self.kind, method="equalise", tol=1e-6 if bound else ORACLE_TOL)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)


class HeteroscedasticEpsilonGoodProblem(EpsilonGoodArms, HeteroscedasticProblem):
    """Identify an arm within epsilon of the best among Gaussian arms of unequal variances (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    epsilon : float
        The slack, >= 0, in the means' unit (additive), or a fraction of the best mean below 1 (multiplicative).
    statistic : str
        ``"ev"`` (the EV-GLR) or ``"plugin"`` (unknown variances).
    sigmas : array_like, optional
        The standard deviations when the learner knows them.
    kind : str
        ``"additive"`` (default: mu_b >= max mu - epsilon) or ``"multiplicative"`` (mu_b >= (1 - epsilon) max mu).

    Raises
    ------
    InvalidInputError
        A negative or non-numeric epsilon, an unknown kind, a multiplicative epsilon of 1 or more, or what
        :class:`HeteroscedasticProblem` refuses.
    """

    def __init__(self, n_arms: int, epsilon: float = 0.0, statistic: str = "ev", sigmas: ArrayLike | None = None,
                 kind: str = "additive") -> None:
        super().__init__(n_arms, statistic, sigmas)
        self.ends = epsilon_ends(epsilon, kind)
        self.epsilon, self.kind = float(epsilon), kind

    @classmethod
    def of_environment(cls, env: HeteroscedasticBandit, statistic: str = "ev", known: bool = False,
                       epsilon: float = 0.0, kind: str = "additive") -> HeteroscedasticEpsilonGoodProblem:
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
        kind : str
            ``"additive"`` or ``"multiplicative"``.

        Returns
        -------
        HeteroscedasticEpsilonGoodProblem
            The problem.
        """
        return cls(env.n_arms, epsilon, statistic, env.sigmas if known else None, kind)

    def _moved(self, mu: np.ndarray, answer: int) -> np.ndarray:
        """theta with every arm but the answer moved: mean (mu_j - s) / c, variance sigma_j^2 / c^2 (``ends``)."""
        shift, scale = self.ends
        theta = np.array(mu, dtype=float)
        mean, variance = theta[answer], theta[answer + self._K]
        theta[: self._K] -= shift
        theta[: self._K] /= scale
        theta[self._K:] /= scale**2
        theta[answer], theta[answer + self._K] = mean, variance
        return theta

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        """The pieces {lambda_j >= c lambda_b + s} of the answer b against every other arm j: best-arm
        identification's at the parameter with the other arms moved (module docstring).

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
            mu_j >= c mu_b + s), gradients of shape (K - 1, K).
        """
        b = int(np.argmax(self.arm_means(mu))) if best is None else int(best)
        return super().arm_pieces(self._moved(mu, b), w, b, gradients)

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
            m other than 1, no arm strictly epsilon-good (epsilon = 0 and a tie for the best mean), or a best mean
            that is not positive under the multiplicative question.
        """
        self.single_answer(m)
        known = self.known if bound else not self.log_divergence
        theta = self.check_parameter(mu)
        means, (shift, scale) = self.arm_means(theta), self.ends
        if self.kind == "multiplicative" and not means.max() > 0:
            raise InvalidInputError(f"a multiplicative epsilon needs a positive best mean, got {means.max():.6g}")
        answers = [i for i in range(self._K) if np.all(np.delete(means, i) < scale * means[i] + shift)]
        if not answers:
            raise InvalidInputError("no arm is strictly epsilon-good (a tie for the best mean at epsilon = 0)")
        results = [heteroscedastic_characteristic_time(*self._split(self._moved(theta, i)), known_variances=known,
                                                       method="equalise") for i in answers]
        best = min(results, key=lambda r: r.value)
        return Oracle(T=best.value, weights=best.weights, lower_bound=min(r.lower_bound for r in results))
