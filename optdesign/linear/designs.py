"""Public entry points of the linear designs: G-/D-optimal, XY-allocation, XY-oracle, transductive.

Every min-max problem here is F* = min_w max_{y in Y} y^T A(w)^{-1} y with A(w) = X^T diag(w) X, and
differs only in its direction set Y (:mod:`optdesign.linear.directions`). ``method="auto"`` (default) runs
the certified fast path (:mod:`optdesign.linear.barrier`; G/D designs also :mod:`optdesign.linear.firstorder`)
and returns it when its certified gap meets ``tol``, else falls back to the cvxpy model of
:mod:`optdesign.linear.models`. G/D designs on EXCHANGE_MIN_ARMS arms or more use the active-set Frank–Wolfe
of :mod:`optdesign.linear.exchange` and never fall back to cvxpy (whose model would not fit).
When Y is all pairwise differences of many items (more than PAIR_LIST_LIMIT pairs), the directions are not
listed: :mod:`optdesign.linear.pairs` generates the pairs that bind and certifies the design over all of them.
"""

from __future__ import annotations

import functools
import inspect
import time
import warnings
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..blas import single_threaded_blas
from ..deadline import as_time_limit, budget_expired, remaining_budget, stop_reason, time_budget
from ..errors import InvalidInputError
from ..result import DesignResult, FastPathResult, relative_gap
from ..validation import as_arms, as_matrix, as_tolerance, as_vector, check_direction_scale, check_weights
from . import firstorder
from .barrier import minmax_barrier
from .directions import oracle_directions, pairwise_differences
from .exchange import d_optimal_exchange, spanning_arms
from .generation import RowPricer, generate_directions
from .models import DOptimalModel, MinMaxDesignModel, d_optimal_model_fits, minmax_model_fits
from .pairs import pair_count, pairwise_design

METHODS = ("auto", "cvxpy", "barrier", "frank-wolfe", "multiplicative", "exchange")
MINMAX_METHODS = ("auto", "cvxpy", "barrier")
DEFAULT_TOL = 1e-4
DIRECTION_LIST_LIMIT = 2_000  # above this many directions, min-max designs generate the ones that bind
AUTO_FALLBACK_CONES = 200_000  # ``method="auto"`` hands an uncertified barrier design to cvxpy up to this size
BARRIER_TIME_LIMIT = 30.0  # seconds of the first barrier attempt (``auto``, ``barrier``)
LONG_BARRIER_TIME_LIMIT = 300.0  # continued barrier run when the cvxpy model is too large for ``auto``
# ``auto`` G/D designs switch to the active-set exchange from this many arms: measured 5x faster than full
# Frank–Wolfe at K = 2000 (d = 4..20) and 100x at K = 20,000, equal at K = 500 (benchmarks/bench_designs.py)
EXCHANGE_MIN_ARMS = 2_000
EXCHANGE_TIME_LIMIT = 120.0  # seconds, without a caller's time_limit; past it the best priced design is returned


# --------------------------------------------------------------------------------------------
# dispatch between the fast path and the cvxpy model


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise InvalidInputError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    return method


TIME_LIMIT_DOC = """

    ``time_limit`` (seconds, default None: each path's own limit) bounds the whole call; when it is spent, or
    at the first Ctrl-C inside :func:`optdesign.deadline.graceful_interrupt`, the best certified design so far
    is returned (status ``"not_converged"`` or ``"interrupted"``, with a RuntimeWarning if its gap exceeds tol).
    """


def _within_time_limit(design: Callable[..., DesignResult]) -> Callable[..., DesignResult]:
    """Run a public design function under its caller's ``time_limit`` (seconds, None = the per-path defaults).

    Every iterative path inside stops by the limit, or at the first Ctrl-C inside
    :func:`optdesign.deadline.graceful_interrupt`, and the best certified design is returned with status
    ``"not_converged"`` or ``"interrupted"``, its certified ``gap`` and a RuntimeWarning when the gap exceeds ``tol``.
    """

    @functools.wraps(design)
    def run(*args, time_limit: float | None = None, **kwargs):
        limit = as_time_limit(time_limit)
        with time_budget(limit):
            result = design(*args, **kwargs)
        tol = kwargs.get("tol", DEFAULT_TOL)
        if result.status != "optimal" and result.gap is not None and result.gap > tol:
            why = "Ctrl-C" if result.status == "interrupted" else "its time limit"
            warnings.warn(
                f"{result.criterion} design on {result.weights.size:,} arms stopped at {why} with certified gap "
                f"{result.gap:.2e} > tol = {tol:g}; returning the best design found", RuntimeWarning, stacklevel=2,
            )
        return result

    signature = inspect.signature(design)
    limit = inspect.Parameter("time_limit", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="float | None")
    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), limit])
    doc = (design.__doc__ or "").rstrip()
    head, examples, tail = doc.partition("\n\n    Examples\n")  # the time limit goes before the examples
    run.__doc__ = head + TIME_LIMIT_DOC.rstrip() + (examples + tail if examples else "")
    return run


def _fast_result(res: FastPathResult, method: str, criterion: str, elapsed: float) -> DesignResult:
    return DesignResult(
        weights=res.weights, value=res.value, status="optimal" if res.converged else stop_reason(),
        solver="numpy", solve_time=elapsed, gap=relative_gap(res.value, res.lower_bound), method=method,
        criterion=criterion, lower_bound=res.lower_bound, iterations=res.iterations,
    )


def _run_fast(fn, method: str, criterion: str, *args, **kwargs) -> DesignResult:
    start = time.perf_counter()
    with single_threaded_blas():
        res = fn(*args, **kwargs)
    return _fast_result(res, method, criterion, time.perf_counter() - start)


def minmax_design(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    solver: str | None = None,
    method: str = "auto",
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
    """
    X = as_arms(X)
    Y = check_direction_scale(as_matrix(Y, "Y", n_cols=X.shape[1]), X)
    _check_method(method)
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
        def solve(Y_working, w_start, inner_tol):
            return _listed_minmax(X, Y_working, solver, method, inner_tol, criterion, w_start)

        return generate_directions(X, RowPricer(Y), solve, tol=tol, batch=max(50, 40 * X.shape[1]),
                                   explicit=lambda: _listed_minmax(X, Y, solver, method, tol, criterion, w0))
    return _listed_minmax(X, Y, solver, method, tol, criterion, w0)


def _listed_minmax(X, Y, solver, method: str, tol: float, criterion: str, w0) -> DesignResult:
    """(*) on the listed directions: barrier, then cvxpy when not certified and the model is small enough."""
    if method in ("auto", "barrier"):
        result = _run_fast(minmax_barrier, "barrier", criterion, X, Y, tol=tol, w0=w0, time_limit=BARRIER_TIME_LIMIT)
        if method == "barrier" or result.gap <= tol or budget_expired():
            return result
        if X.shape[0] * Y.shape[0] > AUTO_FALLBACK_CONES:  # too large for the conic solver: keep following the path
            more = _run_fast(minmax_barrier, "barrier", criterion, X, Y, tol=tol, w0=result.weights,
                             time_limit=LONG_BARRIER_TIME_LIMIT, max_iter=5000)
            more = replace(more, solve_time=more.solve_time + result.solve_time)
            return more if more.gap < result.gap else result
    return MinMaxDesignModel(X, Y, solver=solver).solve(criterion=criterion)


def _d_fast(X: np.ndarray, method: str, tol: float, criterion: str) -> DesignResult:
    if method == "barrier":  # Kiefer–Wolfowitz: the optimum is exactly d, sharper than the dual bound
        res = _run_fast(minmax_barrier, "barrier", criterion, X, X, tol=tol)
        return _replace_bound(res, float(X.shape[1]))
    if method == "multiplicative":
        return _run_fast(firstorder.d_optimal_multiplicative, method, criterion, X, tol=tol)
    if method == "exchange" or (method == "auto" and X.shape[0] >= EXCHANGE_MIN_ARMS):
        limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None  # a caller's limit replaces it
        return _run_fast(d_optimal_exchange, "exchange", criterion, X, tol=tol, time_limit=limit)
    return _run_fast(firstorder.d_optimal_fw, "frank-wolfe", criterion, X, tol=tol)


# --------------------------------------------------------------------------------------------
# public entry points


def _kiefer_wolfowitz_design(X, solver, method: str, tol: float, criterion: str, cvxpy_model,
                             model_fits) -> DesignResult:
    """Shared dispatch of G- and D-optimal designs (same optimum, G-value d, by Kiefer–Wolfowitz).

    ``auto`` on EXCHANGE_MIN_ARMS arms or more returns the exchange design even when its time limit stops it
    (status "not_converged" and its certified gap) instead of building the cvxpy model, and so does any path
    once the caller's time limit is spent or Ctrl-C was pressed, or when the cvxpy model would be too large
    (``model_fits(K, d)`` is False).
    """
    _check_method(method)
    try:
        large = np.ndim(X) == 2 and np.shape(X)[0] >= EXCHANGE_MIN_ARMS
    except ValueError:  # a ragged nested list: as_arms names the problem
        large = False
    X = spanning_arms(X) if large else as_arms(X)  # same check, without copying a large X
    tol = as_tolerance(tol)
    if method != "cvxpy":
        result = _d_fast(X, method, tol, criterion)
        if method != "auto" or result.gap <= tol or result.method == "exchange" or budget_expired():
            return result
        if not model_fits(*X.shape):
            return replace(result, extras={**result.extras, "fallback": "the cvxpy model would not fit"})
    return cvxpy_model(X, solver)


@_within_time_limit
def g_optimal(X, *, solver: str | None = None, method: str = "auto", tol: float = DEFAULT_TOL) -> DesignResult:
    """G-optimal design argmin_w max_x x^T A(w)^{-1} x; the optimal value is d (Kiefer–Wolfowitz).

    The fast path is the D-optimal Frank–Wolfe (same optimum by Kiefer–Wolfowitz, certified by
    max_k x_k^T A^{-1} x_k / d - 1), on an active set with full pricing (``"exchange"``) from
    EXCHANGE_MIN_ARMS arms; ``method="cvxpy"`` solves the min-max SOCP (*) with Y = X.

    Examples
    --------
    Three arms of the plane: the uniform design reaches the optimum d = 2, which is also the lower bound.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.g_optimal(X)
    >>> print(round(res.value, 3), res.lower_bound, res.gap <= 1e-4)
    2.0 2.0 True
    >>> np.round(res.weights, 3)
    array([0.333, 0.333, 0.333])
    """

    def model(X, solver):  # Kiefer–Wolfowitz: the exact optimum d is sharper than the dual bound
        res = MinMaxDesignModel(X, X, solver=solver).solve(criterion="g-optimal")
        return _replace_bound(res, float(X.shape[1]))

    return _kiefer_wolfowitz_design(X, solver, method, tol, "g-optimal", model, lambda K, d: minmax_model_fits(K, K))


@_within_time_limit
def d_optimal(X, *, solver: str | None = None, method: str = "auto", tol: float = DEFAULT_TOL) -> DesignResult:
    """D-optimal design argmax_w log det A(w); ``value`` reports its G-value (d at the optimum)."""
    return _kiefer_wolfowitz_design(
        X, solver, method, tol, "d-optimal", lambda X, solver: DOptimalModel(X, solver=solver).solve(),
        d_optimal_model_fits,
    )


def _replace_bound(res: DesignResult, lower: float) -> DesignResult:
    return replace(res, lower_bound=lower, gap=relative_gap(res.value, lower))


@_within_time_limit
def xy_allocation(
    X, Y=None, *, solver: str | None = None, method: str = "auto", tol: float = DEFAULT_TOL
) -> DesignResult:
    """XY-allocation argmin_w max_{y in Y} y^T A(w)^{-1} y (Soare et al. 2014, eq. 14, continuous).

    ``Y`` defaults to all pairwise differences of the rows of X (generated, not listed, above
    PAIR_LIST_LIMIT pairs: :mod:`optdesign.linear.pairs`).

    Examples
    --------
    The same three arms: the difference (1, -1) of the first two binds, so the design pulls only them,
    and the certified lower bound matches the value.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.xy_allocation(X)
    >>> print(round(res.value, 2), round(res.lower_bound, 2))
    4.0 4.0
    >>> np.round(res.weights, 2)
    array([0.5, 0.5, 0. ])
    """
    X = as_arms(X)
    if Y is None:
        return _all_pairs_design(X, X, solver, method, tol, "xy", "X has a single distinct arm")
    Y = as_matrix(Y, "Y", n_cols=X.shape[1])
    return minmax_design(X, Y, solver=solver, method=method, tol=tol, criterion="xy")


PAIR_LIST_LIMIT = 20_000  # above this many pairs, designs generate the pairs they need (optdesign.linear.pairs)
EXPLICIT_PAIR_MAX = 2_000_000  # ... unless the pairs tie (symmetric items) and the full list fits (100 MB at d = 6)


def _all_pairs_design(X, Z, solver, method: str, tol: float, criterion: str, single: str) -> DesignResult:
    """min_w max_{z, z' in Z} ||z - z'||^2_{A(w)^{-1}}: an explicit direction list up to PAIR_LIST_LIMIT
    pairs, constraint generation over pairs above it (same certificate, on all pairs)."""
    def explicit():
        Y = pairwise_differences(Z)
        if Y.shape[0] == 0:
            raise InvalidInputError(f"{single}: there is nothing to identify")
        return minmax_design(X, Y, solver=solver, method=method, tol=tol, criterion=criterion)

    n_pairs = pair_count(Z.shape[0])
    if n_pairs <= PAIR_LIST_LIMIT:
        return explicit()
    _check_method(method)
    tol = as_tolerance(tol)

    def solve(Y, w0, inner_tol):
        return minmax_design(X, Y, solver=solver, method=method, tol=inner_tol, criterion=criterion, w0=w0)

    return pairwise_design(X, Z, solve, tol=tol, explicit=explicit if n_pairs <= EXPLICIT_PAIR_MAX else None)


def _oracle_design(X, Z, theta, solver, method: str, tol: float, criterion: str, key: str, name: str) -> DesignResult:
    """min_w max_{z != z*} ||z* - z||^2_{A(w)^{-1}} / ((z* - z)^T theta)^2; extras[key] = index of z*."""
    theta = as_vector(theta, "theta", length=X.shape[1])
    Y, best = oracle_directions(Z, theta, name)
    check_direction_scale(Y, X, "the oracle directions (z* - z) / gap(z)", rescale=f"theta or {name}")
    res = minmax_design(X, Y, solver=solver, method=method, tol=tol, criterion=criterion)
    res.extras[key] = best
    return res


@_within_time_limit
def xy_oracle(X, theta, *, solver: str | None = None, method: str = "auto", tol: float = DEFAULT_TOL) -> DesignResult:
    """XY-oracle design; value H_LB = min_w max_{x != x*} ||x* - x||^2_{A(w)^{-1}} / Delta(x)^2 (Soare eq. 6).

    ``extras['best_arm']`` is x* = argmax_x x^T theta, which must be unique.
    """
    X = as_arms(X)
    return _oracle_design(X, X, theta, solver, method, tol, "xy-oracle", "best_arm", "X")


@_within_time_limit
def transductive(
    X, Z, theta=None, *, solver: str | None = None, method: str = "auto", tol: float = DEFAULT_TOL
) -> DesignResult:
    """Transductive design (Fiez et al. 2019): measure on X, identify the best of Z.

    Without theta: min_w max_{z, z' in Z} ||z - z'||^2_{A(w)^{-1}}. With theta: rho* =
    min_w max_{z != z*} ||z* - z||^2_{A(w)^{-1}} / ((z* - z)^T theta)^2, where the lower bound is
    E[tau] >= rho* log(1/(2.4 delta)) for unit Gaussian noise. In the multi-armed case
    (X = Z = canonical basis) rho* = min_w max_a (1/w_1 + 1/w_a) / Delta_a^2, so the
    Garivier–Kaufmann Gaussian characteristic time is T*_GK = 2 rho*.
    ``extras['best_item']`` is the index of z* when theta is given.
    """
    X = as_arms(X)
    Z = check_direction_scale(as_matrix(Z, "Z", n_cols=X.shape[1]), X, "Z")
    if theta is not None:
        return _oracle_design(X, Z, theta, solver, method, tol, "transductive-oracle", "best_item", "Z")
    return _all_pairs_design(X, Z, solver, method, tol, "transductive", "Z has a single distinct item")
