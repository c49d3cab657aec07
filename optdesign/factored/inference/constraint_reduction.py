"""Factored Constraint Reduction (FCR): compile t >= max_a sum_e f_e(a_e) into compact constraints.

Given convex cvxpy expressions f_e(b) for every group action (one flat vector ``terms`` laid out
as in :class:`~optdesign.factored.EliminationPlan`), variable elimination introduces one
auxiliary variable u_l(z) per message entry and the constraints

    u_l(z) >= sum_{g in F_l} g(z, k)     for every z and every action k of the eliminated agent,
    t      >= sum of the empty-scope messages,

which replace the prod_i K_i constraints t >= sum_e f_e(a_e) (one per joint action). For fixed
f the least feasible u_l(z) is the max-sum message, so the least feasible t is exactly
max_a sum_e f_e(a_e); with the f_e convex every constraint is "affine >= convex" and the program
stays convex (MF-TaS paper, Vannella et al. 2023; construction as in Guestrin et al.'s factored
LPs). All rows are emitted as ONE sparse linear inequality, so compiling costs O(rows), not a
Python loop over joint actions.

Constraint count (scalar rows): ``sum_l prod_{j in Z_l + i_l} K_j + 1``, i.e. O(N K^{w+1}) for
width w; with pairwise factors and K actions this is (N - 1) K^2 + K + 1 on a line in its
natural order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...errors import InvalidInputError
from .elimination import EliminationPlan

__all__ = ["FactoredMax", "elimination_matrices", "enumerated_max", "factored_max"]


@dataclass(frozen=True)
class FactoredMax:
    """Epigraph variable ``t`` and the ``constraints`` that make ``t >= max_a sum_e f_e(a_e)``."""

    #: the epigraph variable (scalar): minimising it makes it equal to the max
    t: cp.Variable
    #: cvxpy constraints to add to the program (vectorised: a few objects, many scalar rows)
    constraints: list[Any]
    #: scalar rows of ``constraints``
    n_constraints: int
    #: auxiliary variables (message entries; 0 for the enumerated form)
    n_auxiliary: int
    #: width of the elimination order (for the enumerated form, the number of factors)
    width: int


def elimination_matrices(plan: EliminationPlan) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Sparse (C_u, C_f) with the FCR rows written as ``C_u @ u - C_f @ f >= 0``.

    ``u`` stacks every message entry (length ``plan.n_messages_flat``), ``f`` the factor terms
    (length ``plan.table_size``). Row r of step l has +1 at its target message entry and -1
    (moved to the other side) at each input function's entry.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.

    Returns
    -------
    C_u : scipy.sparse.csr_matrix, shape (plan.n_rows, plan.n_messages_flat)
        Message coefficients.
    C_f : scipy.sparse.csr_matrix, shape (plan.n_rows, plan.table_size)
        0/1 factor-term coefficients (the right-hand side is ``C_f @ f``).
    """
    n_tab = plan.table_size
    rows_u, cols_u, vals_u, rows_f, cols_f = [], [], [], [], []
    start = 0
    for step, offset in zip(plan.steps, plan.message_offsets, strict=True):
        k = plan.n_actions[step.variable]
        r = start + np.arange(step.n_rows)
        rows_u.append(r)
        cols_u.append(offset - n_tab + np.arange(step.n_rows) // k)
        vals_u.append(np.ones(step.n_rows))
        for col in step.index.T:
            is_factor = col < n_tab
            rows_f.append(r[is_factor])
            cols_f.append(col[is_factor])
            rows_u.append(r[~is_factor])
            cols_u.append(col[~is_factor] - n_tab)
            vals_u.append(-np.ones(int((~is_factor).sum())))
        start += step.n_rows
    shape_u = (plan.n_rows, plan.n_messages_flat)
    C_u = sp.csr_matrix((np.concatenate(vals_u), (np.concatenate(rows_u), np.concatenate(cols_u))), shape=shape_u)
    rf = np.concatenate(rows_f) if rows_f else np.empty(0, dtype=np.int64)
    cf = np.concatenate(cols_f) if cols_f else np.empty(0, dtype=np.int64)
    C_f = sp.csr_matrix((np.ones(rf.size), (rf, cf)), shape=(plan.n_rows, n_tab))
    return C_u, C_f


def factored_max(terms: cp.Expression, plan: EliminationPlan, *, row_terms: np.ndarray | None = None,
                 name: str = "fcr") -> FactoredMax:
    """FCR constraints making ``t >= max_a sum_e terms[e, a_e]``, tight when ``t`` is minimised.

    ``terms`` is a cvxpy expression of length ``plan.table_size`` (factor e's entries at
    ``plan.factor_offsets[e]:plan.factor_offsets[e+1]``, C order over its scope).

    ``row_terms`` (optional, constants, length ``plan.n_rows``) adds a function of the
    elimination cliques: the max becomes max_a [sum_e terms[e, a_e] + sum_l row_terms[l, row_l(a)]]
    with row_l(a) the row (z, k) of step l that a selects (steps stacked in plan order). These
    terms are exact in FCR too: row (z, k) of step l gets its constant added to the right-hand
    side. Max-sum regrets (:class:`optdesign.factored.MaxSum`) are such a function: they add up
    to the gap Delta(a).

    Parameters
    ----------
    terms : cvxpy.Expression, shape (plan.table_size,)
        f_e(b) for every group action, convex in the program's variables.
    plan : EliminationPlan
        The elimination order (its width sets the size of the constraints).
    row_terms : numpy.ndarray, shape (plan.n_rows,), optional
        Constants added per elimination row (above); finite.
    name : str
        Prefix of the variables' names (``name_messages``, ``name_max``).

    Returns
    -------
    FactoredMax
        ``t``, the constraints, ``n_constraints`` = plan.n_rows + 1 scalar rows, the auxiliary count and width.

    Raises
    ------
    InvalidInputError
        ``terms`` not a vector of length ``plan.table_size``, or ``row_terms`` of the wrong length or not finite.
    """
    if terms.ndim != 1 or terms.shape[0] != plan.table_size:
        raise InvalidInputError(
            f"terms must be a vector of length {plan.table_size} (one entry per group action), got shape {terms.shape}"
        )
    C_u, C_f = elimination_matrices(plan)
    u = cp.Variable(plan.n_messages_flat, name=f"{name}_messages")
    t = cp.Variable(name=f"{name}_max")
    roots = plan.message_offsets[list(plan.roots)] - plan.table_size
    rhs = C_f @ terms
    if row_terms is not None:
        row_terms = np.asarray(row_terms, dtype=float)
        if row_terms.shape != (plan.n_rows,) or not np.all(np.isfinite(row_terms)):
            raise InvalidInputError(f"row_terms must be a finite vector of length {plan.n_rows} (one entry per "
                                    f"elimination row), got shape {row_terms.shape}")
        rhs = rhs + row_terms
    constraints = [C_u @ u >= rhs, t >= cp.sum(u[roots])]
    return FactoredMax(t, constraints, plan.n_rows + 1, plan.n_messages_flat, plan.width)


def enumerated_max(terms: cp.Expression, group_indices: np.ndarray, *, name: str = "enum") -> FactoredMax:
    """The brute-force counterpart of :func:`factored_max`: one row per listed joint action.

    ``group_indices`` is the (M, n_factors) array of flat group-action positions of each joint
    action (``FactorGraph.group_indices``); used to verify FCR and on tiny instances.

    Parameters
    ----------
    terms : cvxpy.Expression, shape (table_size,)
        f_e(b) for every group action, laid out as in :func:`factored_max`.
    group_indices : numpy.ndarray of int, shape (M, n_factors)
        The listed joint actions' group-action positions.
    name : str
        Prefix of the variable's name (``name_max``).

    Returns
    -------
    FactoredMax
        ``t`` and one vectorised constraint of M rows, t >= sum_e terms[e, a_e] for each listed a.
    """
    M, n_f = group_indices.shape
    B = sp.csr_matrix((np.ones(M * n_f), (np.repeat(np.arange(M), n_f), group_indices.ravel())),
                      shape=(M, terms.shape[0]))
    t = cp.Variable(name=f"{name}_max")
    return FactoredMax(t, [B @ terms <= t], M, 0, n_f)
