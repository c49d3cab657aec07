"""Named K-armed instances (kind ``karmed``): ``gaussian:means=0.5/0.45/0.43/0.4,sigma=1``, ``bernoulli:means=...``,
``poisson:means=2/1.5/1``, ``exponential:means=2/1.5/1``; Gaussian arms of unequal variances (kind
``heteroscedastic``): ``heteroscedastic:means=1/0.8/0.6,sigmas=0.5/1/2`` or a random one,
``heteroscedastic:K=10,seed=3``; arms with rewards in [0, 1] (kind ``bounded``): binomial arms on a grid,
``bounded:means=0.5/0.45/0.43/0.4,levels=5`` (``levels=2``: Bernoulli arms), or random ones,
``bounded:K=10,seed=3``.

The Gaussian and Bernoulli defaults are Garivier & Kaufmann's (COLT 2016, Sec. 6) two experiments:
mu = (0.5, 0.45, 0.43, 0.4) and mu = (0.3, 0.21, 0.2, 0.19, 0.18); the Poisson and exponential ones are
mu = (2, 1.5, 1).
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

from .environment import BoundedBandit, HeteroscedasticBandit, KArmedBandit
from .families import Bernoulli, Exponential, ExponentialFamily, Gaussian, Poisson

__all__ = ["GK_EXPERIMENT_1", "GK_EXPERIMENT_2", "POSITIVE_MEANS", "bernoulli", "bounded", "exponential", "gaussian",
           "heteroscedastic", "parse_means", "poisson"]

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


def heteroscedastic(means: str | float | None = None, sigmas: str | float | None = None, K: int = 10,
                    seed: int | None = None, gap: float = 0.2) -> HeteroscedasticBandit:
    """K Gaussian arms of unequal variances: given, or drawn from ``seed``.

    Parameters
    ----------
    means : str, optional
        The means separated by ``/`` (a unique best); GK16's first experiment when neither they nor a seed are given.
    sigmas : str, optional
        The standard deviations separated by ``/``, one per arm (default: 1/2/... cycling through 0.5, 1, 1.5, 2).
    K : int
        The number of arms of a random instance (default 10).
    seed : int, optional
        Draw a random instance: the best mean 1, the others uniform in [0, 1 - gap], sigmas uniform in [0.5, 1.5].
    gap : float
        The least gap of a random instance (default 0.2).

    Returns
    -------
    HeteroscedasticBandit
        The instance.

    Raises
    ------
    InvalidInputError
        Both means and a seed, fewer than two arms, or sigmas of another length than the means.
    """
    if seed is not None:
        if means is not None or sigmas is not None:
            raise InvalidInputError("give either means (and sigmas) or a seed for a random instance, not both")
        if not 0 < gap < 1:
            raise InvalidInputError(f"gap must lie in (0, 1), got {gap!r}")
        rng = np.random.default_rng(int(seed))
        mu = np.concatenate([[1.0], rng.uniform(0.0, 1.0 - gap, int(K) - 1)])
        sd = rng.uniform(0.5, 1.5, int(K))
        return HeteroscedasticBandit(mu, sd, name=f"heteroscedastic(K={int(K)},seed={int(seed)})")
    values = parse_means(GK_EXPERIMENT_1 if means is None else means)
    spreads = [0.5 * (1 + k % 4) for k in range(len(values))] if sigmas is None else parse_means(sigmas)
    if len(spreads) != len(values):
        raise InvalidInputError(f"sigmas must give one standard deviation per arm ({len(values)}), got {len(spreads)}")
    label = f"{'/'.join(map(str, values))};sigmas={'/'.join(map(str, spreads))}"
    return HeteroscedasticBandit(np.asarray(values), np.asarray(spreads), name=f"heteroscedastic({label})")


#: draws of a random bounded instance before giving up on a best arm ahead by the gap
MAX_DRAWS = 1000


def bounded(means: str | float | None = None, levels: int = 5, K: int = 10, seed: int | None = None,
            gap: float = 0.05) -> BoundedBandit:
    """K arms with rewards on the grid 0, 1 / (L - 1), ..., 1 of L levels: binomial arms of given means, or random
    distributions drawn from ``seed``.

    Parameters
    ----------
    means : str, optional
        The means separated by ``/`` (a unique best, in [0, 1]): arm k's reward is Binomial(L - 1, mu_k) / (L - 1)
        (``levels=2``: Bernoulli arms); GK16's first experiment when neither they nor a seed are given.
    levels : int
        L, the grid's number of points (at least 2; default 5).
    K : int
        The number of arms of a random instance (default 10).
    seed : int, optional
        Draw a random instance: every arm's distribution uniform on the simplex of the grid (Dirichlet(1, ..., 1)),
        redrawn until the best mean leads the others by ``gap``.
    gap : float
        The least gap of a random instance (default 0.05).

    Returns
    -------
    BoundedBandit
        The instance.

    Raises
    ------
    InvalidInputError
        Both means and a seed, fewer than two levels or arms, means outside [0, 1], or a gap no draw reaches.
    """
    from scipy.stats import binom

    L = int(levels)
    if L < 2:
        raise InvalidInputError(f"levels must be at least 2, got {levels!r}")
    grid = np.linspace(0.0, 1.0, L)
    if seed is not None:
        if means is not None:
            raise InvalidInputError("give either means or a seed for a random instance, not both")
        if int(K) < 2 or not 0 <= gap < 1:
            raise InvalidInputError(f"a random instance needs K >= 2 and gap in [0, 1), got K={K!r}, gap={gap!r}")
        rng = np.random.default_rng(int(seed))
        for _ in range(MAX_DRAWS):
            probs = rng.dirichlet(np.ones(L), size=int(K))
            top = np.sort(probs @ grid)
            if top[-1] - top[-2] >= gap:
                return BoundedBandit(grid, probs, name=f"bounded(K={int(K)},seed={int(seed)},levels={L})")
        raise InvalidInputError(f"no draw of {MAX_DRAWS} had a best mean {gap} ahead of the others: lower gap")
    values = np.asarray(parse_means(GK_EXPERIMENT_1 if means is None else means))
    if np.any(values < 0) or np.any(values > 1):
        raise InvalidInputError(f"the means of bounded arms must lie in [0, 1], got {values.tolist()!r}")
    probs = binom.pmf(np.arange(L)[None, :], L - 1, values[:, None])
    return BoundedBandit(grid, probs, name=f"bounded({'/'.join(map(str, values))};levels={L})")
