"""Split-plot exact designs: hard-to-change factors set once per whole plot, easy-to-change ones run by run.

The candidates are every pair (whole-plot setting a, sub-plot setting t) of the two regions, row a Ks + t of the
model matrix X of a formula over all factors (:func:`optdesign.candidates` on the product of the regions). Whole
plot g holds n_g runs that share one setting a_g; its random effect (variance ratio eta = sigma_wp^2 / sigma^2)
makes the information the GLS X^T V^{-1} X, V = I + eta Z Z^T (:mod:`optdesign.exact.block_information`, c_g =
eta / (1 + eta n_g)). The search (:mod:`optdesign.exact.block_search`) gives each whole plot its best
hard-to-change setting, then each run its best easy-to-change setting, until neither improves, from
``restarts + 1`` random starts (the whole-plot settings spread evenly, the sub-plot settings uniform).

Certified bounds, the larger kept: the equivalence theorem over mixtures of whole plots at the design found
(:mod:`optdesign.exact.block_bounds`: a whole plot's runs share one hard-to-change setting), and the unblocked one:
V >= I, so X^T V^{-1} X <= X^T X for the same runs, and every split-plot design is an N-run design on the product
candidates, so the approximate optimum on X bounds every split-plot design's value from below
(:mod:`optdesign.exact.bounds`); that one ignores the whole plots, so it is low when eta is large.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError

from ..errors import InstanceTooLargeError, InvalidInputError, SolverError
from ..runtime.blas import single_threaded_blas
from ..validation import as_count, as_tolerance, check_array_size
from .block_bounds import combined, group_bound
from .block_information import as_eta, as_sizes, criterion_values, information, shrinkage
from .block_result import BlockedDesignResult
from .block_search import GroupSearch, best_of_starts
from .bounds import d_optimum, linear_optimum
from .criteria import DCriterion, ExactCriterion, LinearCriterion
from .design import CRITERIA, _moments

__all__ = ["split_plot_design"]

#: a column of X counts as a whole-plot column when it varies by at most this fraction of X's scale within a setting
WHOLE_PLOT_RTOL = 1e-12


def _region(factors: Any, name: str) -> Any:
    """The settings of one kind of factor: a mapping of levels or ranges (full factorial) or a table of points."""
    import pandas as pd

    from ..formulas import factor_grid

    if isinstance(factors, pd.DataFrame):
        if factors.shape[0] == 0 or factors.shape[1] == 0:
            raise InvalidInputError(f"{name} must have at least one factor and one setting, got shape {factors.shape}")
        return factors.reset_index(drop=True)
    if isinstance(factors, Mapping):
        return factor_grid(factors)
    raise InvalidInputError(f"{name} must map factor names to levels or ranges, or be a table of settings (a pandas "
                            f"DataFrame), got {type(factors).__name__}")


def _candidates(formula: str, whole: Any, sub: Any) -> tuple[np.ndarray, Any, list[str]]:
    """(X over every (whole-plot, sub-plot) pair, row a Ks + t; those pairs' settings; the model's columns)."""
    import pandas as pd
    from formulaic import Formula

    from ..formulas import candidates

    shared = sorted(set(whole.columns) & set(sub.columns))
    if shared:
        raise InvalidInputError(f"factors {', '.join(map(str, shared))} are both whole-plot and sub-plot factors")
    Kw, Ks = len(whole), len(sub)
    check_array_size(float(Kw) * Ks * (whole.shape[1] + sub.shape[1]), "the split-plot candidates",
                     instead="use fewer settings")
    table = pd.concat([whole.iloc[np.repeat(np.arange(Kw), Ks)].reset_index(drop=True),
                       sub.iloc[np.tile(np.arange(Ks), Kw)].reset_index(drop=True)], axis=1)
    X, points, columns = candidates(formula, table)  # refuses bad formulas, names that are not factors
    used = set(Formula(formula).required_variables)
    for kind, region in (("whole-plot", whole), ("sub-plot", sub)):
        missing = [str(f) for f in region.columns if f not in used]
        if missing:
            raise InvalidInputError(f"the {kind} factor(s) {', '.join(missing)} do not appear in the formula "
                                    f"{formula!r}: every factor of a split-plot design must be in the model")
    return X, points, columns


def _whole_plot_rank(X: np.ndarray, settings: int) -> tuple[int, list[int]]:
    """(rank, indices) of the columns of X that depend on the whole-plot setting only (the intercept, the terms of
    hard-to-change factors alone)."""
    X3 = X.reshape(settings, X.shape[0] // settings, X.shape[1])
    spread = np.max(np.ptp(X3, axis=1), axis=0)
    cols = np.flatnonzero(spread <= WHOLE_PLOT_RTOL * float(np.max(np.abs(X))))
    rank = int(np.linalg.matrix_rank(X3[:, 0, cols])) if cols.size else 0
    return rank, cols.tolist()


def _check_sizes(X: np.ndarray, sizes: np.ndarray, settings: int, columns: list[str]) -> None:
    """Refuse whole plots that leave the information singular for every design (say which part)."""
    N, G, p = int(sizes.sum()), sizes.size, X.shape[1]
    if N < p:
        raise InvalidInputError(f"the information X^T V^{{-1}} X of the p = {p} parameters is singular for every "
                                f"design of N = {N} < {p} runs")
    rank, cols = _whole_plot_rank(X, settings)
    if G < rank:
        names = ", ".join(columns[c] for c in cols)
        raise InvalidInputError(f"the information is singular for every design: the {rank} whole-plot parameters "
                                f"({names}) need at least {rank} whole plots, got {G}")


def _draw(rng: np.random.Generator, sizes: np.ndarray, settings: int, Ks: int) -> np.ndarray:
    """A random start: whole-plot settings spread evenly over the plots (each used once before any twice), sub-plot
    settings uniform."""
    levels = rng.permutation(np.resize(rng.permutation(settings), sizes.size))
    return np.repeat(levels, sizes) * Ks + rng.integers(Ks, size=int(sizes.sum()))


def _bound(X: np.ndarray, B: np.ndarray | None, solver: str | None, tol: float) -> tuple[float | None, str]:
    """(the unblocked approximate optimum's certified bound, or None; what it is)."""
    try:
        approx = d_optimum(X, tol) if B is None else linear_optimum(X, B, solver, tol)
    except (SolverError, InstanceTooLargeError) as error:
        return None, f"no certified bound: {error}"
    return approx.lower_bound, "the approximate optimum of the unrestricted design on X (no whole plots)"


def split_plot_design(formula: str, whole_plot_factors: Mapping[str, Any] | Any,
                      subplot_factors: Mapping[str, Any] | Any, whole_plot_sizes: ArrayLike,
                      criterion: Literal["D", "A", "I"] = "D", *, eta: float = 1.0, moments: ArrayLike | None = None,
                      restarts: int = 20, time_limit: float | None = None, seed: int = 0, tol: float = 1e-6,
                      solver: str | None = None) -> BlockedDesignResult:
    """Split-plot exact design: a hard-to-change setting per whole plot and an easy-to-change one per run.

    Minimises phi(M / N) over M = X^T V^{-1} X, V = I + eta Z Z^T (Z the whole-plot indicator), whose whole plots
    hold ``whole_plot_sizes`` runs each with one setting of the whole-plot factors (Goos 2002; as skpr's split-plot
    designs and pyoptex). The whole-plot and sub-plot settings are improved in turn (after Jones & Goos 2007),
    from ``restarts + 1`` random starts; the best design is returned with the certified bound of the unrestricted
    approximate optimum (module :mod:`optdesign.exact.split_plot`).

    Parameters
    ----------
    formula : str
        The model over all factors, e.g. ``"~ w + s + w:s + I(s**2)"`` (:func:`optdesign.candidates`).
    whole_plot_factors : mapping or pandas.DataFrame
        The hard-to-change factors: names to levels or ranges ``(low, high, points)`` (their full factorial), or
        a table of their allowed settings.
    subplot_factors : mapping or pandas.DataFrame
        The easy-to-change factors, likewise.
    whole_plot_sizes : array_like of int
        Runs per whole plot, each at least 1; N is their sum.
    criterion : {"D", "A", "I"}
        The optimality criterion.
    eta : float
        The variance ratio sigma_wp^2 / sigma^2 >= 0 (0: the runs are independent, the whole plots only restrict).
    moments : array_like, optional
        I-criterion only: the region's moment matrix E[x x^T] (p x p); the candidates (every pair of settings),
        uniformly, by default.
    restarts : int
        Starts after the first.
    time_limit : float, optional
        Seconds after which no new start begins.
    seed : int
        Seed of the random starts.
    tol : float
        Relative gap of the approximate optimum behind the bound.
    solver : str, optional
        Conic solver of the approximate A/I design (the chain by default).

    Returns
    -------
    BlockedDesignResult
        ``rows`` (candidate a Ks + t of every run, whole plot after whole plot), ``points`` (the candidates'
        settings), ``table()`` (whole plot, candidate and factor settings of every run), ``value``, ``values``,
        ``lower_bound`` and ``efficiency`` (certified, conservative), ``columns``.

    Raises
    ------
    InvalidInputError
        Factors given neither as a mapping nor as a table, a factor in both, a factor the formula leaves out, what
        :func:`optdesign.candidates` refuses (a formula that does not parse or names an unknown factor, dependent
        columns); whole-plot sizes empty or not positive whole numbers; eta negative or not finite; an unknown
        criterion; fewer runs than parameters, or fewer whole plots than whole-plot parameters (singular for
        every design); moments not a positive semidefinite p x p matrix (or given for D or A); no nonsingular start.

    Examples
    --------
    One hard-to-change factor (two levels) in four whole plots of three runs, one easy-to-change factor on three
    levels, a quadratic model:

    >>> import optdesign as od
    >>> res = od.split_plot_design("~ w + s + I(s**2)", {"w": [-1, 1]}, {"s": [-1, 0, 1]}, [3, 3, 3, 3])
    >>> res.table().groupby("whole_plot")["w"].nunique().max()    # w constant within each whole plot
    np.int64(1)
    >>> sorted(res.table()["w"].value_counts().tolist())
    [6, 6]
    """
    start = time.perf_counter()
    whole = _region(whole_plot_factors, "whole_plot_factors")
    sub = _region(subplot_factors, "subplot_factors")
    X, points, columns = _candidates(formula, whole, sub)
    sizes = as_sizes(whole_plot_sizes, "whole_plot_sizes")
    ratio = as_eta(eta)
    if not isinstance(criterion, str) or criterion.upper() not in CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    name = criterion.upper()
    settings, Ks = len(whole), len(sub)
    _check_sizes(X, sizes, settings, columns)
    B = _moments(moments, X, name)
    region = B if name == "I" and B is not None else _moments(None, X, "I")
    assert region is not None
    restarts = as_count(restarts, "restarts", minimum=0)
    deadline = np.inf if time_limit is None else start + as_tolerance(time_limit, "time_limit")
    rng = np.random.default_rng(as_count(seed, "seed", minimum=0))
    tol = as_tolerance(tol)
    rule: ExactCriterion = DCriterion() if B is None else LinearCriterion(B, name)
    shrink = shrinkage(sizes, "random", ratio)
    with single_threaded_blas():
        bound, kind = _bound(X, B, solver, tol)
        try:
            found = best_of_starts(lambda k: _draw(rng, sizes, settings, Ks),
                                   lambda rows: GroupSearch(X, rows, sizes, shrink, rule, plots=Ks), restarts,
                                   deadline)
        except LinAlgError:
            raise InvalidInputError("no start gave a nonsingular split-plot information matrix: these whole plots "
                                    "cannot estimate the model") from None
        M = information(X, found.rows, sizes, shrink)
        values = criterion_values(M, found.rows.size, region)
        grouped = group_bound(X, M, sizes, "random", ratio, B, plots=Ks)
    bound, extras = combined(bound, kind, grouped)
    extras.update(start_losses=found.losses, whole_plot_factors=[str(c) for c in whole.columns],
                  subplot_factors=[str(c) for c in sub.columns],
                  whole_plot_settings=found.rows[np.cumsum(sizes) - 1] // Ks)
    return BlockedDesignResult(
        rows=found.rows, block_sizes=sizes, criterion=name, value=values[name], lower_bound=bound, values=values,
        information=M, parameters=np.arange(X.shape[1]), block_effects="random", eta=ratio,
        starts=len(found.losses), moves=found.moves, solve_time=time.perf_counter() - start, points=points,
        columns=columns, kind="split-plot", extras=extras)
