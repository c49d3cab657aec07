"""Products of inverse allocations, the terms of the mean-field program: their cones and a certified lower bound.

The terms of T^MF (:mod:`optdesign.factored.mean_field.model`) are products prod_{c in S} 1 / v_c of class allocations
v > 0, with the sets S the rows of a 0/1 matrix P: sum_j alpha_j exp(-(P y)_j) in log coordinates y = log v.
:func:`inverse_products` writes s_j >= prod_{c in row j} 1 / v_c with second-order and power cones (convex in v
itself, no exponential cone); :func:`gp_lower_bound` bounds min_y sum_j alpha_j exp(-(P y)_j) over the simplex rows
from below by geometric-programming duality, whatever the point it is evaluated at (the certificate of T^MF).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp

__all__ = ["gp_lower_bound", "inverse_products"]


def inverse_products(P: sp.csr_matrix, v: cp.Variable, s: cp.Variable, scale: float) -> list:
    """Constraints s_j >= prod_{c in row j of P} 1 / v_c / scale (0/1 rows), convex in v > 0, without exponential
    cones: 1 / (scale v_a) for one agent (inv_pos), and for two agents u^2 <= v_a v_b (a rotated second-order
    cone) with s >= u^-2 / scale (a power cone). Measured on rings with K = 10: the exponential-cone form of
    the same program stalled in CLARABEL from N = 3,000 agents (InsufficientProgress at relative gap 8e-5 at
    N = 10,000), this one solves N = 10,000 to gap 3e-9 in 11 s. Larger scopes use one geometric mean each.

    Parameters
    ----------
    P : scipy.sparse matrix, shape (n_terms, n_classes)
        0/1 rows: the classes whose inverse values multiply in each term (one per agent of the factor's scope).
    v : cvxpy.Variable, shape (n_classes,)
        The nonnegative class allocations.
    s : cvxpy.Variable, shape (n_terms,)
        The epigraph variables of the products.
    scale : float
        Unit of s (> 0): the constraints bound prod 1 / v by ``scale`` s, so that s is O(1).

    Returns
    -------
    list of cvxpy.Constraint
        The cones; an auxiliary variable ``sqrt_product`` for the two-agent terms.
    """
    P = sp.csr_matrix(P)
    size = np.diff(P.indptr)
    out = []
    one = np.flatnonzero(size == 1)
    if one.size:
        out.append(cp.inv_pos(v[P.indices[P.indptr[one]]]) / scale <= s[one])
    two = np.flatnonzero(size == 2)
    if two.size:
        a, b = v[P.indices[P.indptr[two]]], v[P.indices[P.indptr[two] + 1]]
        u = cp.Variable(two.size, nonneg=True, name="sqrt_product")
        out += [cp.SOC(a + b, cp.vstack([2 * u, a - b]), axis=0), cp.power(u, -2) / scale <= s[two]]
    for j in np.flatnonzero(size > 2):  # s_j scale prod v >= 1
        cols = P.indices[P.indptr[j]:P.indptr[j + 1]]
        out.append(cp.geo_mean(cp.hstack([v[cols], scale * s[j]])) >= 1)
    return out


def gp_lower_bound(alpha: np.ndarray, delta: np.ndarray, P: sp.csr_matrix, agent_of_class: np.ndarray,
                   multiplicity: np.ndarray) -> float:
    """Lower bound on min_y sum_j alpha_j exp(-(P y)_j) s.t. sum_c m_c exp(y_c) <= 1 per agent, from any delta >= 0.

    Tangents of exp give, with delta_c = (P^T delta)_c, D_i = sum_{c of i} delta_c and the simplex multiplier
    chosen optimally (beta_i = D_i), the geometric-programming dual value
    sum_j delta_j (1 + log(alpha_j / delta_j)) + sum_c delta_c log(m_c D_i / delta_c); the best scaling of delta
    is closed form, giving S exp((A + B - S) / S) with S = sum_j delta_j. Tight at delta_j = alpha_j exp(-(P y*)_j).

    Parameters
    ----------
    alpha : numpy.ndarray, shape (n_terms,)
        Nonnegative weights of the terms.
    delta : numpy.ndarray, shape (n_terms,)
        Any nonnegative dual point; terms where alpha or delta is 0 are dropped. ``alpha * exp(-(P y)_j)`` at a
        near-optimal y makes the bound near-tight.
    P : scipy.sparse matrix, shape (n_terms, n_classes)
        0/1 rows: the classes of each term.
    agent_of_class : numpy.ndarray, shape (n_classes,)
        The agent i of each class (the simplex row it belongs to).
    multiplicity : numpy.ndarray, shape (n_classes,)
        m_c, the number of actions sharing the class's value.

    Returns
    -------
    float
        A lower bound on the minimum (0 when no term is left).
    """
    keep = (delta > 0) & (alpha > 0)
    if not keep.any():
        return 0.0
    d, a = delta[keep], alpha[keep]
    first = float(np.sum(d * (1.0 + np.log(a / d))))
    dc = P[keep].T @ d
    Di = np.bincount(agent_of_class, dc, minlength=int(agent_of_class.max()) + 1)
    pos = dc > 0
    second = float(np.sum(dc[pos] * np.log(multiplicity[pos] * Di[agent_of_class[pos]] / dc[pos])))
    S = float(d.sum())
    return S * float(np.exp((first + second - S) / S))
