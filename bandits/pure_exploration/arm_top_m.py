"""Top-m identification on arms whose parameter holds more than the means (Gaussian arms of unknown variances, arms
with rewards in [0, 1]): the m arms of largest means.

An answer is a set S of m arms, as a bit mask. An alternative to S puts some arm j outside S at least some arm i of S,
so the pieces are the pairs (i in S, j not in S), each the arms' own pair cost

    f_ij(w) = min over x of w_i g_i(x) + w_j g_j(x),

g_k the cost per pull of moving arm k's mean to x (KL_inf for bounded arms; the divergence minimised over the unknown
variance, or the plug-in one, for unequal variances), 0 where mu_i <= mu_j: the pieces of best-arm identification
with i put above the others (:meth:`bandits.pure_exploration.arm_pairs.ArmPairsProblem.arm_pieces`), read at the
pairs (:func:`optdesign.identification.pieces_of_pairs`). The oracle is T* by cutting planes on these pieces,
certified (:func:`optdesign.bounded_characteristic_time`, :func:`optdesign.heteroscedastic_characteristic_time` with
``m``). The ``theory`` threshold reads each piece against its pair's caps, with a union over the m (K - m) pairs a
wrong answer can misorder (:meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.pair_threshold`). Top-Two's
challenger is the swap S - {i} + {j} of least cost (plus the log of the pair's harmonic count for TCI), whose two
sides pull i and j.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.identification import pieces_of_pairs
from optdesign.validation import as_count

from .arm_pairs import ArmPairsProblem
from .arm_questions import ArmQuestion, ArmSwaps
from .bounded import BoundedProblem
from .heteroscedastic import HeteroscedasticProblem
from .oracle import Oracle

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext

__all__ = ["ArmTopMProblem", "BoundedTopMProblem", "HeteroscedasticTopMProblem"]


class ArmTopMProblem(ArmSwaps, ArmQuestion):
    """Identify the m arms of largest means (module docstring); answers are bit masks of m arms.

    Parameters
    ----------
    arms : ArmPairsProblem
        The arms' model (:class:`bandits.pure_exploration.bounded.BoundedProblem`,
        :class:`bandits.pure_exploration.heteroscedastic.HeteroscedasticProblem`): estimate, means, costs, threshold.
    m : int
        The answer's size, 1 <= m < K.

    Raises
    ------
    InvalidInputError
        More than 62 arms, or m outside [1, K).
    """

    def __init__(self, arms: ArmPairsProblem, m: int = 1) -> None:
        self._ask(arms)
        self.m = as_count(m, "m (the size of the answer)")
        if not self.m < arms.n_arms:
            raise InvalidInputError(f"m must be below the number of arms K = {arms.n_arms}, got {m}")

    @classmethod
    def of_environment(cls, env: Any, m: int = 1) -> ArmTopMProblem:
        """The top-m problem of an instance, in its arms' own model.

        Parameters
        ----------
        env : BoundedBandit or HeteroscedasticBandit
            The instance.
        m : int
            The answer's size.

        Returns
        -------
        ArmTopMProblem
            The problem.
        """
        return cls(cast(ArmPairsProblem, cls.arms_class.of_environment(env)), m)

    def _pair_pieces(self, mu: np.ndarray, w: np.ndarray, pairs: np.ndarray,
                     gradients: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """The pieces of the pairs (i, j), i put above j, at (mu, w)."""
        return pieces_of_pairs(lambda i: self.arms.arm_pieces(mu, w, i, gradients)[1:], pairs, self.n_arms)

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """The share of the leader's arm i of the swapped pair (i, j), as in best-arm identification (IDS)."""
        i, j = self.duel_pulls(leader, challenger)
        return self.arms.pair_share(mu, counts, int(i), int(j))

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T* and w* by cutting planes on the pairs, certified
        (:meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.top_m_oracle`).

        Parameters
        ----------
        mu : numpy.ndarray
            The arms' parameter, with distinct m-th and (m+1)-th means.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* and its certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter the arms' model refuses, or a tie at the m-th mean.
        """
        return self.arms.top_m_oracle(mu, self.m)

    def lower_bound(self, mu: np.ndarray) -> dict[str, Any]:
        """T* of the learner's model (:meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.top_m_oracle` with
        ``bound``)."""
        return {"kind": "T*", "value": float(self.arms.top_m_oracle(mu, self.m, bound=True).T), "unit": "samples"}

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """The arms' pairwise ``theory`` threshold over the m (K - m) pairs a wrong answer can misorder."""
        return self.own_threshold(self.arms.pair_threshold(self.m * (self.n_arms - self.m)))


class BoundedTopMProblem(ArmTopMProblem):
    """Top m of arms with rewards in [0, 1], KL_inf pieces (:class:`ArmTopMProblem`)."""

    kind = "bounded"
    arms_class = BoundedProblem


class HeteroscedasticTopMProblem(ArmTopMProblem):
    """Top m of Gaussian arms of unequal variances, the arms' statistic's pieces (:class:`ArmTopMProblem`)."""

    kind = "heteroscedastic"
    arms_class = HeteroscedasticProblem

    @classmethod
    def of_environment(cls, env: Any, m: int = 1, statistic: str = "ev",
                       known: bool = False) -> HeteroscedasticTopMProblem:
        """The top-m problem of an instance in the arms' model the options choose.

        Parameters
        ----------
        env : HeteroscedasticBandit
            The instance.
        m : int
            The answer's size.
        statistic : str
            ``"ev"`` (the EV-GLR) or ``"plugin"`` (unknown variances).
        known : bool
            The learner is given the variances (the known-variance pieces and T*).

        Returns
        -------
        HeteroscedasticTopMProblem
            The problem.
        """
        return cls(HeteroscedasticProblem.of_environment(env, statistic, known), m)
