"""Multi-pass solves of allocation programs with inverse cones s >= 1/w, each pass centred on the previous one.

Shared by exact T* (:func:`optdesign.factored.characteristic_time`) and the regret
lower bound (:func:`optdesign.factored.regret_lower_bound`). Both minimise over an allocation y >= 0
(clique distributions or counts) with marginals w = W y and constraints on s >= 1/w. Interior-point
solvers handle this badly when the entries of y and w span orders of magnitude: their tolerances
are absolute below 1, so small marginals lose 1e-6..1e-3 relative accuracy, or the solver stalls.

:class:`ScaledAllocation` writes one pass around a :class:`Reference` (y_ref, w_ref):

    y = y_ref * nu  (nu >= 0),   x = (W diag(y_ref) nu) / w_ref,   1/x <= sigma,   s = sigma / w_ref,

so nu, x and sigma are O(1) near the reference. Everything is a *constant* of the pass (the problem
is rebuilt each pass, not re-parametrised): the cone input x is then an affine expression of nu
whose rows are each scaled to the reference, with no equality rows w_ref * x = W y. Measured on
the regret bound of a ring (N=5, K=3, seed 14, Delta_min / Delta_max ~ 2e-4): the parametrised form
(DPP, with those equality rows) stalled (InsufficientProgress) 3% above the optimum, the rebuilt
form converges in 4 passes to 1e-9 whatever the unit of theta; rebuilding costs ~0.1 s per pass at
3^9 joint actions, below the solve itself.

:func:`solve_in_passes` runs the passes: pass 1 around a caller-supplied reference (a uniform
allocation), every later pass around the previous pass's point. Each pass is judged by the
objective evaluated exactly at its point (made feasible by the caller if need be), which is
therefore *attained*; the pass with the smallest value is kept.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...errors import SolverError
from ...runtime import solvers
from ...runtime.deadline import budget_expired, overtime
from ...runtime.solvers import SolveInfo

__all__ = ["Pass", "PassesResult", "Reference", "ScaledAllocation", "solve_in_passes"]

# passes at most (each costs one solve); two passes agree when their values differ by at most PASS_TOL
MAX_PASSES = 5
PASS_TOL = 1e-7
# no warning when an ``optimal`` pass confirms the kept value to this relative accuracy
ACCEPT_TOL = 1e-6
# reference entries are floored at these fractions of the largest entry
FLOOR_ALLOCATION = 1e-6
FLOOR_MARGINALS = 1e-9


def _floored(v: np.ndarray, fraction: float) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return np.maximum(v, fraction * max(float(v.max(initial=0.0)), 1e-300))


@dataclass(frozen=True)
class Reference:
    """Where a pass is centred: ``allocation`` y_ref > 0 and ``marginals`` w_ref = W y_ref > 0 (both floored).

    Build it with :meth:`around`, which floors small entries (FLOOR_ALLOCATION, FLOOR_MARGINALS of the largest).
    """

    #: y_ref, shape (n,): the allocation (clique distributions or counts) the pass is centred on, > 0.
    allocation: np.ndarray
    #: w_ref, shape (m,): its marginals W y_ref, > 0.
    marginals: np.ndarray

    @classmethod
    def around(cls, allocation: np.ndarray, W: sp.spmatrix) -> Reference:
        """The reference of the point ``allocation`` (>= 0), with marginals W @ allocation.

        Parameters
        ----------
        allocation : numpy.ndarray, shape (n,)
            The point y (negative rounding is clipped to 0).
        W : scipy.sparse matrix, shape (m, n)
            The map from the allocation to its marginals.

        Returns
        -------
        Reference
            y and W y, each floored at a small fraction of its largest entry.
        """
        allocation = np.clip(np.asarray(allocation, dtype=float), 0.0, None)
        return cls(_floored(allocation, FLOOR_ALLOCATION), _floored(W @ allocation, FLOOR_MARGINALS))


class ScaledAllocation:
    """One pass's allocation y = y_ref * nu (variable ``nu >= 0``) and its cones s >= 1 / (W y).

    ``constraints`` (the cones) must be added to the program. Use :meth:`linear` for rows M y,
    :meth:`inverse` for H s (an upper estimate of H (1/w), tight at the optimum of a program
    increasing in s), :meth:`cost` for a linear objective and :attr:`value` for y after the solve.

    Parameters
    ----------
    W : scipy.sparse matrix, shape (m, n)
        The map from the allocation y to its marginals w = W y.
    reference : Reference
        The centre of the pass: y = y_ref * nu, and the cones are scaled by w_ref.
    name : str
        Prefix of the cvxpy variables' names (``NAME_scaled``, ``NAME_scaled_inverse``).
    """

    def __init__(self, W: sp.spmatrix, reference: Reference, *, name: str = "allocation"):
        self.W = sp.csr_matrix(W)
        self.reference = reference
        self.nu = cp.Variable(self.W.shape[1], nonneg=True, name=f"{name}_scaled")
        self.sigma = cp.Variable(self.W.shape[0], name=f"{name}_scaled_inverse")
        X = sp.diags(1.0 / reference.marginals) @ self.W @ sp.diags(reference.allocation)
        self.constraints = [cp.inv_pos(X @ self.nu) <= self.sigma]

    def linear(self, M: sp.spmatrix, *, normalise: bool = False) -> cp.Expression:
        """M @ y in terms of nu; with ``normalise`` every row is scaled to max abs(coefficient) 1.

        Parameters
        ----------
        M : scipy.sparse matrix, shape (r, n)
            Rows over the allocation y.
        normalise : bool
            Scale each row to a largest coefficient of 1: only for rows compared with 0 (``== 0``, ``<= 0``).

        Returns
        -------
        cvxpy.Expression
            The r affine expressions of nu.
        """
        Mn = sp.csr_matrix(M) @ sp.diags(self.reference.allocation)
        if normalise:
            top = np.asarray(abs(Mn).max(axis=1).todense()).ravel()
            Mn = sp.diags(1.0 / np.where(top > 0, top, 1.0)) @ Mn
        return Mn @ self.nu

    def inverse(self, H: sp.spmatrix) -> cp.Expression:
        """H @ s, with s >= 1 / (W y) entrywise.

        Parameters
        ----------
        H : scipy.sparse matrix, shape (r, m)
            Nonnegative rows over the marginals (a constraint or cost in 1 / w).

        Returns
        -------
        cvxpy.Expression
            H s, an upper estimate of H (1 / w), tight at the optimum of a program increasing in s.
        """
        return (sp.csr_matrix(H) @ sp.diags(1.0 / self.reference.marginals)) @ self.sigma

    def cost(self, c: np.ndarray) -> tuple[cp.Expression, float]:
        """(c @ y / ref, ref): the linear cost normalised to a unit 2-norm coefficient vector.

        Parameters
        ----------
        c : numpy.ndarray, shape (n,)
            Cost per entry of the allocation y.

        Returns
        -------
        expression : cvxpy.Expression
            c @ y / ref in terms of nu.
        ref : float
            The 2-norm of c * y_ref (1 if that is 0): multiply the solved value by it.
        """
        coef = np.asarray(c, dtype=float) * self.reference.allocation
        ref = float(np.linalg.norm(coef)) or 1.0
        return (coef / ref) @ self.nu, ref

    @property
    def value(self) -> np.ndarray:
        """y at the solver's point (negative rounding clipped to 0)."""
        return self.reference.allocation * np.clip(cast(np.ndarray, self.nu.value), 0.0, None)


@dataclass(frozen=True)
class Pass:
    """One solve: the attained ``value`` at ``point``, the solver's optimum, and the solve's info."""

    #: The objective evaluated exactly at the pass's point (attained).
    value: float
    #: The solver's optimum, in the same units.
    solver_value: float
    #: Whatever the caller's ``evaluate`` returns for the kept pass (allocation, multipliers, ...).
    point: Any
    #: Solver, status and time of the solve.
    info: SolveInfo
    #: The pass's number, from 1.
    index: int


@dataclass(frozen=True)
class PassesResult:
    """The kept (smallest-value) pass, the passes run, total solve and cvxpy compile times, the compiled size."""

    #: The pass with the smallest value.
    best: Pass
    #: The number of passes solved.
    passes: int
    #: Seconds in the solvers, summed over the passes.
    solve_time: float
    #: Seconds of cvxpy compilation, summed over the passes.
    compile_time: float
    #: Scalar variables of the last compiled program.
    n_variables: int
    #: Whether some ``optimal`` pass agreed with its own solver optimum and with the kept value to ``accept_tol``.
    confirmed: bool
    #: Whether the time budget (or a stop request) ended the passes early.
    cut: bool = False


def solve_in_passes(build: Callable[[Reference], tuple[cp.Problem, Callable[[], tuple]]], reference: Reference,
                    solver: str | None, *, label: str, max_passes: int = MAX_PASSES, min_passes: int = 2,
                    tol: float = PASS_TOL, accept_tol: float = ACCEPT_TOL,
                    solver_options: dict[str, dict] | None = None, warn: bool = True) -> PassesResult:
    """Build and solve one program per pass, each centred on the point of the previous pass.

    ``build(reference)`` returns ``(problem, evaluate)``; after the solve, ``evaluate()`` returns
    ``(value, solver_value, point, next_reference)``: the objective evaluated exactly at the
    solver's point (attained), the solver's optimum in the same units, whatever the caller wants
    back for the kept pass, and the reference of the next pass.

    Stops at the first ``optimal`` pass whose value agrees to ``tol`` with the previous pass's
    (a fixed point of the re-centring), after at least ``min_passes`` passes. Agreement of a pass's
    value with its own solver optimum is not enough: it shows the point is feasible, not that it is
    optimal (measured: CLARABEL reported ``optimal`` 1e-3 above the optimum on the regret bound of a
    ring with Delta_min / Delta_max ~ 2e-4 when pass 2 started from a poor pass 1; pass 4 settled).

    Under a time budget (:func:`optdesign.runtime.deadline.time_budget`) every solve gets the time left and a pass
    stopped by it is kept like any other (its value is attained); the passes then end (``cut``).

    Pass 1 uses the solver chain of :func:`optdesign.runtime.solvers.solve`; later passes only the solver
    that answered pass 1, and if it fails the passes end with the best one so far (a fallback
    solver would start from scratch: SCS ran 200,000 iterations, 300 s, on an exact T* that
    CLARABEL solves in 1 s). ``optimal_inaccurate`` answers are used; a RuntimeWarning is issued
    unless some ``optimal`` pass agrees with its own solver optimum and with the kept value to
    ``accept_tol`` (the kept value is attained either way, but then not confirmed optimal). ``solver_options``
    are passed to :func:`optdesign.runtime.solvers.solve` (per-solver tolerances). ``warn=False`` leaves the warning to
    a caller that certifies the kept pass itself (``confirmed`` is set either way).

    Parameters
    ----------
    build : callable
        ``build(reference) -> (problem, evaluate)``, as above: the cvxpy problem of one pass and its evaluation.
    reference : Reference
        The centre of pass 1 (a uniform feasible allocation).
    solver : str, optional
        Conic solver of pass 1 (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    label : str
        Name of the program in the warning (``"exact T*"``).
    max_passes : int
        Largest number of passes.
    min_passes : int
        Passes to run before a settled ``optimal`` pass may stop the loop.
    tol : float
        Relative agreement of two consecutive values at which the passes have settled.
    accept_tol : float
        Relative agreement with which an ``optimal`` pass confirms the kept value (no warning).
    solver_options : dict, optional
        Per-solver keyword arguments, ``{"CLARABEL": {...}}``, passed to :func:`optdesign.runtime.solvers.solve`.
    warn : bool
        Issue the RuntimeWarning when the kept value is not confirmed.

    Returns
    -------
    PassesResult
        The kept pass (smallest value), the number of passes, solve and compile times, the compiled size and
        ``confirmed``.

    Raises
    ------
    SolverError
        Every solver of the chain failed on pass 1 (later failures end the passes instead).
    TimeLimitReached
        The time budget ran out before pass 1 gave a point.

    Warns
    -----
    RuntimeWarning
        With ``warn``, when no ``optimal`` pass confirms the kept value to ``accept_tol``.
    """
    best: Pass | None = None
    history: list[Pass] = []
    solve_time = compile_time = 0.0
    n_variables = 0
    passes, cut = 0, False
    for index in range(1, max_passes + 1):
        if best is not None and budget_expired():
            cut = True
            break
        problem, evaluate = build(reference)
        try:
            info = solvers.solve(problem, solver if best is None else best.info.solver, accept_inaccurate=True,
                                 accept_limit=True, solver_options=solver_options)
        except SolverError:
            if best is None:
                raise
            cut = budget_expired()
            break
        passes = index
        solve_time += info.solve_time
        compile_time += float(getattr(problem, "compilation_time", 0.0) or 0.0)
        n_variables = problem.size_metrics.num_scalar_variables
        with overtime():  # the value at a point cut by the budget is still attained
            value, solver_value, point, reference = evaluate()
        current = Pass(value, solver_value, point, info, index)
        history.append(current)
        settled = best is not None and abs(value / history[-2].value - 1) <= tol
        if best is None or value < best.value:
            best = current
        if index >= min_passes and info.status == cp.OPTIMAL and settled:
            break
        if info.status == "not_converged":  # stopped by the time budget
            cut = True
            break
    best = cast(Pass, best)  # pass 1 either set it or raised
    confirmed = any(p.info.status == cp.OPTIMAL and abs(p.value / p.solver_value - 1) <= accept_tol
                    and abs(p.value / best.value - 1) <= accept_tol for p in history)
    if not confirmed and warn:
        warnings.warn(f"{label}: not confirmed by an optimal solve after {passes} passes (kept pass {best.index}: "
                      f"{best.info.solver} status {best.info.status}, value at the returned point {best.value:.6g}, "
                      f"solver optimum {best.solver_value:.6g})", RuntimeWarning, stacklevel=3)
    return PassesResult(best, passes, solve_time, compile_time, n_variables, confirmed, cut)
