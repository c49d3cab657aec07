"""The Track-and-Stop target of a compiled run: w*(mu) by GK16's Theorem 5, compiled.

The twin of :meth:`bandits.pure_exploration.karmed.KArmedProblem.oracle`'s weights (its certificate is not needed to
track them): the inner inverses u_a(y) of phi_a(u) = d(mb, m) + u / (1 - u) d(ma, m), m = mb - u (mb - ma), by
safeguarded Newton steps (Numerical Recipes' ``rtsafe`` rules, elementwise), and the outer root of
S(y) = sum_a d(mb, m_a) / d(ma, m_a) = 1 by Newton in log y; then w_b = 1 / (1 + sum_a x_a), w_a = x_a w_b with
x = u / (1 - u). Where the reference raises (a tie for the best arm, divergences that underflow or overflow, no
convergence) the target is empty and the rule keeps its previous one, as the reference rule does. Linear problems'
targets are the reference's transductive designs, called back from compiled code (:func:`linear_oracle_target`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from optdesign.errors import InvalidInputError, SolverError
from optdesign.validation import TIE_RTOL

from ..families import BERNOULLI_EPS
from ..karmed import MAX_STEPS, RTOL, STALL, U_MAX
from .arithmetic import GAUSSIAN, divergence, pairwise_sum

__all__ = ["linear_oracle_target", "oracle_target"]



@njit(cache=True)
def _slope(family: int, sigma: float, x: float, y: float) -> float:
    """d/dy d(x, y): (y - x) / v(y)."""
    if family == GAUSSIAN:
        return (y - x) / sigma**2
    y = min(max(y, BERNOULLI_EPS), 1.0 - BERNOULLI_EPS)
    return (y - min(max(x, 0.0), 1.0)) / (y * (1.0 - y))


@njit(cache=True)
def _newton_step(x: float, step: float, lo: float, hi: float, last: float) -> tuple[float, bool]:
    """The next iterate (Newton inside the bracket and at most half the last move, else the midpoint) and whether
    x has converged."""
    size, scale = abs(step), abs(x)
    done = size <= RTOL * scale or hi - lo <= RTOL * abs(hi) or (size <= STALL * scale and size > 0.5 * last)
    if done:
        return x, True
    newton = x + step
    if newton > lo and newton < hi and size <= 0.5 * last:
        return newton, False
    return 0.5 * (lo + hi), False


@njit(cache=True)
def _inverses(family: int, sigma: float, mb: float, ma: np.ndarray, y: float, u: np.ndarray,
              out: np.ndarray) -> bool:
    """u_a with phi_a(u_a) = y from the starting points u (updated in place); ``out`` gets m_a, d(ma, m_a),
    d(mb, m_a) at the last evaluation. False when an entry has not converged in MAX_STEPS steps."""
    n = ma.size
    lo, hi, last = np.zeros(n), np.ones(n), np.ones(n)
    for _ in range(MAX_STEPS):
        converged = True
        new = np.empty(n)
        for a in range(n):
            m = mb - u[a] * (mb - ma[a])
            da, db = divergence(family, sigma, ma[a], m), divergence(family, sigma, mb, m)
            phi = db + u[a] / (1.0 - u[a]) * da
            if phi < y:
                lo[a] = u[a]
            else:
                hi[a] = u[a]
            slope = da / (1.0 - u[a]) ** 2
            new[a], done = _newton_step(u[a], (y - phi) / slope, lo[a], hi[a], last[a])
            converged = converged and done
            out[0, a], out[1, a], out[2, a] = m, da, db
        if converged:
            return True
        for a in range(n):
            last[a] = abs(new[a] - u[a])
            u[a] = min(new[a], U_MAX)
    return False


@njit(cache=True)
def oracle_target(mu: np.ndarray, family: int, sigma: float) -> np.ndarray:
    """w*(mu) normalised as Track-and-Stop takes it, or an empty vector where the reference oracle raises."""
    K = mu.size
    b = int(np.argmax(mu))
    tol = TIE_RTOL * np.abs(mu).max()
    if (mu >= mu[b] - tol).sum() > 1:
        return np.zeros(0)
    others = np.array([a for a in range(K) if a != b])
    mb, ma = mu[b], mu[others]
    tops = np.array([divergence(family, sigma, mb, ma[i]) for i in range(K - 1)])
    if not (np.isfinite(tops).all() and tops.min() > 0):
        return np.zeros(0)
    lo, hi = 0.0, tops.min()
    y, last = 0.5 * hi, hi
    u = y / tops
    state = np.empty((3, K - 1))
    for _ in range(MAX_STEPS):
        if not _inverses(family, sigma, mb, ma, y, u, state):
            return np.zeros(0)
        m, da, db = state[0], state[1], state[2]
        slope = da / (1.0 - u) ** 2
        total = pairwise_sum(db / da)
        if total < 1.0:
            lo = y
        else:
            hi = y
        dratio = np.empty(K - 1)
        for i in range(K - 1):
            dratio[i] = (_slope(family, sigma, mb, m[i]) * da[i] - db[i] * _slope(family, sigma, ma[i], m[i])) \
                / da[i] ** 2
        dtotal = pairwise_sum(dratio * (ma - mb) / slope)
        step = y * math.expm1(-math.log(total) * total / (y * dtotal))
        new, done = _newton_step(y, step, lo, hi, last)
        if done:
            x = u / (1.0 - u)
            w = np.empty(K)
            w[b] = 1.0 / (1.0 + pairwise_sum(x))
            w[others] = x * w[b]
            w = np.maximum(w, 0.0)
            total_w = pairwise_sum(w)
            if total_w > 0 and np.isfinite(w).all():
                return w / total_w
            return np.zeros(0)
        move = new - y
        last, y = abs(move), new
        u = np.minimum(np.maximum(u + move / slope, 0.0), U_MAX)
    return np.zeros(0)


def linear_oracle_target(X: np.ndarray, Z: np.ndarray, sigma: float, theta: np.ndarray) -> np.ndarray:
    """w*(theta) of a linear problem normalised as Track-and-Stop takes it (the reference oracle, a transductive
    design solved by cvxpy: called back from compiled code), or an empty vector where the oracle fails.

    Parameters
    ----------
    X, Z : numpy.ndarray
        The arms and the items.
    sigma : float
        The noise level.
    theta : numpy.ndarray
        The estimate.

    Returns
    -------
    numpy.ndarray
        The target, shape (K,), or shape (0,).
    """
    from ..linear import LinearProblem

    try:
        w = np.clip(np.asarray(LinearProblem(X, Z, sigma).oracle(theta).weights, dtype=float), 0.0, None)
    except (InvalidInputError, SolverError):
        return np.zeros(0)
    return w / w.sum() if w.sum() > 0 and np.isfinite(w).all() else np.zeros(0)
