"""A problem's clock: the time t a threshold reads and a run's grid of checks counts in, and the rounds a run reports.

A pull observes one arm on K-armed and linear problems (time = samples); on a factored problem it is a joint action
observing one group action per factor, and the time is in rounds (:class:`bandits.multiagent.problem.FactoredProblem`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Clock"]


class Clock:
    """Time in samples and no rounds; a problem whose pulls observe several arms overrides both."""

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
