"""A problem's clock: the time t a threshold reads, the rounds a run reports, the grid of times its stop is checked on.

A pull observes one arm on K-armed and linear problems (time = samples); on a factored problem it is a joint action
observing one group action per factor, and the time is in rounds (:class:`bandits.multiagent.problem.FactoredProblem`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Clock"]


class Clock:
    """Time in samples, no rounds, checks at t + max(1, ceil(growth t)); a problem whose pulls differ overrides."""

    def time(self, counts: np.ndarray) -> int:
        """The time t a threshold beta(t, delta) reads: samples (rounds when a pull observes several arms).

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls (observations) per arm.

        Returns
        -------
        int
            t.
        """
        return int(np.sum(counts))

    def rounds(self, counts: np.ndarray) -> int | None:
        """Pulls made, when a pull observes several arms (joint actions); None when a pull is one sample.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Observations per arm.

        Returns
        -------
        int or None
            The rounds a run reports beside its samples (None by default).
        """
        return None

    def next_time(self, t: int, growth: float) -> int:
        """The next time (:meth:`time` units) on the grid of checks: t + max(1, ceil(growth t)).

        Parameters
        ----------
        t : int
            The time now.
        growth : float
            Relative step in [0, 1] (0: the next pull).

        Returns
        -------
        int
            The end of the next batch (at least t + 1).
        """
        return t + max(1, math.ceil(growth * t))
