"""Certified lower bounds for any design of a classical criterion, over the simplex or a constrained polytope.

Every bound has the form f^2 / max_{w' in P} sum_k w'_k ||M x_k||^2 (the homogeneous equivalence theorem of
:mod:`~optdesign.linear.classical.criteria`), from a pair (f, M):

* the gradient of the criterion at w, and at w_eps = (1 - eps) w + eps u (u uniform) for a few eps: the bound
  holds at every nonsingular design, and the regularised ones certify the singular optima of c-, L- and
  Ds-optimality that cvxpy returns (for eps -> 0 they tend to the bound of a generalised inverse);
* a dual of the conic model: (tr(C Y), Y^T) for the linear criteria (Elfving's bound with the multiplier Y of
  X^T U = C^T), (1, Z^{1/2}) for E (Z the multiplier of A(w) - tau I PSD, trace 1).

The maximum over P is max_k over the simplex, and an LP bound with an exactly feasible dual under constraints
(:meth:`~optdesign.linear.classical.polytope.Polytope.max_linear`), so the bound never relies on the conic
solver's accuracy.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

from ..exchange import price_map
from .criteria import Criterion
from .kiefer import KieferCriterion
from .linear import LinearCriterion
from .polytope import Polytope

__all__ = ["certificate_pairs", "certified_bound", "density_root"]

REGULARISATIONS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4)  # the eps of the regularised gradients


def certificate_pairs(X: np.ndarray, criterion: Criterion, w: np.ndarray, dual: np.ndarray | None = None, *,
                      regularise: bool = True) -> list[tuple[float, np.ndarray]]:
    """The (f, M) pairs of the design w (module doc): from the conic dual, then the (regularised) gradients.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    criterion : Criterion
        The criterion.
    w : numpy.ndarray, shape (K,)
        The design.
    dual : numpy.ndarray, optional
        The model's multiplier: Y (d x k) of a linear criterion, Z (d x d) of E.
    regularise : bool
        Also the gradients at w_eps for each eps of REGULARISATIONS (else at w only).

    Returns
    -------
    list of (float, numpy.ndarray)
        The pairs.
    """
    pairs: list[tuple[float, np.ndarray]] = []
    if dual is not None and isinstance(criterion, LinearCriterion):
        Y = dual.reshape(X.shape[1], -1)
        pairs.append((float(np.sum(criterion.C.T * Y)), Y.T))
    elif dual is not None and isinstance(criterion, KieferCriterion) and np.isinf(criterion.p):
        pairs.append((1.0, density_root(dual)))
    n = X.shape[0]
    for eps in REGULARISATIONS if regularise else (0.0,):
        g = criterion.gradient(X, (1.0 - eps) * w + eps / n)
        if g is not None and np.isfinite(g.value):
            pairs.append((g.value, g.M))
    return [(f, M) for f, M in pairs if np.isfinite(f) and np.all(np.isfinite(M))]


def density_root(Z: np.ndarray) -> np.ndarray:
    """M with M^T M = Z+ / tr(Z+), Z+ the PSD part of the symmetrised Z (a density matrix; zeros if Z+ = 0).

    Parameters
    ----------
    Z : numpy.ndarray, shape (d, d)
        A multiplier of E's semidefinite constraint.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The pricing map: x^T Z+ x / tr(Z+) = ||M x||^2.
    """
    lam, U = eigh((Z + Z.T) / 2)
    lam = np.clip(lam, 0.0, None)
    total = lam.sum()
    return np.sqrt(lam / total)[:, None] * U.T if total > 0 else np.zeros_like(Z)


def certified_bound(X: np.ndarray, criterion: Criterion, w: np.ndarray, *, polytope: Polytope | None = None,
                    dual: np.ndarray | None = None) -> float:
    """The best certified lower bound on min_{w in P} Phi(w) from the design w and the model's dual (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, spanning R^d (or the row space of the criterion's problem).
    criterion : Criterion
        The criterion.
    w : numpy.ndarray, shape (K,)
        A design (singular ones are regularised).
    polytope : Polytope, optional
        The feasible designs; the simplex when None.
    dual : numpy.ndarray, optional
        The model's multiplier (:func:`certificate_pairs`).

    Returns
    -------
    float
        The largest of the bounds (0 when none applies).
    """
    best = 0.0
    for f, M in certificate_pairs(X, criterion, w, dual):
        h = price_map(X, M)
        top = polytope.max_linear(h) if polytope is not None else float(np.max(h))
        if top > 0:
            best = max(best, f * (f / top))
    return best
