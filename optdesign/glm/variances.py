"""The pseudo-Bayesian D-criterion, its prices and Hessian, batched over the S prior draws.

For a design w and draw s, M_s(w) = sum_i w_i nu_is x_i x_i^T = L_s L_s^T (one batched Cholesky factorisation of
the S matrices, p x p each). Then

* Phi(w) = sum_s pi_s log det M_s(w) = 2 sum_s pi_s sum_a log (L_s)_aa;
* the prices d_i(w) = dPhi/dw_i = sum_s pi_s nu_is x_i^T M_s^{-1} x_i, over all K candidates by one matrix
  product per block of rows: the products x_a x_b (a <= b) of each candidate times the entries of every M_s^{-1},
  O(K S p^2) in all;
* on a support of m candidates, the Hessian of -Phi, sum_s pi_s (nu_is nu_js (x_i^T M_s^{-1} x_j)^2)_ij, as one
  product Z Z^T of the m x S p(p+1)/2 products of whitened candidates (:func:`support_terms`).

sum_i w_i d_i(w) = p at every w (Euler), and the certificate of the equivalence theorem is
Phi* <= Phi(w) + p log(max_i d_i(w) / p) (:mod:`optdesign.glm.certificate`). The rounding of a price grows like
cond(M_s) eps, as for a Gram matrix: designs whose M_s are worse conditioned than about 1e8 are certified loosely.
"""

from __future__ import annotations

import numpy as np

from ..docstrings import shared_doc
from .prior import BLOCK_ENTRIES

__all__ = ["Factors", "draw_factors", "information", "log_det_mean", "prices", "quadratic_prices", "singular_draws",
           "support_terms"]

#: (L, L^{-1}), each S x p x p with M_s(w) = L_s L_s^T
Factors = tuple[np.ndarray, np.ndarray]

# the array parameters the functions of the criteria share (substituted by _shared_doc): a design on m candidates,
# all K candidates with the prior, a support of m candidates with the prior
_DOC = {
    "design": """    X : numpy.ndarray, shape (m, p)
        The candidates of positive weight (or all of them).
    nu : numpy.ndarray, shape (m, S)
        Their GLM weights at each draw.
    w : numpy.ndarray, shape (m,)
        Their design weights.""",
    "rows": """    X : numpy.ndarray, shape (K, p)
        The candidates.
    nu : numpy.ndarray, shape (K, S)
        Their GLM weights at each draw.
    prior : numpy.ndarray, shape (S,)
        The prior weights.""",
    "support": """    X : numpy.ndarray, shape (m, p)
        The support candidates.
    nu : numpy.ndarray, shape (m, S)
        Their GLM weights at each draw.
    prior : numpy.ndarray, shape (S,)
        The prior weights.""",
}

_shared_doc = shared_doc(_DOC)


@_shared_doc
def information(X: np.ndarray, nu: np.ndarray, w: np.ndarray) -> np.ndarray:
    """M_s(w) = sum_i w_i nu_is x_i x_i^T for every draw (exactly symmetric: x_a x_b and x_b x_a round alike).

    Parameters
    ----------
%(design)s

    Returns
    -------
    numpy.ndarray, shape (S, p, p)
        The information matrices.
    """
    m, p = X.shape
    outer = (X[:, :, None] * X[:, None, :]).reshape(m, p * p)
    M: np.ndarray = ((nu * w[:, None]).T @ outer).reshape(-1, p, p)
    return M


@_shared_doc
def draw_factors(X: np.ndarray, nu: np.ndarray, w: np.ndarray) -> Factors | None:
    """The Cholesky factors L_s of M_s(w) and their inverses, or None when some M_s is numerically singular.

    Parameters
    ----------
%(design)s

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray), or None
        L and L^{-1}, S x p x p each; None when a factorisation fails or a factor's diagonal spans more than
        1 / (m p eps)^(1/2) (cond(M_s) beyond about 1 / (m p eps)).
    """
    M = information(X, nu, w)
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return None
    diag = np.diagonal(L, axis1=1, axis2=2)
    if not np.all(np.isfinite(diag)) or np.any(diag.min(axis=1) ** 2 <= diag.max(axis=1) ** 2 * X.shape[0]
                                                 * X.shape[1] * np.finfo(float).eps):
        return None
    return L, np.linalg.inv(L)


@_shared_doc
def singular_draws(X: np.ndarray, nu: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The draws s whose M_s(w) is numerically singular (smallest eigenvalue below m p eps times the largest).

    Parameters
    ----------
%(design)s

    Returns
    -------
    numpy.ndarray of int
        Indices of the draws, increasing.
    """
    eig = np.linalg.eigvalsh(information(X, nu, w))
    return np.flatnonzero(~(eig[:, 0] > eig[:, -1] * X.shape[0] * X.shape[1] * np.finfo(float).eps))


def log_det_mean(factors: Factors, prior: np.ndarray) -> float:
    """Phi(w) = sum_s pi_s log det M_s(w) from the factors of :func:`draw_factors`.

    Parameters
    ----------
    factors : tuple of (numpy.ndarray, numpy.ndarray)
        L and L^{-1}.
    prior : numpy.ndarray, shape (S,)
        The prior weights pi_s.

    Returns
    -------
    float
        The prior mean of log det M_s(w).
    """
    L = factors[0]
    return float(2.0 * prior @ np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1))


def _pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs a <= b of a symmetric p x p matrix."""
    return np.triu_indices(p)


@_shared_doc
def prices(X: np.ndarray, nu: np.ndarray, prior: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """d_i = sum_s pi_s nu_is x_i^T M_s^{-1} x_i for every row of X, a block of rows at a time.

    Parameters
    ----------
%(rows)s
    inverse : numpy.ndarray, shape (S, p, p)
        L_s^{-1} of the design (:func:`draw_factors`).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The prices d_i(w) (the directional derivatives of Phi toward each candidate, plus p).
    """
    return quadratic_prices(X, nu, prior, inverse.transpose(0, 2, 1) @ inverse)  # M_s^{-1} = L_s^{-T} L_s^{-1}


@_shared_doc
def quadratic_prices(X: np.ndarray, nu: np.ndarray, prior: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """sum_s pi_s nu_is x_i^T Q_s x_i for every row of X and symmetric Q_s, a block of rows at a time.

    The quadratic forms of a block are one matrix product: the products x_a x_b (a <= b) of each row times the
    entries (Q_s)_ab (doubled off the diagonal) of every draw, K x p(p+1)/2 times p(p+1)/2 x S.

    Parameters
    ----------
%(rows)s
    Q : numpy.ndarray, shape (S, p, p)
        One symmetric matrix per draw (M_s^{-1} for the D-criterion's prices, M_s^{-1} B_s M_s^{-1} for A and I).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The prior means of the weighted quadratic forms.
    """
    K, p = X.shape
    S = Q.shape[0]
    a, b = _pairs(p)
    coefficients = np.ascontiguousarray((Q[:, a, b] * np.where(a == b, 1.0, 2.0)).T)
    d = np.empty(K)
    step = max(1, BLOCK_ENTRIES // S)
    for start in range(0, K, step):
        block = X[start:start + step]
        q = (block[:, a] * block[:, b]) @ coefficients
        q *= nu[start:start + step]
        d[start:start + step] = q @ prior
    return d


@_shared_doc
def support_terms(X: np.ndarray, nu: np.ndarray, prior: np.ndarray,
                  w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The prices d_i and the Hessian of -Phi on a support (the ``terms`` of the interior-point method).

    Parameters
    ----------
%(support)s
    w : numpy.ndarray, shape (m,)
        Positive weights on the support.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray), or None
        d (m,) and the Hessian sum_s pi_s (nu_is nu_js (x_i^T M_s^{-1} x_j)^2) (m x m); None when some M_s(w)
        is numerically singular.
    """
    factors = draw_factors(X, nu, w)
    if factors is None:
        return None
    m, p = X.shape
    S = nu.shape[1]
    a, b = _pairs(p)
    # Y[c, i, s] = pi_s^(1/4) sqrt(nu_is) (L_s^{-1} x_i)_c, and z_i = the products Y[c, i] Y[e, i] (c <= e, times
    # sqrt 2 off the diagonal), so that pi_s nu_is nu_js (x_i^T M_s^{-1} x_j)^2 = (y_is . y_js)^2 summed over s is
    # z_i . z_j: the Hessian is one product Z Z^T (Z: m x p(p+1)/2 S, contiguous blocks of draws)
    root = np.sqrt(nu) * np.sqrt(np.sqrt(prior))
    Y = np.empty((p, m, S))
    for c in range(p):
        np.multiply(X @ factors[1][:, c, :].T, root, out=Y[c])
    h = (Y * Y).sum(axis=0) @ np.sqrt(prior)
    factor = np.where(a == b, 1.0, np.sqrt(2.0))
    hess = np.zeros((m, m))
    step = max(1, BLOCK_ENTRIES // max(m * a.size, 1))
    for start in range(0, S, step):
        block = Y[:, :, start:start + step]
        Z = np.empty((m, a.size, block.shape[2]))
        for k in range(a.size):
            np.multiply(block[a[k]], block[b[k]], out=Z[:, k, :])
            Z[:, k, :] *= factor[k]
        flat = Z.reshape(m, -1)
        hess += flat @ flat.T
    return h, hess
