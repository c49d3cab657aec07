"""Stopping thresholds built from one time-uniform cap per arm, read piece by piece: the GLR statistic must exceed
every piece's own bound (:meth:`bandits.pure_exploration.pieces.GLRStatistic.exceeds`).

A cap c(N_k) bounds, with high probability at every time, the cost N_k d(F_hat_k, mu_k) of moving arm k's estimate back
to its true mean (Ville's inequality on a martingale of that arm's rewards, a union over the arms). In best-arm
identification a wrong recommendation a, the best arm being b, then leaves the pair (a, b)'s piece below
c(N_a) + c(N_b) (in top-m identification, the piece of a pair of arms the answer misorders); in thresholding an arm
on the wrong side of the level leaves its own piece below c(N_k)
(:mod:`bandits.pure_exploration.variance_bounds` for Gaussian arms of unknown variances,
:mod:`bandits.pure_exploration.betting_bounds` for arms with rewards in [0, 1]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.stopping import Threshold

__all__ = ["CapBounds", "CapThreshold", "least_bound"]


@dataclass(frozen=True)
class CapBounds:
    """The bound of every piece at one time and delta, from the arms' caps (module docstring).

    Parameters
    ----------
    caps : numpy.ndarray, shape (K,)
        Each arm's cap (inf while an arm's bound caps nothing).
    per_arm : bool
        The pieces are single arms, piece k's bound its arm's cap (thresholding); else pairs (best, j) of best-arm
        identification, bounded by the sum of their two arms' caps.
    """

    caps: np.ndarray
    per_arm: bool = False

    def of_pairs(self, best: int, others: np.ndarray) -> np.ndarray:
        """The bound of the pair (best, j) for every j of ``others``.

        Parameters
        ----------
        best : int
            The recommended arm.
        others : numpy.ndarray of int
            The other arms.

        Returns
        -------
        numpy.ndarray
            One bound per other arm (inf while an arm's cap is).
        """
        return self.caps[best] + self.caps[others]

    def of_pieces(self, best: int, answers: np.ndarray, pairs: np.ndarray | None = None) -> np.ndarray:
        """The bound of every piece: its arm's cap (the pieces in arm order), or its pair's.

        Parameters
        ----------
        best : int
            The pieces' answer (the recommended arm of best-arm identification).
        answers : numpy.ndarray of int
            The pieces' alternative answers (the other arms).
        pairs : numpy.ndarray of int, shape (J, 2), optional
            The two arms of each piece, when they are not (best, answer) (top m: the swapped arms).

        Returns
        -------
        numpy.ndarray
            One bound per piece.
        """
        if self.per_arm:
            return self.caps
        return self.caps[pairs].sum(axis=1) if pairs is not None else self.of_pairs(best, answers)

    @property
    def floor(self) -> float:
        """A number at most every piece's bound: a GLR statistic known to be at most this cannot stop."""
        return (1.0 if self.per_arm else 2.0) * float(np.min(self.caps))


class CapThreshold(Threshold):
    """A threshold built from one time-uniform cap per arm (module docstring): calling it gives the
    :class:`CapBounds` of the counts, which the policy hands to the GLR statistic; a subclass gives
    :meth:`~bandits.pure_exploration.cap_bounds.CapThreshold.caps` and says whether its pieces are single arms
    (``per_arm``)."""

    #: the pieces are single arms (thresholding), not pairs (best-arm identification)
    per_arm: bool = False

    def caps(self, delta: float, counts: np.ndarray) -> np.ndarray:
        """Each arm's cap: its pieces' bound, or its part of its pairs' bounds.

        Parameters
        ----------
        delta : float
            The confidence level.
        counts : numpy.ndarray
            Pulls per arm.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The caps (inf while an arm's cap is).
        """
        raise NotImplementedError

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> CapBounds:  # type: ignore[override]
        """The pieces' bounds; ``A`` is the counts (:meth:`Problem.threshold_argument`), ``t`` is not read."""
        return CapBounds(self.caps(delta, np.asarray(A, dtype=float)), self.per_arm)

    @property
    def name(self) -> str:
        """``theory`` (the problem's own delta-correct threshold)."""
        return "theory"


def least_bound(beta: float | CapBounds) -> float:
    """A number at most every bound of ``beta``: the number itself, or the floor of a cap threshold's bounds (a
    statistic at most this cannot stop).

    Parameters
    ----------
    beta : float or CapBounds
        A threshold's value at one time and delta.

    Returns
    -------
    float
        The least bound.
    """
    return beta.floor if isinstance(beta, CapBounds) else float(beta)
