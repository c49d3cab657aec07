"""Public entry points of the pseudo-Bayesian D-, A- and I-optimal designs of a GLM, and how they are solved.

``method="fast"`` runs the certified active set of :mod:`optdesign.glm.exchange`, ``"cvxpy"`` the model of
:mod:`optdesign.glm.model` (D) or :mod:`optdesign.glm.trace_model` (A, I), certified the same way, ``"auto"``
(default) the fast path, handing over to the model only when the fast path's certified gap exceeds ``tol`` and the
model fits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from ..docstrings import shared_doc
from ..linear.dispatch import DEFAULT_TOL, EXCHANGE_TIME_LIMIT, check_solver, within_time_limit
from ..result import DesignResult, better_certified
from ..runtime.blas import single_threaded_blas
from ..runtime.deadline import budget_expired, remaining_budget, stop_reason
from ..validation import as_tolerance
from ..vocabulary import CLASSICAL_METHODS, ClassicalMethod, GlmLink, check_option
from .certificate import design_result
from .exchange import bayesian_exchange, trace_exchange
from .model import BayesianDModel, bayesian_model_fits
from .prior import BayesianProblem, bayesian_problem
from .trace_bound import trace_result
from .trace_model import BayesianTraceModel
from .trace_prior import TraceProblem, trace_problem

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["bayesian_a_optimal", "bayesian_d_optimal", "bayesian_i_optimal"]

# the parameter and error descriptions the three designs share (substituted by _shared_doc)
_OPTIONS_DOC = """    method : str
        ``"auto"`` (default), ``"fast"`` (the active set, certified) or ``"cvxpy"`` ({model}).
    solver : str, optional
        Conic solver of the cvxpy model (CLARABEL, then SCS, by default).
    tol : float
        Certified relative gap at which the fast path stops ({gap}).
    time_limit : float, optional
        Seconds for the whole call; when they are spent (or at the first Ctrl-C inside
        :func:`optdesign.runtime.deadline.graceful_interrupt`) the best certified design is returned (status
        ``"not_converged"`` or ``"interrupted"``, RuntimeWarning if its gap exceeds ``tol``)."""

_DOC = {
    "problem": """    X : array_like or CandidateSet
        The candidates, K x p, one per row; they must span R^p.
    draws : array_like
        The prior draws theta_s, S x p, one per row.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.""",
    "prior_weights": """    prior_weights : array_like, optional
        Nonnegative weights pi_s of the draws (importance weights; normalised); equal by default.""",
    "options_d": _OPTIONS_DOC.format(model="one log det cone per draw", gap="max_i d_i / p - 1"),
    "options_trace": _OPTIONS_DOC.format(model="one matrix fraction per draw", gap="max_i h_i / Phi - 1"),
    "raises": """    InstanceTooLargeError
        The K x S weights above the memory limit; ``method="cvxpy"`` with S K p^2 above the model's limit.
    SolverError
        Every conic solver of the chain failed (``"cvxpy"``).""",
}

_shared_doc = shared_doc(_DOC)


@_shared_doc
def bayesian_d_optimal(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, *,
                       prior_weights: ArrayLike | None = None, method: ClassicalMethod = "auto",
                       solver: str | None = None, tol: float = DEFAULT_TOL,
                       time_limit: float | None = None) -> DesignResult:
    """Pseudo-Bayesian D-optimal design of a GLM: argmax_w sum_s pi_s log det M_s(w) over prior draws theta_s.

    M_s(w) = sum_i w_i nu(x_i^T theta_s) x_i x_i^T is the information under draw s (:func:`glm_weights`); the
    criterion, the prior mean of log det M(w) estimated by the draws, is concave in w. ``value`` is
    exp(-Phi(w) / p), the prior's geometric mean of det M_s(w)^{-1/p} (smaller is better; det M(w)^{-1/p} for one
    draw), certified by the equivalence theorem: with d_i(w) = sum_s pi_s nu_is x_i^T M_s(w)^{-1} x_i,
    Phi* <= Phi(w) + p log(max_i d_i / p), so ``lower_bound`` = value p / max_i d_i and ``gap`` = max_i d_i / p - 1
    (:mod:`optdesign.glm.certificate`). With one draw it is the locally D-optimal design at that draw.

    Parameters
    ----------
%(problem)s
%(prior_weights)s
%(options_d)s

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X, ``value``, ``lower_bound`` and ``gap`` (certified), ``status``, ``solver``,
        ``method`` (``"exchange"`` or ``"cvxpy"``), ``iterations`` (pricing passes), ``criterion="bayesian-d"``,
        ``extras["log_det"]`` (Phi(w)), ``extras["log_det_upper"]`` (the certified bound on Phi*),
        ``extras["draws"]`` and ``link``.

    Raises
    ------
    InvalidInputError
        An unknown link or method, candidates that do not span R^p, NaN/inf entries, draws with the wrong number of
        columns, bad prior weights, weights that overflow, a draw under which the candidates' information is
        singular.
%(raises)s

    Examples
    --------
    Logistic regression on [-3, 3], slope known to lie near 1: draws of (theta_0, theta_1).

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-3, 3, 61)
    >>> X = np.column_stack([np.ones_like(x), x])
    >>> draws = np.random.default_rng(0).normal([0.0, 1.0], [0.3, 0.3], size=(200, 2))
    >>> res = od.bayesian_d_optimal(X, draws, "logit", tol=1e-8)
    >>> print(res.status, res.gap <= 1e-8, res.lower_bound <= res.value)
    optimal True True
    """
    def solve() -> DesignResult:
        return _design(bayesian_problem(X, draws, link, prior_weights), method, solver, tol)

    return within_time_limit(time_limit, tol, solve)


@_shared_doc
def bayesian_a_optimal(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, *,
                       prior_weights: ArrayLike | None = None, method: ClassicalMethod = "auto",
                       solver: str | None = None, tol: float = DEFAULT_TOL,
                       time_limit: float | None = None) -> DesignResult:
    """Pseudo-Bayesian A-optimal design of a GLM: argmin_w sum_s pi_s tr M_s(w)^{-1} over prior draws theta_s.

    The prior mean of the summed variances of the parameter estimates, estimated by the draws: convex in w, a sum
    of the A-criteria of M_s(w) = sum_i w_i nu(x_i^T theta_s) x_i x_i^T. ``value`` is Phi(w) = sum_s pi_s
    tr M_s(w)^{-1} (tr M(w)^{-1} for one draw: the locally A-optimal design), certified by the homogeneous
    equivalence theorem: with h_i = -dPhi/dw_i = sum_s pi_s nu_is ||M_s^{-1} x_i||^2, Phi* >= Phi(w)^2 / max_i h_i,
    so ``lower_bound`` = Phi^2 / max_i h_i and ``gap`` = max_i h_i / Phi - 1
    (:mod:`optdesign.glm.trace_bound`).

    Parameters
    ----------
%(problem)s
%(prior_weights)s
%(options_trace)s

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X, ``value`` (Phi(w)), ``lower_bound`` and ``gap`` (certified), ``status``,
        ``solver``, ``method`` (``"exchange"`` or ``"cvxpy"``), ``iterations`` (pricing passes),
        ``criterion="bayesian-a"``, ``extras["draws"]`` and ``link``.

    Raises
    ------
    InvalidInputError
        An unknown link or method, candidates that do not span R^p, NaN/inf entries, draws empty or with the wrong
        number of columns, bad prior weights, weights that overflow, a draw under which the candidates'
        information is singular.
%(raises)s

    Examples
    --------
    The identity link weighs every candidate alike, whatever the draws: a straight line on [-1, 1] puts half the
    weight at each end, and tr M^{-1} = 2.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-1, 1, 21)
    >>> draws = np.random.default_rng(0).normal(size=(50, 2))
    >>> res = od.bayesian_a_optimal(np.column_stack([np.ones_like(x), x]), draws, "identity", tol=1e-9)
    >>> print(np.round(res.weights[[0, 20]], 6), round(res.value, 6), res.gap <= 1e-9)
    [0.5 0.5] 2.0 True
    """
    return _trace_design(X, draws, link, "A", None, prior_weights, method, solver, tol, time_limit)


@_shared_doc
def bayesian_i_optimal(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, *,
                       moments: ArrayLike | None = None, prior_weights: ArrayLike | None = None,
                       method: ClassicalMethod = "auto", solver: str | None = None, tol: float = DEFAULT_TOL,
                       time_limit: float | None = None) -> DesignResult:
    """Pseudo-Bayesian I-optimal design of a GLM: argmin_w sum_s pi_s tr(B_s M_s(w)^{-1}) over prior draws theta_s.

    The prior mean of the average prediction variance over a region of moment matrix B_s, convex in w. By default
    B_s = sum_i nu_is x_i x_i^T / K, the linearised candidates' moments under draw s (the region of
    :func:`optdesign.glm.glm_design`'s I-criterion, so that one draw gives the locally I-optimal design);
    ``moments`` gives one region B for every draw instead (X^T X / K: the variance of the linear predictor over the
    candidates). ``value``, ``lower_bound`` and ``gap`` as for :func:`bayesian_a_optimal`, with
    h_i = sum_s pi_s nu_is ||B_s^{1/2} M_s^{-1} x_i||^2.

    Parameters
    ----------
%(problem)s
    moments : array_like, optional
        The region's moment matrix B (p x p, symmetric positive semidefinite, nonzero), shared by the draws.
%(prior_weights)s
%(options_trace)s

    Returns
    -------
    DesignResult
        As :func:`bayesian_a_optimal`, with ``criterion="bayesian-i"``.

    Raises
    ------
    InvalidInputError
        What :func:`bayesian_a_optimal` refuses, and moments that are not a symmetric positive semidefinite nonzero
        p x p matrix.
%(raises)s

    Examples
    --------
    Logistic regression on [-3, 3], the average variance of the linear predictor over the candidates:

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-3, 3, 61)
    >>> X = np.column_stack([np.ones_like(x), x])
    >>> draws = np.random.default_rng(0).normal([0.0, 1.0], [0.3, 0.3], size=(100, 2))
    >>> res = od.bayesian_i_optimal(X, draws, "logit", moments=X.T @ X / 61, tol=1e-8)
    >>> print(res.status, res.gap <= 1e-8, res.lower_bound <= res.value)
    optimal True True
    """
    return _trace_design(X, draws, link, "I", moments, prior_weights, method, solver, tol, time_limit)


def _trace_design(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, criterion: str,
                  moments: ArrayLike | None, prior_weights: ArrayLike | None, method: object, solver: str | None,
                  tol: float, time_limit: float | None) -> DesignResult:
    """The A- or I-design, dispatched as :func:`bayesian_d_optimal` is."""
    def solve() -> DesignResult:
        problem = trace_problem(X, draws, link, criterion, moments=moments, prior_weights=prior_weights)
        return solve_problem(problem, method, solver, tol)

    return within_time_limit(time_limit, tol, solve)


def solve_problem(problem: BayesianProblem | TraceProblem, method: object = "auto", solver: str | None = None,
                  tol: object = DEFAULT_TOL) -> DesignResult:
    """The certified approximate design of a checked problem: pseudo-Bayesian D for a BayesianProblem, A or I for
    a TraceProblem, dispatched as the public functions do (the N-run designs of :mod:`optdesign.glm.bayesian_exact`
    take their bound from it)."""
    if isinstance(problem, TraceProblem):
        trace = problem
        return _dispatch(trace.base, method, solver, tol, lambda gap: _fast_trace(trace, gap),
                         lambda: _conic_trace(trace, solver))
    return _design(problem, method, solver, tol)


def _design(problem: BayesianProblem, method: object, solver: str | None, tol: object) -> DesignResult:
    return _dispatch(problem, method, solver, tol, lambda gap: _fast(problem, gap), lambda: _conic(problem, solver))


def _dispatch(problem: BayesianProblem, method: object, solver: str | None, tol: object,
              fast_path: Callable[[float], DesignResult], conic_path: Callable[[], DesignResult]) -> DesignResult:
    """The fast path, handing over to the cvxpy model when its certified gap exceeds tol and the model fits
    (``method="auto"``); ``fast_path(tol)`` and ``conic_path()`` run the two."""
    method = check_option(method, "method", CLASSICAL_METHODS)
    check_solver(solver)
    tol = as_tolerance(tol)
    with single_threaded_blas():  # p x p algebra and blocked passes: threads only contend (optdesign.runtime.blas)
        if method == "cvxpy":
            return conic_path()
        fast = fast_path(tol)
        K, p = problem.X.shape
        if method == "fast" or (fast.gap is not None and fast.gap <= tol) or budget_expired() \
                or not bayesian_model_fits(K, p, problem.n_draws):
            return fast
        conic = conic_path()
    return better_certified(conic, fast)


def _fast(problem: BayesianProblem, tol: float) -> DesignResult:
    start = time.perf_counter()
    run = bayesian_exchange(problem, tol=tol, time_limit=_exchange_limit())
    return design_result(problem, run, status="optimal" if run.converged else stop_reason(), solver="numpy",
                         method="exchange", seconds=time.perf_counter() - start)


def _fast_trace(problem: TraceProblem, tol: float) -> DesignResult:
    start = time.perf_counter()
    run = trace_exchange(problem, tol=tol, time_limit=_exchange_limit())
    return trace_result(problem, run, status="optimal" if run.converged else stop_reason(), solver="numpy",
                        method="exchange", seconds=time.perf_counter() - start)


def _exchange_limit() -> float | None:
    """The fast path's own time limit: EXCHANGE_TIME_LIMIT, unless a caller's limit replaces it."""
    return EXCHANGE_TIME_LIMIT if remaining_budget() is None else None


def _conic(problem: BayesianProblem, solver: str | None) -> DesignResult:
    model = BayesianDModel(problem.X, problem.n_draws, problem.link, prior_weights=problem.prior, solver=solver)
    return model.solve(problem.theta)


def _conic_trace(problem: TraceProblem, solver: str | None) -> DesignResult:
    base = problem.base
    model = BayesianTraceModel(base.X, base.n_draws, base.link, problem.criterion, moments=problem.region,
                               prior_weights=base.prior, solver=solver)
    return model.solve(base.theta)
