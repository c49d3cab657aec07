"""Runs in groups: where they come from (``groups=`` or a BlockedDesignResult), and the F tests with fixed group
effects.

The groups of the runs are given with ``groups=`` (X then holds one row per run) or come with a BlockedDesignResult
(its ``rows`` index the candidates X, its ``blocks`` or ``groupings`` label the runs). They enter the model in one of
two ways (``block_effects``):

``"random"``
    y = X beta + sum_l Z_l gamma_l + eps with gamma_l ~ N(0, eta_l sigma^2 I): generalised least squares and the
    error strata of :mod:`optdesign.power.strata`.
``"fixed"``
    y = X beta + Z gamma + eps, Z = [Z_1, ..., Z_L] the indicators of the groups of every grouping and gamma unknown
    constants, fitted by ordinary least squares (as R's ``lm(y ~ block + x)``, and the analysis a design of
    :func:`optdesign.blocked_design` with its default fixed block effects is optimised for). With P_Z the
    projection on the span of Z, the information of beta is X^T (I - P_Z) X; with one grouping it is
    sum_b X_b^T (I - 11^T / n_b) X_b, the blocked design's own information. Since Z 1 = 1, the group effects
    absorb the intercept: the constant columns of X are not parameters of this analysis (as the blocked design's
    ``parameters`` leave them out), their test is not reported, and the other columns' information
    M = X~^T (I - P_Z) X~ (X~: X without them) must be nonsingular, else no test is made (a factor constant within
    every group, as a whole-plot factor under fixed whole-plot effects, is aliased with them). The F test of a
    term T has df1 = |T|, df2 = N - rank([X, Z]) = N - rank(Z) - p~, and noncentrality
    beta_T^T (C_TT)^{-1} beta_T / sigma^2 with C = M^{-1}, the inverse information of [X~, Z] restricted to X~'s
    columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..vocabulary import check_option
from .strata import GroupsLike, RunGroups, run_groups
from .terms import ModelTerms

__all__ = ["GROUP_EFFECTS", "FixedAnalysis", "GroupEffects", "GroupedRuns", "fixed_effects_analysis",
           "grouped_runs", "is_grouped_result"]

#: how the runs' groups enter the model: random effects (GLS) or unknown constants (OLS with indicator columns)
GroupEffects = Literal["random", "fixed"]
#: the allowed strings of :data:`GroupEffects`
GROUP_EFFECTS: tuple[GroupEffects, ...] = get_args(GroupEffects)


@dataclass(frozen=True)
class GroupedRuns:
    """The runs' model matrix, their groupings and how the groups enter the model."""

    #: the model matrix of the runs, one row per run (N x p)
    X: np.ndarray
    #: the runs' groupings (their etas are used with random effects only)
    groups: RunGroups
    #: ``"random"`` or ``"fixed"``
    effects: GroupEffects


@dataclass(frozen=True)
class FixedAnalysis:
    """The ordinary least squares analysis of y = X beta + Z gamma + eps with fixed group effects (module doc)."""

    #: p x p: the inverse information M^{-1} on the rows and columns of the estimated columns, NaN on the absorbed
    C: np.ndarray
    #: N - rank([X, Z]), the residual degrees of freedom of every test
    df2: int
    #: the columns of X the group effects absorb (the constant columns: the intercept)
    absorbed: np.ndarray


def is_grouped_result(design: object) -> bool:
    """Whether ``design`` is a BlockedDesignResult (by its fields: this package does not import the exact designs,
    which build on it).

    Parameters
    ----------
    design : object
        A design as :func:`optdesign.design_power` takes it.

    Returns
    -------
    bool
        True when it carries runs in groups.
    """
    return all(hasattr(design, name) for name in ("rows", "block_sizes", "block_effects", "groupings", "blocks"))


def _result_runs(model: ModelTerms, result: Any, effects: GroupEffects | None,
                 eta: float | Sequence[float] | Mapping[str, float] | None) -> tuple[np.ndarray, GroupsLike,
                                                                                    GroupEffects, Any]:
    """(rows, labels, effects, eta) of a BlockedDesignResult: its own effects unless ``block_effects`` is given, and
    with random effects its own etas unless ``eta`` is given."""
    K = model.X.shape[0]
    own = check_option(result.block_effects, "the design's block_effects", GROUP_EFFECTS)
    effects = own if effects is None else effects
    rows = np.asarray(result.rows, dtype=np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= K):
        raise InvalidInputError(f"design's runs name candidates up to {int(rows.max())}, X has {K} rows: give X as "
                                f"the candidates the design was made from")
    labels: GroupsLike = {"block": result.blocks} if result.groupings is None else dict(result.groupings)
    if effects == "random" and eta is None:
        etas = result.extras.get("etas")
        eta = dict(etas) if isinstance(etas, Mapping) else (1.0 if result.eta is None else float(result.eta))
    return rows, labels, effects, eta


def grouped_runs(model: ModelTerms, design: ArrayLike | Any | None, groups: GroupsLike | None,
                 eta: float | Sequence[float] | Mapping[str, float] | None, runs: int | None,
                 block_effects: GroupEffects | None = None) -> GroupedRuns | None:
    """The runs in groups of a design, or None when its runs are independent (no groups).

    Parameters
    ----------
    model : ModelTerms
        The model (its ``X``: the candidates, or the runs with ``groups``).
    design : array_like, BlockedDesignResult or None
        A BlockedDesignResult brings its runs and groups; with ``groups``, None (X holds the runs).
    groups : array_like, sequence of array_like or mapping, optional
        The runs' groups (:func:`optdesign.power.strata.run_groups`).
    eta : float, sequence of float or mapping, optional
        Random effects only: the variance ratios (the result's, else 1, by default).
    runs : int, optional
        Must be None: a design in groups is exact.
    block_effects : {"random", "fixed"}, optional
        How the groups enter the model; by default the result's own, or ``"random"`` with ``groups``.

    Returns
    -------
    GroupedRuns or None
        The runs' model matrix, groupings and effects.

    Raises
    ------
    InvalidInputError
        Groups given with a BlockedDesignResult or with a design of counts, eta or block_effects without groups, an
        unknown block_effects, eta with fixed effects, ``runs`` with groups, a result whose runs are not rows of X,
        and what :func:`optdesign.power.strata.run_groups` refuses.
    """
    effects = None if block_effects is None else check_option(block_effects, "block_effects", GROUP_EFFECTS)
    if is_grouped_result(design):
        if groups is not None:
            raise InvalidInputError("groups: a BlockedDesignResult carries its runs' groups; give them once")
        rows, labels, effects, eta = _result_runs(model, design, effects, eta)
    elif groups is not None:
        if design is not None:
            raise InvalidInputError("groups label the runs in order: give X as the runs' model matrix (one row per "
                                    "run) with design=None, or a BlockedDesignResult as the design")
        rows, labels = np.arange(model.X.shape[0]), groups
        effects = "random" if effects is None else effects
        eta = 1.0 if eta is None and effects == "random" else eta
    else:
        if eta is not None:
            raise InvalidInputError("eta is the variance ratio of random groups: give groups (or a "
                                    "BlockedDesignResult) with it")
        if effects is not None:
            raise InvalidInputError("block_effects says how the runs' groups enter the model: give groups (or a "
                                    "BlockedDesignResult) with it")
        return None
    if runs is not None:
        raise InvalidInputError("runs rounds an approximate design; a design with groups is already exact")
    if effects == "fixed":
        if eta is not None:
            raise InvalidInputError("eta is the variance ratio of random groups; block_effects='fixed' takes none "
                                    "(fixed group effects are unknown constants)")
        eta = 0.0  # not used: fixed effects have no variance
    assert eta is not None
    return GroupedRuns(model.X[rows], run_groups(labels, rows.size, eta), effects)


def _indicators(groups: RunGroups) -> np.ndarray:
    """Z = [Z_1, ..., Z_L]: one column per group of every grouping, 1 on its runs."""
    blocks = [(codes[:, None] == np.arange(int(codes.max()) + 1)[None, :]).astype(float) for codes in groups.codes]
    return np.hstack(blocks)


def fixed_effects_analysis(X_runs: np.ndarray, model: ModelTerms, groups: RunGroups) -> FixedAnalysis:
    """The information of beta with fixed group effects, M = X~^T (I - P_Z) X~, inverted, and the residual df.

    Parameters
    ----------
    X_runs : numpy.ndarray, shape (N, p)
        The model matrix of the runs.
    model : ModelTerms
        The model (its intercept is absorbed by the group effects).
    groups : RunGroups
        The runs' groupings.

    Returns
    -------
    FixedAnalysis
        C = M^{-1} (NaN on the absorbed columns), df2 = N - rank([X, Z]) and the absorbed columns.

    Raises
    ------
    InvalidInputError
        X of the intercept alone, an M that is singular (a combination of columns constant within every group, or
        vanishing at every run), or no residual degrees of freedom (N <= rank([X, Z])).
    """
    N, p = X_runs.shape
    absorbed = model.intercept
    keep = np.setdiff1d(np.arange(p), absorbed)
    if keep.size == 0:
        raise InvalidInputError("X holds only the intercept, which fixed group effects absorb: no term is left to "
                                "test")
    U, s, _ = np.linalg.svd(_indicators(groups), full_matrices=False)
    rank = int(np.sum(s > s[0] * max(U.shape) * np.finfo(float).eps))
    Q = U[:, :rank]
    R = X_runs[:, keep] - Q @ (Q.T @ X_runs[:, keep])  # (I - P_Z) X~
    M = R.T @ R
    w, V = np.linalg.eigh((M + M.T) / 2)
    top = max(float(w.max()), 0.0)
    if top == 0.0 or w.min() <= top * M.shape[0] * 1e3 * np.finfo(float).eps:
        null = V[:, 0]
        aliased = [model.columns[keep[j]] for j in np.flatnonzero(np.abs(null) > 1e-8 * np.abs(null).max())]
        raise InvalidInputError(f"with fixed group effects the information X^T (I - P_Z) X is singular: a "
                                f"combination of {', '.join(aliased)} is constant within every group of "
                                f"{', '.join(groups.names)} (aliased with the group effects) or vanishes at every "
                                "run; analyse the groups as random (block_effects='random') or add runs that "
                                "separate them")
    df2 = N - rank - keep.size
    if df2 <= 0:
        raise InvalidInputError(f"with fixed group effects the {N} runs leave N - rank([X, Z]) = {N} - {rank} - "
                                f"{keep.size} = {df2} degrees of freedom for the error: the F tests need at least "
                                "one; add runs, or use fewer groups")
    C = np.full((p, p), np.nan)
    inverse = (V / w) @ V.T
    C[np.ix_(keep, keep)] = (inverse + inverse.T) / 2
    return FixedAnalysis(C, int(df2), absorbed)
