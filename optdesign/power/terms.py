"""The terms of a linear model: which columns of X each F test covers, and which column is the intercept.

A term is a set of columns tested together (H0: all their coefficients are zero). They come from a formula (with a
:class:`~optdesign.formulas.CandidateSet`: formulaic's model spec, :func:`optdesign.formulas.model_terms`; a
categorical factor with L levels spans L - 1 columns), from a mapping of term names to columns, or else one term per
column. The intercept is a column equal on every candidate (a column of ones); the whole-model test leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet, model_terms
from ..validation import as_matrix

__all__ = ["WHOLE_MODEL", "ModelTerms", "TermsLike", "resolve_terms"]

#: the name of the whole-model test (all columns but the intercept) in tables
WHOLE_MODEL = "whole model"

#: what ``terms=`` accepts: None (one term per column), a formula (with a CandidateSet), or term name -> columns
TermsLike = str | Mapping[str, int | str | Sequence[int | str]] | None


@dataclass(frozen=True)
class ModelTerms:
    """The model matrix with its column names, its terms and its intercept."""

    #: the candidates' model matrix (K x p)
    X: np.ndarray
    #: the name of each column
    columns: tuple[str, ...]
    #: the term names, in the order of the tests
    names: tuple[str, ...]
    #: the columns of each term (integer index arrays, in the order of ``names``)
    indices: tuple[np.ndarray, ...]
    #: the intercept's column (an empty array when the model has none)
    intercept: np.ndarray

    @property
    def slopes(self) -> np.ndarray:
        """The columns of the whole-model test: every column but the intercept."""
        return np.setdiff1d(np.arange(self.X.shape[1]), self.intercept)


def _intercept(X: np.ndarray) -> np.ndarray:
    """The columns equal (and nonzero) on every candidate."""
    return np.flatnonzero(np.all(X == X[:1], axis=0) & (X[0] != 0))


def _from_mapping(terms: Mapping, columns: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[np.ndarray, ...]]:
    """Term names and column indices from ``{name: column or columns}`` (indices, or names of the columns)."""
    names: list[str] = []
    indices: list[np.ndarray] = []
    used: set[int] = set()
    for name, spec in terms.items():
        if not isinstance(name, str) or not name or name == WHOLE_MODEL:
            raise InvalidInputError(f"terms: a term's name must be a nonempty string other than {WHOLE_MODEL!r}, "
                                    f"got {name!r}")
        items = [spec] if isinstance(spec, (str, int, np.integer)) else list(spec)
        index = []
        for item in items:
            if isinstance(item, str) and item in columns:
                index.append(columns.index(item))
            elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= item < len(columns):
                index.append(int(item))
            else:
                raise InvalidInputError(f"terms[{name!r}]: {item!r} is not a column (an index from 0 to "
                                        f"{len(columns) - 1}, or one of {list(columns)})")
        if not index or len(set(index)) < len(index) or used & set(index):
            raise InvalidInputError(f"terms[{name!r}] must name at least one column, each in one term only")
        used |= set(index)
        names.append(name)
        indices.append(np.array(index))
    if not names:
        raise InvalidInputError("terms is an empty mapping: name at least one term")
    return tuple(names), tuple(indices)


def _from_formula(formula: str, candidates: CandidateSet) -> tuple[tuple[str, ...], tuple[np.ndarray, ...]]:
    """Term names and column indices from the model spec of the formula that made ``candidates``."""
    spec = model_terms(formula, candidates.points)
    made = [column for span in spec.values() for column in span]
    if made != list(candidates.columns):
        raise InvalidInputError(f"the formula {formula!r} has the columns {made}, not the candidates' "
                                f"{list(candidates.columns)}: give the formula that made them")
    return tuple(spec), tuple(np.array([made.index(c) for c in span]) for span in spec.values())


def resolve_terms(X: ArrayLike | CandidateSet, terms: TermsLike = None) -> ModelTerms:
    """The model matrix and its terms (module doc).

    Parameters
    ----------
    X : array_like or CandidateSet
        The model matrix (K x p), or the candidates of a formula (their ``X``; their ``columns`` name the columns).
    terms : str or mapping, optional
        None: each column is its own term. A formula (X must then be the CandidateSet it made): one term per
        model term. A mapping of term names to a column or a list of columns (indices from 0, or a CandidateSet's
        column names), each column in one term at most; the others stay in the model untested.

    Returns
    -------
    ModelTerms
        The matrix, the column and term names, each term's columns and the intercept's column.

    Raises
    ------
    InvalidInputError
        Bad X (not 2-D, NaN or inf), a formula without a CandidateSet or that did not make it, a mapping that names
        no column, an unknown or repeated one.
    """
    source = X if isinstance(X, CandidateSet) else None
    Xa = as_matrix(X.X if isinstance(X, CandidateSet) else X, "X")
    intercept = _intercept(Xa)
    if source is not None:
        columns = tuple(str(c) for c in source.columns)
    else:
        named = intercept if intercept.size == 1 else ()  # two constant columns: singular, and no single intercept
        columns = tuple("Intercept" if j in named else f"x{j}" for j in range(Xa.shape[1]))
    if len(columns) != Xa.shape[1]:
        raise InvalidInputError(f"the candidate set names {len(columns)} columns for {Xa.shape[1]} in X")
    if terms is None:
        names, indices = columns, tuple(np.array([j]) for j in range(Xa.shape[1]))
    elif isinstance(terms, str):
        if source is None:
            raise InvalidInputError("terms given as a formula needs X as the CandidateSet it made "
                                    "(optdesign.candidates): the terms are read from its points")
        names, indices = _from_formula(terms, source)
    elif isinstance(terms, Mapping):
        names, indices = _from_mapping(terms, columns)
    else:
        raise InvalidInputError(f"terms must be None, a formula or a mapping of term names to columns, got "
                                f"{type(terms).__name__}")
    return ModelTerms(Xa, columns, names, indices, intercept)
