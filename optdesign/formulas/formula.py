"""Candidate sets from a model formula, the columns of its terms, and designs reported in factor coordinates.

A formula in Wilkinson–Rogers notation (as R's ``lm``; parsed by the ``formulaic`` library) maps each point of a
design region to its row of the model matrix: ``~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**2)`` is the full quadratic
model in two factors (intercept implied; ``~ 0 + ...`` drops it; ``(x1 + x2 + x3)**2`` expands to the mains and
their two-factor interactions; powers go through ``I()`` with Python's ``**``). The rows are the candidates X
of every design function; :func:`design_table` turns a design back into factor settings.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..result import DesignResult
from .regions import FactorRange, factor_grid

__all__ = ["CandidateSet", "candidates", "design_table", "model_terms"]


class CandidateSet(NamedTuple):
    """The candidates of a design problem: the model matrix, the points it came from, its column names.

    Unpacks as ``X, points, columns = candidates(...)``.
    """

    #: the model matrix, one row per point (K x p): the ``X`` of the design functions
    X: np.ndarray
    #: the factor settings of each row of X (K rows, one column per factor)
    points: pd.DataFrame
    #: the model matrix's column names (``"Intercept"``, ``"x1"``, ``"x1:x2"``, ``"I(x1 ** 2)"``, ...)
    columns: list[str]


def _formula(formula: str, factors: Sequence[str]) -> Any:
    """The parsed right-hand side; a left-hand side, a syntax error or an unknown name raises."""
    from formulaic import Formula
    from formulaic.errors import FormulaicError

    if not isinstance(formula, str):
        raise InvalidInputError(f"formula must be a string such as '~ x1 + x2 + x1:x2', got {formula!r}")
    try:
        parsed = Formula(formula)
    except (FormulaicError, SyntaxError, ValueError) as exc:
        raise InvalidInputError(f"cannot parse the formula {formula!r}: {str(exc).splitlines()[0]}") from None
    if hasattr(parsed, "lhs"):
        raise InvalidInputError(f"the formula {formula!r} has a response (left of ~): candidates take '~ terms' only")
    unknown = sorted(set(parsed.required_variables) - set(factors))
    if unknown:
        raise InvalidInputError(f"the formula names {', '.join(unknown)}, not a factor (factors: "
                                f"{', '.join(factors)})")
    return parsed


def _model_matrix(formula: str,
                  factors: Mapping[str, Sequence[Any] | FactorRange] | pd.DataFrame) -> tuple[Any, pd.DataFrame]:
    """formulaic's model matrix of ``formula`` at the points of ``factors`` (a region or a table), and the points."""
    from formulaic import model_matrix
    from formulaic.errors import FormulaicError

    points = factors.reset_index(drop=True) if isinstance(factors, pd.DataFrame) else factor_grid(factors)
    parsed = _formula(formula, [str(c) for c in points.columns])
    try:
        with warnings.catch_warnings():  # NaN from a transform (log of 0) is refused by candidates, in one message
            warnings.simplefilter("ignore", RuntimeWarning)
            matrix = model_matrix(parsed, points, na_action="ignore")
    except (FormulaicError, ValueError, TypeError, ArithmeticError) as exc:
        raise InvalidInputError(f"cannot evaluate the formula {formula!r} on the points: "
                                f"{str(exc).splitlines()[0]}") from None
    return matrix, points


def candidates(formula: str, factors: Mapping[str, Sequence[Any] | FactorRange] | pd.DataFrame) -> CandidateSet:
    """The model matrix of ``formula`` at every point of a design region: the candidates of a design.

    Parameters
    ----------
    formula : str
        The model, e.g. ``"~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**2)"``; factors named as in ``factors``.
    factors : mapping or pandas.DataFrame
        The region: a mapping of factor names to levels (a list) or ranges ``(low, high, points)``, whose full
        factorial grid is taken (:func:`optdesign.formulas.factor_grid`), or the points themselves, one column
        per factor (e.g. :func:`optdesign.formulas.cube`, :func:`optdesign.formulas.simplex_lattice`).

    Returns
    -------
    CandidateSet
        ``X`` (K x p), ``points`` (the factor settings of each row) and ``columns`` (the model's terms).

    Raises
    ------
    InvalidInputError
        A formula that does not parse, has a response, or names something that is not a factor; a model that
        cannot be evaluated or gives NaN/inf; model columns that are linearly dependent on these points (then no
        design estimates the model: e.g. an intercept with mixture components that sum to one).

    Examples
    --------
    The quadratic model in two factors on the 3 x 3 grid, and its exact D-optimal 6-run design:

    >>> import optdesign as od
    >>> X, points, columns = od.candidates("~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**2)",
    ...                                    {"x1": (-1, 1, 3), "x2": [-1, 0, 1]})
    >>> X.shape, columns
    ((9, 6), ['Intercept', 'x1', 'x2', 'I(x1 ** 2)', 'I(x2 ** 2)', 'x1:x2'])
    >>> od.design_table(points, od.exact_design(X, 6)).runs.sum()
    np.int64(6)
    """
    matrix, points = _model_matrix(formula, factors)
    X = np.asarray(matrix, dtype=float)
    columns = [str(c) for c in matrix.columns]
    if X.shape[0] != len(points) or not np.all(np.isfinite(X)):
        raise InvalidInputError(f"the formula {formula!r} gives NaN or infinite entries on some points")
    rank = int(np.linalg.matrix_rank(X))
    if rank < X.shape[1]:
        raise InvalidInputError(f"the {X.shape[1]} columns of the model {formula!r} have rank {rank} on these "
                                "points: no design estimates them all (drop the intercept of a mixture: '~ 0 + ...')")
    return CandidateSet(X, points, columns)


def model_terms(formula: str,
                factors: Mapping[str, Sequence[Any] | FactorRange] | pd.DataFrame) -> dict[str, list[str]]:
    """The terms of ``formula`` and the columns of its model matrix that each one spans, in the matrix's order.

    A numeric factor, a power or a product of numeric factors spans one column; a categorical factor with L
    levels spans L - 1 (its contrasts, with an intercept in the model), and its interaction with a numeric factor
    as many. The F test of a term (:func:`optdesign.design_power`) tests all of its columns at once.

    Parameters
    ----------
    formula : str
        The model, as for :func:`candidates`.
    factors : mapping or pandas.DataFrame
        The region or its points, as for :func:`candidates` (categorical levels come from it).

    Returns
    -------
    dict
        Term name (``"Intercept"`` for the intercept, else formulaic's: ``"x1"``, ``"x1:x2"``, ``"C(c)"``) to the
        names of its columns in :attr:`CandidateSet.columns`.

    Raises
    ------
    InvalidInputError
        What :func:`candidates` refuses about the formula.

    Examples
    --------
    >>> from optdesign.formulas import model_terms
    >>> model_terms("~ x + c", {"x": [-1, 1], "c": ["a", "b", "c"]})
    {'Intercept': ['Intercept'], 'x': ['x'], 'c': ['c[T.b]', 'c[T.c]']}
    """
    matrix, _ = _model_matrix(formula, factors)
    columns = [str(c) for c in matrix.columns]
    return {"Intercept" if str(term) == "1" else str(term): columns[span]
            for term, span in matrix.model_spec.term_slices.items()}


def design_table(points: pd.DataFrame, design: ArrayLike | DesignResult | Any) -> pd.DataFrame:
    """A design in factor coordinates: the settings of its support points with their runs or weights.

    Parameters
    ----------
    points : pandas.DataFrame
        The factor settings of the candidates (``candidates(...).points``), one row per candidate.
    design : array_like, DesignResult or ExactDesignResult
        Weights or run counts per candidate (an integer array gives runs), or a design result: an exact design
        gives its ``counts``, an approximate one its ``weights``.

    Returns
    -------
    pandas.DataFrame
        The rows of ``points`` in the support (the candidates' index kept), with a column ``runs`` (integer
        counts) or ``weight``.

    Raises
    ------
    InvalidInputError
        ``points`` not a DataFrame, a design of another length, negative or non-finite entries.
    """
    if not isinstance(points, pd.DataFrame):
        raise InvalidInputError(f"points must be a pandas DataFrame of factor settings, got {type(points).__name__}")
    if hasattr(design, "counts"):
        values, column = np.asarray(design.counts), "runs"
    elif isinstance(design, DesignResult):
        values, column = np.where(np.isin(np.arange(design.weights.size), design.support), design.weights, 0.0), \
            "weight"
    else:
        values = np.asarray(design)
        column = "runs" if values.dtype.kind in "iu" else "weight"
        if values.dtype.kind not in "iuf":
            raise InvalidInputError(f"design must be numbers (weights or counts), got {values.dtype} entries")
    if values.ndim != 1 or values.size != len(points):
        raise InvalidInputError(f"design has {values.size} entries for {len(points)} candidate points")
    if not np.all(np.isfinite(values)) or values.min() < 0:
        raise InvalidInputError("design entries must be finite and nonnegative")
    support = np.flatnonzero(values > 0)
    return points.iloc[support].assign(**{column: values[support]})
