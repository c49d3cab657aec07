"""The pieces of Gaussian arms of unequal variances, compiled (:mod:`optdesign.identification.variances`).

For every other arm j the closest common mean x_j of the pair (i, j) at weights w: the precision-weighted mean for
known variances; for unknown ones the best of the interval's ends and the roots in it of the stationarity cubic
c(x) = w_i (x - mu_i)(s_j + (x - mu_j)^2) + w_j (x - mu_j)(s_i + (x - mu_i)^2) (s the variances). The roots of c'
split the interval into pieces on which c is monotone; a piece whose ends differ in sign holds one root, found by
bisection to the last bit. So the minimum is global, as a dense grid confirms (``tests/test_variance_oracle.py``).

:func:`equalise` is the fast path of T*: Garivier & Kaufmann's equalisation with these pieces, checked against the
cutting-plane program of :mod:`optdesign.identification.variances`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["equalise", "pair_pieces"]


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


@njit(cache=True)
def _pair(a: float, va: float, p: float, b: float, vb: float, q: float, log: bool) -> tuple[float, float, float]:
    """(f, g_a(x), g_b(x)) of one pair at its closest common mean x."""
    x = _closest(a, va, p, b, vb, q, log)
    za, zb = (a - x) ** 2 / va, (b - x) ** 2 / vb
    ga, gb = (0.5 * np.log1p(za), 0.5 * np.log1p(zb)) if log else (0.5 * za, 0.5 * zb)
    return p * ga + q * gb, ga, gb


@njit(cache=True)
def _weight_at(a: float, va: float, b: float, vb: float, y: float, top: float, log: bool) -> float:
    """The weight q of arm b with f(1, q) = y < top = f(1, inf): Newton on q (the derivative is g_b(x), the envelope
    theorem) safeguarded by bisection on a bracket grown by doubling."""
    lo, hi = 0.0, 1.0
    while _pair(a, va, 1.0, b, vb, hi, log)[0] < y and hi < 1e300:
        lo, hi = hi, 2.0 * hi
    q = 0.5 * (lo + hi)
    for _ in range(200):
        f, _, gb = _pair(a, va, 1.0, b, vb, q, log)
        if f < y:
            lo = q
        else:
            hi = q
        step = q - (f - y) / gb if gb > 0 else 0.5 * (lo + hi)
        nxt = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(nxt - q) <= 1e-15 * q or hi - lo <= 1e-15 * hi:
            return nxt
        q = nxt
    return q


@njit(cache=True)
def equalise(mu: np.ndarray, var: np.ndarray, best: int, log: bool) -> tuple[np.ndarray, float]:
    """Garivier & Kaufmann's equalisation (COLT 2016, Thm 5) for these pieces: w_best = 1, every other weight q_j
    with f_j(1, q_j) = y, and y the root of sum_j g_best(x_j) / g_j(x_j) = 1 (increasing in y from 0 at y = 0 to
    infinity at the least f_j(1, inf)), by bisection. Returns the weights (summing to one) and T = (1 + sum q) / y."""
    K = mu.size
    a, va = mu[best], var[best]
    top = np.inf
    for j in range(K):
        if j != best:
            z = (a - mu[j]) ** 2 / va
            top = min(top, 0.5 * np.log1p(z) if log else 0.5 * z)
    lo, hi = 0.0, top
    q = np.zeros(K)
    for _ in range(200):
        y = 0.5 * (lo + hi)
        if y <= lo or y >= hi:
            break
        total = 0.0
        for j in range(K):
            if j != best:
                q[j] = _weight_at(a, va, mu[j], var[j], y, top, log)
                _, ga, gb = _pair(a, va, 1.0, mu[j], var[j], q[j], log)
                total += ga / gb if gb > 0 else np.inf
        if total < 1.0:
            lo = y
        else:
            hi = y
    y = 0.5 * (lo + hi)
    for j in range(K):
        if j != best:
            q[j] = _weight_at(a, va, mu[j], var[j], y, top, log)
    q[best] = 1.0
    return q / q.sum(), q.sum() / y
