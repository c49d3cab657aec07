"""The conic model on a working set of candidates, certified on all: E-optimal designs and constrained designs.

The cvxpy models (:mod:`~optdesign.linear.classical.models`) cost an interior-point solve whose work grows with the
number of candidates K (K d^2 coefficients), but optimal designs weight few of them. Column generation: the model
restricted to a working set S gives a design w (zero off S) and its multipliers; every certificate pair (f, M) of
:mod:`~optdesign.linear.classical.certify` is priced over all candidates in one chunked pass, h_k = ||M x_k||^2,
and bounds the optimum over all designs by f^2 / max_{w' in P} h^T w'. Then the candidates that bound most enter
S: the ``batch`` largest h_k > f (1 + tol) over the simplex; under constraints, the support of the LP maximiser w'
(a vertex of P, the constrained analogue of the largest prices: Frank–Wolfe's direction). Stops when
value / bound - 1 <= tol.

Why it suits E: Phi_E = 1 / lambda_min is not differentiable, so Frank–Wolfe does not apply, but its SDP's
multiplier Z (trace 1) certifies 1 / max_k x_k^T Z x_k (Pukelsheim 1993 §7.21). Under constraints, it starts
from the support of a vertex of P (so the restricted model is feasible) and the leverage arms.
"""

from __future__ import annotations

import numpy as np

from ...errors import SolverError
from ...result import FastPathResult
from ...runtime.deadline import Deadline
from ...runtime.progress import listening, report
from ..exchange import initial_support, price_map
from .certify import certificate_pairs
from .criteria import Criterion
from .models import SINGULAR_STATUSES, ClassicalDesignModel
from .polytope import Polytope, not_estimable

__all__ = ["working_set_design"]


def _start(X: np.ndarray, polytope: Polytope | None, size: int) -> np.ndarray:
    S = initial_support(X, size)
    if polytope is None:
        return S
    _, vertex = polytope.maximiser(price_map(X, np.eye(X.shape[1])))  # a feasible vertex leaning to long arms
    return np.union1d(S, np.flatnonzero(vertex > 0))


def _solve_on(X: np.ndarray, criterion: Criterion, S: np.ndarray, polytope: Polytope | None,
              solver: str | None) -> tuple[np.ndarray, list[tuple[float, np.ndarray]]]:
    """The model on S: the design over all candidates (repaired into P) and the certificate pairs there."""
    sol = ClassicalDesignModel(X[S], criterion, solver=solver,
                               constraints=None if polytope is None else polytope.restrict(S)).solve()
    w = np.zeros(X.shape[0])
    w[S] = sol.weights
    if polytope is not None:
        w = polytope.repair(w)
    return w, certificate_pairs(X, criterion, w, sol.dual, regularise=False)


def working_set_design(X: np.ndarray, criterion: Criterion, *, polytope: Polytope | None = None, tol: float = 1e-4,
                       time_limit: float | None = 60.0, solver: str | None = None,
                       batch: int | None = None) -> FastPathResult:
    """min_{w in P} Phi(A(w)) by the conic model on a working set, certified on all candidates (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The candidates, spanning R^d.
    criterion : Criterion
        A criterion with a conic model.
    polytope : Polytope, optional
        The constrained designs; the simplex when None.
    tol : float
        Certified relative gap at which the loop stops.
    time_limit : float, optional
        Seconds, capped by the enclosing time budget (each conic solve finishes).
    solver : str, optional
        Conic solver of the restricted models.
    batch : int, optional
        Candidates entering by their price per round; max(32, 2 d) by default.

    Returns
    -------
    FastPathResult
        The best certified design (feasible), Phi there, the certified lower bound, the rounds and ``converged``.
    """
    n, d = X.shape
    deadline = Deadline(time_limit)
    batch = max(32, 2 * d) if batch is None else max(1, int(batch))
    S = _start(X, polytope, max(2 * batch, 4 * d))
    best = (np.inf, 0.0, np.zeros(n))
    rounds = 0
    while True:
        rounds += 1
        try:
            w, pairs = _solve_on(X, criterion, S, polytope, solver)
            value = criterion.value(X[S], w[S])
        except SolverError as exc:
            if exc.status not in SINGULAR_STATUSES:
                raise
            value = np.inf
        if not np.isfinite(value):  # the working set cannot estimate the criterion: widen it
            if S.size == n:
                raise not_estimable(criterion.label, "the model on every allowed candidate")
            S = np.union1d(S, initial_support(X, min(n, 2 * S.size)))
            continue
        entering: list[np.ndarray] = []
        lower = 0.0
        for f, M in pairs:
            h = price_map(X, M)
            top, vertex = (float(np.max(h)), None) if polytope is None else polytope.maximiser(h)
            lower = max(lower, f * (f / top) if top > 0 else 0.0)
            if vertex is not None:  # the Frank–Wolfe vertex of P for these prices
                entering.append(np.flatnonzero(vertex > 0))
                continue
            h[S] = -np.inf
            m = min(batch, n - S.size)
            if m > 0:
                new = np.argpartition(-h, m - 1)[:m]
                entering.append(new[h[new] > f * (1.0 + tol)])
        if value / max(lower, np.finfo(float).tiny) < best[0] / max(best[1], np.finfo(float).tiny):
            best = (value, lower, w)
        gap = best[0] / best[1] - 1.0 if best[1] > 0 else np.inf
        fresh = np.setdiff1d(np.concatenate(entering), S) if entering else np.zeros(0, dtype=int)
        if gap <= tol or deadline.expired() or fresh.size == 0:
            break
        if listening():
            report(f"{criterion.label}: working set {S.size} + {fresh.size} candidates, certified gap {gap:.1e}")
        S = np.union1d(S, fresh)  # none leaves: the ones dropped at weight 0 kept coming back (E)
    value, lower, w = best
    return FastPathResult(w, value, lower, rounds, value <= lower * (1.0 + tol))
