"""Sufficient statistics of factored semi-bandit feedback: per group action (e, b) the count N_{e,b} and the reward
sum (MF-TaS §6.3); the estimate theta_hat_e(b) = sum / N is the problem's
(:meth:`bandits.multiagent.problem.FactoredProblem.estimate`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["FactoredStatistics"]


class FactoredStatistics:
    """Counts N_{e,b} and reward sums per flat group action (the estimate is the problem's:
    :meth:`bandits.multiagent.problem.FactoredProblem.estimate`).

    Parameters
    ----------
    abar : int
        Number of group actions Abar (the layout of :attr:`optdesign.FactorGraph.means`).
    """

    def __init__(self, abar: int) -> None:
        self.counts = np.zeros(abar, dtype=np.int64)
        self.sums = np.zeros(abar)

    def add(self, counts: npt.NDArray[np.int64], sums: npt.NDArray[np.float64]) -> None:
        """Add a batch of observations.

        Parameters
        ----------
        counts : ndarray of int, shape (Abar,)
            Observations of every group action in the batch.
        sums : ndarray of float, shape (Abar,)
            Their reward sums.
        """
        self.counts += counts
        self.sums += sums
