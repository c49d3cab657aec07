"""What the K-armed questions other than the best arm share (top m, epsilon-good, thresholding): the K-armed
problem's estimate, family and scoring of a run, without the capabilities written for best-arm identification (a
challenger arm and its share, LinGame's optimistic gains of one best response), and answers that are sets of arms,
encoded as bit masks sum_{k in S} 2^k and shown as ``{i,j,...}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .capabilities import Capabilities
from .karmed import KArmedProblem
from .values import Values

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["KArmedQuestion", "SetAnswers", "subset_rank"]


def subset_rank(members: np.ndarray) -> int:
    """The rank of a set among the sets of its size in colexicographic order, sum_i C(c_i, i + 1) over its members
    c_0 < c_1 < ... (the combinatorial number system: a bijection onto [0, C(K, m))).

    Parameters
    ----------
    members : numpy.ndarray of int
        The members, increasing.

    Returns
    -------
    int
        The rank.
    """
    from math import comb

    return sum(comb(int(c), i + 1) for i, c in enumerate(members))


class SetAnswers:
    """Answers that are sets of arms or items, as bit masks sum_{k in S} 2^k, shown as ``{i,j,...}``."""

    def members(self, answer: int) -> np.ndarray:
        """The arms (or items) of a set answer.

        Parameters
        ----------
        answer : int
            A bit mask.

        Returns
        -------
        numpy.ndarray of int
            Its members, increasing.
        """
        answer = int(answer)
        return np.array([k for k in range(answer.bit_length()) if answer >> k & 1], dtype=np.int64)

    def duel_pulls(self, leader: int, challenger: int) -> tuple[int | np.ndarray, int | np.ndarray]:
        """Top-Two's sides on set answers: an arm of the leader's set outside the challenger's, and one of the
        challenger's outside the leader's (the same arm when only one side has one: an arm the two place on
        different sides of a level).

        Parameters
        ----------
        leader, challenger : int
            Two different bit masks.

        Returns
        -------
        tuple of int
            The two arms.
        """
        only_leader = self.members(int(leader) & ~int(challenger))
        only_challenger = self.members(int(challenger) & ~int(leader))
        lead = int(only_leader[0]) if only_leader.size else int(only_challenger[0])
        return lead, int(only_challenger[0]) if only_challenger.size else lead

    def describe_answer(self, answer: int) -> str:
        """The members of a set answer, as ``{i,j,...}``.

        Parameters
        ----------
        answer : int
            A bit mask.

        Returns
        -------
        str
            The members, increasing, in braces.
        """
        return "{" + ",".join(map(str, self.members(answer))) + "}"


class KArmedQuestion(SetAnswers, KArmedProblem):
    """A question asked of K arms of one exponential family (the base of the other questions; module docstring)."""

    # best-arm identification's capabilities do not carry over to these questions
    pair_costs = Capabilities.pair_costs
    pair_share = Capabilities.pair_share
    optimism = Capabilities.optimism  # type: ignore[assignment]
    # an answer is a set of arms: no value of its own (epsilon-good identification, whose answers are arms, has one)
    answer_value = Values.answer_value

    def true_parameter(self, env: KArmedBandit) -> np.ndarray:
        """The arms' means, ties allowed (the question's answer may be unique, or several may be correct).

        Parameters
        ----------
        env : KArmedBandit
            The instance.

        Returns
        -------
        numpy.ndarray
            ``env.means``.
        """
        return self.check_parameter(env.means)

    @property
    def family_args(self) -> tuple[str, float]:
        """The family as :mod:`optdesign.identification` names it, and its Gaussian sigma (1 for the others)."""
        return self.family.name, float(getattr(self.family, "sigma", 1.0))
