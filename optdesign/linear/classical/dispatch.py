"""How a classical design is solved: the certified fast path, the cvxpy model, constraints, time limits.

``method="fast"`` runs the problem's fast path (:mod:`~.frankwolfe` for A, I, L, Ds and phi_p; Elfving's LP
:mod:`~.elfving` for c; the SDP on a working set :mod:`~.working` for E; the D-optimal paths of
:mod:`optdesign.linear.dispatch` for phi_0). ``"cvxpy"`` solves :class:`~.models.ClassicalDesignModel` and
certifies its design (:mod:`~.certify`). ``"auto"`` (default) runs the fast path and hands over to the model only
when the fast path's certified gap exceeds ``tol`` and the model fits. Constraints A w <= b: ``"cvxpy"`` solves the
model on all candidates, ``"auto"`` and ``"fast"`` on a working set (:mod:`~.working`); both are certified over
the constrained polytope, refuse an empty one (:mod:`~.constraints`) and one whose designs cannot estimate the
criterion.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ...errors import InvalidInputError, SolverError
from ...result import DesignResult, FastPathResult, better_certified, relative_gap
from ...runtime.blas import single_threaded_blas
from ...runtime.deadline import budget_expired, remaining_budget, stop_reason
from ...validation import as_tolerance
from ...vocabulary import CLASSICAL_METHODS, ClassicalMethod, check_option
from ..criteria import direction_variances
from ..dispatch import EXCHANGE_TIME_LIMIT, check_solver, in_d_units, kiefer_wolfowitz_design
from ..models import DOptimalModel
from .certify import certified_bound
from .constraints import ConstraintsLike, LinearConstraints, as_constraints
from .elfving import elfving_design
from .frankwolfe import smooth_design
from .linear import LinearCriterion
from .models import SINGULAR_STATUSES, ClassicalDesignModel, classical_model_fits
from .polytope import Polytope, not_estimable
from .problems import ClassicalProblem
from .working import working_set_design

__all__ = ["classical_design"]


def _fast(problem: ClassicalProblem, tol: float, solver: str | None) -> DesignResult:
    X, criterion = problem.X, problem.criterion
    limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None  # a caller's limit replaces it
    start = time.perf_counter()
    if problem.path == "kiefer-wolfowitz":  # phi_0 = det^{-1/d}: the D-optimal paths, G-value certificate
        res = kiefer_wolfowitz_design(X, solver, "auto", tol, "d-optimal",
                                      lambda X, solver: DOptimalModel(X, solver=solver).solve(), lambda K, d: False)
        return replace(in_d_units(X, res, criterion.label), extras={**res.extras, **problem.extras})
    if problem.path == "elfving" and isinstance(criterion, LinearCriterion):
        out: FastPathResult = elfving_design(X, criterion.C[0], tol=tol, time_limit=limit)
    elif problem.path == "eigen":
        out = working_set_design(X, criterion, tol=tol, time_limit=limit, solver=solver)
    else:
        out = smooth_design(X, criterion, tol=tol, time_limit=limit, factor=problem.factor)
    method = {"elfving": "lp", "eigen": "generation", "smooth": "exchange"}[problem.path]
    return DesignResult(weights=out.weights, value=out.value, status="optimal" if out.converged else stop_reason(),
                        solver="numpy", solve_time=time.perf_counter() - start,
                        gap=relative_gap(out.value, out.lower_bound), method=method, criterion=criterion.label,
                        lower_bound=out.lower_bound, iterations=out.iterations, extras=dict(problem.extras))


def _conic(problem: ClassicalProblem, solver: str | None, constraints: LinearConstraints | None = None) -> DesignResult:
    X, criterion = problem.X, problem.criterion
    start = time.perf_counter()
    polytope = None if constraints is None else Polytope(constraints)
    if polytope is not None:
        polytope.check()  # refuses an empty polytope before the conic solve
    try:
        sol = ClassicalDesignModel(X, criterion, constraints=constraints, solver=solver).solve()
    except SolverError as exc:
        if polytope is None or exc.status not in SINGULAR_STATUSES:
            raise
        raise not_estimable(criterion.label, str(exc)) from None
    w = sol.weights if polytope is None else polytope.repair(sol.weights)
    value = criterion.value(X, w)
    if polytope is not None and not np.isfinite(value):
        raise not_estimable(criterion.label, f"the model's design has value {value}")
    lower = certified_bound(X, criterion, w, polytope=polytope, dual=sol.dual)
    return DesignResult(weights=w, value=value, status=sol.info.status, solver=sol.info.solver,
                        solve_time=time.perf_counter() - start, gap=relative_gap(value, lower), method="cvxpy",
                        criterion=criterion.label, lower_bound=lower, extras=dict(problem.extras))


def _constrained(problem: ClassicalProblem, constraints: LinearConstraints, solver: str | None,
                 tol: float) -> DesignResult:
    """The conic model on a working set, priced over all candidates under the constraints."""
    if not classical_model_fits(problem.criterion, 1, problem.X.shape[1]):
        raise InvalidInputError(f"{problem.criterion.label} with p = {problem.extras.get('p')} has no conic model: "
                                "constraints need one (p in 0, 1, 2, inf)")
    start = time.perf_counter()
    limit = EXCHANGE_TIME_LIMIT if remaining_budget() is None else None
    out = working_set_design(problem.X, problem.criterion, polytope=Polytope(constraints), tol=tol, time_limit=limit,
                             solver=solver)
    return DesignResult(weights=out.weights, value=out.value, status="optimal" if out.converged else stop_reason(),
                        solver="numpy", solve_time=time.perf_counter() - start,
                        gap=relative_gap(out.value, out.lower_bound), method="generation",
                        criterion=problem.criterion.label, lower_bound=out.lower_bound, iterations=out.iterations,
                        extras=dict(problem.extras))


def _on_allowed(problem: ClassicalProblem, constraints: LinearConstraints, solver: str | None, method: ClassicalMethod,
                tol: float) -> DesignResult:
    """A constrained design, solved on the candidates no row fixes at 0 and reported on all of them."""
    n = problem.X.shape[0]
    allowed = Polytope(constraints).allowed
    sub = replace(problem, X=problem.X[allowed], factor=None)
    if allowed.size == 0 or not np.isfinite(sub.criterion.value(sub.X, np.full(allowed.size, 1.0 / allowed.size))):
        raise not_estimable(problem.criterion.label, f"{allowed.size} candidates are not fixed at 0")
    cons = Polytope(constraints).restrict(allowed) if allowed.size < n else constraints
    res = _conic(sub, solver, cons) if method == "cvxpy" else _constrained(sub, cons, solver, tol)
    w = np.zeros(n)
    w[allowed] = res.weights
    return replace(res, weights=w, constraints=int(constraints.b.size))


def classical_design(problem: ClassicalProblem, *, constraints: ConstraintsLike = None, solver: str | None = None,
                     method: ClassicalMethod = "auto", tol: float = 1e-4) -> DesignResult:
    """Solve a classical design problem (module doc).

    Parameters
    ----------
    problem : ClassicalProblem
        The checked problem (:mod:`~optdesign.linear.classical.problems`).
    constraints : object, optional
        ``constraints=`` as the public functions take it (``as_constraints`` of
        :mod:`optdesign.linear.classical.constraints`).
    solver : str, optional
        Conic solver of the cvxpy path.
    method : str
        ``"auto"``, ``"fast"`` or ``"cvxpy"``.
    tol : float
        Certified relative gap of the fast path (and of ``auto``'s hand-over).

    Returns
    -------
    DesignResult
        The design, its value, certified lower bound and gap, ``method`` (``"exchange"``, ``"lp"``,
        ``"generation"``, ``"frank-wolfe"`` or ``"cvxpy"``), its ``g_value``, the problem's extras and, under
        constraints, ``constraints`` (their rows).

    Raises
    ------
    InvalidInputError
        An unknown method or solver, a bad tol, ``"fast"`` with constraints, infeasible constraints or constraints
        that allow no estimating design.
    """
    method = check_option(method, "method", CLASSICAL_METHODS)
    check_solver(solver)
    tol = as_tolerance(tol)
    with single_threaded_blas():  # d x d algebra and chunked passes: threads only contend (optdesign.runtime.blas)
        res = _solve(problem, constraints, solver, method, tol)
        return replace(res, g_value=float(np.max(direction_variances(problem.X, res.weights, problem.X))))


def _solve(problem: ClassicalProblem, constraints: ConstraintsLike, solver: str | None, method: ClassicalMethod,
           tol: float) -> DesignResult:
    cons = as_constraints(constraints, problem.X.shape[0])
    if cons is not None:
        return _on_allowed(problem, cons, solver, method, tol)
    if method == "cvxpy":
        return _conic(problem, solver)
    fast = _fast(problem, tol, solver)
    if method == "fast" or (fast.gap is not None and fast.gap <= tol) or budget_expired() \
            or not classical_model_fits(problem.criterion, *problem.X.shape):
        return fast
    conic = _conic(problem, solver)
    return better_certified(conic, fast)

