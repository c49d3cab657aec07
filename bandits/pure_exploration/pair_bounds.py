"""Stopping thresholds read pair by pair: a bound for every pair (recommended arm, other arm), the sum of the two
arms' own parts; the GLR statistic of best-arm identification must exceed each pair's bound
(:meth:`bandits.pure_exploration.pieces.GLRStatistic.exceeds`).

Thresholds built from one time-uniform bound per arm (a union over the arms of Ville's inequality on a martingale of
each arm's rewards) are of this form: a wrong recommendation a, the best arm being b, leaves the pair (a, b)'s
statistic below the sum of the two arms' caps (:mod:`bandits.pure_exploration.variance_bounds` for Gaussian arms
of unknown variances, :mod:`bandits.pure_exploration.betting_bounds` for arms with rewards in [0, 1]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.stopping import Threshold

__all__ = ["PairThresholds", "PairwiseThreshold", "least_bound"]


@dataclass(frozen=True)
class PairThresholds:
    """The bound of every pair (best, j) at one time and delta: the sum of the two arms' caps.

    Parameters
    ----------
    caps : numpy.ndarray, shape (K,)
        Each arm's part (inf while an arm's bound caps nothing).
    """

    caps: np.ndarray

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

    @property
    def floor(self) -> float:
        """A number at most every pair's bound: a GLR statistic known to be at most this cannot stop."""
        return 2.0 * float(np.min(self.caps))


class PairwiseThreshold(Threshold):
    """A threshold built from one time-uniform cap per arm (module docstring): calling it gives the
    :class:`PairThresholds` of the counts, which the policy hands to the GLR statistic; a subclass gives
    :meth:`caps`."""

    def caps(self, delta: float, counts: np.ndarray) -> np.ndarray:
        """Each arm's part of its pairs' bounds.

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

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> PairThresholds:  # type: ignore[override]
        """The pairs' bounds; ``A`` is the counts (:meth:`Problem.threshold_argument`), ``t`` is not read."""
        return PairThresholds(self.caps(delta, np.asarray(A, dtype=float)))

    @property
    def name(self) -> str:
        """``theory`` (the problem's own delta-correct threshold)."""
        return "theory"


def least_bound(beta: float | PairThresholds) -> float:
    """A number at most every bound of ``beta``: the number itself, or a pairwise threshold's floor (a statistic at
    most this cannot stop).

    Parameters
    ----------
    beta : float or PairThresholds
        A threshold's value at one time and delta.

    Returns
    -------
    float
        The least bound.
    """
    return beta.floor if isinstance(beta, PairThresholds) else float(beta)
