"""Stopping thresholds read pair by pair: a bound for every pair (recommended arm, other arm), the sum of the two
arms' own parts, and the GLR statistic of best-arm identification that must exceed each pair's bound.

Thresholds built from one time-uniform bound per arm (a union over the arms of Ville's inequality on a martingale of
each arm's rewards) are of this form: a wrong recommendation a, the best arm being b, leaves the pair (a, b)'s
statistic below the sum of the two arms' caps (:mod:`bandits.pure_exploration.variance_bounds` for Gaussian arms
of unknown variances, :mod:`bandits.pure_exploration.betting_bounds` for arms with rewards in [0, 1]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pieces import GLRStatistic

__all__ = ["PairStatistic", "PairThresholds"]


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


class PairStatistic(GLRStatistic):
    """The GLR statistic of best-arm identification read pair by pair: against :class:`PairThresholds` every piece
    (best, j) must exceed its own bound; against a number, the least piece must."""

    def exceeds(self, beta: float | PairThresholds) -> bool:
        if isinstance(beta, PairThresholds):
            pieces = self.pieces
            return bool(np.all(pieces.values > beta.of_pairs(pieces.best, pieces.answers)))
        return super().exceeds(beta)
