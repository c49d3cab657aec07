"""Named K-armed instances (kind ``karmed``): ``gaussian:means=0.5/0.45/0.43/0.4,sigma=1``, ``bernoulli:means=...``,
``poisson:means=2/1.5/1``, ``exponential:means=2/1.5/1``.

The Gaussian and Bernoulli defaults are Garivier & Kaufmann's (COLT 2016, Sec. 6) two experiments:
mu = (0.5, 0.45, 0.43, 0.4) and mu = (0.3, 0.21, 0.2, 0.19, 0.18); the Poisson and exponential ones are
mu = (2, 1.5, 1).
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

from .environment import KArmedBandit
from .families import Bernoulli, Exponential, ExponentialFamily, Gaussian, Poisson

__all__ = ["GK_EXPERIMENT_1", "GK_EXPERIMENT_2", "POSITIVE_MEANS", "bernoulli", "exponential", "gaussian",
           "parse_means", "poisson"]

#: the means of Garivier & Kaufmann's first and second experiments
GK_EXPERIMENT_1 = "0.5/0.45/0.43/0.4"
GK_EXPERIMENT_2 = "0.3/0.21/0.2/0.19/0.18"
#: the default means of the Poisson and exponential instances
POSITIVE_MEANS = "2/1.5/1"


def parse_means(means: str | float) -> list[float]:
    """Means written ``"0.5/0.45/0.43"`` (``/`` or ``;`` between them), as floats.

    Parameters
    ----------
    means : str or float
        The text of the means.

    Returns
    -------
    list of float
        The means.

    Raises
    ------
    InvalidInputError
        A part that is not a number.
    """
    try:
        return [float(v) for v in str(means).replace(";", "/").split("/") if v.strip()]
    except ValueError:
        raise InvalidInputError(f"means must be numbers separated by '/', got {means!r}") from None


def gaussian(means: str | float = GK_EXPERIMENT_1, sigma: float = 1.0) -> KArmedBandit:
    """K Gaussian arms of known standard deviation.

    Parameters
    ----------
    means : str
        The means separated by ``/`` (at least two, a unique best); GK16's first experiment by default.
    sigma : float
        Standard deviation of one reward.

    Returns
    -------
    KArmedBandit
        The instance.
    """
    values = parse_means(means)
    name = f"gaussian({'/'.join(map(str, values))}{'' if sigma == 1 else f',sigma={sigma}'})"
    return KArmedBandit(np.asarray(values), Gaussian(float(sigma)), name=name)


def bernoulli(means: str | float = GK_EXPERIMENT_1) -> KArmedBandit:
    """K Bernoulli arms.

    Parameters
    ----------
    means : str
        The means in [0, 1] separated by ``/`` (at least two, a unique best); GK16's first experiment by default.

    Returns
    -------
    KArmedBandit
        The instance.
    """
    return _arms(Bernoulli(), means)


def poisson(means: str | float = POSITIVE_MEANS) -> KArmedBandit:
    """K Poisson arms.

    Parameters
    ----------
    means : str
        The nonnegative means separated by ``/`` (at least two, a unique best); 2/1.5/1 by default.

    Returns
    -------
    KArmedBandit
        The instance.
    """
    return _arms(Poisson(), means)


def exponential(means: str | float = POSITIVE_MEANS) -> KArmedBandit:
    """K arms with exponential rewards.

    Parameters
    ----------
    means : str
        The positive means separated by ``/`` (at least two, a unique best); 2/1.5/1 by default.

    Returns
    -------
    KArmedBandit
        The instance.
    """
    return _arms(Exponential(), means)


def _arms(family: ExponentialFamily, means: str | float) -> KArmedBandit:
    """K arms of a parameter-free family, named ``family(m1/m2/...)``."""
    values = parse_means(means)
    return KArmedBandit(np.asarray(values), family, name=f"{family.name}({'/'.join(map(str, values))})")
