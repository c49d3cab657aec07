"""Public entry point of the pseudo-Bayesian D-optimal design of a GLM, and how it is solved.

``method="fast"`` runs the certified active set of :mod:`optdesign.glm.exchange`, ``"cvxpy"`` the model of
:mod:`optdesign.glm.model` (certified the same way), ``"auto"`` (default) the fast path, handing over to the model
only when the fast path's certified gap exceeds ``tol`` and the model fits.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from ..linear.dispatch import DEFAULT_TOL, EXCHANGE_TIME_LIMIT, check_solver, within_time_limit
from ..result import DesignResult, better_certified
from ..runtime.blas import single_threaded_blas
from ..runtime.deadline import budget_expired, remaining_budget, stop_reason
from ..validation import as_tolerance
from ..vocabulary import CLASSICAL_METHODS, ClassicalMethod, GlmLink, check_option
from .certificate import design_result
from .exchange import bayesian_exchange
from .model import BayesianDModel, bayesian_model_fits
from .prior import BayesianProblem, bayesian_problem

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["bayesian_d_optimal"]


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
    X : array_like or CandidateSet
        The candidates, K x p, one per row; they must span R^p.
    draws : array_like
        The prior draws theta_s, S x p, one per row.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.
    prior_weights : array_like, optional
        Nonnegative weights pi_s of the draws (importance weights; normalised); equal by default.
    method : str
        ``"auto"`` (default), ``"fast"`` (the active set, certified) or ``"cvxpy"`` (one log det cone per draw).
    solver : str, optional
        Conic solver of the cvxpy model (CLARABEL, then SCS, by default).
    tol : float
        Certified relative gap at which the fast path stops (max_i d_i / p - 1).
    time_limit : float, optional
        Seconds for the whole call; when they are spent (or at the first Ctrl-C inside
        :func:`optdesign.runtime.deadline.graceful_interrupt`) the best certified design is returned (status
        ``"not_converged"`` or ``"interrupted"``, RuntimeWarning if its gap exceeds ``tol``).

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X, ``value``, ``lower_bound`` and ``gap`` (certified), ``status``, ``solver``,
        ``method`` (``"exchange"`` or ``"cvxpy"``), ``iterations`` (pricing passes), ``criterion="bayesian-d"``,
        ``extras["log_det"]`` (Phi(w)), ``extras["log_det_upper"]`` (the certified bound on Phi*),
        ``extras["draws"]`` and ``extras["link"]``.

    Raises
    ------
    InvalidInputError
        An unknown link or method, candidates that do not span R^p, NaN/inf entries, draws with the wrong number of
        columns, bad prior weights, weights that overflow, a draw under which the candidates' information is
        singular.
    InstanceTooLargeError
        The K x S weights above the memory limit; ``method="cvxpy"`` with S K p^2 above the model's limit.
    SolverError
        Every conic solver of the chain failed (``"cvxpy"``).

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


def _design(problem: BayesianProblem, method: object, solver: str | None, tol: object) -> DesignResult:
    method = check_option(method, "method", CLASSICAL_METHODS)
    check_solver(solver)
    tol = as_tolerance(tol)
    with single_threaded_blas():  # p x p algebra and blocked passes: threads only contend (optdesign.runtime.blas)
        if method == "cvxpy":
            return _conic(problem, solver)
        fast = _fast(problem, tol)
        K, p = problem.X.shape
        if method == "fast" or (fast.gap is not None and fast.gap <= tol) or budget_expired() \
                or not bayesian_model_fits(K, p, problem.n_draws):
            return fast
        conic = _conic(problem, solver)
    return better_certified(conic, fast)



def _fast(problem: BayesianProblem, tol: float) -> DesignResult:
    start = time.perf_counter()
    limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None  # a caller's limit replaces it
    run = bayesian_exchange(problem, tol=tol, time_limit=limit)
    return design_result(problem, run, status="optimal" if run.converged else stop_reason(), solver="numpy",
                         method="exchange", seconds=time.perf_counter() - start)


def _conic(problem: BayesianProblem, solver: str | None) -> DesignResult:
    model = BayesianDModel(problem.X, problem.n_draws, problem.link, prior_weights=problem.prior, solver=solver)
    return model.solve(problem.theta)
