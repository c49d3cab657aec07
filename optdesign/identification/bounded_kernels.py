"""KL_inf of distributions on [0, 1] with finite support and the pieces of best-arm identification among them,
compiled (:mod:`optdesign.identification.bounded`).

KL_inf above the mean, for x in (mean(F), 1) (Honda & Takemura 2010, Thm 8; the maximum of a concave function of
one variable, by Newton's method safeguarded by bisection on its decreasing derivative)::

    K+(F, x) = max over lambda in [0, 1 / (1 - x)] of sum_l p_l log(1 - lambda (s_l - x)),

and below the mean K-(F, x) = K+ of the reflected distribution (s -> 1 - s) at 1 - x. Both are convex in x, with
derivative lambda* and -lambda* (the envelope theorem, also when lambda* is the upper end). The pair (i, j) at weights
w costs min over x in [mu_j, mu_i] of w_i K-(F_i, x) + w_j K+(F_j, x): its derivative w_j lambda_j(x) - w_i lambda_i(x)
increases, and a bisection finds its root. Every function takes a ``shift`` s >= 0 and a ``scale`` c > 0 of arm j's
side: the pair then costs min over x of w_i K-(F_i, x) + w_j K+(F_j, c x + s), the piece {lambda_j >= c lambda_i + s}
of epsilon-good identification (additive: c = 1, s = epsilon; multiplicative: c = 1 / (1 - epsilon), s = 0), 0 where
mu_j >= c mu_i + s; its slope in x is c w_j lambda_j - w_i lambda_i.

:func:`equalise` is the fast path of T*: Garivier & Kaufmann's equalisation (COLT 2016, Thm 5) with these pieces. With
w_i = 1 the closest x of the pair (i, j) decreases from mu_i to (mu_j - s) / c as w_j grows from 0 to infinity,
w_j = lambda_i(x) / (c lambda_j(c x + s)), so each level of the pieces is found by one bisection in x.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["equalise", "kl_inf_above", "pair_pieces"]

#: bisection steps on the common mean (a bracket of width 1 shrinks below the last bit of a double)
STEPS = 64
#: the relative margin a shifted pair keeps from the ends of its common means
EDGE = 1e-12


@njit(cache=True)
def kl_inf_above(p: np.ndarray, s: np.ndarray, x: float) -> tuple[float, float]:
    """(K+(F, x), lambda*) for F = sum_l p_l delta_{s_l} on [0, 1] (module docstring); (0, 0) at or below the mean,
    (inf, inf) at x >= 1 (no distribution on [0, 1] but the point mass at 1 has mean 1)."""
    mean = 0.0
    for k in range(p.size):
        mean += p[k] * s[k]
    if x <= mean:
        return 0.0, 0.0
    if x >= 1.0:
        return np.inf, np.inf
    hi = 1.0 / (1.0 - x)
    top = 0.0  # the derivative at the upper end, over the atoms below 1; -inf with an atom at 1
    for k in range(p.size):
        if p[k] > 0:
            d = s[k] - x
            if s[k] >= 1.0:
                top = -np.inf
                break
            top -= p[k] * d / (1.0 - hi * d)
    lam = hi
    if top < 0:
        # start at the root of the derivative's linearisation at 0: (x - mean) / E(X - x)^2 (exact near the mean)
        second, spread = 0.0, 0.0
        for k in range(p.size):
            second += p[k] * (s[k] - x) ** 2
            spread += p[k] * abs(s[k] - x)
        lo, lam = 0.0, min((x - mean) / second, 0.5 * hi) if second > 0 else 0.5 * hi
        for _ in range(200):
            h, dh = 0.0, 0.0
            for k in range(p.size):
                if p[k] > 0:
                    d = s[k] - x
                    r = 1.0 / (1.0 - lam * d)
                    h -= p[k] * d * r
                    dh -= p[k] * d * d * r * r
            if abs(h) <= 1e-15 * spread:  # the derivative is zero to rounding (x within rounding of the mean)
                break
            if h > 0:
                lo = lam
            else:
                hi = lam
            step = lam - h / dh if dh < 0 else 0.5 * (lo + hi)
            nxt = step if lo < step < hi else 0.5 * (lo + hi)
            if abs(nxt - lam) <= 1e-11 * max(lam, 1e-300) or hi - lo <= 1e-15 * hi:
                lam = nxt
                break
            lam = nxt
    value = 0.0
    for k in range(p.size):
        if p[k] > 0:
            value += p[k] * np.log(max(1.0 - lam * (s[k] - x), 1e-300))
    return max(value, 0.0), lam


@njit(cache=True)
def _both(pi: np.ndarray, ri: np.ndarray, pj: np.ndarray, sj: np.ndarray, x: float, shift: float,
          scale: float) -> tuple[float, float, float, float]:
    """(K-(F_i, x), lambda_i, K+(F_j, scale x + shift), lambda_j); ri is the reflected support 1 - s."""
    gi, li = kl_inf_above(pi, ri, 1.0 - x)
    gj, lj = kl_inf_above(pj, sj, scale * x + shift)
    return gi, li, gj, lj


@njit(cache=True)
def _slope(pi: np.ndarray, ri: np.ndarray, wi: float, pj: np.ndarray, sj: np.ndarray, wj: float, y: float,
           x: float, shift: float, scale: float) -> float:
    """An increasing function of x whose root is sought: with y < 0, the pair's slope c wj lambda_j - wi lambda_i
    at weights (wi, wj); with y >= 0, y - y(x), y(x) = K-_i(x) + lambda_i / (c lambda_j) K+_j(c x + s) the pair's
    level at w_i = 1 and its closest mean x (:func:`_level`)."""
    gi, li, gj, lj = _both(pi, ri, pj, sj, x, shift, scale)
    if y < 0:
        return scale * wj * lj - wi * li
    if lj <= 0:  # c x + s at the mean of F_j: the level is K-_i there, reached as w_j grows without bound
        return -np.inf
    return y - (gi + li / (scale * lj) * gj)


@njit(cache=True)
def _root(pi: np.ndarray, ri: np.ndarray, wi: float, pj: np.ndarray, sj: np.ndarray, wj: float, y: float,
          lo: float, hi: float, shift: float, scale: float) -> float:
    """The root in [lo, hi] of the increasing :func:`_slope` (the end it leans on when it has none): regula falsi with
    the Illinois modification, a bisection whenever the secant stalls, to a bracket of 1e-13."""
    flo = _slope(pi, ri, wi, pj, sj, wj, y, lo + 1e-15 * (hi - lo), shift, scale)
    fhi = _slope(pi, ri, wi, pj, sj, wj, y, hi - 1e-15 * (hi - lo), shift, scale)
    if flo >= 0:
        return lo
    if fhi <= 0:
        return hi
    side = 0
    for _ in range(200):
        if hi - lo <= 1e-13 * max(hi, 1e-300):
            break
        x = (lo * fhi - hi * flo) / (fhi - flo)
        if not lo < x < hi or side == 3 or side == -3:
            x, side = 0.5 * (lo + hi), 0
        fx = _slope(pi, ri, wi, pj, sj, wj, y, x, shift, scale)
        if fx == 0:
            return x
        if fx < 0:
            lo, flo = x, fx
            side = side - 1 if side <= 0 else -1
            if side <= -2:
                fhi *= 0.5
        else:
            hi, fhi = x, fx
            side = side + 1 if side >= 0 else 1
            if side >= 2:
                flo *= 0.5
    return 0.5 * (lo + hi)


@njit(cache=True)
def _span(mi: float, mj: float, shift: float, scale: float) -> tuple[float, float]:
    """The means x of arm i worth trying for the pair: [(mu_j - s) / c, mu_i], kept EDGE inside (0, (1 - s) / c) when
    shifted or scaled (K-_i is infinite below 0 and K+_j at 1, barring atoms there: a cut at an end would be
    infinite)."""
    if shift == 0.0 and scale == 1.0:
        return mj, mi
    lo, top = (mj - shift) / scale, (1.0 - shift) / scale
    lo = lo if lo > 0 else EDGE * mi
    return lo, (mi if mi < top else max(top * (1.0 - EDGE), lo))


@njit(cache=True)
def pair_pieces(P: np.ndarray, S: np.ndarray, w: np.ndarray, best: int, shift: float = 0.0,
                scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every arm j != best in increasing index: (f_j(w), x_j, K-(F_best, x_j), K+(F_j, c x_j + s)); an arm with
    mu_j >= c mu_best + s costs nothing (x_j = (mu_j - s) / c). P holds one distribution per row on the support S."""
    K = P.shape[0]
    R = 1.0 - S
    means = P @ S
    values, xs, gi, gj = np.zeros(K - 1), np.empty(K - 1), np.zeros(K - 1), np.zeros(K - 1)
    row = 0
    for j in range(K):
        if j == best:
            continue
        if means[j] >= scale * means[best] + shift:
            xs[row] = (means[j] - shift) / scale
        else:
            lo, hi = _span(means[best], means[j], shift, scale)
            x = _root(P[best], R, w[best], P[j], S, w[j], -1.0, lo, hi, shift, scale)
            xs[row] = x
            gi[row], _, gj[row], _ = _both(P[best], R, P[j], S, x, shift, scale)
            values[row] = w[best] * gi[row] + w[j] * gj[row]
        row += 1
    return values, xs, gi, gj


@njit(cache=True)
def _level(pi: np.ndarray, ri: np.ndarray, mi: float, pj: np.ndarray, sj: np.ndarray, mj: float,
           y: float, shift: float, scale: float) -> tuple[float, float, float]:
    """With w_i = 1, the weight q of arm j whose piece equals y, and (K-(F_i, x), K+(F_j, c x + s)) at its closest
    x.

    y(x) = K-_i(x) + q(x) K+_j(c x + s) decreases in x. When F_i is a point mass, K-_i has a slope 1 / mu_i at its
    mean, so y(x) tends to y0 = q0 K+_j(c mu_i + s) > 0 as x rises to mu_i: below y0 the closest mean is mu_i
    itself (a corner, q = y / K+_j(c mu_i + s))."""
    lo, hi = _span(mi, mj, shift, scale)
    if hi == mi:
        _, li, gj0, lj = _both(pi, ri, pj, sj, mi * (1.0 - 1e-12), shift, scale)
        if gj0 > 0 and lj > 0 and li / (scale * lj) * gj0 >= y:
            return y / gj0, 0.0, gj0
    x = _root(pi, ri, 1.0, pj, sj, 1.0, y, lo, hi, shift, scale)
    gi, li, gj, lj = _both(pi, ri, pj, sj, x, shift, scale)
    return (li / (scale * lj) if lj > 0 else np.inf), gi, gj


@njit(cache=True)
def _excess(P: np.ndarray, R: np.ndarray, S: np.ndarray, means: np.ndarray, best: int, y: float, shift: float,
            scale: float) -> float:
    """sum_j K-(F_best, x_j) / K+(F_j, c x_j + s) at the level y, less one (increasing in y)."""
    total = -1.0
    for j in range(P.shape[0]):
        if j != best:
            _, gi, gj = _level(P[best], R, means[best], P[j], S, means[j], y, shift, scale)
            total += gi / gj if gj > 0 else np.inf
    return total


@njit(cache=True)
def equalise(P: np.ndarray, S: np.ndarray, best: int, shift: float = 0.0,
             scale: float = 1.0) -> tuple[np.ndarray, float]:
    """Garivier & Kaufmann's equalisation for these pieces: w_best = 1, every other weight q_j with f_j(1, q_j) = y,
    and y the root of sum_j K-(F_best, x_j) / K+(F_j, c x_j + s) = 1 (increasing in y from 0 to infinity at the
    least K-(F_best, max((mu_j - s) / c, 0)); doubled from 1 when that is infinite), by bisection. Returns the
    weights (summing to one) and T = (1 + sum q) / y."""
    K = P.shape[0]
    R = 1.0 - S
    means = P @ S
    top = np.inf
    for j in range(K):
        if j != best:
            top = min(top, kl_inf_above(P[best], R, 1.0 - max((means[j] - shift) / scale, 0.0))[0])
    if not np.isfinite(top):
        top = 1.0
        for _ in range(64):
            if _excess(P, R, S, means, best, top, shift, scale) >= 0:
                break
            top *= 2.0
    lo, hi = 0.0, top
    for _ in range(STEPS):
        y = 0.5 * (lo + hi)
        if y <= lo or y >= hi:
            break
        if _excess(P, R, S, means, best, y, shift, scale) < 0:
            lo = y
        else:
            hi = y
    y = 0.5 * (lo + hi)
    q = np.ones(K)
    if y <= 0:  # a pair at the edge of its span: no level is reached
        return q / K, np.inf
    for j in range(K):
        if j != best:
            q[j] = _level(P[best], R, means[best], P[j], S, means[j], y, shift, scale)[0]
    q[best] = 1.0
    return q / q.sum(), q.sum() / y
