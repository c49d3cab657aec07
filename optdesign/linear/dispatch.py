"""How a linear design problem is solved: the certified fast path, the cvxpy fallback, and time limits.

Every min-max problem is F* = min_w max_{y in Y} y^T A(w)^{-1} y with A(w) = X^T diag(w) X, and differs only in
its direction set Y (:mod:`optdesign.linear.directions`). ``method="auto"`` (default) runs the certified fast path
(:mod:`optdesign.linear.barrier`; G/D designs also :mod:`optdesign.linear.firstorder`) and returns it when its
certified gap meets ``tol``, else falls back to the cvxpy model of :mod:`optdesign.linear.models` when that model
fits. G/D designs with K close to d, (K - d)^2 <= CORANK_RATIO d, use the co-rank variances of
:mod:`optdesign.linear.corank` (O(K (K - d)^2) per step after one QR of X; K = d is the closed form w = 1/d);
the others, on EXCHANGE_MIN_ARMS arms or more, use the active-set Frank–Wolfe of :mod:`optdesign.linear.exchange`
and never fall back to cvxpy (the threshold is measured: ``python benchmarks/bench_dispatch.py`` times both fast
paths on the same rows, n = 50..10^5, p = 2..21); below it, plain Frank–Wolfe. Above DIRECTION_LIST_LIMIT listed
directions the min-max designs work on a working set priced over all of them (:mod:`optdesign.linear.generation`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..result import DesignResult, FastPathResult, relative_gap
from ..runtime.blas import single_threaded_blas
from ..runtime.deadline import as_time_limit, budget_expired, remaining_budget, stop_reason, time_budget
from ..validation import as_arms, as_matrix, as_tolerance, check_direction_scale, check_weights
from ..vocabulary import DESIGN_METHODS, MINMAX_METHODS, DesignMethod, check_option
from . import firstorder
from .barrier import minmax_barrier
from .corank import d_optimal_corank
from .exchange import d_optimal_exchange, spanning_factor
from .generation import RowPricer, generate_directions
from .models import MinMaxDesignModel

__all__ = ["DEFAULT_TOL", "METHODS", "minmax_design"]

METHODS = DESIGN_METHODS  # the design methods (optdesign.vocabulary.DesignMethod)
DEFAULT_TOL = 1e-4
DIRECTION_LIST_LIMIT = 2_000  # above this many directions, min-max designs generate the ones that bind
AUTO_FALLBACK_CONES = 200_000  # ``method="auto"`` hands an uncertified barrier design to cvxpy up to this size
BARRIER_TIME_LIMIT = 30.0  # seconds of the first barrier attempt (``auto``, ``barrier``)
LONG_BARRIER_TIME_LIMIT = 300.0  # continued barrier run when the cvxpy model is too large for ``auto``
# ``auto`` G/D designs take the active-set exchange from this many arms, plain Frank–Wolfe below. Measured by
# ``python benchmarks/bench_dispatch.py`` (one BLAS thread, Gaussian rows with p = 2..20 and quadratic response
# surfaces, plain or logistic-weighted, with p = 3..21, tol 1e-4 and 1e-6): the exchange was faster on every one of
# the 112 cases with n = 100..3000 (1.0x-92x; median about 4x at n = 100..1000, 10-60x at 3000) and on every case
# above; at n = 50..70 between 0.8x and 3.8x (mostly faster), below 50 both take 1-2 ms. Frank–Wolfe also misses
# tight tolerances where the exchange does not (degree-6 polynomial on 401 points at tol 1e-11: Frank–Wolfe
# uncertified, then the cvxpy fallback in 1.9 s to a gap of 2e-5; the exchange 19 ms to 3e-13)
EXCHANGE_MIN_ARMS = 50
# from this many arms they are checked without a copy of X (:func:`~.exchange.spanning_factor`), whose Cholesky
# factor of X^T X seeds the exchange; below, by :func:`optdesign.validation.as_arms`
SPANNING_FACTOR_MIN_ARMS = 2_000
EXCHANGE_TIME_LIMIT = 120.0  # seconds, without a caller's time_limit; past it the best priced design is returned
# ``auto`` G/D designs use the co-rank variances when r^2 = (K - d)^2 <= CORANK_RATIO d. Measured against the
# previous path (benchmarks/bench_designs_scale.py --only corank, Gaussian arms, d = 500 and 1000): faster up to
# r^2 / d = 64, slower at d = 500 from r^2 / d = 128 (an O(K r^2) step against an O(K d) rank-one update)
CORANK_RATIO = 32.0


# --------------------------------------------------------------------------------------------
# dispatch between the fast path and the cvxpy model


def check_method(method: object) -> DesignMethod:
    """``method`` if it is one of METHODS, else InvalidInputError."""
    return check_option(method, "method", DESIGN_METHODS)


def check_solver(solver: object) -> None:
    """A forced solver must be a usable one even when the fast path answers (then it is not used): InvalidInputError
    for a name that is not installed, or MOSEK without a licence (:func:`optdesign.runtime.solvers.solver_chain`)."""
    if solver is not None:
        from ..runtime.solvers import solver_chain  # imports cvxpy: only when a solver is named

        solver_chain(solver)  # type: ignore[arg-type]  # it refuses non-strings itself


def within_time_limit(time_limit: float | None, tol: float, solve: Callable[[], DesignResult]) -> DesignResult:
    """Run ``solve()`` under the caller's ``time_limit`` (seconds; None keeps each path's own limit).

    Every iterative path inside stops by the limit, or at the first Ctrl-C inside
    :func:`optdesign.runtime.deadline.graceful_interrupt`, and the best certified design is returned with status
    ``"not_converged"`` or ``"interrupted"``, its certified ``gap`` and a RuntimeWarning when the gap exceeds ``tol``.
    Returns ``solve()``'s result.
    """
    with time_budget(as_time_limit(time_limit)):
        result = solve()
    if result.status != "optimal" and result.gap is not None and result.gap > tol:
        why = {"interrupted": "Ctrl-C", "not_converged": "its time limit"}.get(result.status, "its solver's accuracy")
        warnings.warn(
            f"{result.criterion} design on {result.weights.size:,} arms stopped at {why} with certified gap "
            f"{result.gap:.2e} > tol = {tol:g}; returning the best design found", RuntimeWarning, stacklevel=3,
        )
    return result


def _fast_result(res: FastPathResult, method: str, criterion: str, elapsed: float) -> DesignResult:
    return DesignResult(
        weights=res.weights, value=res.value, status="optimal" if res.converged else stop_reason(),
        solver="numpy", solve_time=elapsed, gap=relative_gap(res.value, res.lower_bound), method=method,
        criterion=criterion, lower_bound=res.lower_bound, iterations=res.iterations,
    )


def _fast_gap(result: DesignResult) -> float:
    """The certified gap of a fast-path design (always set: every fast path returns a lower bound)."""
    return cast(float, result.gap)


def _run_fast(fn: Callable[..., FastPathResult], method: str, criterion: str, *args: Any,
              **kwargs: Any) -> DesignResult:
    start = time.perf_counter()
    with single_threaded_blas():
        res = fn(*args, **kwargs)
    return _fast_result(res, method, criterion, time.perf_counter() - start)


def minmax_design(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    solver: str | None = None,
    method: DesignMethod = "auto",
    tol: float = DEFAULT_TOL,
    criterion: str = "minmax",
    w0: np.ndarray | None = None,
) -> DesignResult:
    """Solve (*) for arms X and directions Y: ``auto`` = barrier, then cvxpy if not certified.

    Above DIRECTION_LIST_LIMIT directions, ``auto`` and ``barrier`` solve on a working set of directions and
    price all of them at each design (:mod:`optdesign.linear.generation`; certificate on all directions).
    Above AUTO_FALLBACK_CONES (arms x directions) ``auto`` does not build the cvxpy model; it
    continues the barrier for up to LONG_BARRIER_TIME_LIMIT seconds and returns its best certified
    design (``status`` "not_converged" and the certified ``gap`` if ``tol`` is still not met).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms, one per row; they must span R^d.
    Y : array_like, shape (m, d)
        The directions y of (*) (each row counts, y and -y alike).
    solver : str, optional
        Conic solver of the cvxpy path; the default chain otherwise.
    method : str
        ``"auto"`` (default), ``"barrier"`` (fast path only) or ``"cvxpy"`` (:class:`MinMaxDesignModel` only).
    tol : float
        Certified relative gap ``value / lower_bound - 1`` at which the barrier stops.
    criterion : str
        Label stored in the result's ``criterion`` (e.g. ``"xy"``); it does not change the problem.
    w0 : array_like, shape (K,), optional
        Warm start of the barrier (nonnegative weights); the uniform design by default.

    Returns
    -------
    DesignResult
        ``weights``, ``value`` F(w), certified ``lower_bound`` and ``gap``, ``status``, ``method``
        (``"barrier"`` or ``"cvxpy"``); ``extras['directions']`` and ``extras['working_directions']`` when
        the directions were generated.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, NaN/inf, shapes that do not match, a method of G/D designs only, a bad
        ``tol`` or ``w0``.
    InstanceTooLargeError
        ``method="cvxpy"`` above MINMAX_MAX_CONES arm-direction pairs.
    SolverError
        Every conic solver of the chain failed.
    """
    X = as_arms(X)
    Y = check_direction_scale(as_matrix(Y, "Y", n_cols=X.shape[1]), X)
    check_method(method)
    check_solver(solver)
    if method not in MINMAX_METHODS:
        raise InvalidInputError(
            f"method {method!r} is offered for G/D-optimal designs only; min-max designs accept "
            f"{', '.join(MINMAX_METHODS)} (Frank–Wolfe stalls above the optimum of a max of quadratic forms)"
        )
    tol = as_tolerance(tol)
    if w0 is not None:
        w0 = check_weights(w0, "w0")
        if w0.size != X.shape[0]:
            raise InvalidInputError(f"w0 must have one weight per arm ({X.shape[0]}), got {w0.size}")
    if Y.shape[0] > DIRECTION_LIST_LIMIT and method in ("auto", "barrier"):
        def solve(Y_working: np.ndarray, w_start: np.ndarray | None, inner_tol: float) -> DesignResult:
            return _listed_minmax(X, Y_working, solver, method, inner_tol, criterion, w_start)

        return generate_directions(X, RowPricer(Y), solve, tol=tol, batch=max(50, 40 * X.shape[1]),
                                   explicit=lambda: _listed_minmax(X, Y, solver, method, tol, criterion, w0))
    return _listed_minmax(X, Y, solver, method, tol, criterion, w0)


def _listed_minmax(X: np.ndarray, Y: np.ndarray, solver: str | None, method: DesignMethod, tol: float, criterion: str,
                   w0: np.ndarray | None) -> DesignResult:
    """(*) on the listed directions: barrier, then cvxpy when not certified and the model is small enough."""
    if method in ("auto", "barrier"):
        result = _run_fast(minmax_barrier, "barrier", criterion, X, Y, tol=tol, w0=w0, time_limit=BARRIER_TIME_LIMIT)
        if method == "barrier" or _fast_gap(result) <= tol or budget_expired():
            return result
        if X.shape[0] * Y.shape[0] > AUTO_FALLBACK_CONES:  # too large for the conic solver: keep following the path
            more = _run_fast(minmax_barrier, "barrier", criterion, X, Y, tol=tol, w0=result.weights,
                             time_limit=LONG_BARRIER_TIME_LIMIT, max_iter=5000)
            more = replace(more, solve_time=more.solve_time + result.solve_time)
            return more if _fast_gap(more) < _fast_gap(result) else result
    return MinMaxDesignModel(X, Y, solver=solver).solve(criterion=criterion)


def corank_applies(K: int, d: int) -> bool:
    """Whether ``auto`` G/D designs on K arms in R^d take the co-rank path: (K - d)^2 <= CORANK_RATIO d."""
    return (K - d) ** 2 <= CORANK_RATIO * d


def _d_fast(X: np.ndarray, method: DesignMethod, tol: float, criterion: str,
            factor: np.ndarray | None = None) -> DesignResult:
    if method == "corank" or (method == "auto" and corank_applies(*X.shape)):
        return _run_fast(d_optimal_corank, "corank", criterion, X, tol=tol)
    if method == "barrier":  # Kiefer–Wolfowitz: the optimum is exactly d, sharper than the dual bound
        res = _run_fast(minmax_barrier, "barrier", criterion, X, X, tol=tol)
        return replace_bound(res, float(X.shape[1]))
    if method == "multiplicative":
        return _run_fast(firstorder.d_optimal_multiplicative, method, criterion, X, tol=tol)
    if method == "exchange" or (method == "auto" and X.shape[0] >= EXCHANGE_MIN_ARMS):
        limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None  # a caller's limit replaces it
        return _run_fast(d_optimal_exchange, "exchange", criterion, X, tol=tol, time_limit=limit, factor=factor)
    return _run_fast(firstorder.d_optimal_fw, "frank-wolfe", criterion, X, tol=tol)


# --------------------------------------------------------------------------------------------
# public entry points


def kiefer_wolfowitz_design(X: ArrayLike, solver: str | None, method: DesignMethod, tol: float, criterion: str,
                             cvxpy_model: Callable[[np.ndarray, str | None], DesignResult],
                             model_fits: Callable[[int, int], bool]) -> DesignResult:
    """Shared dispatch of G- and D-optimal designs (same optimum, G-value d, by Kiefer–Wolfowitz).

    ``auto`` on EXCHANGE_MIN_ARMS arms or more returns the exchange design even when its time limit stops it
    (status "not_converged" and its certified gap) instead of building the cvxpy model, and so does any path
    once the caller's time limit is spent or Ctrl-C was pressed, or when the cvxpy model would be too large
    (``model_fits(K, d)`` is False). ``cvxpy_model(arms, solver)`` builds and solves the conic model. ``value`` and
    ``g_value`` are the G-value (:func:`in_d_units` reports a D-optimal design in its own units).
    """
    result = _kiefer_wolfowitz(X, solver, method, tol, criterion, cvxpy_model, model_fits)
    return replace(result, g_value=result.value)


def _kiefer_wolfowitz(X: ArrayLike, solver: str | None, method: DesignMethod, tol: float, criterion: str,
                      cvxpy_model: Callable[[np.ndarray, str | None], DesignResult],
                      model_fits: Callable[[int, int], bool]) -> DesignResult:
    check_method(method)
    check_solver(solver)
    try:
        large = np.ndim(X) == 2 and np.shape(X)[0] >= SPANNING_FACTOR_MIN_ARMS
    except ValueError:  # a ragged nested list: as_arms names the problem
        large = False
    # same check, without copying a large X; its factor L L^T = X^T X seeds the exchange
    arms, factor = spanning_factor(X) if large else (as_arms(X), None)
    tol = as_tolerance(tol)
    if method != "cvxpy":
        result = _d_fast(arms, method, tol, criterion, factor)
        if method != "auto" or _fast_gap(result) <= tol or result.method == "exchange" or budget_expired():
            return result
        if not model_fits(*arms.shape):
            return replace(result, fallback="the cvxpy model would not fit")
    return cvxpy_model(arms, solver)


def replace_bound(res: DesignResult, lower: float) -> DesignResult:
    """``res`` with lower bound ``lower`` and the matching gap (Kiefer–Wolfowitz: d is the exact optimum)."""
    return replace(res, lower_bound=lower, gap=relative_gap(res.value, lower))


def in_d_units(X: np.ndarray, res: DesignResult, criterion: str = "d-optimal") -> DesignResult:
    """A Kiefer–Wolfowitz design (``value`` its G-value g) reported in D units: value det A(w)^(-1/d), lower bound
    value d / g (Atwood 1969: the D-efficiency is at least d / g), gap g / d - 1 as before, g in ``g_value``.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms the design weighs.
    res : DesignResult
        The design from :func:`kiefer_wolfowitz_design` (lower bound d).
    criterion : str
        The label of the result.

    Returns
    -------
    DesignResult
        The same design, in the units of the D-criterion.
    """
    support = res.weights > 0
    sign, log_det = np.linalg.slogdet(X[support].T @ (res.weights[support, None] * X[support]))
    value = float(np.exp(-log_det / X.shape[1])) if sign > 0 else float("inf")
    g, d = res.value, float(X.shape[1])
    lower = value * d / g if np.isfinite(value) and np.isfinite(g) else 0.0
    return replace(res, value=value, lower_bound=lower, gap=relative_gap(g, d), g_value=g, criterion=criterion)
