"""LinGame's optimistic gains, the result of a problem's ``optimism`` capability
(:mod:`bandits.pure_exploration.capabilities`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["Optimism"]


class Optimism(ABC):
    """LinGame's optimistic gradients at one estimate (Degenne, Ménard, Shang & Valko, ICML 2020): for the closest
    alternative lambda to the learner's play, U_k = min(max over the confidence region of d_k(theta, lambda), c_t).

    Attributes
    ----------
    best : int
        The answer of the estimate.
    """

    best: int

    @abstractmethod
    def gains(self, w: np.ndarray) -> np.ndarray:
        """U of the best response to the play ``w`` (the piece of least value at the estimate).

        Parameters
        ----------
        w : numpy.ndarray, shape (K,)
            The learner's play.

        Returns
        -------
        numpy.ndarray, shape (K,)
            U_k in [0, c_t].
        """

    @abstractmethod
    def at_estimate(self) -> np.ndarray:
        """U at lambda = the estimate: the best response of an answer the estimate already contradicts.

        Returns
        -------
        numpy.ndarray, shape (K,)
            U_k in [0, c_t].
        """
