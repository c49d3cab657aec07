"""The pseudo-Bayesian A- and I-criteria, their prices and Hessian, batched over the S prior draws.

For a design w and draw s, M_s(w) = L_s L_s^T (:func:`optdesign.glm.variances.draw_factors`) and
Q_s = M_s^{-1} B_s M_s^{-1}. Then

* Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}), convex and homogeneous of degree -1 in w;
* the prices h_i(w) = -dPhi/dw_i = sum_s pi_s nu_is x_i^T Q_s x_i = sum_s pi_s nu_is ||B_s^{1/2} M_s^{-1} x_i||^2,
  over all K candidates by one matrix product per block of rows (:func:`optdesign.glm.variances.quadratic_prices`),
  with sum_i w_i h_i = Phi(w) (Euler);
* on a support, the Hessian of Phi, 2 sum_s pi_s nu_is nu_js (x_i^T M_s^{-1} x_j)(x_i^T Q_s x_j), in blocks of draws.

The certificate they give is in :mod:`optdesign.glm.trace_bound`.
"""

from __future__ import annotations

import numpy as np

from .prior import BLOCK_ENTRIES
from .variances import Factors, _shared_doc, draw_factors, quadratic_prices

__all__ = ["trace_prices", "trace_support_terms", "trace_value"]


def _inverses(factors: Factors) -> np.ndarray:
    """M_s^{-1} = L_s^{-T} L_s^{-1} of every draw, S x p x p."""
    inverse = factors[1]
    out: np.ndarray = inverse.transpose(0, 2, 1) @ inverse
    return out


def trace_value(factors: Factors, prior: np.ndarray, moments: np.ndarray) -> float:
    """Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}) from the factors of the design's M_s.

    Parameters
    ----------
    factors : tuple of (numpy.ndarray, numpy.ndarray)
        L and L^{-1} (:func:`optdesign.glm.variances.draw_factors`).
    prior : numpy.ndarray, shape (S,)
        The prior weights pi_s.
    moments : numpy.ndarray, shape (S, p, p) or (1, p, p)
        The matrices B_s (one shared B when the first dimension is 1).

    Returns
    -------
    float
        The criterion.
    """
    traces = np.einsum("sab,sab->s", np.broadcast_to(moments, factors[1].shape), _inverses(factors))
    return float(prior @ traces)


@_shared_doc
def trace_prices(X: np.ndarray, nu: np.ndarray, prior: np.ndarray, moments: np.ndarray,
                 factors: Factors) -> tuple[np.ndarray, float]:
    """The prices h_i = sum_s pi_s nu_is x_i^T M_s^{-1} B_s M_s^{-1} x_i of every row of X, and Phi(w).

    Parameters
    ----------
%(rows)s
    moments : numpy.ndarray, shape (S, p, p) or (1, p, p)
        The matrices B_s.
    factors : tuple of (numpy.ndarray, numpy.ndarray)
        L and L^{-1} of the design's M_s.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        h (K,), the negative gradient of Phi, and Phi(w) = sum_i w_i h_i.
    """
    Minv = _inverses(factors)
    Q = Minv @ moments @ Minv
    return quadratic_prices(X, nu, prior, (Q + Q.transpose(0, 2, 1)) / 2), trace_value(factors, prior, moments)


@_shared_doc
def trace_support_terms(X: np.ndarray, nu: np.ndarray, prior: np.ndarray, moments: np.ndarray,
                        w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The prices h_i and the Hessian of Phi on a support (the ``terms`` of the interior-point method).

    Parameters
    ----------
%(support)s
    moments : numpy.ndarray, shape (S, p, p) or (1, p, p)
        The matrices B_s.
    w : numpy.ndarray, shape (m,)
        Positive weights on the support.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray), or None
        h (m,) and the Hessian 2 sum_s pi_s nu_is nu_js (x_i^T M_s^{-1} x_j)(x_i^T Q_s x_j) (m x m); None when some
        M_s(w) is numerically singular.
    """
    factors = draw_factors(X, nu, w)
    if factors is None:
        return None
    m = X.shape[0]
    S = nu.shape[1]
    Minv = _inverses(factors)
    h = np.zeros(m)
    hess = np.zeros((m, m))
    step = max(1, BLOCK_ENTRIES // max(m * m, 1))
    for start in range(0, S, step):
        block = slice(start, start + step)
        Y = X @ Minv[block]  # rows M_s^{-1} x_i, (s, m, p)
        P = Y @ X.T  # x_i^T M_s^{-1} x_j
        B = moments if moments.shape[0] == 1 else moments[block]
        R = (Y @ B) @ Y.transpose(0, 2, 1)  # x_i^T Q_s x_j
        scaled = nu[:, block] * prior[block]  # pi_s nu_is, (m, s)
        h += np.einsum("sii,is->i", R, scaled)
        hess += 2.0 * np.einsum("sij,is,js->ij", P * R, scaled, nu[:, block], optimize=True)
    return h, (hess + hess.T) / 2
