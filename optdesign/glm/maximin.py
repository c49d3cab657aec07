"""Public entry point of the maximin D-optimal design of a GLM over a finite set of parameter values.

``method="fast"`` runs the certified active set of :mod:`optdesign.glm.maximin_ipm`, ``"cvxpy"`` the model of
:mod:`optdesign.glm.maximin_cvx` (certified the same way, by :mod:`optdesign.glm.duality`),
``"auto"`` (default) the fast path, handing over to the model only when the fast path's certified gap exceeds
``tol`` and the model fits.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..linear.dispatch import DEFAULT_TOL, EXCHANGE_TIME_LIMIT, check_solver, within_time_limit
from ..result import DesignResult, better_certified
from ..runtime.blas import single_threaded_blas
from ..runtime.deadline import budget_expired, remaining_budget, stop_reason
from ..validation import as_tolerance
from ..vocabulary import CLASSICAL_METHODS, ClassicalMethod, GlmLink, check_option
from .duality import maximin_result
from .maximin_cvx import MaximinDModel
from .maximin_ipm import maximin_exchange
from .model import bayesian_model_fits
from .standardise import MaximinProblem, check_standardised, maximin_problem

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["maximin_d_optimal", "solve_maximin"]

INNER_SHARE = 0.1  # the active set's own tolerance is at least this share of tol (local gaps above tol: no target)


def maximin_d_optimal(X: ArrayLike | CandidateSet, thetas: ArrayLike, link: GlmLink, *, standardised: bool = True,
                      method: ClassicalMethod = "auto", solver: str | None = None, tol: float = DEFAULT_TOL,
                      time_limit: float | None = None) -> DesignResult:
    """Standardised maximin D-optimal design of a GLM: argmax_w min_s eff_s(w) over parameter values theta_s.

    eff_s(w) = (det M_s(w) / det M_s(w_s*))^{1/p} is the D-efficiency of w under theta_s, M_s(w) = sum_i w_i
    nu(x_i^T theta_s) x_i x_i^T and w_s* the locally D-optimal design there: the design whose worst efficiency over
    the parameter values is largest, max_w min_s [(1/p) log det M_s(w) - c_s] with c_s = (1/p) log det M_s(w_s*), a
    concave max-min problem. ``standardised=False`` takes c_s = 0: the minimax D-optimal design, argmin_w max_s
    det M_s(w)^{-1/p}. Certificate, by duality: for every probability vector q over the values,
    max_w min_s f_s(w) <= max_w sum_s q_s f_s(w) <= sum_s q_s f_s(w') + log(max_i d_i^q(w') / p) for any w'
    (the pseudo-Bayesian bound with prior q, d_i^q = sum_s q_s nu_is x_i^T M_s(w')^{-1} x_i); q is the least
    favourable prior of the solve (the constraints' multipliers). The local optima c_s come from certified local
    designs, and their gaps widen the bracket (:mod:`optdesign.glm.duality`).

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p, one per row; they must span R^p.
    thetas : array_like
        The parameter values theta_s, S x p, one per row (a grid of a parameter box:
        :func:`optdesign.glm.maximin_box.box_grid`, or :func:`optdesign.maximin_box_design`).
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.
    standardised : bool
        Maximise the least efficiency (default) or, when False, the least (1/p) log det M_s(w).
    method : str
        ``"auto"`` (default), ``"fast"`` (the active set, certified) or ``"cvxpy"`` (one log det cone per value).
    solver : str, optional
        Conic solver of the cvxpy model (CLARABEL, then SCS, by default; MOSEK only when named and licensed).
    tol : float
        Certified relative gap at which the fast path stops; the local designs are certified to tol / 10 (at most
        1e-9) and their gaps count in the reported one.
    time_limit : float, optional
        Seconds for the whole call; when they are spent (or at the first Ctrl-C inside
        :func:`optdesign.runtime.deadline.graceful_interrupt`) the best certified design is returned (status
        ``"not_converged"`` or ``"interrupted"``, RuntimeWarning if its gap exceeds ``tol``).

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X; in variance units (smaller is better) ``value`` = 1 / (the least efficiency,
        certified from below) = max_s (det M_s(w_s*) / det M_s(w))^{1/p} (>= 1; max_s det M_s(w)^{-1/p} when not
        standardised), ``lower_bound`` a certified lower bound on its optimum, ``gap`` = value / lower_bound - 1;
        ``criterion`` ``"standardised-maximin-d"`` (``"minimax-d"``), ``method`` ``"exchange"`` or ``"cvxpy"``.
        ``link``; ``extras``: ``"least_favourable"`` (q, S), ``"log_dets"`` (log det M_s(w), S), ``"values"`` (S);
        standardised also ``"efficiencies"`` (eff_s(w), each certified from below), ``"efficiency"``
        (their minimum, 1 / value), ``"efficiency_upper"`` (1 / lower_bound, the maximin efficiency's bound),
        ``"local_log_dets"`` and ``"local_gaps"`` (of the local designs); else ``"criteria"`` (det M_s(w)^{-1/p}).

    Raises
    ------
    InvalidInputError
        An unknown link or method, a non-boolean ``standardised``, candidates that do not span R^p, NaN/inf
        entries, no parameter value, values of the wrong width, weights that overflow, a value under which the
        candidates' information is singular.
    InstanceTooLargeError
        The K x S weights above the memory limit; ``method="cvxpy"`` with S K p^2 above the model's limit.
    SolverError
        Every conic solver of the chain failed (``"cvxpy"``).

    Examples
    --------
    Logistic regression on [-3, 3], slope 0.5, 1 or 2: the design keeps 73.9% D-efficiency under the extreme
    slopes (the least favourable prior puts its weight there) and 86.3% under the middle one.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-3, 3, 61)
    >>> X = np.column_stack([np.ones_like(x), x])
    >>> res = od.maximin_d_optimal(X, [[0.0, 0.5], [0.0, 1.0], [0.0, 2.0]], "logit", tol=1e-8)
    >>> print(res.status, res.gap <= 1e-8, np.round(res.extras["efficiencies"], 3))
    optimal True [0.739 0.863 0.739]
    """
    standardised = check_standardised(standardised)

    def solve() -> DesignResult:
        method_ = check_option(method, "method", CLASSICAL_METHODS)
        check_solver(solver)
        tol_ = as_tolerance(tol)
        return solve_maximin(maximin_problem(X, thetas, link, standardised=standardised, tol=tol_), method_, solver,
                             tol_)

    return within_time_limit(time_limit, as_tolerance(tol), solve)


def solve_maximin(problem: MaximinProblem, method: ClassicalMethod, solver: str | None, tol: float) -> DesignResult:
    """The checked problem solved by ``method`` (module doc): the fast path, the cvxpy model, or the better of both.

    Parameters
    ----------
    problem : MaximinProblem
        The problem, local optima included.
    method : str
        ``"auto"``, ``"fast"`` or ``"cvxpy"``.
    solver : str, optional
        Conic solver of the model.
    tol : float
        Certified relative gap.

    Returns
    -------
    DesignResult
        As :func:`maximin_d_optimal`.
    """
    with single_threaded_blas():  # p x p algebra and blocked passes: threads only contend (optdesign.runtime.blas)
        if method == "cvxpy":
            return MaximinDModel(problem.base.X, problem.n_values, problem.base.link, standardised=problem.standardised,
                                 solver=solver).solve_problem(problem)
        fast = _fast(problem, tol)
        K, p = problem.base.X.shape
        if method == "fast" or (fast.gap is not None and fast.gap <= tol) or budget_expired() \
                or not bayesian_model_fits(K, p, problem.n_values):
            return fast
        conic = MaximinDModel(problem.base.X, problem.n_values, problem.base.link, standardised=problem.standardised,
                              solver=solver).solve_problem(problem)
    return better_certified(conic, fast)



def _fast(problem: MaximinProblem, tol: float) -> DesignResult:
    start = time.perf_counter()
    limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None  # a caller's limit replaces it
    # the local designs' slack counts in the reported gap: the active set aims at what is left of tol
    target = max((1.0 + tol) * float(np.exp(-problem.slack.max())) - 1.0, INNER_SHARE * tol)
    run = maximin_exchange(problem, tol=target, time_limit=limit)
    res = maximin_result(problem, run.weights, run.q, status="optimal", solver="numpy", method="exchange",
                         seconds=time.perf_counter() - start, rounds=run.rounds)
    return res if res.gap is not None and res.gap <= tol else replace(res, status=stop_reason())
