"""The arrays of the exchange of grouped designs: the plan a problem fixes for all its starts, the state of one start.

The compiled search (:mod:`optdesign.exact_designs.block_kernels`, :mod:`optdesign.exact_designs.block_passes`) reads
and fills them; ``optdesign.exact_designs.block_search.GroupSearch`` sets them up: the plan once per problem
(:func:`make_plan`: the candidates, the groups of every run and Gamma, the criterion, the layout, the groups that may
take another setting and their C, the pairs of runs that may be exchanged), the state once per start (:func:`new_state`,
zeros until the first refresh). Integers are int64 and every array C-contiguous, so the compiled code has one signature.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .block_information import SWAP_1, SWAP_2
from .criteria import MIN_DET_RATIO, ExactCriterion, ExactLinearCriterion
from .exchange import MIN_GAIN
from .group_structure import GroupStructure
from .plot_layout import Layout

__all__ = ["MAX_PASSES", "MAX_SWAP_PAIRS", "SINGULAR_RTOL", "Plan", "State", "make_plan", "new_state"]

#: passes over the design (groups, runs, exchanges) before the search stops, local optimum or not
MAX_PASSES = 500
#: exchanges between groups are priced when the runs make at most this many pairs (N(N - 1) / 2)
MAX_SWAP_PAIRS = 200_000
#: M counts as singular when its smallest Cholesky pivot squared falls below this fraction of its largest diagonal
SINGULAR_RTOL = 1e-12


class Plan(NamedTuple):
    """What the problem fixes for every start (read by the compiled search)."""

    X: np.ndarray  # the candidates, K x p
    members: np.ndarray  # N x L: the group of every run in each grouping
    gamma: np.ndarray  # G x G: V^{-1} = I - Z Gamma Z^T
    gammas: np.ndarray  # z_r^T Gamma z_r of every run
    B: np.ndarray  # the linear criterion's matrix (zeros for D)
    linear: bool  # A or I (tr(B M^{-1})), else D (-log det M)
    free: int  # candidates sharing a run's tied settings (contiguous); 0 without a layout
    replicates: bool  # without a layout: may runs share a candidate
    reset_starts: np.ndarray  # groups that may take another setting: their runs reset_runs[starts[t]:starts[t+1]]
    reset_runs: np.ndarray
    changes: np.ndarray  # the C of group t (3n x 3n), the leading block of changes[t] (rank x rank)
    rank: int  # the largest 3n, at least 3
    strides: np.ndarray  # the stride and radix of the kind group t ties
    radices: np.ndarray
    first: np.ndarray  # the pairs of runs in different groups that may be exchanged (none: no exchanges)
    second: np.ndarray
    shrink: np.ndarray  # c_g of one grouping (exchanges)
    group: np.ndarray  # the group of every run in the first grouping
    swaps: np.ndarray  # SWAP_1, SWAP_2
    limits: np.ndarray  # MIN_GAIN, MIN_DET_RATIO, SINGULAR_RTOL
    max_passes: int
    width: int  # the most moves priced at once: candidates, pairs or settings


class State(NamedTuple):
    """One start's runs and what the search keeps of them (filled by the compiled refresh)."""

    rows: np.ndarray
    M: np.ndarray
    L: np.ndarray  # the Cholesky factor of M
    Minv: np.ndarray
    V: np.ndarray  # X M^{-1}
    h: np.ndarray  # x_k^T M^{-1} x_k
    S: np.ndarray  # the group sums
    GS: np.ndarray  # Gamma S
    A: np.ndarray  # a_r = S^T Gamma z_r of every run
    VB: np.ndarray  # V B (linear criteria; empty for D)
    b: np.ndarray  # v_k^T B v_k (linear criteria; empty for D)
    scalars: np.ndarray  # the loss, the moves made


#: the arrays of the groups that may take another setting (:class:`Plan`)
Resets = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _resets(structure: GroupStructure, layout: Layout | None) -> tuple[dict[tuple[int, int], int], Resets]:
    """({(grouping, group): its index t}, (reset_starts, reset_runs, changes, strides, radices)) of the groups that
    may take another setting, grouping after grouping."""
    index: dict[tuple[int, int], int] = {}
    runs: list[np.ndarray] = []
    changes: list[np.ndarray] = []
    strides: list[int] = []
    radices: list[int] = []
    for level in range(0 if layout is None else layout.tied):
        assert layout is not None
        for g in structure.groups(level).tolist():
            index[level, g] = len(runs)
            runs.append(np.flatnonzero(structure.members[:, level] == g))
            changes.append(structure.change_matrix(runs[-1]))
            strides.append(layout.strides[level])
            radices.append(layout.radices[level])
    rank = max([3, *(3 * a.size for a in runs)])
    padded = np.zeros((len(changes), rank, rank))
    for t, C in enumerate(changes):
        padded[t, :C.shape[0], :C.shape[0]] = C
    starts = np.concatenate([[0], np.cumsum([a.size for a in runs], dtype=np.int64)]).astype(np.int64)
    return index, (starts, np.concatenate([np.zeros(0, dtype=np.int64), *runs]).astype(np.int64), padded,
                   np.array(strides, dtype=np.int64), np.array(radices, dtype=np.int64))


def make_plan(X: np.ndarray, structure: GroupStructure, criterion: ExactCriterion, replicates: bool,
              layout: Layout | None) -> tuple[Plan, dict[tuple[int, int], int]]:
    """The plan of a problem, and the index t of each group (grouping, group) that may take another setting.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, p)
        The candidates.
    structure : GroupStructure
        The runs' groups and Gamma.
    criterion : ExactCriterion
        D, or a linear criterion (its B).
    replicates : bool
        Without a layout: whether runs may share a candidate.
    layout : Layout or None
        The candidates' settings per kind of factor (designs with hard-to-change factors).

    Returns
    -------
    tuple of (Plan, dict)
        The plan, and {(grouping, group): t}.
    """
    members = np.ascontiguousarray(structure.members, dtype=np.int64)
    gamma = np.ascontiguousarray(structure.gamma, dtype=float)
    N, p = members.shape[0], X.shape[1]
    B = criterion.B if isinstance(criterion, ExactLinearCriterion) else None
    group = members[:, 0].copy()
    swappable = layout is None and gamma.shape[0] > 1 and N * (N - 1) <= 2 * MAX_SWAP_PAIRS
    first, second = np.triu_indices(N if swappable else 0, 1)
    apart = group[first] != group[second]
    index, (reset_starts, reset_runs, changes, strides, radices) = _resets(structure, layout)
    first, second = first[apart].astype(np.int64), second[apart].astype(np.int64)
    plan = Plan(X=np.ascontiguousarray(X, dtype=float), members=members, gamma=gamma,
                gammas=gamma[members[:, :, None], members[:, None, :]].sum(axis=(1, 2)),
                B=np.zeros((p, p)) if B is None else np.ascontiguousarray(B, dtype=float), linear=B is not None,
                free=0 if layout is None else layout.free, replicates=bool(replicates), reset_starts=reset_starts,
                reset_runs=reset_runs, changes=changes, rank=changes.shape[1], strides=strides, radices=radices,
                first=first, second=second, shrink=np.diag(gamma).copy(), group=group,
                swaps=np.stack([SWAP_1, SWAP_2]), limits=np.array([MIN_GAIN, MIN_DET_RATIO, SINGULAR_RTOL]),
                max_passes=MAX_PASSES, width=max(X.shape[0], first.size, int(radices.max(initial=0))))
    return plan, index


def new_state(plan: Plan, rows: np.ndarray) -> State:
    """The state of the runs ``rows`` of a problem, zeros but for the runs (the compiled refresh fills it).

    Parameters
    ----------
    plan : Plan
        The problem's plan.
    rows : numpy.ndarray of int
        The candidate of every run.

    Returns
    -------
    State
        Its arrays.
    """
    K, p = plan.X.shape
    G, N = plan.gamma.shape[0], rows.size
    k = K if plan.linear else 0
    return State(rows.astype(np.int64).copy(), np.zeros((p, p)), np.zeros((p, p)), np.zeros((p, p)),
                 np.zeros((K, p)), np.zeros(K), np.zeros((G, p)), np.zeros((G, p)), np.zeros((N, p)),
                 np.zeros((k, p)), np.zeros(k), np.zeros(2))
