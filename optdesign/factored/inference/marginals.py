"""The marginal polytope of a factor graph as a polynomial-size linear system (junction tree).

The cliques C_l = Z_l + {i_l} of an elimination order form a clique tree (running intersection
holds: message l is consumed by exactly one later step, whose clique contains Z_l). Distributions
mu_l >= 0 on the cliques that agree on every separator Z_l and sum to one at each root describe
exactly the marginals of the global distributions on the triangulated graph (a chordal graph's
local polytope equals its marginal polytope); every factor scope lies in the clique of the step
that consumes it, so projecting gives exactly the factors' marginal polytope bar-Lambda of the
MF-TaS paper. Size: one variable per step row, O(N K^{w+1}), instead of prod_i K_i.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...errors import InvalidInputError
from ...validation import as_count, as_vector, check_enumerable
from .elimination import EliminationPlan

__all__ = ["consistent_clique_weights", "joint_action_probabilities", "marginal_maps", "marginal_polytope",
           "sample_joint_actions"]

# joint_action_probabilities lists at most this many joint actions by default
MAX_ENUMERATED = 20_000


def marginal_maps(plan: EliminationPlan) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """Sparse (F, C, R) over the stacked clique variables mu (length ``plan.n_rows``).

    ``F @ mu`` is the flat vector of factor marginals wbar; ``C @ mu == 0`` the separator
    consistency rows; ``R @ mu == 1`` one row per root (connected component).

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order; its steps' rows are the clique entries.

    Returns
    -------
    F : scipy.sparse.csr_matrix, shape (plan.table_size, plan.n_rows)
        Clique distributions to factor marginals.
    C : scipy.sparse.csr_matrix, shape (consumed message entries, plan.n_rows)
        Separator consistency (each message entry seen from its own clique and from the clique consuming it).
    R : scipy.sparse.csr_matrix, shape (len(plan.roots), plan.n_rows)
        Total mass of every root clique.
    """
    n_tab = plan.table_size
    starts = np.concatenate([[0], np.cumsum([s.n_rows for s in plan.steps])])
    # a message entry's marginal as seen from its own clique: sum of its rows grouped by z
    own_rows, own_cols = [], []
    for n, step in enumerate(plan.steps):
        k = plan.n_actions[step.variable]
        r = np.arange(step.n_rows)
        own_rows.append(plan.message_offsets[n] - n_tab + r // k)
        own_cols.append(starts[n] + r)
    own = sp.csr_matrix((np.ones(plan.n_rows), (np.concatenate(own_rows), np.concatenate(own_cols))),
                        shape=(plan.n_messages_flat, plan.n_rows))
    f_rows, f_cols, c_rows, c_cols = [], [], [], []
    for n, step in enumerate(plan.steps):
        cols = starts[n] + np.arange(step.n_rows)
        for col in step.index.T:
            is_factor = col < n_tab
            f_rows.append(col[is_factor])
            f_cols.append(cols[is_factor])
            c_rows.append(col[~is_factor] - n_tab)
            c_cols.append(cols[~is_factor])
    F = sp.csr_matrix((np.ones(sum(a.size for a in f_rows)), (np.concatenate(f_rows), np.concatenate(f_cols))),
                      shape=(n_tab, plan.n_rows))
    seen = sp.csr_matrix((np.ones(sum(a.size for a in c_rows)), (np.concatenate(c_rows), np.concatenate(c_cols))),
                         shape=(plan.n_messages_flat, plan.n_rows))
    consumed = np.setdiff1d(np.arange(plan.n_messages_flat),
                            plan.message_offsets[list(plan.roots)] - n_tab)
    C = (seen - own)[consumed]
    root_of = np.concatenate([[r] * (starts[r + 1] - starts[r]) for r in plan.roots])
    root_cols = np.concatenate([np.arange(starts[r], starts[r + 1]) for r in plan.roots])
    R = sp.csr_matrix((np.ones(root_cols.size), (np.searchsorted(plan.roots, root_of), root_cols)),
                      shape=(len(plan.roots), plan.n_rows))
    return F, C.tocsr(), R


def marginal_polytope(plan: EliminationPlan, *, name: str = "mu") -> tuple[cp.Variable, cp.Expression, list]:
    """Clique variables mu, the factor marginals wbar (affine in mu), and the constraints.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order; its width sets the size, O(N K^{w+1}) variables.
    name : str
        The cvxpy name of mu.

    Returns
    -------
    mu : cvxpy.Variable, shape (plan.n_rows,)
        Nonnegative clique distributions, stacked step by step.
    wbar : cvxpy.Expression, shape (plan.table_size,)
        The factor marginals ``F @ mu`` (flat, laid out like ``FactorGraph.means``).
    constraints : list
        ``R @ mu == 1`` and, when there are separators, ``C @ mu == 0`` (:func:`marginal_maps`).
    """
    F, C, R = marginal_maps(plan)
    mu = cp.Variable(plan.n_rows, nonneg=True, name=name)
    constraints = [R @ mu == 1]
    if C.shape[0]:
        constraints.append(C @ mu == 0)
    return mu, F @ mu, constraints


def consistent_clique_weights(plan: EliminationPlan, lam: np.ndarray, root_mass: float) -> np.ndarray:
    """Nonnegative weights on the elimination rows, exactly dual feasible for FCR: C_u^T lambda = root_mass at roots.

    Every step's rows sharing a separator state z must carry the weight that the later steps put on message
    entry (l, z) (each message is consumed by exactly one later step), and every root step carries
    ``root_mass``. Steps are repaired from the roots down, rescaling the solver's weights (uniform where they
    vanish).

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order.
    lam : numpy.ndarray, shape (plan.n_rows,)
        Approximate weights (e.g. a solver's dual values of the FCR rows); negative entries count as 0.
    root_mass : float
        The total weight of every root clique (1 for probability tables).

    Returns
    -------
    numpy.ndarray, shape (plan.n_rows,)
        Nonnegative, exactly consistent clique weights.
    """
    n_tab = plan.table_size
    out = np.zeros(plan.n_rows)
    starts = np.concatenate([[0], np.cumsum([s.n_rows for s in plan.steps])]).astype(np.int64)
    demand = np.zeros(plan.n_messages_flat)
    roots = set(plan.roots)
    for step_no in range(len(plan.steps) - 1, -1, -1):
        step = plan.steps[step_no]
        k = plan.n_actions[step.variable]
        rows = np.clip(lam[starts[step_no]:starts[step_no + 1]], 0.0, None).reshape(-1, k)
        if step_no in roots:
            target = np.array([root_mass])
        else:
            first = plan.message_offsets[step_no] - n_tab
            target = demand[first:first + step.message_size]
        have = rows.sum(axis=1)
        flat = np.where(have[:, None] > 0, rows * (target / np.where(have > 0, have, 1.0))[:, None],
                        (target / k)[:, None])
        out[starts[step_no]:starts[step_no + 1]] = flat.ravel()
        for col in step.index.T:
            is_msg = col >= n_tab
            np.add.at(demand, col[is_msg] - n_tab, flat.ravel()[is_msg])
    return out


def sample_joint_actions(plan: EliminationPlan, clique_weights: np.ndarray, n: int,
                         rng: np.random.Generator) -> np.ndarray:
    """``n`` x N joint actions drawn from the distribution whose clique tables are ``clique_weights``.

    ``clique_weights`` must be consistent (:func:`consistent_clique_weights`). Ancestral sampling down the clique
    tree: steps from the roots down, each draws its eliminated agent from its clique table conditioned on its
    separator, whose agents are eliminated later and so are already drawn. O(n N K) work.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order the weights are laid out in.
    clique_weights : array_like, shape (plan.n_rows,)
        Nonnegative consistent clique tables; a table row with zero mass draws uniformly.
    n : int
        Number of joint actions drawn, at least 0.
    rng : numpy.random.Generator
        The random stream (one ``rng.random(n)`` per step).

    Returns
    -------
    numpy.ndarray of int64, shape (n, N)
        The joint actions, one per row.

    Raises
    ------
    InvalidInputError
        ``plan`` not an EliminationPlan, ``n`` not a nonnegative integer, weights of the wrong length, not finite or
        negative, or ``rng`` not a numpy Generator.
    """
    _check_plan(plan)
    n = as_count(n, "n", minimum=0)
    if not isinstance(rng, np.random.Generator):
        raise InvalidInputError("rng must be a numpy.random.Generator")
    cdfs = _conditional_cdfs(plan, clique_weights)
    out = np.zeros((n, plan.n_agents), dtype=np.int64)
    for step_no in range(len(plan.steps) - 1, -1, -1):
        step, cdf = plan.steps[step_no], cdfs[step_no]
        z = np.ravel_multi_index(tuple(out[:, j] for j in step.scope), step.shape) if step.scope else np.zeros(n, int)
        u = rng.random(n)
        out[:, step.variable] = np.minimum((u[:, None] >= cdf[z]).sum(axis=1), cdf.shape[1] - 1)
    return out


def joint_action_probabilities(plan: EliminationPlan, clique_weights: np.ndarray, *,
                               max_joint_actions: int = MAX_ENUMERATED) -> np.ndarray:
    """P(a) = prod over steps of P(a_i | a_Z) for every joint action a: the distribution
    :func:`sample_joint_actions` draws from, so that the counts of n draws are Multinomial(n, P).

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order the weights are laid out in.
    clique_weights : array_like, shape (plan.n_rows,)
        Nonnegative consistent clique tables (as for :func:`sample_joint_actions`).
    max_joint_actions : int
        Largest number of joint actions listed.

    Returns
    -------
    numpy.ndarray, shape (prod_i K_i,)
        Entry r is P of the joint action of code r (``np.ravel_multi_index(a, plan.n_actions)``); sums to one.

    Raises
    ------
    InvalidInputError
        ``plan`` not an EliminationPlan, weights of the wrong length, not finite or negative.
    InstanceTooLargeError
        More than ``max_joint_actions`` joint actions.
    """
    _check_plan(plan)
    check_enumerable(int(np.prod(plan.n_actions, dtype=float)), max_joint_actions, what="the law of every joint action",
                     instead="sample_joint_actions")
    cdfs = _conditional_cdfs(plan, clique_weights)
    actions = np.indices(plan.n_actions).reshape(plan.n_agents, -1)  # column r: the joint action of code r
    p = np.ones(actions.shape[1])
    for step, cdf in zip(plan.steps, cdfs, strict=True):
        conditional = np.diff(cdf, axis=1, prepend=0.0)
        z = np.ravel_multi_index(tuple(actions[j] for j in step.scope), step.shape) if step.scope else 0
        p *= conditional[z, actions[step.variable]]
    law: np.ndarray = p / p.sum()
    return law


def _check_plan(plan: object) -> None:
    """InvalidInputError unless ``plan`` is an EliminationPlan."""
    if not isinstance(plan, EliminationPlan):
        raise InvalidInputError(f"plan must be an EliminationPlan (FactorGraph.plan()), got {type(plan).__name__}")


def _conditional_cdfs(plan: EliminationPlan, clique_weights: np.ndarray) -> list[np.ndarray]:
    """Per step, the CDF of its eliminated agent given each separator state (rows of its clique table normalised,
    uniform where a row has no mass); checks the weights."""
    clique_weights = as_vector(clique_weights, "clique_weights", length=plan.n_rows)
    if np.any(clique_weights < 0):
        raise InvalidInputError("clique_weights must be nonnegative (consistent_clique_weights gives such tables)")
    starts = np.concatenate([[0], np.cumsum([s.n_rows for s in plan.steps])]).astype(np.int64)
    cdfs = []
    for step_no, step in enumerate(plan.steps):
        k = plan.n_actions[step.variable]
        cdf = np.cumsum(clique_weights[starts[step_no]:starts[step_no + 1]].reshape(-1, k), axis=1)
        total = cdf[:, -1:]
        cdfs.append(np.where(total > 0, cdf / np.where(total > 0, total, 1.0), (np.arange(1, k + 1) / k)[None, :]))
    return cdfs
