"""What an oracle reports at a parameter: the characteristic time T*(mu), the optimal proportions w*(mu) and a
certified lower bound on T* (Garivier & Kaufmann 2016, Thm 1: E[tau] >= T*(mu) kl(delta, 1 - delta))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Oracle"]


@dataclass(frozen=True)
class Oracle:
    """The characteristic time and the optimal proportions at a parameter.

    Parameters
    ----------
    T : float
        T*(mu) in Garivier & Kaufmann's convention: E[tau] >= T kl(delta, 1 - delta) for every delta-correct
        algorithm (twice the MF-TaS convention's T*).
    weights : numpy.ndarray, shape (K,)
        The optimal proportions w*(mu) (a point of the simplex).
    lower_bound : float
        A certified lower bound on T (equal to T for closed forms and exact root finding).
    """

    T: float
    weights: np.ndarray
    lower_bound: float

    def sample_complexity(self, delta: float) -> float:
        """The lower bound T kl(delta, 1 - delta) on the expected number of samples.

        Parameters
        ----------
        delta : float
            Confidence level in (0, 1).

        Returns
        -------
        float
            T*(mu) kl(delta, 1 - delta).
        """
        from optdesign import kl_delta

        return self.T * kl_delta(delta)
