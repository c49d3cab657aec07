"""The pieces of Gaussian arms of unequal variances, compiled (:mod:`optdesign.identification.variances`).

For every other arm j the closest common mean x_j of the pair (i, j) at weights w: the precision-weighted mean for
known variances; for unknown ones the best of the interval's ends and the roots in it of the stationarity cubic
c(x) = w_i (x - mu_i)(s_j + (x - mu_j)^2) + w_j (x - mu_j)(s_i + (x - mu_i)^2) (s the variances). The roots of c'
split the interval into pieces on which c is monotone; a piece whose ends differ in sign holds one root, found by
bisection to the last bit. So the minimum is global, as a dense grid confirms (``tests/test_variance_oracle.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pair_pieces"]


@njit(cache=True)
def _cost(x: float, a: float, va: float, p: float, b: float, vb: float, q: float, log: bool) -> float:
    """w_i g_i(x) + w_j g_j(x)."""
    za, zb = (a - x) ** 2 / va, (b - x) ** 2 / vb
    if log:
        return float(0.5 * (p * np.log1p(za) + q * np.log1p(zb)))
    return float(0.5 * (p * za + q * zb))


@njit(cache=True)
def _cubic(x: float, a: float, va: float, p: float, b: float, vb: float, q: float) -> float:
    return p * (x - a) * (vb + (x - b) ** 2) + q * (x - b) * (va + (x - a) ** 2)


@njit(cache=True)
def _bisect(lo: float, hi: float, a: float, va: float, p: float, b: float, vb: float, q: float) -> float:
    """The root of the cubic in [lo, hi], whose ends differ in sign."""
    flo = _cubic(lo, a, va, p, b, vb, q)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        fmid = _cubic(mid, a, va, p, b, vb, q)
        if (fmid < 0) == (flo < 0):
            lo, flo = mid, fmid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def _closest(a: float, va: float, p: float, b: float, vb: float, q: float, log: bool) -> float:
    """The global minimiser over [min(a, b), max(a, b)] of the pair's cost."""
    if p + q <= 0:
        return 0.5 * (a + b)
    if not log:
        return (p * a / va + q * b / vb) / (p / va + q / vb)
    lo, hi = min(a, b), max(a, b)
    # c'(x) = 3 c3 x^2 + 2 c2 x + c1 with the cubic's coefficients (expanded from _cubic)
    c3 = p + q
    c2 = -p * (a + 2 * b) - q * (b + 2 * a)
    c1 = p * (b * b + 2 * a * b + vb) + q * (a * a + 2 * a * b + va)
    ends = np.empty(4)
    ends[0], n = lo, 1
    disc = c2 * c2 - 3 * c3 * c1
    if disc > 0:
        root = np.sqrt(disc)
        for r in ((-c2 - root) / (3 * c3), (-c2 + root) / (3 * c3)):
            if lo < r < hi:
                ends[n] = r
                n += 1
    ends[n] = hi
    n += 1
    best_x, best = lo, _cost(lo, a, va, p, b, vb, q, log)
    cost_hi = _cost(hi, a, va, p, b, vb, q, log)
    if cost_hi < best:
        best_x, best = hi, cost_hi
    for k in range(n - 1):
        f0, f1 = _cubic(ends[k], a, va, p, b, vb, q), _cubic(ends[k + 1], a, va, p, b, vb, q)
        if (f0 < 0) != (f1 < 0):
            x = _bisect(ends[k], ends[k + 1], a, va, p, b, vb, q)
            c = _cost(x, a, va, p, b, vb, q, log)
            if c < best:
                best_x, best = x, c
    return best_x


@njit(cache=True)
def pair_pieces(mu: np.ndarray, var: np.ndarray, w: np.ndarray, best: int,
                log: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every arm j != best in increasing index: (f_j(w), x_j, g_best(x_j), g_j(x_j)); an arm at or above the
    best costs nothing (x_j = mu_j)."""
    K = mu.size
    values, xs, gi, gj = np.zeros(K - 1), np.empty(K - 1), np.zeros(K - 1), np.zeros(K - 1)
    a, va, p = mu[best], var[best], w[best]
    row = 0
    for j in range(K):
        if j == best:
            continue
        b, vb, q = mu[j], var[j], w[j]
        if b >= a:
            xs[row] = b
        else:
            x = _closest(a, va, p, b, vb, q, log)
            xs[row] = x
            za, zb = (a - x) ** 2 / va, (b - x) ** 2 / vb
            gi[row] = 0.5 * np.log1p(za) if log else 0.5 * za
            gj[row] = 0.5 * np.log1p(zb) if log else 0.5 * zb
            values[row] = p * gi[row] + q * gj[row]
        row += 1
    return values, xs, gi, gj
