"""The min-max design SOCP and the certified solve step its models share.

y^T A(w)^{-1} y = min { sum_k u_k^2 / w_k : X^T u = y } turns min_w max_{y in Y} y^T A(w)^{-1} y into an SOCP with
one rotated cone per direction and arm (:func:`minmax_socp`). :class:`CertifiedSOCP` solves it (through a kept
CLARABEL solver when CLARABEL heads the chain), certifies the design on the true directions
(:func:`optdesign.linear.criteria.certificate`) and polishes a loose one by the barrier method. The models
built on it are :class:`optdesign.linear.models.MinMaxDesignModel` and
:class:`optdesign.linear.models.OracleDesignModel`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import cast

import numpy as np

from .._lazy import cp
from ..result import DesignResult, relative_gap
from ..runtime import solvers
from ..runtime.blas import single_threaded_blas
from ..runtime.session import ClarabelSession
from .barrier import minmax_barrier
from .criteria import certificate

__all__ = ["CertifiedSOCP", "minmax_socp"]

POLISH_TOL = 1e-6  # cvxpy designs whose certified gap exceeds this are polished by the barrier method


def _weights_from(var: cp.Variable) -> np.ndarray:
    """The solved weights clipped at 0 and normalised (interior-point weights can be slightly negative)."""
    w = np.clip(np.asarray(var.value, dtype=float).ravel(), 0.0, None)
    normalised: np.ndarray = w / w.sum()
    return normalised


def minmax_socp(X: np.ndarray, rhs: np.ndarray | cp.Expression, m: int,
                weighted: bool) -> tuple[cp.Problem, cp.Variable, cp.Parameter | None, cp.Constraint]:
    """SOCP of min_w max_j q_j y_j^T A(w)^{-1} y_j where ``rhs`` (m x d, constant or affine in
    Parameters) holds the directions y_j: y^T A^{-1} y = min { sum_k u_k^2 / w_k : X^T u = y }.

    cvxpy's DPP compilation of this cone costs about (cone rows) x (parameter entries), so
    parameters are kept to O(m + d) entries.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms (constants of the model).
    rhs : numpy.ndarray or cvxpy.Expression, shape (m, d)
        The directions y_j, one per row: constants, or affine in cvxpy Parameters.
    m : int
        Number of directions (rows of ``rhs``).
    weighted : bool
        Give each direction a weight q_j (a Parameter) in the epigraph; otherwise q = 1.

    Returns
    -------
    problem : cvxpy.Problem
        min t subject to sum(w) = 1, U X = rhs, the rotated cones and the epigraph.
    w : cvxpy.Variable, shape (K,)
        The design weights.
    q : cvxpy.Parameter, shape (m,), or None
        The nonnegative direction weights when ``weighted``, else None (q = 1).
    epigraph : cvxpy.Constraint
        q_j sum_k s_jk <= t; its dual is a distribution over the directions (the certificate's p).
    """
    K = X.shape[0]
    w = cp.Variable(K, nonneg=True, name="w")
    q = cp.Parameter(m, nonneg=True, name="direction_weights") if weighted else None
    U = cp.Variable((m, K), name="u")  # row j: coefficients with X^T u_j = y_j
    S = cp.Variable((m, K), name="s")  # s_jk >= u_jk^2 / w_k  (rotated cone)
    t = cp.Variable(name="t")
    W = np.ones((m, 1)) @ cp.reshape(w, (1, K), order="F")
    cone = cp.SOC(
        cp.vec(S + W, order="F"),
        cp.vstack([2 * cp.vec(U, order="F"), cp.vec(S - W, order="F")]),
        axis=0,
    )
    epigraph = (cp.multiply(q, cp.sum(S, axis=1)) if weighted else cp.sum(S, axis=1)) <= t
    problem = cp.Problem(cp.Minimize(t), [cp.sum(w) == 1, U @ X == rhs, cone, epigraph])
    return problem, w, q, epigraph


class CertifiedSOCP:
    """Shared solve step: normalise q, solve, certify on the true directions, polish if loose.

    The conic solve goes through :class:`ClarabelSession` when CLARABEL heads the solver chain
    (no MOSEK licence, or ``solver="CLARABEL"``); any status other than clarabel's ``Solved``
    (or an error) hands the solve to :func:`optdesign.runtime.solvers.solve`, whose status policy and
    fallback chain then apply as before. ``last_solver_seconds`` is the wall time of the last
    interior-point solve on that path (None when the solve went through ``problem.solve``).

    A subclass builds ``problem``, ``w``, ``q`` and ``_epigraph`` with :func:`minmax_socp`.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, validated by the subclass; the certificate and the polish use them unscaled.
    solver : str or None
        Forced conic solver, or None for the default chain.
    polish : bool
        Refine a design whose certified gap exceeds POLISH_TOL by the barrier method, warm-started at it.
    """

    # set by the subclass: the problem of :func:`minmax_socp`, its weights, direction weights and epigraph
    problem: cp.Problem
    w: cp.Variable
    q: cp.Parameter | None
    _epigraph: cp.Constraint

    def __init__(self, X: np.ndarray, solver: str | None, polish: bool):
        self.X, self.solver, self.polish = X, solver, polish
        self._session: ClarabelSession | None = None
        self._use_session: bool | None = None  # decided at the first solve (the solver chain)
        self.last_solver_seconds: float | None = None  # wall time of the last clarabel solve() call

    def _conic_solve(self) -> solvers.SolveInfo:
        start = time.perf_counter()
        self.last_solver_seconds = None
        if self._use_session is None:
            self._use_session = solvers.solver_chain(self.solver)[0] == "CLARABEL"
        if self._use_session:
            try:
                if self._session is None:
                    self._session = ClarabelSession(self.problem)
                status = self._session.solve()
            except Exception:  # an incompatible cvxpy/clarabel: use cvxpy's own path from now on
                self._use_session, self._session, status = False, None, None
            if status == "Solved":
                self.last_solver_seconds = cast(ClarabelSession, self._session).solver_seconds
                return solvers.SolveInfo("optimal", "CLARABEL", time.perf_counter() - start)
        info = solvers.solve(self.problem, self.solver)
        return replace(info, solve_time=time.perf_counter() - start)

    def _solve(self, Y_eff: np.ndarray, q: np.ndarray, criterion: str, extras: dict) -> DesignResult:
        if self.q is not None:
            self.q.value = q / q.max()  # F*(cq) = c F*(q): keep the conic data at unit scale
        info = self._conic_solve()
        w = _weights_from(self.w)
        dual = self._epigraph.dual_value
        p = np.ones(len(q)) if dual is None else np.clip(np.asarray(dual, dtype=float).ravel(), 0.0, None)
        with single_threaded_blas():  # d x m triangular solves: threads only add latency
            cert = certificate(self.X, Y_eff, w, p)
        value = cert.upper if cert is not None else float("inf")
        lower = 0.0 if cert is None else cert.lower
        extras = {**extras, "polished": False}
        elapsed = info.solve_time
        if self.polish and relative_gap(value, lower) > POLISH_TOL:
            start = time.perf_counter()
            with single_threaded_blas():
                fine = minmax_barrier(self.X, Y_eff, tol=POLISH_TOL, w0=w, time_limit=60.0)
            elapsed += time.perf_counter() - start
            if fine.value < value:
                w, value = fine.weights, fine.value
                extras["polished"] = True
            lower = max(lower, fine.lower_bound)
        return DesignResult(
            weights=w, value=value, status=info.status, solver=info.solver, solve_time=elapsed,
            gap=relative_gap(value, lower), method="cvxpy", criterion=criterion, lower_bound=lower,
            extras=extras,
        )
