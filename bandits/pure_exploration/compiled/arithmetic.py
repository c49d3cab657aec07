"""The per-sample arithmetic of K-armed runs, compiled: divergences, the GLR pieces, pair costs, tracking, rounding.

Each function is the compiled twin of a reference in the package, with the same operations in the same order, so
that a run gives the same numbers (to the last bit, but for the Bernoulli divergence: it calls the C library's log1p
where the reference calls scipy's, and the two differ in the last bits, so a run could part from the reference only
at a tie to 1e-13): the divergence d(x, y) of the Gaussian family ((x - y)^2 / (2 sigma^2)) and of the
Bernoulli family (x log1p((x - y) / y) + (1 - x) log1p((y - x) / (1 - y)), y kept in [eps, 1 - eps];
:mod:`bandits.pure_exploration.families`) and the ends of its confidence intervals, the pieces of GK16's Lemma 3 at
the weighted mean (:class:`bandits.pure_exploration.karmed.KArmedProblem`), numpy's pairwise summation (which
``ndarray.sum`` uses, so normalised weights agree to the last bit), efficient rounding
(:func:`optdesign.linear.rounding.round_design`) and the floor projection of C-tracking
(:func:`bandits.core.tracking.project_floor`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..families import BERNOULLI_EPS, BISECTION_STEPS

__all__ = ["BERNOULLI", "GAUSSIAN", "divergence", "glr", "kl_bound", "pair_cost", "pairwise_sum", "project_floor",
           "round_design", "track"]

#: family codes of the compiled runs
GAUSSIAN, BERNOULLI = 0, 1
#: numpy's unrolled block of its pairwise summation
_BLOCK = 128


@njit(cache=True)
def _xlog1py(x: float, y: float) -> float:
    return 0.0 if x == 0.0 else x * math.log1p(y)


@njit(cache=True)
def divergence(family: int, sigma: float, x: float, y: float) -> float:
    """d(x, y) of the family (GAUSSIAN with its sigma, or BERNOULLI)."""
    if family == GAUSSIAN:
        gap = x - y
        return gap * gap / (2.0 * sigma**2)
    x = min(max(x, 0.0), 1.0)
    y = min(max(y, BERNOULLI_EPS), 1.0 - BERNOULLI_EPS)
    gap = x - y
    return _xlog1py(x, gap / y) + _xlog1py(1.0 - x, -gap / (1.0 - y))


@njit(cache=True)
def kl_bound(family: int, sigma: float, mu: float, level: float, upper: bool) -> float:
    """The upper (else the lower) end of {q : d(mu, q) <= level}: mu +/- sigma sqrt(2 level) (Gaussian), or by
    BISECTION_STEPS halvings between mu and 1 (else 0) (Bernoulli; the reference's bisection)."""
    if family == GAUSSIAN:
        width = sigma * math.sqrt(2.0 * level)
        return mu + width if upper else mu - width
    inside, outside = mu, 1.0 if upper else 0.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (inside + outside)
        if divergence(family, sigma, mu, mid) <= level:
            inside = mid
        else:
            outside = mid
    return inside


@njit(cache=True)
def pair_cost(family: int, sigma: float, mu: np.ndarray, weights: np.ndarray, b: int, a: int, ordered: bool) -> float:
    """w_b d(mu_b, m) + w_a d(mu_a, m) at m = (w_b mu_b + w_a mu_a) / (w_b + w_a) (the midpoint when both weights
    vanish); with ``ordered``, 0 unless mu_b > mu_a (a pair cost from a leader that is not the answer)."""
    if ordered and not mu[b] > mu[a]:
        return 0.0
    wb, wa = float(weights[b]), float(weights[a])
    total = wb + wa
    m = (wb * mu[b] + wa * mu[a]) / total if total > 0 else 0.5 * (mu[b] + mu[a])
    return wb * divergence(family, sigma, mu[b], m) + wa * divergence(family, sigma, mu[a], m)


@njit(cache=True)
def glr(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray) -> tuple[int, float]:
    """The answer argmax mu (first on a tie) and the GLR statistic min over a != answer of its pair cost."""
    b = int(np.argmax(mu))
    value = np.inf
    for a in range(mu.size):
        if a != b:
            value = min(value, pair_cost(family, sigma, mu, counts, b, a, False))
    return b, value


@njit(cache=True)
def pairwise_sum(a: np.ndarray) -> float:
    """numpy's pairwise summation of a contiguous float64 vector (eight accumulators in blocks of 128)."""
    n = a.size
    if n < 8:
        total = 0.0
        for i in range(n):
            total += a[i]
        return total
    if n <= _BLOCK:
        r = a[:8].copy()
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            total += a[i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(a[:half]) + pairwise_sum(a[half:])


@njit(cache=True)
def round_design(w: np.ndarray, n: int) -> np.ndarray:
    """Efficient rounding of nonnegative weights with a positive sum to counts summing to n."""
    w = w / pairwise_sum(w)
    K = w.size
    p = 0
    for k in range(K):
        if w[k] > 0:
            p += 1
    counts = np.zeros(K, dtype=np.int64)
    total = 0
    for k in range(K):
        if w[k] > 0:
            counts[k] = max(math.ceil((n - p / 2) * w[k]), 0)
            total += counts[k]
    while total < n:
        best, arg = np.inf, -1
        for k in range(K):
            if w[k] > 0 and counts[k] / w[k] < best:
                best, arg = counts[k] / w[k], k
        counts[arg] += 1
        total += 1
    while total > n:
        best, arg = -np.inf, -1
        for k in range(K):
            if w[k] > 0:
                ratio = (counts[k] - 1) / w[k] if counts[k] > 0 else -np.inf
                if ratio > best or arg < 0:
                    best, arg = ratio, k
        counts[arg] -= 1
        total -= 1
    return counts


@njit(cache=True)
def track(counts: np.ndarray, weights: np.ndarray, batch: int) -> np.ndarray:
    """A batch of ``batch`` pulls moving the counts towards (t + batch) w: the deficits, efficiently rounded (the
    weights themselves when no arm is behind)."""
    w = np.maximum(weights, 0.0)
    w = w / pairwise_sum(w)
    deficit = np.maximum((counts.sum() + batch) * w - counts, 0.0)
    if pairwise_sum(deficit) <= 0:
        return round_design(w, batch)
    return round_design(deficit, batch)


@njit(cache=True)
def project_floor(w: np.ndarray, eps: float) -> np.ndarray:
    """The L-infinity projection of w onto {v in the simplex : v >= eps}: max(w - s, eps) by water filling."""
    K = w.size
    if eps * K >= 1.0:
        return np.full(K, 1.0 / K)
    if w.min() >= eps:
        return w.copy()
    top = np.sort(w)[::-1]
    cumulative = np.cumsum(top)
    for m in range(1, K + 1):
        shift = (cumulative[m - 1] + (K - m) * eps - 1.0) / m
        following = top[m] if m < K else -np.inf
        if following - shift <= eps:
            return np.maximum(w - shift, eps)
    return np.maximum(w - (cumulative[K - 1] - 1.0) / K, eps)
