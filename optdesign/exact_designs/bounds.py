"""The approximate optimum and its certified bound, which bounds every exact design of any size from below.

An exact design with counts n_k is the approximate design w_k = n_k / n, so the approximate optimum phi* is at
most the exact one, and a certified lower bound on phi* gives every exact design a certified efficiency
``lower_bound / value`` (Pukelsheim 2006, ch. 12). Values are homogeneous and smaller is better:

* D: phi(w) = det M(w)^(-1/d). Kiefer–Wolfowitz: log det M* <= log det M(w) + d log(max_k h_k(w) / d) with
  h_k = x_k^T M(w)^{-1} x_k, so phi* >= phi(w) d / max_k h_k(w) (the D-efficiency bound of Atwood 1969);
* linear, A (B = I) and I (B = moment matrix of the region): phi(w) = tr(B M(w)^{-1}), convex and homogeneous
  of degree -1 in M, so for every w' phi(w') >= 2 c phi(w) - c^2 sum_k w'_k b_k(w) for all c > 0, with
  b_k = x_k^T M^{-1} B M^{-1} x_k; the best c gives phi* >= phi(w)^2 / max_k b_k(w) (the Frank–Wolfe duality gap
  made scale-free; tight at the optimum by the equivalence theorem, Kiefer 1974).

The D optimum comes from :func:`optdesign.d_optimal`, the linear one from :func:`optdesign.i_optimal` (A is
B = I); either bound is recomputed here in numpy, whatever the solver returned. Each bound is lowered by
ROUNDING_MARGIN (1e-12, relative) for the rounding of its own evaluation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky

from ..errors import SolverError

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: relative margin taken off every bound for the rounding of its float64 evaluation (at the optimum the bound equals
#: the value in exact arithmetic, and may exceed it by a few ulps once rounded)
ROUNDING_MARGIN = 1e-12
#: multiplicative steps that polish the weights when their bound misses tol (each O(K d^2))
POLISH_STEPS = 200


class Approximate(NamedTuple):
    """An approximate design, its criterion value and a certified lower bound on the approximate optimum."""

    weights: np.ndarray
    value: float
    lower_bound: float


def _factor(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    M = (X * w[:, None]).T @ X
    return cholesky((M + M.T) / 2, lower=True, check_finite=False)


def d_bound(X: np.ndarray, w: np.ndarray) -> Approximate:
    """phi(w) = det M(w)^(-1/d) and the Kiefer–Wolfowitz bound phi(w) d / max_k h_k(w) (module docstring)."""
    d = X.shape[1]
    L = _factor(X, w)
    value = float(np.exp(-2.0 * np.mean(np.log(np.diag(L)))))
    h = np.einsum("kj,jk->k", X, cho_solve((L, True), X.T, check_finite=False))
    return Approximate(w, value, value * d / float(h.max()) * (1.0 - ROUNDING_MARGIN))


def linear_bound(X: np.ndarray, w: np.ndarray, B: np.ndarray) -> Approximate:
    """phi(w) = tr(B M(w)^{-1}) and the bound phi(w)^2 / max_k x_k^T M^{-1} B M^{-1} x_k (module docstring)."""
    L = _factor(X, w)
    U = cho_solve((L, True), X.T, check_finite=False)  # M^{-1} x_k in column k
    value = float(np.trace(cho_solve((L, True), B, check_finite=False)))
    b = np.einsum("jk,jk->k", U, B @ U)
    return Approximate(w, value, value * value / float(b.max()) * (1.0 - ROUNDING_MARGIN))


def d_optimum(X: np.ndarray, tol: float) -> Approximate:
    """The D-optimal approximate design (:func:`optdesign.d_optimal`, certified gap ``tol``) and its bound."""
    from ..linear.designs import unconstrained_d_optimal

    return d_bound(X, unconstrained_d_optimal(X, tol=tol).weights)


def linear_optimum(X: np.ndarray, B: np.ndarray, solver: str | None, tol: float) -> Approximate:
    """The design minimising tr(B M(w)^{-1}) (A: B = I, I: B = moments), certified to gap ``tol`` when it can be.

    The single place the exact designs compute an approximate linear-criterion optimum: :func:`optdesign.i_optimal`
    with the moment matrix B (its certified fast path, or its cvxpy model through ``solver``), then at most
    POLISH_STEPS multiplicative steps w_k <- w_k (b_k / phi)^(1/2) (Silvey, Titterington & Torsney 1978; monotone
    for A and I, Yu 2010) while the bound recomputed here is not within ``tol``.

    Raises
    ------
    SolverError
        The weights returned leave M(w) singular.
    """
    from ..linear.classical.designs import i_optimal

    weights = i_optimal(X, moments=B, solver=solver, tol=tol).weights
    try:
        best = linear_bound(X, weights, B)
        for _ in range(POLISH_STEPS):
            if best.value <= best.lower_bound * (1.0 + tol):
                break
            L = _factor(X, weights)
            U = cho_solve((L, True), X.T, check_finite=False)
            weights = weights * np.sqrt(np.maximum(np.einsum("jk,jk->k", U, B @ U), 0.0))
            weights /= weights.sum()
            step = linear_bound(X, weights, B)
            if step.value / step.lower_bound < best.value / best.lower_bound:
                best = step
    except LinAlgError:
        raise SolverError("the approximate A/I-optimal design leaves M(w) singular") from None
    return best
