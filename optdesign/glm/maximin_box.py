"""Maximin D-optimal designs over a box of parameter values: a grid of the box, refined where the design is weakest.

The box B = [lower, upper] (in R^p) is replaced by a finite set T: first the grid of ``points`` values per axis
(:func:`box_grid`, corners included), on which :func:`optdesign.maximin_d_optimal` is solved and certified. Each
refinement round then searches B for the parameter values where the design w is least efficient, minimising
phi(theta) = g(w, theta) - c(theta) (g = (1/p) log det M(w, theta), c(theta) its local optimum, or 0 when not
standardised) by L-BFGS-B within the box, from the values of T that bind (q_s > 0) and from the centres of the
grid's cells where phi is least (the binding values often sit at corners that are local minima on the boundary,
while the worst case lies inside: ``probe_points``). The gradient is exact, by the
envelope theorem for c: d phi / d theta = (1/p) sum_i (w_i h_i(w) - w*_i h_i(w*)) nu'(x_i^T theta) / nu(x_i^T theta)
x_i, h_i(v) = nu(x_i^T theta) x_i^T M(v, theta)^{-1} x_i, w* the local design at theta (nu' by central
differences). Values found below the design's criterion on T join T, and the design is solved again.

What is certified. T is a subset of B, so the maximin efficiency over B is at most that over T:
``extras["efficiency_upper"]`` (1 / ``lower_bound``) bounds the best worst-case efficiency over the whole box
from above. The design's own worst case over B is only estimated: ``extras["box_efficiency"]`` is the least
efficiency found (on T and by the searches), an upper bound on the design's worst case over B, equal to it when
the search finds the global minimum (no Lipschitz bound in theta is used). ``value``, ``lower_bound`` and ``gap``
certify the design on the final T, as :func:`optdesign.maximin_d_optimal` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..linear import d_optimal
from ..linear.dispatch import DEFAULT_TOL, check_solver, within_time_limit
from ..result import DesignResult
from ..runtime.deadline import budget_expired
from ..validation import as_count, as_tolerance, as_vector, check_array_size
from ..vocabulary import CLASSICAL_METHODS, ClassicalMethod, GlmLink, check_option
from .maximin import solve_maximin
from .prior import BayesianProblem
from .standardise import LOCAL_TOL, MaximinProblem, check_standardised, maximin_problem
from .weights import link_weights

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["box_grid", "maximin_box_design"]

SEARCH_STARTS = 4  # L-BFGS-B starts per refinement round from binding values, and as many from the probes
MAX_PROBES = 256  # cell centres of the grid where phi is evaluated each round, at most
SEARCH_ITER = 50  # L-BFGS-B iterations per start
BINDING = 1e-4  # a value binds when its q_s is at least this (q summing to 1)
DERIVATIVE_STEP = 1e-5  # relative step of the central difference of nu(eta)


def box_grid(lower: ArrayLike, upper: ArrayLike, points: int = 3) -> np.ndarray:
    """The grid of ``points`` equally spaced values per axis of the box [lower, upper], corners included.

    Parameters
    ----------
    lower, upper : array_like
        The box's corners, length p each, lower <= upper (an axis with lower == upper takes one value).
    points : int
        Values per axis, at least 2.

    Returns
    -------
    numpy.ndarray, shape (S, p)
        The grid's points, S = points^(number of axes with lower < upper), the last axis varying fastest.

    Raises
    ------
    InvalidInputError
        Bounds that are not finite, of different lengths or with lower > upper; ``points`` below 2.
    InstanceTooLargeError
        The grid above the memory limit.
    """
    lo = as_vector(lower, "lower")
    hi = as_vector(upper, "upper", length=lo.size)
    if np.any(hi < lo):
        raise InvalidInputError(f"the box needs lower <= upper; axes {np.flatnonzero(hi < lo).tolist()} are reversed")
    n = as_count(points, "points", minimum=2)
    axes = [np.linspace(a, b, n) if b > a else np.array([a]) for a, b in zip(lo, hi, strict=True)]
    count = float(np.prod([axis.size for axis in axes], dtype=float))
    check_array_size(count * lo.size, f"the grid of {n} points per axis of a box in R^{lo.size}",
                     instead="use fewer points per axis")
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, lo.size)


def maximin_box_design(X: ArrayLike | CandidateSet, lower: ArrayLike, upper: ArrayLike, link: GlmLink, *,
                       points: int = 3, refine: int = 3, standardised: bool = True, method: ClassicalMethod = "auto",
                       solver: str | None = None, tol: float = DEFAULT_TOL,
                       time_limit: float | None = None) -> DesignResult:
    """Maximin D-optimal design of a GLM over a box of parameter values: a grid, refined by searching the box.

    Solves :func:`optdesign.maximin_d_optimal` on the grid of the box (:func:`box_grid`), then up to ``refine``
    times searches the box for the values where the design is least efficient and adds those below its certified
    criterion (module doc). Certified: the design on the final finite set (``value``, ``lower_bound``, ``gap``),
    and ``extras["efficiency_upper"]`` as an upper bound on the maximin efficiency over the whole box; estimated:
    the design's worst case over the box (``extras["box_efficiency"]``, an upper bound on it).

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p; they must span R^p.
    lower, upper : array_like
        The box of theta, length p each.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.
    points : int
        Grid values per axis (at least 2).
    refine : int
        Refinement rounds, at most (0: the grid only).
    standardised : bool
        Efficiencies (default) or (1/p) log det M (the minimax D-optimal design).
    method : str
        ``"auto"``, ``"fast"`` or ``"cvxpy"``, as :func:`optdesign.maximin_d_optimal`.
    solver : str, optional
        Conic solver of the cvxpy model.
    tol : float
        Certified relative gap of each finite-set solve; values join the set when their efficiency is below the
        design's by more than this factor.
    time_limit : float, optional
        Seconds for the whole call (the refinement stops when they are spent).

    Returns
    -------
    DesignResult
        That of :func:`optdesign.maximin_d_optimal` on the final set, with extras ``"parameter_values"`` (the set,
        S x p), ``"box_worst"`` (the value of least criterion found), ``"box_efficiency"`` (its efficiency;
        ``"box_criterion"``, det M^{-1/p} there, when not standardised) and ``"refinements"`` (rounds that added
        values).

    Raises
    ------
    InvalidInputError
        What :func:`box_grid` and :func:`optdesign.maximin_d_optimal` refuse, a negative ``refine``.

    Examples
    --------
    Logistic regression on [-3, 3], intercept in [-0.5, 0.5] and slope in [0.5, 2]:

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-3, 3, 61)
    >>> res = od.maximin_box_design(np.column_stack([np.ones_like(x), x]), [-0.5, 0.5], [0.5, 2.0], "logit")
    >>> print(res.status, res.extras["box_efficiency"] <= res.extras["efficiency_upper"])
    optimal True
    """
    standardised = check_standardised(standardised)
    rounds = as_count(refine, "refine", minimum=0)
    lo = as_vector(lower, "lower")
    hi = as_vector(upper, "upper", length=lo.size)

    def solve() -> DesignResult:
        method_ = check_option(method, "method", CLASSICAL_METHODS)
        check_solver(solver)
        tol_ = as_tolerance(tol)
        problem = maximin_problem(X, box_grid(lo, hi, points), link, standardised=standardised, tol=tol_)
        res = solve_maximin(problem, method_, solver, tol_)
        added = 0
        probes = probe_points(lo, hi, as_count(points, "points", minimum=2))
        cache: LocalCache = {}
        found = _search(problem, res, lo, hi, probes, cache)
        for _ in range(rounds):
            new = _new_values(problem, found, -float(np.log(res.value)), tol_)
            if new.size == 0 or budget_expired():
                break
            problem = _extended(problem, maximin_problem(X, new, link, standardised=standardised, tol=tol_))
            res = solve_maximin(problem, method_, solver, tol_)
            added += 1
            found = _search(problem, res, lo, hi, probes, cache)
        return _box_result(problem, res, found, added)

    return within_time_limit(time_limit, as_tolerance(tol), solve)


def _extended(problem: MaximinProblem, more: MaximinProblem) -> MaximinProblem:
    """The problem over the values of both (same candidates and link)."""
    a, b = problem.base, more.base
    S = a.theta.shape[0] + b.theta.shape[0]
    base = BayesianProblem(a.X, np.vstack([a.theta, b.theta]), np.hstack([a.nu, b.nu]), np.full(S, 1.0 / S), a.link)
    return MaximinProblem(base, np.concatenate([problem.offset, more.offset]),
                          np.concatenate([problem.slack, more.slack]), problem.standardised)


def _slope(eta: np.ndarray, link: GlmLink) -> np.ndarray:
    """nu'(eta) / nu(eta) by a central difference (0 where nu underflows)."""
    h = DERIVATIVE_STEP * (1.0 + np.abs(eta))
    nu = link_weights(eta, link)
    d = (link_weights(eta + h, link) - link_weights(eta - h, link)) / (2.0 * h)
    out: np.ndarray = np.divide(d, nu, out=np.zeros_like(d), where=nu > 0)
    return out


def _log_det_terms(X: np.ndarray, nu: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray] | None:
    """((1/p) log det M(w), the leverages w_i nu_i x_i^T M^{-1} x_i), or None when M(w) is singular."""
    M = (X * (w * nu)[:, None]).T @ X
    sign, log_det = np.linalg.slogdet(M)
    if sign <= 0 or not np.isfinite(log_det):
        return None
    lev = w * nu * np.einsum("ij,ij->i", X @ np.linalg.inv(M), X)
    return float(log_det) / X.shape[1], lev


#: the local optimum at a value theta: (1/p) log det M(w*, theta) and the leverages of w*, keyed by theta's bytes
LocalCache = dict[bytes, "tuple[float, np.ndarray] | None"]


def _local(problem: MaximinProblem, theta: np.ndarray, nu: np.ndarray,
           cache: LocalCache) -> tuple[float, np.ndarray] | None:
    """The local optimum's (1/p) log det and leverages at theta (certified to LOCAL_TOL), or None if singular."""
    key = theta.tobytes()
    if key not in cache:
        X = problem.base.X
        try:
            local = d_optimal(np.sqrt(nu)[:, None] * X, method="exchange", tol=LOCAL_TOL).weights
        except InvalidInputError:  # the linearised candidates underflow: no design estimates theta there
            cache[key] = None
        else:
            cache[key] = _log_det_terms(X, nu, local)
    return cache[key]


def _criterion(problem: MaximinProblem, w: np.ndarray, theta: np.ndarray,
               cache: LocalCache) -> tuple[float, np.ndarray] | None:
    """phi(theta) and its gradient (module doc), or None where an information matrix is singular."""
    X, link = problem.base.X, problem.base.link
    eta = X @ theta
    nu, slope = link_weights(eta, link), _slope(eta, link)
    got = _log_det_terms(X, nu, w)
    if got is None:
        return None
    value, lev = got
    if problem.standardised:
        best = _local(problem, theta, nu, cache)
        if best is None:
            return None
        value -= best[0]
        lev = lev - best[1]
    return value, (lev * slope) @ X / X.shape[1]


def probe_points(lower: np.ndarray, upper: np.ndarray, points: int) -> np.ndarray:
    """The centres of the grid's cells (:func:`box_grid` shifted by half a step), MAX_PROBES of them at most.

    Parameters
    ----------
    lower, upper : numpy.ndarray
        The box.
    points : int
        Grid values per axis.

    Returns
    -------
    numpy.ndarray, shape (n, p)
        The centres (a fixed random subset of MAX_PROBES when there are more).
    """
    half = [(b - a) / (2 * (points - 1)) for a, b in zip(lower, upper, strict=True)]
    centres = box_grid(lower + np.array(half), upper - np.array(half), max(points - 1, 2)) if points > 2 \
        else ((lower + upper) / 2)[None]
    if centres.shape[0] > MAX_PROBES:
        centres = centres[np.random.default_rng(0).choice(centres.shape[0], MAX_PROBES, replace=False)]
    return centres


def _search(problem: MaximinProblem, res: DesignResult, lo: np.ndarray, hi: np.ndarray, probes: np.ndarray,
            cache: LocalCache) -> list[tuple[float, np.ndarray]]:
    """(phi, theta) at the values of the set, at the probes, and at the minima of phi that L-BFGS-B finds from the
    binding values and from the SEARCH_STARTS probes of least phi."""
    from scipy.optimize import minimize

    w, theta = res.weights, problem.base.theta
    phi = np.log(res.extras["efficiencies"]) if problem.standardised else -np.log(res.extras["criteria"])
    found = [(float(phi[s]), theta[s]) for s in range(theta.shape[0])]
    probed = [(got[0], x) for x in probes if (got := _criterion(problem, w, x, cache)) is not None]
    found += probed
    q = res.extras["least_favourable"]
    binding = [theta[s] for s in np.argsort(-q)[:SEARCH_STARTS] if q[s] >= BINDING]
    starts = binding + [x for _, x in sorted(probed, key=lambda item: item[0])[:SEARCH_STARTS]]

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        got = _criterion(problem, w, x, cache)
        if got is None:
            raise _Singular
        return got

    for start in starts:
        if budget_expired():
            break
        try:
            out = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi, strict=True)),
                           options={"maxiter": SEARCH_ITER})
        except _Singular:
            continue
        found.append((float(out.fun), np.asarray(out.x, dtype=float)))
    return found


class _Singular(Exception):
    """A search reached a value where an information matrix is singular."""


def _new_values(problem: MaximinProblem, found: list[tuple[float, np.ndarray]], lower: float,
                tol: float) -> np.ndarray:
    """The values found whose phi lies below the design's certified criterion on the set less log(1 + tol), away
    from the set and from each other."""
    theta = problem.base.theta
    scale = np.maximum(np.abs(theta).max(axis=0), 1.0)
    out: list[np.ndarray] = []
    for phi, value in sorted(found, key=lambda item: item[0]):
        if phi >= lower - np.log1p(tol):
            break
        near = [np.max(np.abs(value - other) / scale) < 1e-6 for other in [*theta, *out]]
        if not any(near):
            out.append(value)
    return np.array(out).reshape(-1, theta.shape[1])


def _box_result(problem: MaximinProblem, res: DesignResult, found: list[tuple[float, np.ndarray]],
                added: int) -> DesignResult:
    """``res`` with the box's extras."""
    phi, worst = min(found, key=lambda item: item[0])
    res.extras.update(parameter_values=problem.base.theta, box_worst=worst, refinements=added)
    if problem.standardised:
        res.extras["box_efficiency"] = float(np.exp(phi))
    else:
        res.extras["box_criterion"] = float(np.exp(-phi))
    return res
