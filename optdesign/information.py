"""Relative entropies that turn characteristic times into sample complexities.

A delta-correct identification algorithm needs E[tau] >= c kl(delta, 1 - delta) samples, where c is the
instance's characteristic time (2 T* in the MF-TaS convention, :meth:`optdesign.CharTimeResult.sample_complexity`)
and kl the relative entropy of two Bernoulli distributions. :func:`kl_delta` is that factor, the one place the
package and :mod:`bandits` compute it.
"""

from __future__ import annotations

import numpy as np

from .errors import InvalidInputError

__all__ = ["bernoulli_kl", "kl_delta"]


def bernoulli_kl(p: float, q: float) -> float:
    """kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q)) for p, q in (0, 1).

    Parameters
    ----------
    p, q : float
        Means of the two Bernoulli distributions, in the open interval (0, 1).

    Returns
    -------
    float
        The Kullback–Leibler divergence in nats (not validated: NaN or inf outside (0, 1)).
    """
    return float(p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)))


def kl_delta(delta: float) -> float:
    """kl(delta, 1 - delta) = (1 - 2 delta) log((1 - delta) / delta), the factor of the lower bound on E[tau].

    The closed form is :func:`~optdesign.information.bernoulli_kl` at (delta, 1 - delta) with its two terms gathered,
    and log(1 - delta) taken by ``log1p``: accurate for tiny delta too (where it is about log(1 / delta)).

    Parameters
    ----------
    delta : float
        The confidence level, in (0, 1).

    Returns
    -------
    float
        kl(delta, 1 - delta) in nats (0 at delta = 1/2).

    Raises
    ------
    InvalidInputError
        ``delta`` is not a number in the open interval (0, 1).
    """
    if not (isinstance(delta, (int, float, np.integer, np.floating)) and 0.0 < float(delta) < 1.0):
        raise InvalidInputError(f"delta must be a number in (0, 1), got {delta!r}")
    return float((1 - 2 * delta) * (np.log1p(-delta) - np.log(delta)))
