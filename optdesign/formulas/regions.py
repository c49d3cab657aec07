"""Design regions as tables of factor settings: full factorial grids, cubes and simplex lattices (mixtures).

Each function returns a pandas DataFrame with one column per factor and one row per candidate point; a model
formula turns it into the candidates' model matrix (:func:`optdesign.formulas.candidates`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InvalidInputError
from ..validation import as_count
from ..validation.sizes import check_array_size

__all__ = ["cube", "factor_grid", "simplex_lattice"]

#: a factor given as (low, high, number of grid points)
FactorRange = tuple[float, float, int]


def _names(names: Sequence[str], what: str) -> list[str]:
    """Factor names: distinct Python identifiers (a formula names them as they are)."""
    if isinstance(names, str) or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise InvalidInputError(f"{what} must be a list of factor names that are Python identifiers, got {names!r}")
    names = list(names)
    if not names or len(set(names)) != len(names):
        raise InvalidInputError(f"{what} must name at least one factor, each once, got {names!r}")
    return names


def factor_levels(name: str, spec: Any) -> np.ndarray:
    """The levels of one factor: a list of levels (numbers or labels) or a range (low, high, number of points)."""
    if isinstance(spec, tuple):
        if len(spec) != 3:
            raise InvalidInputError(f"factor {name}: a range is (low, high, number of points), got {spec!r}")
        low, high, count = spec
        count = as_count(count, f"factor {name}'s number of points", minimum=2)
        if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                   and math.isfinite(v) for v in (low, high)) or not low < high:
            raise InvalidInputError(f"factor {name}: a range needs finite low < high, got ({low!r}, {high!r})")
        return np.linspace(float(low), float(high), count)
    levels = np.asarray(spec) if isinstance(spec, (list, np.ndarray, pd.Series)) else None
    if levels is None or levels.ndim != 1 or levels.size == 0:
        raise InvalidInputError(f"factor {name}: give a list of levels or a range (low, high, number of points), "
                                f"got {spec!r}")
    if levels.dtype.kind in "biuf":
        levels = levels.astype(float)
        if not np.all(np.isfinite(levels)):
            raise InvalidInputError(f"factor {name}: levels contain NaN or infinite values")
    if len(pd.unique(levels)) != levels.size:
        raise InvalidInputError(f"factor {name}: levels must be distinct, got {spec!r}")
    return levels


def factor_grid(factors: Mapping[str, Sequence[Any] | FactorRange]) -> pd.DataFrame:
    """The full factorial grid of the factors' levels, the last factor varying fastest.

    Parameters
    ----------
    factors : mapping
        Factor name (a Python identifier) to its levels: a list of numbers or labels (labels make a categorical
        factor), or a tuple ``(low, high, points)`` for ``points`` equally spaced levels from low to high.

    Returns
    -------
    pandas.DataFrame
        One column per factor, one row per combination of levels (prod_f levels_f rows).

    Raises
    ------
    InvalidInputError
        Names that are not distinct identifiers, a factor that is neither a list of distinct levels nor a valid
        range.

    Examples
    --------
    >>> from optdesign.formulas import factor_grid
    >>> factor_grid({"x1": (-1, 1, 3), "x2": ["a", "b"]}).shape
    (6, 2)
    """
    if not isinstance(factors, Mapping):
        raise InvalidInputError(f"factors must map factor names to levels or ranges, got {type(factors).__name__}")
    names = _names(list(factors), "factors")
    levels = [factor_levels(name, factors[name]) for name in names]
    rows = math.prod(level.size for level in levels)
    check_array_size(rows * len(names), "the factor grid", instead="use fewer levels or factors")
    grid = itertools.product(*(level.tolist() for level in levels))
    return pd.DataFrame(list(grid), columns=names)


def cube(names: Sequence[str], levels: int = 3, *, low: float = -1.0, high: float = 1.0) -> pd.DataFrame:
    """The grid of ``levels`` equally spaced levels per factor on the cube [low, high]^k (a 3^k factorial).

    Parameters
    ----------
    names : sequence of str
        The k factor names (Python identifiers).
    levels : int
        Levels per factor, at least 2.
    low : float
        Lowest level of every factor.
    high : float
        Highest level of every factor.

    Returns
    -------
    pandas.DataFrame
        levels^k rows, one column per factor.

    Examples
    --------
    >>> from optdesign.formulas import cube
    >>> cube(["x1", "x2", "x3"]).shape
    (27, 3)
    """
    return factor_grid({name: (low, high, levels) for name in _names(names, "names")})


def simplex_lattice(names: Sequence[str], m: int) -> pd.DataFrame:
    """The {q, m} simplex lattice of mixture designs: proportions in {0, 1/m, ..., 1} summing to one.

    Scheffé (1958); it has C(q + m - 1, m) points for q components. A mixture model has no intercept (the
    components sum to one): write its formula as ``~ 0 + x1 + x2 + x3 + x1:x2 + ...``.

    Parameters
    ----------
    names : sequence of str
        The q >= 2 component names (Python identifiers).
    m : int
        The lattice's degree (denominator of the proportions), at least 1.

    Returns
    -------
    pandas.DataFrame
        C(q + m - 1, m) rows, one column per component.

    Raises
    ------
    InvalidInputError
        Fewer than two components, names that are not distinct identifiers, m not a positive integer.

    Examples
    --------
    >>> from optdesign.formulas import simplex_lattice
    >>> simplex_lattice(["a", "b", "c"], 2)
         a    b    c
    0  1.0  0.0  0.0
    1  0.5  0.5  0.0
    2  0.5  0.0  0.5
    3  0.0  1.0  0.0
    4  0.0  0.5  0.5
    5  0.0  0.0  1.0
    """
    names = _names(names, "names")
    if len(names) < 2:
        raise InvalidInputError(f"a mixture needs at least two components, got {names!r}")
    m = as_count(m, "m")
    q = len(names)
    check_array_size(math.comb(q + m - 1, m) * q, "the simplex lattice", instead="use a smaller m")
    points = [np.bincount(c, minlength=q) / m for c in itertools.combinations_with_replacement(range(q), m)]
    return pd.DataFrame(np.array(points), columns=names)
