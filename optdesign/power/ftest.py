"""The power of the F test of each term of a linear model at an exact design (as R skpr's ``eval_design``).

The model is y = X beta + eps over N runs, eps ~ N(0, sigma^2 I); the design puts n_k runs at candidate x_k, so the
information is X^T diag(n) X and C = (X^T diag(n) X)^{-1}. The F test of a term T (H0: beta_T = 0, df1 = |T|
columns, df2 = N - p) rejects when F > f_{1-alpha}(df1, df2); under beta its statistic is noncentral F with
lambda = beta_T^T (C_TT)^{-1} beta_T / sigma^2, the difference of the residual sums of squares of the noise-free
response without and with the term, over sigma^2 (the general linear hypothesis). Its power is
P(F(df1, df2, lambda) > f).

With runs in random groups (blocks, whole plots; :mod:`optdesign.power.strata`), Var(eps) = sigma^2 V with
V = I + sum_l eta_l Z_l Z_l^T, the information is the GLS X^T V^{-1} X, and each test's df2 is that of the error
stratum its term is estimated in. With fixed group effects (:mod:`optdesign.power.grouped`) the model gains the
groups' indicator columns Z, fitted by OLS: C is the inverse of X^T (I - P_Z) X on the columns other than the
intercept (which the groups absorb), and df2 = N - rank([X, Z]).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from ..result import DesignResult
from ..validation import as_count, as_tolerance, as_vector, check_weights
from ..vocabulary import check_option
from .grouped import GroupedRuns, GroupEffects, fixed_effects_analysis, grouped_runs
from .result import PowerResult, TermPower
from .strata import DF_METHODS, DfMethod, GroupsLike, gls_information, stratum_degrees
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

    df1, df2, alpha = as_count(df1, "df1"), as_count(df2, "df2"), check_alpha(alpha)
    if not noncentrality >= 0:  # NaN too
        raise InvalidInputError(f"noncentrality must be >= 0, got {noncentrality!r}")
    critical = float(f.isf(alpha, df1, df2))
    if noncentrality == 0:  # scipy's ncf.sf is wrong at nc = 0 (returns -cdf; scipy issue 26188): the central F
        return critical, float(f.sf(critical, df1, df2))
    if not np.isfinite(noncentrality):
        return critical, 1.0
    return critical, float(np.clip(ncf.sf(critical, df1, df2, noncentrality), 0.0, 1.0))


def run_counts(design: ArrayLike | Any | None, n_candidates: int, runs: int | None = None) -> np.ndarray:
    """The runs per candidate: ones for ``None`` (X is the run matrix), an exact design's ``counts``, or an array of
    nonnegative whole numbers, one per candidate. With ``runs``, the design (weights, counts or a result) is first
    rounded to that many runs by efficient apportionment (:func:`optdesign.round_design`)."""
    if runs is not None:
        return _rounded(design, n_candidates, runs)
    if design is None:
        return np.ones(n_candidates)
    if isinstance(design, DesignResult):
        raise InvalidInputError("design: an approximate design has weights, not runs; give runs=N to round it to N "
                                "runs (optdesign.round_design), or use optdesign.exact_design")
    counts = as_vector(design.counts if hasattr(design, "counts") else design, "design")
    if counts.size != n_candidates:
        raise InvalidInputError(f"design has {counts.size} run counts for {n_candidates} candidates (rows of X)")
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise InvalidInputError("design must be whole numbers of runs (nonnegative integers); round an approximate "
                                "design with runs=N (or optdesign.round_design)")
    if counts.sum() > MAX_RUNS:
        raise InvalidInputError(f"design has {counts.sum():.3g} runs in all, above 2^53")
    return counts


def _rounded(design: ArrayLike | Any | None, n_candidates: int, runs: int) -> np.ndarray:
    """``design`` as weights (uniform for None, a result's ``weights`` or ``counts``), rounded to ``runs`` runs."""
    from ..linear.rounding import round_design

    n = as_count(runs, "runs")
    if design is None:
        weights = np.ones(n_candidates)
    else:
        raw = design.weights if hasattr(design, "weights") else design
        weights = check_weights(raw, "design")
        if weights.size != n_candidates:
            raise InvalidInputError(f"design has {weights.size} weights for {n_candidates} candidates (rows of X)")
    out: np.ndarray = round_design(weights, n).astype(float)
    return out


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


def check_alpha(alpha: object) -> float:
    """``alpha`` as a float strictly between 0 and 1 (the level of a test), else InvalidInputError."""
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
    if df2 <= 0:  # its error stratum has no degrees of freedom left: no test
        return TermPower(name, tuple(model.columns[j] for j in columns), int(columns.size), df2, lam, np.nan, np.nan)
    critical, power = noncentral_f_power(columns.size, df2, lam, alpha)
    return TermPower(name, tuple(model.columns[j] for j in columns), int(columns.size), df2, lam, critical, power)


def _inverse_gls(model: ModelTerms, M: np.ndarray) -> np.ndarray:
    """C = M^{-1} from the eigendecomposition of the GLS information M; a singular M raises."""
    w, Q = np.linalg.eigh(M)
    top = max(float(w.max()), 0.0)
    if top == 0.0 or w.min() <= top * M.shape[0] * 1e3 * np.finfo(float).eps:
        null = Q[:, 0]
        aliased = [model.columns[j] for j in np.flatnonzero(np.abs(null) > 1e-8 * np.abs(null).max())]
        raise InvalidInputError(f"the design's information matrix X^T V^-1 X is singular (a combination of "
                                f"{', '.join(aliased)} vanishes at every run); add runs that separate them")
    C: np.ndarray = (Q / w) @ Q.T
    out: np.ndarray = (C + C.T) / 2
    return out


def design_power(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, effects: ArrayLike | float, *,
                 alpha: float = 0.05, sigma: float = 1.0, terms: TermsLike = None,
                 runs: int | None = None, groups: GroupsLike | None = None,
                 eta: float | Sequence[float] | Mapping[str, float] | None = None,
                 df_method: DfMethod = "between-within", block_effects: GroupEffects | None = None) -> PowerResult:
    """The power of the F test of each model term, and of the whole model, at an exact design.

    Module doc for the model: lambda_T = beta_T^T (C_TT)^{-1} beta_T / sigma^2 with C = (X^T diag(n) X)^{-1}, df1 =
    the term's columns, df2 = N - p, power = P(F(df1, df2, lambda_T) > f_{1-alpha}(df1, df2)). The whole-model test
    takes every column but the intercept.

    With runs in random groups (``groups``, or a BlockedDesignResult as ``design``; as skpr's
    ``eval_design(..., blocking = TRUE)``): C = (X^T V^{-1} X)^{-1} with V = I + sum_l eta_l Z_l Z_l^T, and df2 is
    that of the term's error stratum by ``df_method`` (:mod:`optdesign.power.strata`): the between-within rule of
    Pinheiro & Bates (2000, p. 91), which skpr's documentation names, df_s = m_s - m_{s-1} - p_s over the strata's
    group counts m_s; or ``"skpr"``, the numbers skpr 1.9.2 computes, m_s - m_{s-1}; or ``"residual"``, N - p.

    With fixed group effects (``block_effects="fixed"``, the default of :func:`optdesign.blocked_design`, whose
    result brings it; :mod:`optdesign.power.grouped`): the analysis is OLS on [X, Z], Z the groups' indicators, so
    C = (X~^T (I - P_Z) X~)^{-1} over the columns X~ of X other than the intercept (the blocked design's own
    information) and df2 = N - rank([X, Z]) for every test. The groups absorb the intercept: its test is left out
    (``absorbed`` names it), as the blocked design leaves it out of its parameters.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates' model matrix (K x p), or :func:`optdesign.candidates`' result (its column names then name
        the terms); with ``design=None``, the run matrix itself (one row per run).
    design : array_like, ExactDesignResult or None
        Runs per candidate: nonnegative integers (:func:`optdesign.exact_design`'s result gives its ``counts``), or
        None for one run per row of X. An approximate design (weights) needs ``runs``.
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
    runs : int, optional
        N: the design (weights, counts, a result, or None for uniform weights over the rows of X) is first rounded
        to N runs by efficient apportionment (:func:`optdesign.round_design`); how an approximate design is
        evaluated.
    groups : array_like, sequence of array_like or mapping, optional
        The runs' random groups (blocks, whole plots, sub-plots), X's rows being the runs (``design=None``): one
        label per run, a list of label arrays (one per grouping) or a mapping of grouping names to label arrays
        (:func:`optdesign.power.strata.run_groups`). A BlockedDesignResult given as ``design`` (from
        :func:`optdesign.blocked_design` with random blocks, :func:`optdesign.split_plot_design`, ...) brings its
        own: X is then the candidates its ``rows`` index (``od.candidates(formula, res.points)`` for a split
        plot).
    eta : float, sequence of float or mapping, optional
        The variance ratios sigma_l^2 / sigma^2 >= 0 of the groupings: one for all, one per grouping or by
        grouping name. Default: the BlockedDesignResult's, else 1 (skpr's default).
    df_method : {"between-within", "skpr", "residual"}
        The denominator degrees of freedom with random groups (above; the stratum rules need nested groupings, so
        a strip plot's crossed rows and columns take ``"residual"``). Without groups every test has N - p, with
        fixed group effects N - rank([X, Z]).
    block_effects : {"random", "fixed"}, optional
        How the groups enter the model: random effects of variance ratios ``eta`` (GLS), or unknown constants
        (OLS with their indicator columns). Default: the BlockedDesignResult's own, else ``"random"`` with
        ``groups``; giving it overrides a result's (to analyse its blocks the other way).

    Returns
    -------
    PowerResult
        ``terms`` (per term: df1, df2, noncentrality, critical value, power; NaN power when the term's stratum has
        no degrees of freedom left), ``model`` (the whole-model test; with groups, the smallest df2 of its
        columns' strata), ``alpha``, ``sigma``, ``n`` (N), ``coefficients``, ``eta`` and ``df_method`` (with
        random groups), ``block_effects`` (with groups), ``absorbed`` (with fixed ones: the columns, the intercept,
        whose test is left out); ``to_frame()`` gives the table.

    Raises
    ------
    InvalidInputError
        Bad X, design, effects or terms (wrong lengths, NaN or inf, negative or fractional runs, weights without
        ``runs``, ``runs`` not a positive integer), alpha outside
        (0, 1), sigma not positive, N <= p (no degrees of freedom for the error), or runs that do not estimate every
        coefficient (a singular information matrix). With groups: labels not one per run, an eta negative or not
        finite, groups with a design or with ``runs``, eta or block_effects without groups, an unknown
        ``df_method`` or ``block_effects``, groupings that do not nest under a stratum rule. With fixed group
        effects: eta given, X of the intercept alone, a term that mixes the intercept with other columns, a
        singular X^T (I - P_Z) X (a term aliased with the groups, as a factor constant within every block), or
        N <= rank([X, Z]).

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

    The same 8 runs in 4 whole plots of 2 with ``a`` hard to change (constant within each plot, ``b`` and ``c``
    not), eta = 1: ``a`` is tested between the plots with df2 = 4 - 1 - 1 = 2 and lambda = 8 * 2 / (1 + 2 eta),
    ``b`` and ``c`` within them with df2 = 8 - 4 - 2 = 2 and lambda = 8.

    >>> import pandas as pd
    >>> runs = pd.DataFrame({"a": [-1] * 4 + [1] * 4, "b": [-1, 1, -1, 1] * 2, "c": [-1, 1, 1, -1] * 2})
    >>> sp = od.candidates("~ a + b + c", runs)
    >>> res = od.design_power(sp, None, 1.0, groups=[0, 0, 1, 1, 2, 2, 3, 3], eta=1.0)
    >>> [(t.term, t.df2, round(t.noncentrality, 6)) for t in res.terms[1:]]
    [('a', 2, 2.666667), ('b', 2, 8.0), ('c', 2, 8.0)]

    The 8 runs of the 2^3 in two fixed blocks of 4 confounded with abc (:func:`optdesign.blocked_design`'s
    optimum): the main effects keep lambda = 8, df2 = 8 - rank([X, Z]) = 8 - 2 - 3 = 3, the intercept is absorbed.

    >>> fixed = od.design_power(cs, None, 1.0, groups=[0, 1, 1, 0, 1, 0, 0, 1], block_effects="fixed")
    >>> [(t.term, t.df2, round(t.noncentrality, 6)) for t in fixed.terms], fixed.absorbed
    ([('a', 3, 8.0), ('b', 3, 8.0), ('c', 3, 8.0)], ('Intercept',))
    """
    model = resolve_terms(X, terms)
    df_method = check_option(df_method, "df_method", DF_METHODS)
    grouped = grouped_runs(model, design, groups, eta, runs, block_effects)
    counts = run_counts(design, model.X.shape[0], runs) if grouped is None else None
    alpha = check_alpha(alpha)
    sigma = as_tolerance(sigma, "sigma")
    beta = coefficients(effects, model)
    if grouped is not None and grouped.effects == "fixed":
        return _fixed_power(model, grouped, beta, sigma, alpha)
    n = int(counts.sum()) if counts is not None else grouped.X.shape[0]  # type: ignore[union-attr]
    p = model.X.shape[1]
    if n <= p:
        raise InvalidInputError(f"the design has N = {n} runs for p = {p} coefficients: the F tests need N > p "
                                f"(N - p = {n - p} degrees of freedom for the error); add runs or replicates")
    slopes = model.slopes
    if grouped is None:
        assert counts is not None
        C = _inverse_information(model, counts)
        term_df: tuple[int, ...] = tuple(n - p for _ in model.names)
        whole_df: int | None = n - p
        structure = None
    else:
        C = _inverse_gls(model, gls_information(grouped.X, grouped.groups))
        term_df, whole_df = stratum_degrees(grouped.X, model, grouped.groups, df_method)
        structure = dict(zip(grouped.groups.names, grouped.groups.etas, strict=True))
    tests = tuple(_test(name, cols, model, C, beta, sigma, df2, alpha)
                  for name, cols, df2 in zip(model.names, model.indices, term_df, strict=True))
    whole = _test(WHOLE_MODEL, slopes, model, C, beta, sigma, int(whole_df), alpha) \
        if slopes.size and whole_df is not None else None
    return PowerResult(tests, whole, alpha, sigma, n, beta, model.columns, eta=structure,
                       df_method=None if structure is None else df_method,
                       block_effects=None if structure is None else "random")


def _fixed_power(model: ModelTerms, grouped: GroupedRuns, beta: np.ndarray, sigma: float,
                 alpha: float) -> PowerResult:
    """The tests with fixed group effects (:mod:`optdesign.power.grouped`): OLS on [X, Z], the intercept's test
    left out (the groups absorb it), df2 = N - rank([X, Z]) for every test."""
    analysis = fixed_effects_analysis(grouped.X, model, grouped.groups)
    absorbed = set(analysis.absorbed.tolist())
    tests = []
    for name, columns in zip(model.names, model.indices, strict=True):
        inside = [int(j) in absorbed for j in columns]
        if all(inside):
            continue
        if any(inside):
            raise InvalidInputError(f"terms[{name!r}] mixes the intercept, which fixed group effects absorb, with "
                                    "other columns: test the intercept apart (its test is then left out)")
        tests.append(_test(name, columns, model, analysis.C, beta, sigma, analysis.df2, alpha))
    slopes = model.slopes
    whole = _test(WHOLE_MODEL, slopes, model, analysis.C, beta, sigma, analysis.df2, alpha)
    return PowerResult(tuple(tests), whole, alpha, sigma, grouped.X.shape[0], beta, model.columns,
                       block_effects="fixed", absorbed=tuple(model.columns[j] for j in analysis.absorbed))
