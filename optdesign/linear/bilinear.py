"""Graphical bilinear bandits (Rizk et al. 2021): edge arms and the product design.

An edge (i, j) whose nodes play x and x' returns x^T M x' = vec(x x'^T)^T vec(M) (row-major
vec, so theta = M.ravel()). The edge-arm set is Z = {vec(x x'^T)} with |Z| = K^2 in R^{d^2}.
If mu* is G-optimal on X then lambda = mu* (x) mu* is G-optimal on Z with value d^2
(their Thm 5.1 / C.2): A_Z(lambda) = A_X(mu*) (x) A_X(mu*), hence
z^T A_Z^{-1} z = (x^T A_X^{-1} x)(x'^T A_X^{-1} x').
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..result import BilinearDesign
from ..validation import as_arms
from ..vocabulary import DesignMethod
from .designs import DEFAULT_TOL, _shared_doc, unconstrained_g_optimal

__all__ = ["bilinear_design", "edge_arms"]


def edge_arms(X: ArrayLike) -> np.ndarray:
    """K^2 x d^2 array whose row i*K + j is vec(x_i x_j^T) (row-major).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The node arms, one per row; they must span R^d.

    Returns
    -------
    numpy.ndarray, shape (K * K, d * d)
        The edge arms; row i K + j is ``np.outer(X[i], X[j]).ravel()``.

    Raises
    ------
    InvalidInputError
        What :func:`optdesign.validation.as_arms` refuses (rank below d, NaN/inf, wrong shape).
    """
    arms = as_arms(X)
    K, d = arms.shape
    return np.einsum("ia,jb->ijab", arms, arms).reshape(K * K, d * d)


@_shared_doc
def bilinear_design(
    X: ArrayLike, *, solver: str | None = None, method: DesignMethod = "auto", tol: float = DEFAULT_TOL,
    time_limit: float | None = None,
) -> BilinearDesign:
    """Node G-optimal design mu on X and the edge design mu (x) mu; value = its G-value on Z (d^2).

    ``time_limit`` bounds the node design (:func:`optdesign.linear.g_optimal`).

    Parameters
    ----------
%(arms)s
%(options_gd)s

    Returns
    -------
    BilinearDesign
        ``node_weights`` mu, ``edge_weights`` mu mu^T, ``value`` (the edge G-value, the node G-value squared:
        d^2 at the optimum), its certified ``gap`` and ``node``, the node design's
        :class:`~optdesign.design_result.DesignResult`.

    Raises
    ------
    InvalidInputError
%(invalid)s.
%(raises)s

    Examples
    --------
    The edge design's G-value is d^2, the square of the node design's (Kronecker identity):

    >>> import numpy as np
    >>> import optdesign as od
    >>> res = od.bilinear_design(np.eye(2))
    >>> print(round(res.value, 6), res.node_weights)
    4.0 [0.5 0.5]
    """
    node = unconstrained_g_optimal(X, solver=solver, method=method, tol=tol, time_limit=time_limit)
    mu = node.weights
    # Kronecker identity: the edge G-value is the square of the node G-value.
    return BilinearDesign(node_weights=mu, edge_weights=np.outer(mu, mu), value=node.value**2, node=node)
