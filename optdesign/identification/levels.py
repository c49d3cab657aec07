"""The characteristic time of thresholding (sign identification): which arms have means above a level tau
(Locatelli, Gutzeit & Carpentier 2016 for the fixed budget; with a confidence level, Kano et al. 2019 and Qin & You's
template). The answer is the set of arms above tau; an alternative moves one arm k across the level, at least cost

    f_k(w) = w_k d(mu_k, tau),

a piece linear in w, so 1 / T* = max_w min_k w_k d(mu_k, tau) has the closed form w*_k proportional to
1 / d(mu_k, tau), T* = sum_k 1 / d(mu_k, tau): the solution of the linear program max t s.t. w_k d_k >= t, sum w = 1,
certified exactly by the bracket of :mod:`optdesign.identification.certificate` with multipliers w*.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from .certificate import certified_bracket
from .families import check_family, check_means, divergence
from .pairs import IdentificationTime

__all__ = ["level_pieces", "threshold_characteristic_time"]


def _check_level(level: object, mu: np.ndarray, *, apart: bool = True) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not np.isfinite(level):
        raise InvalidInputError(f"the level must be a finite number, got {level!r}")
    if apart and np.any(mu == level):
        raise InvalidInputError(f"an arm's mean equals the level {level:g}: its side is not identifiable (T* is "
                                "infinite)")
    return float(level)


def level_pieces(means: npt.ArrayLike, level: float, w: npt.ArrayLike, *, family: str = "gaussian",
                 sigma: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The pieces f_k(w) = w_k d(mu_k, tau), one per arm, and their gradients d(mu_k, tau) e_k (0 for an arm on the
    level: nothing separates its two sides).

    Parameters
    ----------
    means : array_like, shape (K,)
        The means.
    level : float
        The level tau (inside the family's mean space).
    w : array_like, shape (K,)
        Nonnegative weights.
    family : str
        ``"gaussian"``, ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma.

    Returns
    -------
    tuple of numpy.ndarray
        Values, shape (K,), and gradients, shape (K, K).

    Raises
    ------
    InvalidInputError
        An unknown family, means or a level outside its mean space, or weights that are not K nonnegative finite
        numbers.
    """
    fam, sigma = check_family(family, sigma)
    mu = check_means(means, fam, closed=True)
    tau = _check_level(level, mu, apart=False)
    check_means([tau, tau], fam)
    w = np.asarray(w, dtype=float)
    if w.shape != mu.shape or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InvalidInputError(f"w must be {mu.size} nonnegative finite numbers")
    d = divergence(mu, tau, fam, sigma)
    return w * d, np.diag(d)


def threshold_characteristic_time(means: npt.ArrayLike, level: float, *, family: str = "gaussian",
                                  sigma: float = 1.0) -> IdentificationTime:
    """T* = sum_k 1 / d(mu_k, tau) and w* proportional to 1 / d(mu_k, tau) (module docstring), certified.

    Parameters
    ----------
    means : array_like, shape (K,)
        The arms' means, none equal to the level.
    level : float
        The level tau.
    family : str
        ``"gaussian"`` (default), ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma.

    Returns
    -------
    IdentificationTime
        T* (E[tau] >= T* kl(delta, 1 - delta)), w*, the certified lower bound (equal: gap 0 up to rounding) and the
        arms as the active pieces.

    Raises
    ------
    InvalidInputError
        An unknown family, means or a level outside its space, or a mean equal to the level.

    Examples
    --------
    >>> import optdesign as od
    >>> round(od.threshold_characteristic_time([1.0, -0.5], 0.0).value, 6)  # 2 / 1 + 2 / 0.25
    10.0
    """
    fam, sigma = check_family(family, sigma)
    mu = check_means(means, fam)
    tau = _check_level(level, mu)
    check_means([tau, tau], fam)
    d = divergence(mu, tau, fam, sigma)
    if not (np.all(np.isfinite(d)) and d.min() > 0):
        raise InvalidInputError("the divergences d(mu_k, tau) underflow to 0 or overflow: rescale the means")
    weights = (1.0 / d) / np.sum(1.0 / d)
    values, G = level_pieces(mu, tau, weights, family=fam, sigma=sigma)
    lower, upper = certified_bracket(values, G, weights)
    return IdentificationTime(value=upper, weights=weights, lower_bound=lower, gap=(upper - lower) / upper,
                              active=np.arange(mu.size)[:, None], status="optimal", solver="closed form",
                              solve_time=0.0)
