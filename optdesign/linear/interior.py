"""The design problem restricted to a small support, solved by a primal-dual interior-point method.

min_w f(w) over the simplex of m support arms, for a convex f whose prices h_k = -df/dw_k and Hessian are known in
closed form: the D-criterion f = -log det A(w), with Hessian (x_i^T A^{-1} x_j)^2, and the linear criteria
f = tr(C A^{-1} C^T), with Hessian 2 (x_i^T A^{-1} x_j) (x_i^T A^{-1} C^T C A^{-1} x_j) (:func:`hadamard_terms`).

Optimality (KKT): h_k + s_k = nu, w_k s_k = 0, w, s >= 0, sum_k w_k = 1. Each Newton step on the perturbed system
w_k s_k = sigma mu (mu = w^T s / m) solves (Hess + diag(s / w)) dw + e dnu = h - nu e + sigma mu / w, e^T dw = 0
with one Cholesky factorisation of an m x m matrix, O(m^2 d + m^3): about 15 steps solve a support of a few d
arms where Frank–Wolfe takes thousands of rank-one steps. Stopping rule, the certified gap on the support:
max_k h_k / sum_k w_k h_k - 1 <= tol (sum_k w_k h_k is d for D and Phi(w) for the linear criteria, Euler), the
same certificate the full pricing pass checks over all arms. At the end, the arms with w_k < s_k (complementarity
says they leave the support) and w_k < 0.1 tol / m are set to 0 when the gap on the support stays below tol.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ..runtime.deadline import Deadline
from .criteria import whiten

__all__ = ["SecondOrder", "hadamard_terms", "newton_fits", "support_interior_point"]

#: the prices h (-gradient) and the Hessian of f at w, or None when A(w) is numerically singular
SecondOrder = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray] | None"]

CENTERING = 0.1  # sigma: the target w_k s_k = sigma mu of a Newton step
TO_BOUNDARY = 0.99  # fraction of the step to the boundary w > 0, s > 0
POLISH_STEPS = 2  # Newton steps after the gap met tol, with sigma = POLISH_CENTERING: the arms leaving get w ~ 0
POLISH_CENTERING = 0.01
PURGE = 0.1  # the arms set to 0 at the end weigh at most PURGE tol together
#: supports above this many arms, or in more than MAX_DIMENSION dimensions, are left to Frank–Wolfe: a Newton step
#: costs O(m^2 d + m^3), a rank-one step O(m d) (Gaussian arms: Newton as fast or faster up to d = 70, 800 arms)
MAX_SUPPORT = 800
MAX_DIMENSION = 100


def newton_fits(m: int, d: int) -> bool:
    """Whether :func:`support_interior_point` is the inner solve of m support arms in R^d (MAX_SUPPORT, MAX_DIMENSION).

    Parameters
    ----------
    m : int
        Support arms.
    d : int
        Dimension.

    Returns
    -------
    bool
        m <= MAX_SUPPORT and d <= MAX_DIMENSION.
    """
    return m <= MAX_SUPPORT and d <= MAX_DIMENSION


def hadamard_terms(X: np.ndarray, L: np.ndarray, M: np.ndarray | None, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Prices h_k = ||M x_k||^2 and Hessian c (x_i^T A^{-1} x_j) (x_i^T M^T M x_j) of a criterion on the rows of X.

    Parameters
    ----------
    X : numpy.ndarray, shape (m, d)
        The support arms.
    L : numpy.ndarray, shape (d, d)
        Lower-triangular factor of A(w) = L L^T.
    M : numpy.ndarray, shape (r, d), optional
        The pricing map; None for L^{-1} (the D-criterion: h_k = x_k^T A^{-1} x_k).
    c : float
        1 for -log det A, 2 for tr(C A^{-1} C^T) (M = C A^{-1}).

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        h (m,) and the Hessian (m, m) of f at w.
    """
    Z = whiten(L, X)
    H = Z.T @ Z
    G = H if M is None else (M @ X.T).T @ (M @ X.T)
    return np.diag(G).copy(), c * H * G


def _newton(hess: np.ndarray, h: np.ndarray, w: np.ndarray, s: np.ndarray, nu: float,
            target: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(dw, ds, dnu) of the Newton step towards w_k s_k = target (module doc), or None if the system is singular."""
    K = hess + np.diag(s / w)
    try:
        factor = cho_factor(K, lower=True, check_finite=False)
    except (LinAlgError, ValueError):
        return None
    r = h - nu + target / w
    a = cho_solve(factor, r, check_finite=False)
    b = cho_solve(factor, np.ones_like(w), check_finite=False)
    dnu = float(a.sum() / b.sum())
    dw = a - dnu * b
    ds = target / w - s - (s / w) * dw
    if not (np.all(np.isfinite(dw)) and np.all(np.isfinite(ds)) and np.isfinite(dnu)):
        return None
    return dw, ds, dnu


def _to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """The largest step in [0, 1] keeping v + a dv > 0, shortened by TO_BOUNDARY."""
    down = dv < 0
    return min(1.0, TO_BOUNDARY * float(np.min(-v[down] / dv[down]))) if np.any(down) else 1.0


def _gap(h: np.ndarray, w: np.ndarray) -> float:
    return float(h.max() / (w @ h) - 1.0)


def _purified(terms: SecondOrder, w: np.ndarray, s: np.ndarray, tol: float) -> np.ndarray:
    """w with the arms of w_k < min(s_k, PURGE tol / m) set to 0 (renormalised: at most PURGE tol of the weight
    moves) when its gap on the support stays <= tol, else w."""
    w = w / w.sum()
    out = np.where((w < s) & (w < PURGE * tol / w.size), 0.0, w)
    if not np.any(out < w) or not np.any(out > 0):
        return w
    out /= out.sum()
    got = terms(out)
    return out if got is not None and _gap(got[0], out) <= tol else w


def support_interior_point(terms: SecondOrder, w0: np.ndarray, *, tol: float, deadline: Deadline,
                           max_iter: int = 100) -> tuple[np.ndarray, bool] | None:
    """min_w f(w) on the simplex of the support arms by primal-dual Newton steps (module doc).

    Parameters
    ----------
    terms : callable
        ``terms(w) -> (h, Hessian)`` of f at w > 0 (:data:`SecondOrder`), None when A(w) is singular.
    w0 : numpy.ndarray, shape (m,)
        The starting design (zeros allowed): the iterates start at 0.5 w0 / sum w0 + 0.5 / m.
    tol : float
        Stop once max_k h_k / sum_k w_k h_k - 1 <= tol on the support.
    deadline : Deadline
        Checked at every step.
    max_iter : int
        Most Newton steps.

    Returns
    -------
    tuple of (numpy.ndarray, bool), or None
        The weights (summing to 1; arms that left the support at 0) and whether the gap met ``tol``; None when
        A(w) of the starting design is singular.
    """
    m = w0.size
    w = 0.5 * w0 / w0.sum() + 0.5 / m
    got = terms(w)
    if got is None:
        return None
    h, hess = got
    nu = 1.5 * float(h.max())
    s = nu - h
    polish = 0  # steps taken since the gap met tol
    for _ in range(max_iter):
        polish += _gap(h, w) <= tol
        if polish > POLISH_STEPS or deadline.expired():
            break
        sigma = POLISH_CENTERING if polish else CENTERING
        step = _newton(hess, h, w, s, nu, sigma * float(w @ s) / m)
        if step is None:
            break
        dw, ds, dnu = step
        a = min(_to_boundary(w, dw), _to_boundary(s, ds))
        while (got := terms(w + a * dw)) is None and a > 1e-12:  # keep A(w) nonsingular
            a *= 0.5
        if got is None:
            break
        w, s, nu = w + a * dw, s + a * ds, nu + a * dnu
        h, hess = got
    if _gap(h, w) <= tol:
        return _purified(terms, w, s, tol), True
    return w / w.sum(), False
