"""What the K-armed questions other than the best arm share (top m, epsilon-good, thresholding): the K-armed
problem's estimate, family and scoring of a run, without the capabilities written for best-arm identification (a
challenger arm and its share, LinGame's optimistic gains of one best response), and answers that are sets of arms,
encoded as bit masks sum_{k in S} 2^k and shown as ``{i,j,...}``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, Any

import numpy as np

from optdesign.errors import InvalidInputError

from .capabilities import Capabilities
from .karmed import KArmedProblem
from .values import Values, checked_index

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["KArmedQuestion", "LevelSets", "ScoredSets", "SetAnswers", "TopSets", "subset_rank"]


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
    """Answers that are sets of arms or items, as bit masks sum_{k in S} 2^k, shown as ``{i,j,...}``; ``n_members``
    is the arms a set is drawn from, unless a subclass draws from its items."""

    @property
    def n_members(self) -> int:
        """The number of arms or items a set answer is drawn from (the arms by default)."""
        return self.n_arms  # type: ignore[attr-defined]

    def check_answer(self, answer: int) -> int:
        """``answer`` as an int if it is a set of the members, else one clear error.

        Parameters
        ----------
        answer : int
            A bit mask.

        Returns
        -------
        int
            The mask.

        Raises
        ------
        InvalidInputError
            Not an integer, negative, or with a member beyond the n_members.
        """
        return checked_index(answer, 1 << self.n_members, f"an answer (a bit mask of the {self.n_members} members)")

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
        return _members(int(answer))

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


class ScoredSets(SetAnswers):
    """Set answers decided by one score per member (the means of K arms; z^T theta of items): a subclass gives the
    scores (placed after the class that defines :meth:`~bandits.pure_exploration.questions.ScoredSets.scores` in the
    bases, or defining it itself)."""

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The members' scores at a parameter (the means of K arms; z^T theta of items).

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        numpy.ndarray, shape (n,)
            One score per member.
        """
        raise NotImplementedError


class LevelSets(ScoredSets):
    """Answers that are the members scoring above a level (thresholding of K arms or of M items): the answer and its
    correctness. A subclass sets ``level``."""

    level: float

    @property
    def n_answers(self) -> int:
        return 2**self.n_members

    def answer(self, mu: np.ndarray) -> int:
        """The members whose score exceeds the level at mu, as a bit mask.

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        int
            The answer.
        """
        return int(np.sum(np.left_shift(1, np.flatnonzero(self.scores(mu) > self.level))))

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the answer holds exactly the members above the level (a member on the level may be on either
        side).

        Parameters
        ----------
        answer : int
            A bit mask.
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        bool
            Whether it is correct at mu.
        """
        scores = self.scores(mu)
        above = np.zeros(scores.size, dtype=bool)
        above[self.members(answer)] = True
        return bool(np.all((above == (scores > self.level)) | (scores == self.level)))

    def least_flip(self, mu: np.ndarray, counts: np.ndarray, leader: int, costs: np.ndarray, *,
                   penalised: bool) -> int:
        """Top-Two's challenger on thresholding: the leader with the side of its member of least cost flipped, 0 for
        a member the leader places on the other side of its score (both sides then pull that member); with
        ``penalised``, the cost plus log N_k (TCI).

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per member.
        leader : int
            The leader set, a bit mask.
        costs : numpy.ndarray
            N_k d_k(tau): each member's cost of being moved to the level at the counts.
        penalised : bool
            Add the penalty.

        Returns
        -------
        int
            The challenger set.
        """
        above = np.zeros(self.n_members, dtype=bool)
        above[self.members(self.check_answer(leader))] = True
        costs = np.where(above == (self.scores(mu) > self.level), costs, 0.0)
        if penalised:
            with np.errstate(divide="ignore"):
                costs = costs + np.log(np.asarray(counts, dtype=float))
        return int(leader) ^ (1 << int(np.argmin(costs)))


def _members(answer: int) -> np.ndarray:
    """The set bits of a mask, increasing (:meth:`SetAnswers.members`)."""
    return np.array([k for k in range(answer.bit_length()) if answer >> k & 1], dtype=np.int64)


@lru_cache(maxsize=1 << 12)
def _swap_table(answer: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`TopSets.swap_pairs`, built once per set (read-only arrays: every step of a run asks for them)."""
    inside = _members(answer)
    outside = np.setdiff1d(np.arange(n), inside)
    pairs = np.column_stack([np.repeat(inside, outside.size), np.tile(outside, inside.size)])
    if n <= 62:
        swaps = answer ^ np.left_shift(1, pairs[:, 0]) ^ np.left_shift(1, pairs[:, 1])
    else:
        swaps = np.array([answer ^ (1 << int(i)) ^ (1 << int(j)) for i, j in pairs], dtype=object)
    pairs.flags.writeable = swaps.flags.writeable = False
    return pairs, swaps


class TopSets(ScoredSets):
    """Answers that are the m members of largest score among n (top m of K arms, or of M items): the answer, its
    correctness, its swaps S - {i} + {j} and its row (the set's rank). A subclass sets ``m``."""

    m: int

    @property
    def n_answers(self) -> int:
        return comb(self.n_members, self.m)

    def check_answer(self, answer: int) -> int:
        """``answer`` as an int if it is a set of exactly m members
        (:meth:`~bandits.pure_exploration.questions.SetAnswers.check_answer`).

        Parameters
        ----------
        answer : int
            A bit mask.

        Returns
        -------
        int
            The mask.

        Raises
        ------
        InvalidInputError
            Not a set of the members, or not of m of them.
        """
        mask = super().check_answer(answer)
        if mask.bit_count() != self.m:
            raise InvalidInputError(f"an answer must hold m = {self.m} members, got {self.members(mask).tolist()}")
        return mask

    def answer(self, mu: np.ndarray) -> int:
        """The m members of largest score at mu (ties by index), as a bit mask.

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        int
            The answer.
        """
        return sum(1 << int(k) for k in np.argsort(-self.scores(mu), kind="stable")[: self.m])

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether the m members of ``answer`` score at least every other member (on a tie at the m-th score, every
        set of m members above the rest is correct).

        Parameters
        ----------
        answer : int
            A bit mask.
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        bool
            Whether it is a top-m set at mu.
        """
        scores = self.scores(mu)
        inside = np.zeros(scores.size, dtype=bool)
        inside[self.members(int(answer))] = True
        return bool(inside.sum() == self.m and scores[inside].min() >= scores[~inside].max())

    def swap_pairs(self, answer: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The pairs (i in S, j not in S) of a set S of n members, i then j increasing, and the swaps S - {i} + {j}
        they stand for (int64 masks up to 62 members, Python ints beyond).

        Parameters
        ----------
        answer : int
            The set S, a bit mask.
        n : int
            The number of members.

        Returns
        -------
        pairs : numpy.ndarray of int, shape (J, 2)
            The pairs.
        swaps : numpy.ndarray, shape (J,)
            The answers.
        """
        return _swap_table(int(answer), int(n))

    def least_swap(self, leader: int, counts: np.ndarray, swap_costs: Callable[[np.ndarray], np.ndarray], *,
                   penalised: bool) -> int:
        """Top-Two's challenger on top m: the swap S - {i} + {j} of least transportation cost from the leader set S,
        plus with ``penalised`` log(N_i N_j / (N_i + N_j)), the log of the swapped pair's harmonic count (TCI: a swap
        whose two arms were both pulled often gives way to one with an arm pulled less).

        Parameters
        ----------
        leader : int
            The leader set S, a bit mask.
        counts : numpy.ndarray
            Pulls per member.
        swap_costs : callable
            pairs -> the cost of each pair (i in S, j not in S) at the counts (0 where mu_i <= mu_j).
        penalised : bool
            Add the penalty.

        Returns
        -------
        int
            The challenger set.
        """
        pairs, swaps = self.swap_pairs(self.check_answer(leader), self.n_members)
        values = swap_costs(pairs)
        if penalised:
            counts = np.asarray(counts, dtype=float)
            ni, nj = counts[pairs[:, 0]], counts[pairs[:, 1]]
            with np.errstate(divide="ignore"):
                values = values + np.log(ni * nj / (ni + nj))
        return int(swaps[int(np.argmin(values))])

    def answer_index(self, answer: int) -> int:
        """The m-set's colexicographic rank (:func:`subset_rank`), in [0, C(n, m)).

        Parameters
        ----------
        answer : int
            A bit mask of m members.

        Returns
        -------
        int
            Its row.
        """
        return subset_rank(self.members(answer))


class KArmedQuestion(SetAnswers, KArmedProblem):
    """A question asked of K arms of one exponential family (the base of the other questions; module docstring)."""

    # best-arm identification's capabilities do not carry over to these questions
    pair_costs = Capabilities.pair_costs
    pair_share = Capabilities.pair_share
    optimism = Capabilities.optimism  # type: ignore[assignment]
    # an answer is a set of arms: no value of its own (epsilon-good identification, whose answers are arms, has one)
    answer_value = Values.answer_value

    def true_parameter(self, env: KArmedBandit) -> np.ndarray:
        """The arms' means, ties allowed (the question's answer may be unique, or several may be correct)."""
        return self.check_parameter(env.means)

    @property
    def family_args(self) -> dict[str, Any]:
        """The keywords family (as :mod:`optdesign.identification` names it) and sigma (Gaussian; 1 for others)."""
        return {"family": self.family.name, "sigma": float(getattr(self.family, "sigma", 1.0))}
