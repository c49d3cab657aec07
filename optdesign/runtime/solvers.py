"""Which conic solver runs, and how its outcome is mapped to results or errors.

Preference: MOSEK when a licence is actually usable (probed once per process by solving a
one-variable problem; the answer is cached), else CLARABEL (the embedded default), else SCS.
Every solve passes ``solver=`` to cvxpy explicitly: with the ``mosek`` package installed but
unlicensed, cvxpy's default ``solve()`` would pick MOSEK and fail on every problem.

Status policy (documented contract):

* ``optimal`` is accepted.
* ``optimal_inaccurate``: accepted at once when the caller's ``accept`` check (a certificate that
  does not trust the solver, e.g. a certified gap within tolerance) passes; otherwise the next
  solver of the chain is tried; if no solver does better, the inaccurate solution is accepted
  with a ``RuntimeWarning`` and the status is recorded in the
  result. A user-forced solver (``solver="SCS"``) has no chain, so its inaccurate answer is
  accepted with the warning.
* ``infeasible``/``unbounded`` (also their ``_inaccurate`` forms) and solver exceptions move on
  to the next solver; when the chain is exhausted a :class:`SolverError` names every solver
  tried and the status or exception each returned.

Time limits (:func:`optdesign.runtime.deadline.time_budget`): every solve gets the time left as the solver's own limit
(:func:`time_limit_options`: CLARABEL ``time_limit``, SCS ``time_limit_secs``, MOSEK ``MSK_DPAR_OPTIMIZER_MAX_TIME``).
A solver checks its limit between iterations only, after cvxpy's compilation and its own set-up (the first
factorisation), which grow with the problem: :func:`setup_seconds` estimates them, and a solve whose estimate
exceeds the time left is not started. Either way :class:`~optdesign.errors.TimeLimitReached` (a SolverError with
status ``"time_limit"``) is raised, and so is it when a solver stops on its limit (cvxpy status ``user_limit``) or
fails once the budget is spent, without trying the next solver; ``accept_limit=True`` instead returns the point the
solver stopped at (status ``"not_converged"``), for callers that certify their point themselves.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import cast

from .._lazy import cp
from ..errors import InvalidInputError, SolverError, TimeLimitReached
from ..result import SolveInfo
from ..vocabulary import Status
from .deadline import budget_expired, remaining_budget

__all__ = ["SOLVER_OPTIONS", "SolveInfo", "available_solvers", "check_setup_time", "default_solver",
           "installed_solvers", "mosek_usable", "setup_seconds", "solve", "solver_chain", "time_limit_options"]

PREFERENCE: tuple[str, ...] = ("MOSEK", "CLARABEL", "SCS")

#: the options :func:`solve` gives each solver unless the caller's own override them (accuracy settings: the design
#: values are compared at 1e-4..1e-6 relative in tests)
SOLVER_OPTIONS: dict[str, dict] = {
    "CLARABEL": {},
    "SCS": {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 200_000},
    "MOSEK": {},
}


# solver options that bound a solve to ``seconds`` (the enclosing time budget)
TIME_LIMIT_OPTIONS: dict[str, Callable[[float], dict]] = {
    "CLARABEL": lambda seconds: {"time_limit": seconds},
    "SCS": lambda seconds: {"time_limit_secs": seconds},
    "MOSEK": lambda seconds: {"mosek_params": {"MSK_DPAR_OPTIMIZER_MAX_TIME": seconds}},
}
# seconds of cvxpy compilation, CLARABEL set-up and first iteration at SETUP_SCALARS scalar variables plus
# constraints, growing as that size to the power SETUP_EXPONENT. Fitted on the T* masters of rings with K = 10
# (1.3e5, 3.9e5 and 1.2e6 scalars: 1.8 s, 6.9 s and 45 s with a 0.01-1 s time limit, which CLARABEL only checks
# after its set-up); cvxpy compiles before the solver's clock starts, about a quarter of it (SETUP_COMPILE_SHARE)
SETUP_SECONDS, SETUP_SCALARS, SETUP_EXPONENT, SETUP_COMPILE_SHARE = 1.25, 1e5, 1.4, 0.25


def time_limit_options(solver: str, seconds: float) -> dict:
    """The options that stop ``solver`` after ``seconds`` of its own clock.

    Parameters
    ----------
    solver : str
        ``"CLARABEL"``, ``"SCS"`` or ``"MOSEK"`` (upper case); other solvers get no option.
    seconds : float
        The solver's time limit.

    Returns
    -------
    dict
        Keyword arguments for ``problem.solve`` (empty for a solver without a known time option).
    """
    option = TIME_LIMIT_OPTIONS.get(solver)
    return {} if option is None else option(max(float(seconds), 0.0))


def setup_seconds(problem: cp.Problem | int) -> float:
    """Estimated seconds before a conic solve of ``problem`` can stop on a time limit (compilation, set-up, one
    iteration): SETUP_SECONDS (size / SETUP_SCALARS)^SETUP_EXPONENT, size = scalar variables plus constraints.

    Parameters
    ----------
    problem : cvxpy.Problem or int
        The problem about to be solved, or its size (to decide before building it).

    Returns
    -------
    float
        Seconds (about 1.25 at 10^5 scalars, 0.01 below 3,000), as measured with CLARABEL on the benchmark machine.
    """
    if isinstance(problem, int):
        size = problem
    else:
        metrics = problem.size_metrics
        size = metrics.num_scalar_variables + metrics.num_scalar_eq_constr + metrics.num_scalar_leq_constr
    return float(SETUP_SECONDS * (size / SETUP_SCALARS) ** SETUP_EXPONENT)


def check_setup_time(size: int, what: str) -> None:
    """Raise TimeLimitReached when the enclosing time budget cannot cover :func:`setup_seconds` of a problem of
    ``size`` scalars: called before building a large problem that could not be solved in the time left anyway.

    Parameters
    ----------
    size : int
        Scalar variables plus constraints of the problem (an estimate).
    what : str
        The problem, for the message.

    Raises
    ------
    TimeLimitReached
        The budget left is below the estimated set-up time, or a stop was requested.
    """
    left = remaining_budget()
    if budget_expired() or (left is not None and setup_seconds(size) > left):
        raise TimeLimitReached(f"{what} ({size:,} scalars) cannot start in the time budget left")


@functools.cache
def installed_solvers() -> frozenset[str]:
    """The solvers cvxpy finds installed, probed once per process (the probe imports every solver's module, a few
    milliseconds: too much for a design re-solved at every step of a bandit run).

    Returns
    -------
    frozenset of str
        Upper-case solver names.
    """
    return frozenset(cp.installed_solvers())


@functools.cache
def mosek_usable() -> bool:
    """True when MOSEK is installed and licensed (probed once by a tiny solve, then cached).

    Returns
    -------
    bool
        Whether MOSEK solved the one-variable probe to optimality.
    """
    if "MOSEK" not in installed_solvers():
        return False
    x = cp.Variable()
    probe = cp.Problem(cp.Minimize(x), [x >= 1])
    try:
        probe.solve(solver="MOSEK")
    except Exception:  # licence errors surface as arbitrary exception types
        return False
    return probe.status == cp.OPTIMAL


def available_solvers() -> list[str]:
    """Usable solvers in preference order (MOSEK only with a working licence).

    Returns
    -------
    list of str
        A sub-list of PREFERENCE (MOSEK, CLARABEL, SCS), possibly empty.
    """
    installed = installed_solvers()
    out = []
    for name in PREFERENCE:
        if name == "MOSEK":
            if mosek_usable():
                out.append(name)
        elif name in installed:
            out.append(name)
    return out


def default_solver() -> str:
    """The solver used when none is forced: the first of :func:`available_solvers`.

    Returns
    -------
    str
        The solver name, e.g. ``"CLARABEL"``.

    Raises
    ------
    SolverError
        No usable conic solver is installed.
    """
    chain = available_solvers()
    if not chain:
        raise SolverError("no usable conic solver: install clarabel or scs (pip install clarabel scs)")
    return chain[0]


def solver_chain(solver: str | None) -> list[str]:
    """The solvers tried in order: the forced one alone, or the whole preference chain.

    Parameters
    ----------
    solver : str, optional
        A solver name (any case, e.g. ``"scs"``) to force; None for the preference chain.

    Returns
    -------
    list of str
        Upper-case solver names, in the order :func:`solve` tries them.

    Raises
    ------
    InvalidInputError
        ``solver`` is not a string, not installed, or MOSEK without a usable licence.
    SolverError
        ``solver`` is None and no conic solver is installed.
    """
    if solver is None:
        chain = available_solvers()
        if not chain:
            default_solver()  # raises the explanatory error
        return chain
    if not isinstance(solver, str):
        raise InvalidInputError(f"solver must be a solver name such as 'CLARABEL' (a string) or None, got {solver!r}")
    name = solver.upper()
    if name == "MOSEK":
        if not mosek_usable():
            raise InvalidInputError("solver='MOSEK' was requested but MOSEK is not installed with a usable licence")
        return [name]
    if name not in installed_solvers():
        raise InvalidInputError(
            f"solver={solver!r} is not installed; usable solvers here: {', '.join(available_solvers())}"
        )
    return [name]


def solve(problem: cp.Problem, solver: str | None = None, *, accept_inaccurate: bool = False,
          accept: Callable[[], bool] | None = None, accept_limit: bool = False,
          solver_options: dict[str, dict] | None = None, **kwargs: object) -> SolveInfo:
    """Solve ``problem`` with the chain of :func:`solver_chain`, applying the status policy above.

    ``accept_inaccurate=True`` returns the first ``optimal_inaccurate`` answer at once and without
    a warning; for intermediate solves whose answer only seeds a better-conditioned final pass.
    ``accept`` (called with the problem's variables set) returns True when an ``optimal_inaccurate``
    answer is certified good enough by the caller; it is then returned without a warning.
    ``accept_limit=True`` returns the point a solver stopped at on the time budget (status ``"not_converged"``)
    instead of raising TimeLimitReached: only for callers whose result is certified whatever the point.
    ``solver_options`` maps a solver name to options for that solver only (e.g. tighter CLARABEL tolerances).

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem; on return its variables and duals hold the accepted solution.
    solver : str, optional
        A solver to force (no chain); None for :func:`solver_chain`'s preference chain.
    accept_inaccurate : bool
        Return the first ``optimal_inaccurate`` answer at once, without a warning.
    accept : callable, optional
        ``accept()`` -> bool, called with the variables set, certifies an ``optimal_inaccurate`` answer.
    accept_limit : bool
        Return the point of a solve stopped by the time budget (status ``"not_converged"``) instead of raising.
    solver_options : dict of str to dict, optional
        Per-solver options, on top of :data:`SOLVER_OPTIONS`.
    **kwargs
        Options passed to every solver's ``problem.solve`` (they override the per-solver ones).

    Returns
    -------
    SolveInfo
        Status, solver and wall time of the accepted solve.

    Raises
    ------
    SolverError
        Every solver of the chain failed (the message lists each status or exception).
    TimeLimitReached
        The enclosing time budget is below :func:`setup_seconds` before a solve (spent: "the time budget was
        spent"), or a solver stopped on it or failed once it was spent (``status="time_limit"``).
    InvalidInputError
        An unknown or unusable ``solver`` name.

    Warns
    -----
    RuntimeWarning
        An ``optimal_inaccurate`` answer accepted for want of a better one.
    """
    chain = solver_chain(solver)
    tried: list[str] = []
    inaccurate: tuple[SolveInfo, tuple[dict, dict]] | None = None
    for name in chain:
        options = {**SOLVER_OPTIONS.get(name, {}), **(solver_options or {}).get(name, {}), **kwargs}
        left = remaining_budget()
        if left is not None:
            _check_time_left(problem, name, left, tried)
            options.update(time_limit_options(name, left - SETUP_COMPILE_SHARE * setup_seconds(problem)))
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():  # the status policy below replaces cvxpy's own warning
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                problem.solve(solver=name, **options)
        except Exception as exc:  # cvxpy.SolverError, licence errors, numerical exceptions
            if left is not None and budget_expired():
                raise TimeLimitReached(f"{name} failed after the time budget ran out ({type(exc).__name__})",
                                       solver=name) from exc
            tried.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        elapsed = time.perf_counter() - start
        if problem.status == cp.USER_LIMIT and left is not None:  # stopped by the time budget
            if accept_limit and all(v.value is not None for v in problem.variables()):
                return SolveInfo("not_converged", name, elapsed)
            raise TimeLimitReached(f"{name} stopped on the time budget ({elapsed:.3g} s)", solver=name)
        status = cast(Status, problem.status)  # only the two optimal statuses are returned in a SolveInfo
        if status == cp.OPTIMAL or (accept_inaccurate and status == cp.OPTIMAL_INACCURATE):
            return SolveInfo(status, name, elapsed)
        if status == cp.OPTIMAL_INACCURATE and accept is not None and accept():
            return SolveInfo(status, name, elapsed)
        if status == cp.OPTIMAL_INACCURATE and inaccurate is None:
            inaccurate = (SolveInfo(status, name, elapsed), _snapshot(problem))
        tried.append(f"{name}: {status}")
    if inaccurate is not None:
        info, snapshot = inaccurate
        _restore(problem, snapshot)  # a later solver may have overwritten (or cleared) the solution
        warnings.warn(
            f"solver {info.solver} returned optimal_inaccurate and no other solver did better; "
            "the result's status records it",
            RuntimeWarning,
            stacklevel=2,
        )
        return info
    raise SolverError(
        "every solver failed: " + "; ".join(tried),
        solver=chain[-1],
        status=problem.status,
    )


def _check_time_left(problem: cp.Problem, name: str, left: float, tried: list[str]) -> None:
    """Raise TimeLimitReached when ``left`` seconds cannot cover the set-up of a solve of ``problem``."""
    if left <= 0:
        raise TimeLimitReached("the time budget was spent before this conic solve; tried: " + "; ".join(tried),
                               solver=name)
    setup = setup_seconds(problem)
    if setup > left:
        raise TimeLimitReached(f"the time budget left ({left:.3g} s) is below the {setup:.3g} s a solve of this size "
                               "needs before it can stop", solver=name)


def _snapshot(problem: cp.Problem) -> tuple[dict, dict]:
    """Primal and dual values of a solved problem (to restore an accepted earlier solution)."""
    primal = {v.id: v.value for v in problem.variables()}
    # the dual variables themselves: dual_value of a cone constraint (e.g. SOC) is a list that save_dual_value
    # cannot take back
    dual = {c.id: [d.value for d in c.dual_variables] for c in getattr(problem, "constraints", [])}
    return primal, dual


def _restore(problem: cp.Problem, snapshot: tuple[dict, dict]) -> None:
    primal, dual = snapshot
    for var in problem.variables():
        var.value = primal[var.id]
    for con in getattr(problem, "constraints", []):
        for variable, value in zip(con.dual_variables, dual.get(con.id, ()), strict=False):
            variable.value = value
