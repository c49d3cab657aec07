"""Runs in random groups (blocks, whole plots, sub-plots): the GLS information and the error strata of the F tests.

Model: y = X beta + sum_l Z_l gamma_l + eps with gamma_l ~ N(0, eta_l sigma^2 I) for each grouping l and
eps ~ N(0, sigma^2 I), so Var(y) = sigma^2 V with V = I + sum_l eta_l Z_l Z_l^T (Z_l the runs' indicator of the
groups of grouping l). Generalised least squares estimates beta with covariance sigma^2 (X^T V^{-1} X)^{-1}. With
Z = [Z_1, ..., Z_L] and D the diagonal of each group's eta, Woodbury's identity gives

    X^T V^{-1} X = X^T X - S^T Gamma S,  S = Z^T X,  Gamma = D^{1/2} (I + D^{1/2} Z^T Z D^{1/2})^{-1} D^{1/2},

(one grouping: Gamma = diag(eta / (1 + eta n_g)), n_g the runs of group g).

Error strata. With the groupings nested (each group of a finer grouping inside one group of every coarser one),
ordered from coarsest to finest, the runs fall in the strata 0 (the overall mean: m_0 = 1 unit with an intercept,
0 without), 1 .. L (the groupings: m_l groups) and L + 1 (the runs: m_{L+1} = N). A term is estimated in the
coarsest grouping within whose every group its columns do not change (a whole-plot factor in the whole plots), and
in stratum L + 1 when it changes within the groups of every grouping. Its test's denominator degrees of freedom
follow one of three rules (``df_method``):

``"between-within"``
    Pinheiro & Bates (2000, *Mixed-Effects Models in S and S-PLUS*, section 2.4.2, p. 91; the rule of R's nlme,
    and the rule skpr's ``eval_design`` help page names for split-plot designs): df_s = m_s - m_{s-1} - p_s, p_s
    the model's columns estimated in stratum s. The intercept is tested with the innermost stratum's df.
``"skpr"``
    The numbers R skpr 1.9.2's ``eval_design(..., blocking = TRUE)`` computes: df_s = m_s - m_{s-1}, with no
    columns subtracted (its count of a factor's degrees of freedom takes the factor as a one-column table, which
    has one distinct value, so it subtracts 0), and the intercept tested with the smallest df of the other tests.
``"residual"``
    N - p for every test, as with independent runs (the groupings need not nest).

Both stratum rules need nested groupings (skpr refuses crossed ones: rows and columns of a strip plot); a test
whose stratum has no degrees of freedom left has no power (NaN; skpr reports NA). The whole-model test, whose
columns may lie in several strata, takes the smallest df among them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..vocabulary import check_option
from .terms import ModelTerms

__all__ = ["DF_METHODS", "DfMethod", "GroupsLike", "RunGroups", "gls_information", "run_groups", "stratum_degrees"]

#: the denominator degrees of freedom of the F tests with random groups (module docstring)
DfMethod = Literal["between-within", "skpr", "residual"]
#: the allowed strings of :data:`DfMethod`
DF_METHODS: tuple[DfMethod, ...] = get_args(DfMethod)

#: what ``groups=`` accepts: one label per run, several such (one per grouping), or grouping name -> labels
GroupsLike = ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike]


@dataclass(frozen=True)
class RunGroups:
    """The group of every run in each grouping, coarsest grouping first, and each grouping's variance ratio."""

    #: the groupings' names, coarsest first (fewest groups)
    names: tuple[str, ...]
    #: per grouping, every run's group as an integer 0 .. m_l - 1
    codes: tuple[np.ndarray, ...]
    #: per grouping, eta_l = sigma_l^2 / sigma^2 >= 0
    etas: tuple[float, ...]

    @property
    def n_runs(self) -> int:
        """N, the number of runs."""
        return int(self.codes[0].size)

    @property
    def sizes(self) -> tuple[int, ...]:
        """m_l, the number of groups of each grouping."""
        return tuple(int(c.max()) + 1 for c in self.codes)

    def nested(self) -> bool:
        """Whether every group of each grouping lies within one group of the coarser grouping before it.

        Returns
        -------
        bool
            True when the groupings nest (one grouping always does).
        """
        for coarse, fine in zip(self.codes, self.codes[1:], strict=False):
            home = np.zeros(int(fine.max()) + 1, dtype=np.int64)
            home[fine] = coarse  # the coarse group of one run of each fine group
            if np.any(home[fine] != coarse):
                return False
        return True


def _labels(values: ArrayLike, name: str, n_runs: int) -> np.ndarray:
    """Integer codes 0 .. m - 1 of one grouping's labels (any hashable values, one per run; equal values, one
    group)."""
    array = np.asarray(values, dtype=object)
    if array.ndim != 1 or array.size != n_runs:
        raise InvalidInputError(f"groups[{name!r}] must hold one group label per run ({n_runs} runs), got shape "
                                f"{array.shape}")
    seen: dict[Any, int] = {}
    try:
        codes = [seen.setdefault(label, len(seen)) for label in array.tolist()]
    except TypeError:
        raise InvalidInputError(f"groups[{name!r}]: a label is not hashable (labels are numbers or strings)") \
            from None
    return np.asarray(codes, dtype=np.int64)


def _eta(value: object, name: str) -> float:
    """One variance ratio: a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise InvalidInputError(f"eta for grouping {name!r} must be a finite number >= 0 (sigma_group^2 / "
                                f"sigma^2), got {value!r}")
    return float(value)


def run_groups(groups: GroupsLike, n_runs: int, eta: float | Sequence[float] | Mapping[str, float] = 1.0
               ) -> RunGroups:
    """The runs' groupings, checked and ordered coarsest first, with their variance ratios.

    Parameters
    ----------
    groups : array_like, sequence of array_like or mapping
        One label per run (one grouping, named ``"block"``); a list of such label arrays, one per grouping (named
        ``"grouping0"``, ``"grouping1"``, ...); or a mapping of grouping names to label arrays. Labels are any
        values (equal labels: the same group), e.g. :attr:`optdesign.exact_designs.BlockedDesignResult.groupings`.
    n_runs : int
        N, the number of runs (the length of every label array).
    eta : float, sequence of float or mapping
        eta_l = sigma_l^2 / sigma^2 >= 0 of each grouping: one number for all, one per grouping in the order
        given, or a mapping of grouping names to ratios.

    Returns
    -------
    RunGroups
        The groupings sorted by their number of groups (fewest first; the order given breaks ties), with their
        etas.

    Raises
    ------
    InvalidInputError
        No grouping, label arrays of the wrong length or shape, an eta negative, not finite or missing for a
        grouping, or a mapping of etas naming no grouping.
    """
    items: list[tuple[str, Any]]
    if isinstance(groups, Mapping):
        items = [(str(k), v) for k, v in groups.items()]
    else:
        array = np.asarray(groups, dtype=object)
        if array.ndim == 1 and array.size and not isinstance(array[0], (list, tuple, np.ndarray)):
            items = [("block", groups)]
        elif array.ndim == 2 or (array.ndim == 1 and array.size):
            items = [(f"grouping{i}", values) for i, values in enumerate(groups)]  # type: ignore[arg-type]
        else:
            raise InvalidInputError(f"groups must be one label per run, a list of such labels (one per grouping) or "
                                    f"a mapping of grouping names to labels, got shape {array.shape}")
    if not items:
        raise InvalidInputError("groups names no grouping")
    names = [name for name, _ in items]
    codes = [_labels(values, name, n_runs) for name, values in items]
    if isinstance(eta, Mapping):
        unknown = set(map(str, eta)) - set(names)
        if unknown:
            raise InvalidInputError(f"eta names {sorted(unknown)}, not groupings; the groupings are {names}")
        missing = [name for name in names if name not in eta]
        if missing:
            raise InvalidInputError(f"eta gives no ratio for the groupings {missing}")
        etas = [_eta(eta[name], name) for name in names]
    elif np.ndim(eta) == 0:
        etas = [_eta(eta, name) for name in names]
    else:
        values = list(eta)  # type: ignore[arg-type]
        if len(values) != len(names):
            raise InvalidInputError(f"eta has {len(values)} ratios for {len(names)} groupings {names}")
        etas = [_eta(v, name) for v, name in zip(values, names, strict=True)]
    order = sorted(range(len(names)), key=lambda i: int(codes[i].max()))  # stable: ties keep the given order
    return RunGroups(tuple(names[i] for i in order), tuple(codes[i] for i in order), tuple(etas[i] for i in order))


def gls_information(X_runs: np.ndarray, groups: RunGroups) -> np.ndarray:
    """M = X^T V^{-1} X = X^T X - S^T Gamma S with V = I + sum_l eta_l Z_l Z_l^T (module docstring).

    Parameters
    ----------
    X_runs : numpy.ndarray, shape (N, p)
        The model matrix of the runs, one row per run.
    groups : RunGroups
        The runs' groupings and etas.

    Returns
    -------
    numpy.ndarray
        The p x p information (symmetric; in units of 1 / sigma^2).

    Raises
    ------
    InvalidInputError
        ``X_runs`` with another number of rows than the groupings' runs.
    """
    N = groups.n_runs
    if X_runs.shape[0] != N:
        raise InvalidInputError(f"the groupings label {N} runs, the model matrix has {X_runs.shape[0]} rows")
    offsets = np.cumsum((0, *groups.sizes))
    Zt = np.zeros((int(offsets[-1]), N))
    for start, codes in zip(offsets, groups.codes, strict=False):
        Zt[start + codes, np.arange(N)] = 1.0
    root = np.sqrt(np.repeat(groups.etas, groups.sizes))
    inner = np.eye(root.size) + root[:, None] * (Zt @ Zt.T) * root[None, :]
    gamma = root[:, None] * np.linalg.solve(inner, np.diag(root))
    S = Zt @ X_runs
    M = X_runs.T @ X_runs - S.T @ ((gamma + gamma.T) / 2) @ S
    out: np.ndarray = (M + M.T) / 2
    return out


def _constant_within(X_runs: np.ndarray, columns: np.ndarray, codes: np.ndarray) -> bool:
    """Whether the columns take one value (row) within every group of a grouping."""
    block = X_runs[:, columns]
    first = np.zeros(int(codes.max()) + 1, dtype=np.int64)
    first[codes] = np.arange(codes.size)  # one run of every group
    scale = 1.0 + float(np.max(np.abs(block), initial=0.0))
    return bool(np.all(np.abs(block - block[first[codes]]) <= 1e-9 * scale))


def _stratum(X_runs: np.ndarray, columns: np.ndarray, groups: RunGroups) -> int:
    """1 + the coarsest grouping within whose groups the columns do not change; L + 1 when there is none."""
    for level, codes in enumerate(groups.codes):
        if _constant_within(X_runs, columns, codes):
            return level + 1
    return len(groups.codes) + 1


def stratum_degrees(X_runs: np.ndarray, model: ModelTerms, groups: RunGroups, df_method: DfMethod
                 ) -> tuple[tuple[int, ...], int | None]:
    """The denominator degrees of freedom of each term's test and of the whole-model test (module docstring).

    Parameters
    ----------
    X_runs : numpy.ndarray, shape (N, p)
        The model matrix of the runs.
    model : ModelTerms
        The model's columns, terms (one test each) and intercept.
    groups : RunGroups
        The runs' groupings.
    df_method : {"between-within", "skpr", "residual"}
        The rule.

    Returns
    -------
    tuple
        The df of each term's test (in ``model.names`` order; 0 or less: no degrees of freedom left), and that of
        the whole-model test (None for a model of the intercept alone).

    Raises
    ------
    InvalidInputError
        An unknown ``df_method``, or groupings that do not nest under a stratum rule.
    """
    method = check_option(df_method, "df_method", DF_METHODS)
    N, p = X_runs.shape
    slopes = model.slopes
    if method == "residual":
        return tuple(N - p for _ in model.names), (N - p if slopes.size else None)
    if not groups.nested():
        pairs = ", ".join(groups.names)
        raise InvalidInputError(f"the groupings {pairs} do not nest (a group of a finer grouping spans several groups "
                                f"of a coarser one, as the rows and columns of a strip plot): the stratum degrees of "
                                f"freedom (df_method={method!r}) need nested groupings; use df_method='residual'")
    intercept = set(model.intercept.tolist())
    stratum = np.zeros(p, dtype=np.int64)  # 0: the intercept
    tested = np.zeros(p, dtype=bool)
    for columns in model.indices:
        tested[columns] = True
        free = np.array([j for j in columns if j not in intercept], dtype=np.int64)
        if free.size:
            stratum[free] = _stratum(X_runs, free, groups)
    for j in np.flatnonzero(~tested):  # untested columns stay in the model: each in its own stratum
        if j not in intercept:
            stratum[j] = _stratum(X_runs, np.array([j]), groups)
    units = np.array([1 if intercept else 0, *groups.sizes, N])
    between = np.diff(units)  # m_s - m_{s-1}, s = 1 .. L + 1
    if method == "between-within":
        between = between - np.bincount(stratum[stratum > 0] - 1, minlength=between.size)
    column_df = np.where(stratum > 0, between[np.maximum(stratum, 1) - 1], 0)
    term_df: list[int | None] = []
    for columns in model.indices:
        free_columns = [j for j in columns if j not in intercept]
        term_df.append(int(column_df[free_columns[0]]) if free_columns else None)
    others = [d for d in term_df if d is not None]
    intercept_df = int(between[-1]) if method == "between-within" or not others else min(others)
    whole = int(column_df[slopes].min()) if slopes.size else None
    return tuple(intercept_df if d is None else d for d in term_df), whole
