"""Certified lower bounds for any design of a classical criterion, over the simplex or a constrained polytope.

Every bound has the form f^2 / max_{w' in P} sum_k w'_k ||M x_k||^2 (the homogeneous equivalence theorem of
:mod:`~optdesign.linear.classical.criteria`), from a pair (f, M):

* the gradient of the criterion at w, and at w_eps = (1 - eps) w + eps u (u uniform) for a few eps: the bound
  holds at every nonsingular design, and the regularised ones certify the singular optima of c-, L- and
  Ds-optimality that cvxpy returns (for eps -> 0 they tend to the bound of a generalised inverse);
* a dual of the conic model: (tr(C Y), Y^T) for the linear criteria (Elfving's bound with the multiplier Y of
  X^T U = C^T), (1, Z^{1/2}) for E (Z the multiplier of A(w) - tau I PSD, trace 1).

The maximum over P is max_k over the simplex, and an LP bound with an exactly feasible dual under constraints
(:meth:`~optdesign.linear.classical.constraints.Polytope.max_linear`), so the bound never relies on the conic
solver's accuracy.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..exchange import price_map
from .constraints import Polytope
from .criteria import Criterion

__all__ = ["certified_bound"]

REGULARISATIONS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4)  # the eps of the regularised gradients


def certified_bound(X: np.ndarray, criterion: Criterion, w: np.ndarray, *, polytope: Polytope | None = None,
                    duals: Iterable[tuple[float, np.ndarray]] = ()) -> float:
    """The best certified lower bound on min_{w in P} Phi(w) from the design w and the given duals (module doc).

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
    duals : iterable of (float, numpy.ndarray)
        More (f, M) pairs, e.g. from the conic model's multipliers.

    Returns
    -------
    float
        The largest of the bounds (0 when none applies).
    """
    n = X.shape[0]
    pairs = list(duals)
    for eps in REGULARISATIONS:
        g = criterion.gradient(X, (1.0 - eps) * w + eps / n)
        if g is not None and np.isfinite(g.value):
            pairs.append((g.value, g.M))
    best = 0.0
    for f, M in pairs:
        if not np.isfinite(f) or not np.all(np.isfinite(M)):
            continue
        h = price_map(X, M)
        top = polytope.max_linear(h) if polytope is not None else float(np.max(h))
        if top > 0:
            best = max(best, f * (f / top))
    return best
