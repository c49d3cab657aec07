"""The power of the F test of each term of a linear model at an exact design (as R skpr's ``eval_design``).

The model is y = X beta + eps over N runs, eps ~ N(0, sigma^2 I); the design puts n_k runs at candidate x_k, so the
information is X^T diag(n) X and C = (X^T diag(n) X)^{-1}. The F test of a term T (H0: beta_T = 0, df1 = |T|
columns, df2 = N - p) rejects when F > f_{1-alpha}(df1, df2); under beta its statistic is noncentral F with
lambda = beta_T^T (C_TT)^{-1} beta_T / sigma^2, the difference of the residual sums of squares of the noise-free
response without and with the term, over sigma^2 (the general linear hypothesis). Its power is
P(F(df1, df2, lambda) > f).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from ..result import DesignResult
from ..validation import as_count, as_tolerance, as_vector
from .result import PowerResult, TermPower
from .terms import WHOLE_MODEL, ModelTerms, TermsLike, resolve_terms

__all__ = ["design_power", "noncentral_f_power"]

#: run totals above this are not exact in float64
MAX_RUNS = 2**53


def noncentral_f_power(df1: int, df2: int, noncentrality: float, alpha: float) -> tuple[float, float]:
    """The critical value and power of a level-alpha F test: f = F^{-1}_{df1,df2}(1 - alpha), P(F' > f).

    F' follows the noncentral F(df1, df2, noncentrality); at noncentrality 0 it is the central F and the power is
    alpha.

    Parameters
    ----------
    df1, df2 : int
        Numerator and denominator degrees of freedom (positive).
    noncentrality : float
        lambda >= 0 (inf gives power 1).
    alpha : float
        The test's level, in (0, 1).

    Returns
    -------
    (float, float)
        The critical value and the power.

    Raises
    ------
    InvalidInputError
        Degrees of freedom that are not positive integers, a negative or NaN noncentrality, alpha outside (0, 1).
    """
    from scipy.stats import f, ncf

    df1, df2, alpha = as_count(df1, "df1"), as_count(df2, "df2"), _level(alpha)
    if not noncentrality >= 0:  # NaN too
        raise InvalidInputError(f"noncentrality must be >= 0, got {noncentrality!r}")
    critical = float(f.isf(alpha, df1, df2))
    if noncentrality == 0:  # scipy's ncf.sf is wrong at nc = 0 (returns -cdf; scipy issue 26188): the central F
        return critical, float(f.sf(critical, df1, df2))
    if not np.isfinite(noncentrality):
        return critical, 1.0
    return critical, float(np.clip(ncf.sf(critical, df1, df2, noncentrality), 0.0, 1.0))


def run_counts(design: ArrayLike | Any | None, n_candidates: int) -> np.ndarray:
    """The runs per candidate: ones for ``None`` (X is the run matrix), an exact design's ``counts``, or an array of
    nonnegative whole numbers, one per candidate."""
    if design is None:
        return np.ones(n_candidates)
    if isinstance(design, DesignResult):
        raise InvalidInputError("design: an approximate design has weights, not runs; round it to N runs "
                                "(optdesign.round_design(res.weights, N)) or use optdesign.exact_design")
    counts = as_vector(design.counts if hasattr(design, "counts") else design, "design")
    if counts.size != n_candidates:
        raise InvalidInputError(f"design has {counts.size} run counts for {n_candidates} candidates (rows of X)")
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise InvalidInputError("design must be whole numbers of runs (nonnegative integers); round an approximate "
                                "design with optdesign.round_design")
    if counts.sum() > MAX_RUNS:
        raise InvalidInputError(f"design has {counts.sum():.3g} runs in all, above 2^53")
    return counts


def coefficients(effects: ArrayLike | float, model: ModelTerms) -> np.ndarray:
    """beta: ``effects`` itself (one per column), or a number given to every column but the intercept (0)."""
    p = model.X.shape[1]
    if np.ndim(effects) == 0 and not isinstance(effects, (str, bytes)):
        value = effects.item() if isinstance(effects, np.ndarray) else effects
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value):
            raise InvalidInputError(f"effects must be a finite number or {p} coefficients, got {effects!r}")
        beta = np.full(p, float(value))
        beta[model.intercept] = 0.0
        return beta
    return as_vector(effects, "effects", length=p)


def _level(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not 0 < float(alpha) < 1:
        raise InvalidInputError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def _inverse_information(model: ModelTerms, counts: np.ndarray) -> np.ndarray:
    """C = (X^T diag(n) X)^{-1} from the SVD of diag(sqrt n) X; a singular information raises."""
    support = np.flatnonzero(counts)
    p = model.X.shape[1]
    W = np.sqrt(counts[support])[:, None] * model.X[support]
    if W.shape[0] < p:  # zero rows leave the information as it is and give V all p right singular vectors
        W = np.vstack([W, np.zeros((p - W.shape[0], p))])
    _, s, Vt = np.linalg.svd(W, full_matrices=False)
    rank = int(np.sum(s > s.max() * max(W.shape) * np.finfo(float).eps))
    if rank < p:
        null = Vt[-1]  # X null = 0 at every run
        aliased = [model.columns[j] for j in np.flatnonzero(np.abs(null) > 1e-8 * np.abs(null).max())]
        raise InvalidInputError(f"the design's information matrix is singular: its runs at {support.size} distinct "
                                f"candidates estimate rank {rank} < p = {p} coefficients (a combination of "
                                f"{', '.join(aliased)} vanishes at every run); add runs that separate them")
    C: np.ndarray = (Vt.T / s**2) @ Vt
    return C


def _test(name: str, columns: np.ndarray, model: ModelTerms, C: np.ndarray, beta: np.ndarray, sigma: float,
          df2: int, alpha: float) -> TermPower:
    b = beta[columns]
    lam = max(float(b @ np.linalg.solve(C[np.ix_(columns, columns)], b)) / sigma**2, 0.0) if b.any() else 0.0
    critical, power = noncentral_f_power(columns.size, df2, lam, alpha)
    return TermPower(name, tuple(model.columns[j] for j in columns), int(columns.size), df2, lam, critical, power)


def design_power(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, effects: ArrayLike | float, *,
                 alpha: float = 0.05, sigma: float = 1.0, terms: TermsLike = None) -> PowerResult:
    """The power of the F test of each model term, and of the whole model, at an exact design.

    Module doc for the model: lambda_T = beta_T^T (C_TT)^{-1} beta_T / sigma^2 with C = (X^T diag(n) X)^{-1}, df1 =
    the term's columns, df2 = N - p, power = P(F(df1, df2, lambda_T) > f_{1-alpha}(df1, df2)). The whole-model test
    takes every column but the intercept.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates' model matrix (K x p), or :func:`optdesign.candidates`' result (its column names then name
        the terms); with ``design=None``, the run matrix itself (one row per run).
    design : array_like, ExactDesignResult or None
        Runs per candidate: nonnegative integers (:func:`optdesign.exact_design`'s result gives its ``counts``), or
        None for one run per row of X. An approximate design (weights) is refused: round it first.
    effects : array_like or float
        The anticipated coefficients beta, one per column of X, in X's units; or one number given to every
        coefficient but the intercept's (0). For an effect size in skpr's sense (the change of the response from
        the low to the high level) use :func:`optdesign.power.anticipated_coefficients`.
    alpha : float
        The level of each test, in (0, 1).
    sigma : float
        The noise standard deviation, positive.
    terms : str or mapping, optional
        Which columns are tested together: None, one test per column (skpr's "parameter power"); the formula
        that made the CandidateSet X, one test per model term (skpr's "effect power": a categorical factor with L
        levels is one test with df1 = L - 1); or a mapping of term names to columns (indices or column names).

    Returns
    -------
    PowerResult
        ``terms`` (per term: df1, df2, noncentrality, critical value, power), ``model`` (the whole-model test),
        ``alpha``, ``sigma``, ``n`` (N), ``coefficients``; ``to_frame()`` gives the table.

    Raises
    ------
    InvalidInputError
        Bad X, design, effects or terms (wrong lengths, NaN or inf, negative or fractional runs), alpha outside
        (0, 1), sigma not positive, N <= p (no degrees of freedom for the error), or runs that do not estimate every
        coefficient (a singular information matrix).

    Examples
    --------
    The 2^3 factorial in +-1 coding, main effects, 8 runs: X^T X = 8 I, so a coefficient of 1 (an effect of 2 from
    low to high) with sigma = 1 gives lambda = 8 for each factor, with df = (1, 4).

    >>> import optdesign as od
    >>> cs = od.candidates("~ a + b + c", od.cube(["a", "b", "c"], 2))  # the 8 runs
    >>> res = od.design_power(cs, None, 1.0)
    >>> a = res.test("a")
    >>> round(a.noncentrality, 9), a.df1, a.df2, round(a.power, 4)
    (8.0, 1, 4, 0.5716)
    """
    model = resolve_terms(X, terms)
    counts = run_counts(design, model.X.shape[0])
    alpha = _level(alpha)
    sigma = as_tolerance(sigma, "sigma")
    beta = coefficients(effects, model)
    n, p = int(counts.sum()), model.X.shape[1]
    if n <= p:
        raise InvalidInputError(f"the design has N = {n} runs for p = {p} coefficients: the F tests need N > p "
                                f"(N - p = {n - p} degrees of freedom for the error); add runs or replicates")
    C = _inverse_information(model, counts)
    df2 = n - p
    tests = tuple(_test(name, cols, model, C, beta, sigma, df2, alpha)
                  for name, cols in zip(model.names, model.indices, strict=True))
    slopes = model.slopes
    whole = _test(WHOLE_MODEL, slopes, model, C, beta, sigma, df2, alpha) if slopes.size else None
    return PowerResult(tests, whole, alpha, sigma, n, beta, model.columns)
