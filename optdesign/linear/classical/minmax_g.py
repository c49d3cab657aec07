"""G-optimal designs under linear constraints A w <= b: the min-max program on a working set of directions, certified.

On the simplex the G- and D-optimal designs coincide (Kiefer–Wolfowitz); under constraints they differ, so the
G-design min_{w in P} max_k x_k^T A(w)^{-1} x_k is solved as stated, over a working set of directions (rows of X,
the candidates a constraint fixes at 0 included: the G-value is the largest prediction variance over the whole
candidate set): as the SOCP of :func:`optdesign.linear.socp.minmax_socp` with the rows A w <= b added (one rotated
cone per arm and direction), or, on many arms, as min t subject to [[A(w), y_j], [y_j^T, t]] >= 0, one LMI of size
d + 1 per direction (Schur complement: y_j^T A(w)^{-1} y_j <= t). The working set grows by the rows whose variance
exceeds the model's optimum, largest first, until the certified gap meets ``tol`` or no row exceeds it.

Certificate: for any distribution q over directions, G* >= min_{w in P} sum_j q_j y_j^T A(w)^{-1} y_j, the
L-criterion tr(C A^{-1} C^T) with C = diag(sqrt q) Y, whose optimum over P has the certified lower bound of
:func:`~.certify.certified_bound`; q is the model's dual on its epigraph (or the t-entries of the LMIs' multipliers),
tight at the saddle point. Also G* >= d, since sum_k w_k x_k^T A(w)^{-1} x_k = d for every design.
"""

from __future__ import annotations

import time

import numpy as np

from ...errors import InstanceTooLargeError, SolverError
from ...result import DesignResult, relative_gap
from ...runtime import solvers
from ...runtime.deadline import budget_expired, stop_reason
from ...vocabulary import Status
from ..criteria import direction_variances
from ..models import MINMAX_MAX_CONES, minmax_model_fits
from ..socp import minmax_socp
from .certify import certified_bound
from .constraints import LinearConstraints
from .linear import LinearCriterion
from .models import SINGULAR_STATUSES
from .polytope import Polytope, not_estimable

__all__ = ["constrained_g_design"]

#: rows added to the working set per round, at least (d of them when d is larger)
NEW_DIRECTIONS = 10
#: rounds of the working set before the best certified design is returned
MAX_ROUNDS = 50
#: the working set's model is the SOCP up to this many rotated cones (arms x directions), else one LMI per direction
#: (whole calls on Gaussian arms in R^10 capped at 4 / K, SOCP against LMIs: K = 100, 0.9 s and 3.2 s; K = 300, 1.2 s
#: and 2.2 s; K = 600, 7.9 s and 4.0 s; K = 1,000, 20.7 s and 6.3 s; 21-31 directions)
SOCP_MAX_CONES = 10_000
#: interior-point tolerances of the SOCP (the certified gap cannot be smaller than the solver's accuracy); an answer
#: short of them is kept, since the certificate is computed from the design and the dual whatever their accuracy
SOLVER_OPTIONS: dict[str, dict] = {"CLARABEL": {"tol_feas": 1e-9, "tol_gap_rel": 1e-9, "tol_gap_abs": 1e-9}}


def _lmi_problem(arms: np.ndarray, directions: np.ndarray, constraints: LinearConstraints) -> tuple:
    """min t over w in P, S = A(w), [[S, y_j], [y_j^T, t]] >= 0 for every direction (unit-scaled data)."""
    import cvxpy as cp

    K, d = arms.shape
    Xs = arms / np.max(np.abs(arms))
    Ys = directions / float(np.sqrt(np.max(np.einsum("ij,ij->i", directions, directions))))
    w, t = cp.Variable(K, nonneg=True), cp.Variable()
    S = cp.Variable((d, d), symmetric=True)
    T = cp.reshape(t, (1, 1), order="F")
    lmis = [cp.bmat([[S, y[:, None]], [y[None, :], T]]) >> 0 for y in Ys]
    outer = np.einsum("ki,kj->ijk", Xs, Xs).reshape(d * d, K)  # column k: vec(x_k x_k^T)
    cons = [cp.sum(w) == 1, cp.vec(S, order="C") == outer @ w, constraints.A @ w <= constraints.b, *lmis]
    return cp.Problem(cp.Minimize(t), cons), w, lmis


def _socp_problem(arms: np.ndarray, directions: np.ndarray, constraints: LinearConstraints) -> tuple:
    """min t over w in P with one rotated cone per arm and direction (:func:`optdesign.linear.socp.minmax_socp`)."""
    import cvxpy as cp

    scale = float(np.sqrt(np.max(np.einsum("ij,ij->i", directions, directions))))
    problem, w, _, epigraph = minmax_socp(arms / np.max(np.abs(arms)), directions / scale, directions.shape[0],
                                          weighted=False)
    return cp.Problem(problem.objective, [*problem.constraints, constraints.A @ w <= constraints.b]), w, [epigraph]


def _solve_on(arms: np.ndarray, directions: np.ndarray, constraints: LinearConstraints,
              solver: str | None) -> tuple[np.ndarray, np.ndarray, Status, str]:
    """The model on the working set (the SOCP up to SOCP_MAX_CONES cones, else the LMIs): its weights, its dual over
    the directions (the epigraph's multipliers, or the t-entry of each LMI's: they sum to 1), status and solver."""
    socp = arms.shape[0] * directions.shape[0] <= SOCP_MAX_CONES
    problem, w, duals_of = (_socp_problem if socp else _lmi_problem)(arms, directions, constraints)
    try:
        info = solvers.solve(problem, solver, solver_options=SOLVER_OPTIONS, accept=lambda: True)
    except SolverError as exc:
        if exc.status not in SINGULAR_STATUSES:
            raise
        raise not_estimable("g-optimal", str(exc)) from None
    weights = np.clip(np.asarray(w.value, dtype=float).ravel(), 0.0, None)
    if socp:
        dual = duals_of[0].dual_value
        q = np.ones(directions.shape[0]) if dual is None else np.asarray(dual, dtype=float).ravel().clip(0.0, None)
    else:
        q = np.array([0.0 if lmi.dual_value is None else float(np.asarray(lmi.dual_value)[-1, -1])
                      for lmi in duals_of]).clip(0.0, None)
    return weights / weights.sum(), q / q.sum() if q.sum() > 0 else np.ones_like(q) / q.size, info.status, info.solver


def _lower_bound(arms: np.ndarray, directions: np.ndarray, q: np.ndarray, w: np.ndarray, polytope: Polytope) -> float:
    """max(d, the certified bound of the L-criterion of the dual q over the polytope) (module doc)."""
    kept = q > 0
    C = np.sqrt(q[kept])[:, None] * directions[kept]
    return max(float(arms.shape[1]), certified_bound(arms, LinearCriterion(C, "g-optimal"), w, polytope=polytope))


def _start(arms: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The first working set: the rows of largest variance under the uniform design on the allowed candidates."""
    variances = direction_variances(arms, np.full(arms.shape[0], 1.0 / arms.shape[0]), X)
    return np.sort(np.argsort(-variances, kind="stable")[:min(X.shape[0], 2 * arms.shape[1])])


def constrained_g_design(X: np.ndarray, constraints: LinearConstraints, solver: str | None,
                         tol: float) -> DesignResult:
    """min_{w in P} max_k x_k^T A(w)^{-1} x_k over P = {w in the simplex, A w <= b}, certified (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The candidates (validated, spanning R^d).
    constraints : LinearConstraints
        The rows A w <= b on the K weights.
    solver : str, optional
        Conic solver; the default chain otherwise.
    tol : float
        Certified relative gap at which the working set stops growing.

    Returns
    -------
    DesignResult
        ``criterion="g-optimal"``, ``method="cvxpy"``, the G-value as ``value`` and ``g_value``, the certified
        ``lower_bound``, ``constraints`` (their rows), ``iterations`` (rounds of the working set) and
        ``extras["working_directions"]``.

    Raises
    ------
    InvalidInputError
        Infeasible constraints, or constraints whose designs cannot estimate every row.
    InstanceTooLargeError
        A first working set whose model exceeds MINMAX_MAX_CONES rotated cones.
    SolverError
        Every conic solver of the chain failed.
    """
    start = time.perf_counter()
    polytope = Polytope(constraints)
    polytope.check()
    allowed = polytope.allowed
    arms = X[allowed]
    if allowed.size < X.shape[1] or np.linalg.matrix_rank(arms) < X.shape[1]:
        raise not_estimable("g-optimal", f"the {allowed.size} candidates not fixed at 0 do not span R^d")
    sub = polytope.restrict(allowed) if allowed.size < X.shape[0] else constraints
    sub_polytope = Polytope(sub)
    working = _start(arms, X)
    if not minmax_model_fits(arms.shape[0], working.size):
        raise InstanceTooLargeError(f"the constrained G-optimal model on {arms.shape[0]:,} candidates needs more "
                                    f"than {MINMAX_MAX_CONES:,} rotated cones")
    value, lower, w = float("inf"), 0.0, np.full(arms.shape[0], 1.0 / arms.shape[0])
    status: Status = "optimal"
    solver_name, rounds = "", 0
    stopped: Status = "optimal_inaccurate"  # short of tol without a limit: the solver's accuracy or the round cap
    while rounds < MAX_ROUNDS:
        rounds += 1
        raw, q, status, solver_name = _solve_on(arms, X[working], sub, solver)
        design = sub_polytope.repair(raw)
        variances = direction_variances(arms, design, X)
        lower = max(lower, _lower_bound(arms, X[working], q, design, sub_polytope))  # every bound holds for G*
        if variances.max() < value:
            value, w = float(variances.max()), design
        if relative_gap(value, lower) <= tol:
            break
        if budget_expired():
            stopped = stop_reason()
            break
        fresh = np.setdiff1d(np.flatnonzero(variances > np.max(variances[working]) * (1 + tol)), working)
        step = min(max(NEW_DIRECTIONS, X.shape[1]), fresh.size)
        if step == 0 or not minmax_model_fits(arms.shape[0], working.size + step):
            break
        working = np.union1d(working, fresh[np.argsort(-variances[fresh], kind="stable")[:step]])
    weights = np.zeros(X.shape[0])
    weights[allowed] = w
    gap = relative_gap(value, lower)
    return DesignResult(
        weights=weights, value=value, status=status if gap <= tol else stopped, solver=solver_name,
        solve_time=time.perf_counter() - start, gap=gap, method="cvxpy", criterion="g-optimal", lower_bound=lower,
        iterations=rounds, g_value=value, constraints=int(constraints.b.size),
        extras={"working_directions": int(working.size)},
    )
