"""Exact designs with hard-to-change factors: the search and the report shared by split-plot, split-split-plot and
strip-plot designs.

The candidates are every combination of the settings of each kind of factor
(:mod:`optdesign.exact_designs.plot_layout`), the information the GLS X^T V^{-1} X of the design's groupings, V = I +
sum_l eta_l Z_l Z_l^T (:mod:`optdesign.exact_designs.group_structure`). The search
(:mod:`optdesign.exact_designs.block_search`) gives each group of each grouping its best setting of the kind it ties,
then each run its best free setting, until nothing improves, from ``restarts + 1`` random starts (each grouping's
settings spread evenly over its groups, the free ones uniform).

Certified bounds, the largest kept:

* unblocked: V >= I, so X^T V^{-1} X <= X^T X for the same runs, and every design is an N-run design on the
  candidates, so the approximate optimum on X bounds every design's value from below
  (:mod:`optdesign.exact_designs.bounds`); it ignores the groupings, so it is low when the etas are large;
* over mixtures of groups, one grouping l at a time: V >= I + eta_l Z_l Z_l^T (the other terms are positive
  semidefinite), so M is at most the information of the same runs under grouping l alone, an average over its
  groups of one group's information, the runs of a group sharing one setting of kind l: the equivalence theorem over
  such groups (:mod:`optdesign.exact_designs.block_bounds`) bounds every design's value. For one grouping (split plots)
  it is the bound of the grouping itself.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError

from ..docstrings import shared_doc
from ..errors import InstanceTooLargeError, InvalidInputError, SolverError
from ..runtime.blas import single_threaded_blas
from .block_bounds import combined, group_bound
from .block_information import criterion_values
from .block_result import BlockedDesignResult
from .block_search import GroupSearch, best_of_starts
from .bounds import d_optimum, linear_optimum
from .design import CRITERIA, _moments, search_settings
from .group_structure import GroupStructure
from .plot_layout import Layout, check_estimable, product_candidates, random_start

__all__ = ["Kind", "restricted_design"]

# the parameter descriptions the designs with hard-to-change factors share (substituted by _shared_doc)
_DOC = {
    "moments": """    moments : array_like, optional
        I-criterion only: the region's moment matrix E[x x^T] (p x p); the candidates, uniformly, by default.""",
    "search": """    restarts : int
        Starts after the first.
    time_limit : float, optional
        Seconds after which no new start begins.
    seed : int
        Seed of the random starts.
    tol : float
        Relative gap of the approximate optimum behind the unblocked bound.
    solver : str, optional
        Conic solver of the approximate A/I design (the chain by default).""",
}

_shared_doc = shared_doc(_DOC)


@dataclass(frozen=True)
class Kind:
    """One kind of factor of a design: its settings, and the grouping that ties it (None: free, run by run)."""

    #: ``"whole-plot"``, ``"sub-plot"``, ``"row"``, ...: the factors' name in messages
    label: str
    #: ``"whole_plot"``, ``"row"``, ...: the key of ``extras`` (``<key>_factors``, ``<key>_settings``) and the table's
    #: column of the groups
    key: str
    #: the settings, one row each (:func:`optdesign.exact_designs.plot_layout.factor_region`)
    region: Any
    #: the groups of the grouping that ties this kind, plural (``"whole plots"``); None for the free kinds
    unit: str | None = None


def _unblocked_bound(X: np.ndarray, B: np.ndarray | None, solver: str | None,
                     tol: float) -> tuple[float | None, str]:
    """(the unblocked approximate optimum's certified bound, or None; what it is)."""
    try:
        approx = d_optimum(X, tol) if B is None else linear_optimum(X, B, solver, tol)
    except (SolverError, InstanceTooLargeError) as error:
        return None, f"no certified bound: {error}"
    return approx.lower_bound, "the approximate optimum of the unrestricted design on X (no groups)"


def _grouped_bound(X: np.ndarray, M: np.ndarray, layout: Layout, structure: GroupStructure,
                   B: np.ndarray | None) -> float:
    """The largest bound over mixtures of the groups of one grouping (module docstring)."""
    assert structure.etas is not None
    p = X.shape[1]
    best = 0.0
    for level, eta in enumerate(structure.etas):
        _, local = np.unique(structure.members[:, level], return_inverse=True)
        sizes = np.bincount(local)
        # the candidates with kind ``level`` outermost: one setting of it is a contiguous block
        outer = np.moveaxis(X.reshape(*layout.radices, p), level, 0).reshape(-1, p)
        best = max(best, group_bound(outer, M, sizes, "random", eta, B,
                                     plots=X.shape[0] // layout.radices[level]))
    return best


@_shared_doc
def restricted_design(formula: str, kinds: Sequence[Kind], structure: GroupStructure, criterion: object, *,
                      design: str, moments: ArrayLike | None, restarts: int, time_limit: float | None, seed: int,
                      tol: float, solver: str | None, start: float) -> BlockedDesignResult:
    """The design of ``kinds`` (tied ones first, in the order of the groupings of ``structure``), searched and
    certified (module docstring).

    Parameters
    ----------
    formula : str
        The model over all factors.
    kinds : sequence of Kind
        The kinds of factor, grouping l tying kind l, the free ones last.
    structure : GroupStructure
        The runs' groups and Gamma, with the etas of its groupings.
    criterion : {"D", "A", "I"}
        The criterion.
    design : str
        ``"split-plot"``, ``"split-split-plot"`` or ``"strip-plot"``: the result's ``kind`` and the messages' name.
%(moments)s
%(search)s
    start : float
        ``time.perf_counter()`` when the call began.

    Returns
    -------
    BlockedDesignResult
        The best design found, its D/A/I values and certified bound; ``groupings`` the group of every run in each
        grouping.

    Raises
    ------
    InvalidInputError
        What :func:`optdesign.exact_designs.plot_layout.product_candidates` and
        :func:`~optdesign.exact_designs.plot_layout.check_estimable` refuse, an unknown criterion, bad moments,
        restarts, time limit, seed or tol, no start with a nonsingular information matrix.
    """
    tied = structure.members.shape[1]
    X, points, columns, layout = product_candidates(formula, [(k.label, k.region) for k in kinds], design, tied)
    if not isinstance(criterion, str) or criterion.upper() not in CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    name = criterion.upper()
    check_estimable(X, layout, structure, [k.label for k in kinds[:tied]], [str(k.unit) for k in kinds[:tied]],
                    columns)
    B = _moments(moments, X, name)
    region = B if name == "I" and B is not None else _moments(None, X, "I")
    assert region is not None
    rule, restarts, deadline, rng, tol = search_settings(B, name, restarts, time_limit, seed, tol, start)
    with single_threaded_blas():
        bound, note = _unblocked_bound(X, B, solver, tol)
        try:
            found = best_of_starts(lambda k: random_start(rng, layout, structure),
                                   lambda rows: GroupSearch(X, rows, structure, rule, layout=layout), restarts,
                                   deadline)
        except LinAlgError:
            raise InvalidInputError(f"no start gave a nonsingular {design} information matrix: these groups cannot "
                                    "estimate the model") from None
        M = structure.information(X, found.rows)
        values = criterion_values(M, found.rows.size, region)
        grouped = _grouped_bound(X, M, layout, structure, B)
    bound, extras = combined(bound, note, grouped)
    extras["start_losses"] = found.losses
    groupings: dict[str, np.ndarray] = {}
    for level, kind in enumerate(kinds[:tied]):
        firsts, local = np.unique(structure.members[:, level], return_index=True, return_inverse=True)[1:]
        groupings[kind.key] = local
        extras[f"{kind.key}_settings"] = layout.setting(found.rows[firsts], level)
    for kind in kinds:
        extras[f"{kind.key}_factors"] = [str(c) for c in kind.region.columns]
    assert structure.etas is not None
    if tied > 1:
        extras["etas"] = {kind.key: eta for kind, eta in zip(kinds, structure.etas, strict=False)}
    first = next(iter(groupings.values()))
    return BlockedDesignResult(
        rows=found.rows, block_sizes=np.bincount(first), criterion=name, value=values[name], lower_bound=bound,
        values=values, information=M, parameters=np.arange(X.shape[1]), block_effects="random",
        eta=structure.etas[0], starts=len(found.losses), moves=found.moves, solve_time=time.perf_counter() - start,
        points=points, columns=columns, kind=design, groupings=groupings, extras=extras)
