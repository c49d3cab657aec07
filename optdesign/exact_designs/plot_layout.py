"""The candidates of designs with hard-to-change factors: every combination of the settings of each kind of factor.

Kinds k = 0 .. m - 1 (whole-plot, sub-plot and sub-sub-plot factors; or row, column and run factors) have K_k settings
each (a full factorial of levels, or a table). The candidate with settings (a_0, ..., a_{m-1}) is row
sum_k a_k stride_k of the model matrix X of the formula over the product of the settings (mixed radix,
stride_k = K_{k+1} ... K_{m-1}; :func:`optdesign.candidates` on that table). Grouping l of a design ties kind l: the
runs of one group of grouping l share a_l. The kinds after the groupings' are free: set run by run, the
``free`` = K_L ... K_{m-1} candidates that share a run's tied settings are contiguous.

Designs singular whatever the settings are refused with their reason: fewer runs than parameters, or, for a set T of
tied kinds, fewer distinct combinations of the groups of T than the rank of the columns of X that depend on the kinds
of T alone (the runs' rows restricted to those columns take one value per combination).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidInputError
from ..validation import check_array_size
from .group_structure import GroupStructure

__all__ = ["Layout", "check_estimable", "factor_region", "product_candidates", "random_start"]

#: a column of X depends only on some kinds when it varies by at most this fraction of X's scale over the others
TIED_RTOL = 1e-12


@dataclass(frozen=True)
class Layout:
    """The settings per kind of factor (the radices of the candidates' indices) and how many kinds are tied."""

    #: K_k, the settings of each kind, tied kinds first
    radices: tuple[int, ...]
    #: L, the tied kinds (one per grouping)
    tied: int

    @property
    def strides(self) -> tuple[int, ...]:
        """stride_k = K_{k+1} ... K_{m-1}: candidate sum_k a_k stride_k has settings (a_0, ..., a_{m-1})."""
        return tuple(int(np.prod(self.radices[k + 1:], dtype=np.int64)) for k in range(len(self.radices)))

    @property
    def free(self) -> int:
        """The candidates that share the tied settings of a run (contiguous): K_L ... K_{m-1}."""
        return int(np.prod(self.radices[self.tied:], dtype=np.int64))

    def setting(self, codes: np.ndarray, kind: int) -> np.ndarray:
        """a_kind of the candidates ``codes``.

        Parameters
        ----------
        codes : numpy.ndarray of int
            Candidate indices.
        kind : int
            The kind of factor.

        Returns
        -------
        numpy.ndarray of int
            Their settings of that kind.
        """
        out: np.ndarray = (codes // self.strides[kind]) % self.radices[kind]
        return out


def factor_region(factors: Any, name: str, *, optional: bool = False) -> Any:
    """The settings of one kind of factor: a mapping of levels or ranges (full factorial) or a table of settings.

    Parameters
    ----------
    factors : mapping or pandas.DataFrame or None
        Factor names to levels or ranges ``(low, high, points)``, or a table of the allowed settings.
    name : str
        The argument's name in messages.
    optional : bool
        Whether None is allowed: one setting of no factor.

    Returns
    -------
    pandas.DataFrame
        One row per setting.

    Raises
    ------
    InvalidInputError
        Factors of another type, or a table without settings or factors.
    """
    import pandas as pd

    from ..formulas import factor_grid

    if factors is None and optional:
        return pd.DataFrame(index=pd.RangeIndex(1))
    if isinstance(factors, pd.DataFrame):
        if factors.shape[0] == 0 or factors.shape[1] == 0:
            raise InvalidInputError(f"{name} must have at least one factor and one setting, got shape {factors.shape}")
        return factors.reset_index(drop=True)
    if isinstance(factors, Mapping):
        return factor_grid(factors)
    raise InvalidInputError(f"{name} must map factor names to levels or ranges, or be a table of settings (a pandas "
                            f"DataFrame), got {type(factors).__name__}")


def product_candidates(formula: str, regions: Sequence[tuple[str, Any]], design: str,
                       tied: int) -> tuple[np.ndarray, Any, list[str], Layout]:
    """X over every combination of the kinds' settings (module docstring), its settings, columns and radices.

    Parameters
    ----------
    formula : str
        The model over all factors.
    regions : sequence of (str, pandas.DataFrame)
        Each kind's label (``"whole-plot"``, ``"row"``, ...) and settings, tied kinds first.
    design : str
        The design's name in messages (``"split-plot"``).
    tied : int
        The kinds tied by the groupings (the first ones).

    Returns
    -------
    tuple
        X (K x p), the settings of every candidate (a table), the model's columns, and the :class:`Layout`.

    Raises
    ------
    InvalidInputError
        A factor of two kinds, a factor the formula leaves out, and what :func:`optdesign.candidates` refuses.
    """
    import pandas as pd
    from formulaic import Formula

    from ..formulas import candidates

    names = [str(c) for _, region in regions for c in region.columns]
    shared = sorted({n for n in names if names.count(n) > 1})
    if shared:
        both = [label for label, region in regions if shared[0] in {str(c) for c in region.columns}]
        raise InvalidInputError(f"factors {', '.join(shared)} are both {both[0]} and {both[1]} factors")
    radices = tuple(len(region) for _, region in regions)
    total = int(np.prod(radices, dtype=np.int64))
    check_array_size(float(total) * len(names), f"the {design} candidates", instead="use fewer settings")
    index = np.indices(radices).reshape(len(radices), -1)
    table = pd.concat([region.iloc[idx].reset_index(drop=True) for (_, region), idx in zip(regions, index,
                                                                                             strict=True)], axis=1)
    X, points, columns = candidates(formula, table)  # refuses bad formulas, names that are not factors
    used = set(Formula(formula).required_variables)
    for label, region in regions:
        missing = [str(f) for f in region.columns if f not in used]
        if missing:
            raise InvalidInputError(f"the {label} factor(s) {', '.join(missing)} do not appear in the formula "
                                    f"{formula!r}: every factor of a {design} design must be in the model")
    return X, points, columns, Layout(radices, tied)


def _tied_columns(X: np.ndarray, layout: Layout, kinds: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the columns of X that depend only on the settings of ``kinds``, X on one candidate per
    combination of those settings)."""
    p = X.shape[1]
    rest = [k for k in range(len(layout.radices)) if k not in kinds]
    cube = np.moveaxis(X.reshape(*layout.radices, p), list(kinds) + rest, list(range(len(layout.radices))))
    flat = cube.reshape(int(np.prod([layout.radices[k] for k in kinds])), -1, p)
    spread = np.max(np.ptp(flat, axis=1), axis=0)
    cols = np.flatnonzero(spread <= TIED_RTOL * float(np.max(np.abs(X))))
    return cols, flat[:, 0, :]


def check_estimable(X: np.ndarray, layout: Layout, structure: GroupStructure, labels: Sequence[str],
                    units: Sequence[str], columns: Sequence[str]) -> None:
    """Refuse groupings that leave the information singular for every design, saying which parameters (module
    docstring).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, p)
        The candidates.
    layout : Layout
        Their settings per kind.
    structure : GroupStructure
        The runs' groups, grouping l tying kind l.
    labels : sequence of str
        The tied kinds' labels (``"whole-plot"``).
    units : sequence of str
        The groups of each grouping, plural (``"whole plots"``).
    columns : sequence of str
        The model's columns.

    Raises
    ------
    InvalidInputError
        Fewer runs than parameters, or too few groups (or combinations of groups) for the parameters of their kinds.
    """
    N, p = structure.n_runs, X.shape[1]
    if N < p:
        raise InvalidInputError(f"the information X^T V^{{-1}} X of the p = {p} parameters is singular for every "
                                f"design of N = {N} < {p} runs")
    L = structure.members.shape[1]
    for size in range(1, L + 1):
        for kinds in itertools.combinations(range(L), size):
            cols, values = _tied_columns(X, layout, kinds)
            rank = int(np.linalg.matrix_rank(values[:, cols])) if cols.size else 0
            count = np.unique(structure.members[:, list(kinds)], axis=0).shape[0]
            if count < rank:
                names = ", ".join(columns[c] for c in cols)
                what = " and ".join(labels[k] for k in kinds)
                alone = [k for k in kinds if np.unique(structure.members[:, k]).size == count]
                unit = units[alone[-1]] if alone else "cells (" + " x ".join(units[k] for k in kinds) + ")"
                raise InvalidInputError(f"the information is singular for every design: the {rank} {what} "
                                        f"parameters ({names}) need at least {rank} {unit}, got {count}")


def random_start(rng: np.random.Generator, layout: Layout, structure: GroupStructure) -> np.ndarray:
    """A random start: each grouping's settings spread evenly over its groups (each used once before any twice), the
    free settings uniform.

    Parameters
    ----------
    rng : numpy.random.Generator
        The random numbers.
    layout : Layout
        The candidates' settings per kind.
    structure : GroupStructure
        The runs' groups.

    Returns
    -------
    numpy.ndarray of int
        The candidate of every run.
    """
    N = structure.n_runs
    codes = np.zeros(N, dtype=np.int64)
    for level in range(layout.tied):
        groups, local = np.unique(structure.members[:, level], return_inverse=True)
        levels = rng.permutation(np.resize(rng.permutation(layout.radices[level]), groups.size))
        codes += levels[local] * layout.strides[level]
    return codes + rng.integers(layout.free, size=N)
