"""Linear benchmark instances (Soare et al. 2014; Fiez et al. 2019): ``soare`` (e_1..e_d plus
(cos w, sin w, 0, ...), theta = 2 e_1), ``many_arms`` (Fiez exp. 2), ``sphere`` (Fiez exp. 3), ``factorial``
(Fiez exp. 4), ``transductive`` (Fiez exp. 5); for top m, ``top_m_classic`` (Réda et al. 2021) and ``top_m_random``
(Tirinzoni & Degenne 2022). Named in :data:`bandits.instances.INSTANCES`.
"""

from __future__ import annotations

import itertools

import numpy as np

from optdesign import shared_doc
from optdesign.validation import as_count, check_array_size

from ..core.environments import LinearBandit
from ..core.validation import check_positive

__all__ = ["factorial", "many_arms", "soare", "sphere", "top_m_classic", "top_m_random", "transductive"]

_SIGMA_DOC = """    sigma : float
        Standard deviation of the Gaussian reward noise (default 1)."""
_SEED_DOC = """    seed : int
        Seed (nonnegative) of the random construction; the same seed gives the same instance."""
_RETURNS_DOC = """    Returns
    -------
    LinearBandit
        The instance, named after its options (e.g. in result tables)."""


_shared_doc = shared_doc({"sigma": _SIGMA_DOC, "seed": _SEED_DOC, "returns": _RETURNS_DOC})


@_shared_doc
def soare(d: int = 2, omega: float = 0.1, sigma: float = 1.0) -> LinearBandit:
    """Soare et al. (2014, Sec. 6): arms e_1..e_d and x_{d+1} = (cos omega, sin omega, 0, ...),
    theta = (2, 0, ..., 0); Delta_min = 2 (1 - cos omega) (about omega^2).

    Parameters
    ----------
    d : int
        Dimension (at least 2); there are d + 1 arms.
    omega : float
        Angle (radians, > 0) between e_1 and the extra arm: the smaller, the harder.
%(sigma)s

%(returns)s
    """
    d = as_count(d, "d", minimum=2, floats=True)
    check_array_size(float(d + 1) * d, f"soare with d = {d}")
    omega = check_positive(omega, "omega")
    extra = np.zeros(d)
    extra[:2] = np.cos(omega), np.sin(omega)
    X = np.vstack([np.eye(d), extra])
    theta = np.zeros(d)
    theta[0] = 2.0
    return LinearBandit(X, theta, sigma=sigma, name=f"soare(d={d},omega={omega:g})")


@_shared_doc
def many_arms(n: int = 1000, seed: int = 0, sigma: float = 1.0) -> LinearBandit:
    """Fiez et al. (2019) experiment 2 in R^2: e_1 (best, theta = e_1), (-0.707, 0.707) and n - 2
    unit vectors at angle 0.78 + U[0, 0.1].

    Parameters
    ----------
    n : int
        Number of arms (at least 3).
%(seed)s
%(sigma)s

%(returns)s
    """
    n = as_count(n, "n", minimum=3, floats=True)
    check_array_size(2.0 * n, f"many-arms with n = {n}")
    rng = np.random.default_rng(seed)
    angles = 0.78 + rng.uniform(0.0, 0.1, n - 2)
    X = np.vstack([[1.0, 0.0], [-np.sqrt(0.5), np.sqrt(0.5)], np.c_[np.cos(angles), np.sin(angles)]])
    return LinearBandit(X, np.array([1.0, 0.0]), sigma=sigma, name=f"many-arms(n={n},seed={seed})")


@_shared_doc
def sphere(n: int = 250, d: int = 9, seed: int = 0, sigma: float = 1.0) -> LinearBandit:
    """Fiez et al. (2019) experiment 3: n arms uniform on the unit sphere of R^d; theta is one arm
    of the closest pair, so the best and second-best arms are close.

    Parameters
    ----------
    n : int
        Number of arms (at least 2).
    d : int
        Dimension (at least 2).
%(seed)s
%(sigma)s

%(returns)s
    """
    n, d = as_count(n, "n", minimum=2, floats=True), as_count(d, "d", minimum=2, floats=True)
    check_array_size(float(n) * d, f"sphere with n = {n}, d = {d}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    i = closest_pair_row(X)
    return LinearBandit(X, X[i].copy(), sigma=sigma, name=f"sphere(n={n},d={d},seed={seed})")


def closest_pair_row(X: np.ndarray, chunk_entries: int = 2_000_000) -> int:
    """Row i of the pair with the largest inner product x_i^T x_j (i != j), first in row-major order, from blocks
    of the Gram matrix (never the whole n x n); ``chunk_entries`` bounds the entries of one block."""
    n = X.shape[0]
    rows = max(1, chunk_entries // n)
    best, best_row = -np.inf, 0
    for a in range(0, n, rows):
        block = X[a : a + rows] @ X.T
        block[np.arange(block.shape[0]), a + np.arange(block.shape[0])] = -np.inf
        r = int(np.argmax(block.max(axis=1)))
        if block[r].max() > best:
            best, best_row = float(block[r].max()), a + r
    return best_row


@_shared_doc
def factorial(D: int = 3, seed: int = 0, sigma: float = 1.0) -> LinearBandit:
    """Fiez et al. (2019) experiment 4: the 2^D points of {-1, 1}^D with features (1, x_i, x_i x_j);
    theta ~ randint(-10, 10) / 100 (interactions scaled by 1/2), redrawn until the top gap > 1e-5.

    Parameters
    ----------
    D : int
        Number of binary factors (at least 2): 2^D arms of dimension 1 + D + D (D - 1) / 2.
%(seed)s
%(sigma)s

%(returns)s
    """
    D = as_count(D, "D", minimum=2, floats=True)
    n_points = 2.0**D if D < 1024 else float("inf")  # 2.0**D overflows beyond
    check_array_size(n_points * (1 + D + D * (D - 1) / 2), f"factorial with D = {D} (2^D points)")
    rng = np.random.default_rng(seed)
    points = np.array(list(itertools.product([-1.0, 1.0], repeat=D)))
    pairs = list(itertools.combinations(range(D), 2))
    X = np.hstack([np.ones((2**D, 1)), points, np.stack([points[:, i] * points[:, j] for i, j in pairs], axis=1)])
    while True:
        theta = rng.integers(-10, 10, size=int(X.shape[1])) / 100.0
        theta[1 + D:] *= 0.5
        top = np.sort(X @ theta)[-2:]
        if top[1] - top[0] > 1e-5:
            return LinearBandit(X, theta, sigma=sigma, name=f"factorial(D={D},seed={seed})")


@_shared_doc
def transductive(d: int = 20, omega: float = 0.1, sigma: float = 1.0) -> LinearBandit:
    """Fiez et al. (2019) experiment 5: X = canonical basis of R^{2d}; items e_1..e_d and
    cos(omega) e_i + sin(omega) e_{d+i}; theta = e_1.

    Parameters
    ----------
    d : int
        Half the dimension (at least 1): 2d arms and 2d items in R^{2d}.
    omega : float
        Angle (radians, > 0) between e_i and its tilted item; the best gap is 1 - cos(omega): the smaller, the harder.
%(sigma)s

%(returns)s
    """
    d = as_count(d, "d", minimum=1, floats=True)
    check_array_size(8.0 * d * d, f"transductive with d = {d} (X = I_2d and the items)")
    omega = check_positive(omega, "omega")
    X = np.eye(2 * d)
    tilted = np.hstack([np.cos(omega) * np.eye(d), np.sin(omega) * np.eye(d)])
    Z = np.vstack([np.eye(2 * d)[:d], tilted])
    theta = np.zeros(2 * d)
    theta[0] = 1.0
    return LinearBandit(X, theta, sigma=sigma, Z=Z, name=f"transductive(d={d},omega={omega:g})")


@_shared_doc
def top_m_classic(K: int = 4, m: int = 2, omega: float = np.pi / 3, sigma: float = 0.5) -> LinearBandit:
    """Réda, Kaufmann & Delahaye-Duriez (AISTATS 2021): Soare's instance made for top m, in R^(K-1) with theta = e_1:
    m items of value 1 (e_1, and e_1 + e_j for j = 2..m), one at angle omega from e_1 (cos omega e_1 + sin omega
    e_(m+1), value cos omega) and K - m - 1 orthogonal ones (e_(m+1), ..., e_(K-1), value 0); the items are the arms.

    Parameters
    ----------
    K : int
        Number of items (at least m + 2).
    m : int
        The answer's size (at least 1); the top m tie at 1, so the instance asks top m, not the best item.
    omega : float
        Angle (radians, > 0) of the (m+1)-th item: the smaller, the harder (the authors ran pi/3 and pi/6).
%(sigma)s
        The authors ran 0.5.

%(returns)s
    """
    m = as_count(m, "m")
    K = as_count(K, "K", minimum=m + 2, floats=True)
    check_array_size(float(K) * K, f"top-m-classic with K = {K}")
    omega = check_positive(omega, "omega")
    d = K - 1
    X = np.zeros((K, d))
    X[:m, 0] = 1.0
    X[np.arange(1, m), np.arange(1, m)] = 1.0
    X[m, 0], X[m, m] = np.cos(omega), np.sin(omega)
    X[np.arange(m + 1, K), np.arange(m, d)] = 1.0
    theta = np.zeros(d)
    theta[0] = 1.0
    return LinearBandit(X, theta, sigma=sigma, name=f"top-m-classic(K={K},m={m},omega={omega:g})")


#: top-m-random: the random arms' values z^T theta stay at most this (far below the canonical arms' 0.8 to 1)
RANDOM_ARM_CAP = 0.5


@_shared_doc
def top_m_random(K: int = 50, d: int = 20, seed: int = 0, sigma: float = 1.0) -> LinearBandit:
    """Tirinzoni & Degenne (NeurIPS 2022, their linear top-m experiment, m = 5): the canonical arms e_1..e_h of
    R^d (h = ceil(d / 2)) and K - h random unit vectors; theta_1 = 1, theta_2..theta_(h/2) = 0.9, the rest of the
    first h at 0.8, the last d - h uniform on [-1, 0]. A random arm is drawn uniformly on [-1, 1]^d and normalised,
    again while its value exceeds 0.5, so the top 5 are e_1..e_5 (at d = 20) and the gap to the sixth is 0.1. The
    items are the arms.

    Parameters
    ----------
    K : int
        Number of arms (at least h + 1).
    d : int
        Dimension (at least 4).
%(seed)s
%(sigma)s

%(returns)s
    """
    d = as_count(d, "d", minimum=4, floats=True)
    h = -(-d // 2)
    K = as_count(K, "K", minimum=h + 1, floats=True)
    check_array_size(float(K) * d, f"top-m-random with K = {K}, d = {d}")
    rng = np.random.default_rng(seed)
    theta = np.zeros(d)
    theta[0], theta[1 : h // 2], theta[h // 2 : h] = 1.0, 0.9, 0.8
    theta[h:] = rng.random(d - h) - 1.0
    X = np.zeros((K, d))
    X[np.arange(h), np.arange(h)] = 1.0
    for k in range(h, K):
        while True:
            v = 2.0 * rng.random(d) - 1.0
            v /= np.linalg.norm(v)
            if v @ theta <= RANDOM_ARM_CAP:
                X[k] = v
                break
    return LinearBandit(X, theta, sigma=sigma, name=f"top-m-random(K={K},d={d},seed={seed})")
