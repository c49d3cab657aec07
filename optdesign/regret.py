"""Graves–Lai regret lower bound for multi-agent semi-bandits (MF-TaS paper App. F; Cuvelier et al. 2021).

With unit-variance Gaussian feedback on every factor, every uniformly good algorithm has
liminf R(T) / log T >= c_theta, where (w = expected counts / log T, unnormalised)

    c_theta = min_{w in R^A_{>=0}}  sum_a w_a Delta(a)
              s.t. sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} <= Delta(a)^2 / 2   for every a != a*,

with wbar_{e,b} = sum_{a: a_e = b} w_a. The terms 1/wbar_{e,a*_e} of the pure-exploration
program are absent: w_{a*} costs nothing, so it is sent to infinity. The objective depends on w
only through its factor marginals, sum_a w_a Delta(a) = sum_{e,b} wbar_{e,b} (theta_e(a*_e) -
theta_e(b)), so w is replaced by the exact *cone* of factor marginals: junction-tree clique
counts mu >= 0 consistent on separators (:func:`optdesign.marginals.marginal_maps`) with one
common total mass over the connected components, but no normalisation. Its size is O(N K^{w+1}).
The objective is written r @ mu with the max-sum regrets r >= 0 of the cliques
(Delta(a) = sum_l r_l(clique row of a), :mod:`optdesign.inference`): equal on the cone, and free
of the cancellation between signed local gaps that costs percents when Delta_min << |theta_e|.

* ``method="exact"``: one constraint row per joint action a != a*, refused above
  ``max_joint_actions`` (default 20,000) joint actions.
* ``method="mf"``: an UPPER bound on c_theta for large instances, see :func:`regret_lower_bound`.

Numerics: the program is solved in passes (at least two, at most ``RESCALE_PASSES``), each
rescaled by the allocation of the previous one (pass 1 by a uniform feasible allocation), so that
clique counts, the cone entries of s_{e,b} >= 1/wbar_{e,b} and the cost are all O(1), as in
:func:`optdesign.characteristic_time.characteristic_time` (see ``_Scaling``). The zero-cost ray
w_{a*} -> infinity is cut by a valid linear row. The reported value is the objective at the
pass's allocation, scaled up if needed to satisfy every constraint exactly; the best pass is kept.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from . import solvers
from .errors import InstanceTooLargeError, InvalidInputError, SolverError
from .factorgraph import FactorGraph
from .fcr import FactoredMax, elimination_matrices, factored_max
from .inference import MaxSum
from .marginals import marginal_maps
from .result import _jsonable

METHODS = ("exact", "mf")
RESTRICTIONS = ("secant", "constant")
# method="exact" has one constraint per joint action: refuse beyond this (3^9 = 19,683 fits)
EXACT_MAX_JOINT_ACTIONS = 20_000
RESCALE_PASSES = 5
RESCALE_TOL = 1e-7
# no warning when the kept pass is (optimal or optimal_inaccurate and) feasible to this relative scale
ACCEPT_TOL = 1e-6


@dataclass(frozen=True)
class RegretBoundResult:
    """A Graves–Lai constant: liminf R(T) / log T >= c_theta.

    ``value`` is the objective sum_a w_a Delta(a) at ``marginals``, an allocation that satisfies
    the program's constraints exactly (the solver's point, scaled up by
    ``extras["feasibility_scale"] >= 1`` if it violated them), so ``value`` is attained;
    ``solver_value`` is the conic optimum (they differ only through that scale). For
    ``method="mf"`` both bound c_theta from above. ``status`` may be ``optimal_inaccurate`` on
    ill-conditioned instances (Delta_min / max gap ~ 1e-3; successive passes then agree to
    ~1e-6): accepted silently when the solver's point is feasible to 1e-6, else with a
    RuntimeWarning.
    ``marginals[e]`` has the shape of table e; its entries at a*_e are arbitrary (w_{a*} is free).
    ``m`` is the number of m-best rows of ``"mf"`` (0 for ``"exact"``).
    """

    value: float
    solver_value: float
    method: str
    m: int
    best_action: np.ndarray
    marginals: list
    n_constraints: int
    n_variables: int
    status: str
    solver: str
    solve_time: float
    extras: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists)."""
        out = {
            "value": self.value,
            "solver_value": self.solver_value,
            "method": self.method,
            "m": self.m,
            "best_action": np.asarray(self.best_action).tolist(),
            "marginals": [np.asarray(t).tolist() for t in self.marginals],
            "n_constraints": self.n_constraints,
            "n_variables": self.n_variables,
            "status": self.status,
            "solver": self.solver,
            "solve_time": self.solve_time,
        }
        out.update({k: _jsonable(v) for k, v in self.extras.items()})
        return out


def regret_lower_bound(fg: FactorGraph, method: str = "exact", *, solver: str | None = None, m: int = 1,
                       max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS, restriction: str = "secant",
                       order="auto") -> RegretBoundResult:
    """c_theta = min_w sum_a w_a Delta(a) s.t. sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= Delta(a)^2/2, a != a*.

    ``method="exact"``: one row per joint action a != a* (InstanceTooLargeError above
    ``max_joint_actions``; use ``method="mf"`` then); ``m`` and ``restriction`` are ignored.
    ``order`` is the elimination order of the junction tree / FCR (any order gives the same value).

    ``method="mf"``: an upper bound c^MF(m) >= c_theta of polynomial size. The constraint side
    is restricted: with a_1..a_m the m best joint actions after a* (gaps Delta_1 <= ... <=
    Delta_m), rows a_1..a_{m-1} keep their own Delta_j^2 and every a gets a lower estimate of
    Delta(a)^2 that is exact at Delta(a) = Delta_m and decomposes over factors, so that with
    G(a) = sum_e g_e(a_e), g_e(b) = 1{b != a*_e} s_{e,b}, one FCR block
    (:func:`optdesign.fcr.factored_max`) covers every joint action:

    * ``restriction="secant"`` (default): Delta(a)^2 >= Delta_m Delta(a) for Delta(a) >= Delta_m,
      i.e. max_a [G(a) - Delta_m Delta(a)/2] <= 0, with Delta(a) the sum of the clique regrets
      (FCR handles clique terms exactly). The max includes a* (0 <= 0), so no affine estimate
      with a negative intercept (e.g. a tangent) is allowed: this is the largest line through 0
      below Delta^2 on [Delta_m, inf).
    * ``restriction="constant"``: Delta(a)^2 >= Delta_m^2 as in T^MF(m), max_a G(a) <= Delta_m^2/2.
      Never better than "secant" (Delta_m Delta(a) >= Delta_m^2), kept for comparison.

    The feasible set shrinks, so c^MF(m) >= c_theta, nonincreasing in m, with equality when all
    gaps are equal or m = |A| - 1. The allocation stays the exact cone of clique marginals: a product
    (mean-field) allocation w_a = prod_i v_{i,a_i} would make the objective sum_e sum_b
    wbar_{e,b} (theta_e(a*_e) - theta_e(b)) a signed polynomial in v (local gaps may be
    negative), non-convex even in log coordinates, whereas the clique cone keeps it linear and
    loses nothing (cost O(N K^{w+1}), w the elimination width: fine for lines, rings, grids).
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    if method not in METHODS:
        raise InvalidInputError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise InvalidInputError(f"m must be a positive integer, got {m!r}")
    if m > fg.n_joint_actions - 1:
        raise InvalidInputError(f"m = {m} exceeds the number of joint actions minus one ({fg.n_joint_actions - 1})")
    if restriction not in RESTRICTIONS:
        raise InvalidInputError(f"restriction must be one of {RESTRICTIONS}, got {restriction!r}")
    if method == "exact" and fg.n_joint_actions > max_joint_actions:
        raise InstanceTooLargeError(
            f"the exact regret bound needs one constraint per joint action: {fg.n_joint_actions} exceeds the "
            f"limit {max_joint_actions}; use regret_lower_bound(fg, method='mf') (FCR upper bound) instead"
        )
    start = time.perf_counter()
    fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    plan = fg.plan(order)
    n_tab = fg.abar
    star = fg.group_indices(best)[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    local_gap = fg.means[star][factor_of] - fg.means  # theta_e(a*_e) - theta_e(b)
    # Delta(a) = sum_l r_l(clique row of a) with max-sum regrets r_l >= 0 (optdesign.inference), one per
    # clique row: so sum_a w_a Delta(a) = r @ mu on the cone, with no cancellation between the signed
    # local gaps (these cost ~1e-2 relative accuracy when Delta_min << |theta_e|, measured)
    regrets = np.concatenate(MaxSum(plan, fg.means).regrets)
    dev = np.setdiff1d(np.arange(n_tab), star)  # group actions b != a*_e
    dev_pos = np.full(n_tab, -1, dtype=np.int64)
    dev_pos[dev] = np.arange(dev.size)

    # exact cone of factor marginals: clique counts mu >= 0, consistent on separators, with one
    # common total over the connected components (no normalisation). Everything is rescaled by the
    # previous pass (see _Scaling) so that the solver sees O(1) variables and cone entries.
    F, C, R = marginal_maps(plan)
    F_dev = F[dev]
    sc = _Scaling(regrets, dev.size)
    nu = cp.Variable(plan.n_rows, nonneg=True, name="scaled_clique_counts")
    mu = cp.multiply(sc.mu, nu)
    rows = [C] if C.shape[0] else []
    if R.shape[0] > 1:
        rows.append(R[1:] - sp.csr_matrix(np.ones((R.shape[0] - 1, 1))) @ R[:1])
    constraints = [sp.vstack(rows).tocsr() @ mu == 0] if rows else []
    # w_{a*} is free, so (w_{a*} -> infinity) is a zero-cost ray that interior-point solvers
    # drift along. Every optimum has a copy with w_{a*} = 0, whose total mass is at most
    # sum_{e, b != a*_e} wbar_{e,b} (every a != a* deviates somewhere): imposing it cuts the ray.
    constraints.append((R[:1] - sp.csr_matrix(np.ones((1, dev.size))) @ F_dev) @ mu <= 0)
    x = cp.Variable(dev.size, name="scaled_counts")  # x = wbar_dev / previous wbar_dev
    sigma = cp.Variable(dev.size, name="scaled_inverse_counts")
    s = cp.multiply(sc.inv_w, sigma)  # s_{e,b} >= 1 / wbar_{e,b}, b != a*_e
    constraints += [cp.multiply(sc.w, x) == F_dev @ mu, cp.inv_pos(x) <= sigma]

    if method == "exact":
        A = fg.joint_actions()
        others = np.flatnonzero(np.any(A != best, axis=1))
        A = A[others]
        H = _deviation_rows(fg.group_indices(A), star, dev_pos)
        row_scale = 2.0 / fg.gap(A) ** 2  # rows as (2 / Delta(a)^2) H s <= 1
        constraints.append(sp.diags(row_scale) @ H @ s <= 1)
        n_constraints, gaps, fcr_max = int(others.size), None, None
    else:
        ranked = fg.m_best(m + 1)[1:]
        gaps = np.asarray([g for _, g in ranked])
        E = sp.csr_matrix((np.ones(dev.size), (dev, np.arange(dev.size))), shape=(n_tab, dev.size))
        if restriction == "secant":  # (2 / Delta_m^2) G(a) - Delta(a) / Delta_m <= 0, every term O(1)
            fcr_max = _factored_max_rows((2.0 / gaps[-1] ** 2) * (E @ s), -regrets / gaps[-1], plan)
            constraints += [*fcr_max.constraints, fcr_max.t <= 0]
        else:
            fcr_max = factored_max((2.0 / gaps[-1] ** 2) * (E @ s), plan)
            constraints += [*fcr_max.constraints, fcr_max.t <= 1]
        n_constraints = fcr_max.n_constraints + m - 1
        if m > 1:
            H = _deviation_rows(fg.group_indices(np.stack([a for a, _ in ranked[:-1]])), star, dev_pos)
            row_scale = 2.0 / gaps[:-1] ** 2
            constraints.append(sp.diags(row_scale) @ H @ s <= 1)
        else:
            H = row_scale = None
    problem = cp.Problem(cp.Minimize(sc.cost @ nu), constraints)  # = objective / sc.ref
    build_time = time.perf_counter() - start

    def violation(wdev: np.ndarray) -> float:
        """max over the program's rows of (row sum of 1/wbar) / (allowed bound); <= 1 iff feasible."""
        if np.any(wdev <= 0):
            return np.inf
        inv = 1.0 / wdev
        worst = float(np.max(row_scale * (H @ inv))) if H is not None else 0.0
        if fcr_max is not None:
            terms = np.zeros(n_tab)
            terms[dev] = inv * (2.0 / gaps[-1] ** 2)
            if restriction == "secant":  # max_{a != a*} (2 / Delta_m^2) G(a) / (Delta(a) / Delta_m)
                worst = max(worst, _max_ratio(fg, plan, terms, local_gap / gaps[-1]))
            else:
                worst = max(worst, MaxSum(plan, terms).value)
        return worst

    # first scaling: the uniform allocation of total mass M, feasible for both methods (a != a*
    # deviates in at most n_f factors, each costing 1/wbar <= Delta_min^2 / (2 n_f))
    sizes = np.asarray([step.n_rows for step in plan.steps])
    mu0 = 2.0 * fg.n_factors * float(fg.table_sizes.max()) / fg.gap_min() ** 2 / np.repeat(sizes, sizes)
    sc.update(mu0, (F @ mu0)[dev])
    solve_time, best_pass = 0.0, None
    for passes in range(1, RESCALE_PASSES + 1):
        try:
            info = solvers.solve(problem, solver, accept_inaccurate=True)
        except SolverError:
            if best_pass is None:
                raise
            break
        solve_time += info.solve_time
        mu_val = sc.mu.value * np.clip(nu.value, 0.0, None)
        wbar = F @ mu_val
        scale = max(1.0, violation(wbar[dev]))
        value = float(scale * (regrets @ mu_val))
        solver_value = float(problem.value) * sc.ref
        settled = best_pass is not None and abs(value / best_pass[0] - 1) <= RESCALE_TOL
        if best_pass is None or value < best_pass[0]:
            best_pass = (value, solver_value, scale, wbar, info, passes)
        # stop once a pass is optimal and feasible to RESCALE_TOL, or two passes agree that well
        # (pass 1 is scaled by a rough guess and can be off by ~1e-3, so at least two passes)
        agree = info.status == cp.OPTIMAL and abs(value / solver_value - 1) <= RESCALE_TOL
        if passes >= 2 and (agree or settled):
            break
        sc.update(mu_val, wbar[dev])
    value, solver_value, scale, wbar, info, used = best_pass
    if info.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or abs(value / solver_value - 1) > ACCEPT_TOL:
        warnings.warn(f"regret bound ({method}): after {passes} passes the solver reports {info.status}; "
                      f"value at the returned allocation {value:.6g}, solver optimum {solver_value:.6g}",
                      RuntimeWarning, stacklevel=2)
    alloc = scale * wbar
    offsets = plan.factor_offsets
    marginals = [alloc[offsets[e]:offsets[e + 1]].reshape(t.shape) for e, t in enumerate(fg.tables)]
    extras = {"formulation": "junction-tree", "passes": passes, "pass_used": used, "feasibility_scale": scale,
              "build_time": build_time, "wall_time": time.perf_counter() - start, "order": list(plan.order),
              "width": plan.width}
    if gaps is not None:
        extras.update({"gaps": gaps, "restriction": restriction})
    return RegretBoundResult(
        value=value, solver_value=solver_value, method=method, m=int(m) if method == "mf" else 0,
        best_action=best, marginals=marginals, n_constraints=n_constraints,
        n_variables=problem.size_metrics.num_scalar_variables, status=info.status, solver=info.solver,
        solve_time=solve_time, extras=extras,
    )


class _Scaling:
    """Parameters rescaling pass k + 1 by the allocation of pass k (pass 1: a uniform feasible allocation).

    With mu = mu_prev * nu, wbar_dev = w_prev * x and s = sigma / w_prev, every variable and cone
    entry is O(1) near the optimum, and the cost g * mu_prev is normalised to unit 2-norm (its
    scale ``ref`` is multiplied back). Measured without them: the solver's tolerances scale with
    the largest variable (clique counts ~1e4) and small marginals lose 1e-6..1e-3 relative
    accuracy; a cost with tiny entries (normalised to sum 1 instead) stalls the dual residual on
    long lines (optimal_inaccurate, ~1e-5 relative error).
    """

    def __init__(self, g: np.ndarray, n_dev: int):
        n_rows = g.size
        self.g, self.ref = g, 1.0
        self.cost = cp.Parameter(n_rows, name="scaled_cost", value=g.copy())
        self.mu = cp.Parameter(n_rows, pos=True, name="clique_scale", value=np.ones(n_rows))
        self.w = cp.Parameter(n_dev, pos=True, name="count_scale", value=np.ones(n_dev))
        self.inv_w = cp.Parameter(n_dev, pos=True, name="inverse_count_scale", value=np.ones(n_dev))

    def update(self, mu: np.ndarray, wdev: np.ndarray) -> None:
        top = max(float(mu.max()), 1e-300)
        self.mu.value = np.maximum(mu, 1e-6 * top)
        cost = self.g * self.mu.value
        self.ref = float(np.linalg.norm(cost)) or 1.0
        self.cost.value = cost / self.ref
        w = np.maximum(wdev, 1e-9 * max(float(wdev.max()), 1e-300))
        self.w.value, self.inv_w.value = w, 1.0 / w


def _factored_max_rows(terms: cp.Expression, row_terms: np.ndarray, plan) -> FactoredMax:
    """FCR of max_a [sum_e terms[e, a_e] + sum_l row_terms[l, clique row of a]] (as :func:`factored_max`).

    Functions of the elimination cliques are exact in FCR too: step l's row (z, k) gets the
    constant ``row_terms`` added to its right-hand side.
    """
    C_u, C_f = elimination_matrices(plan)
    u = cp.Variable(plan.n_messages_flat, name="fcr_messages")
    t = cp.Variable(name="fcr_max")
    roots = plan.message_offsets[list(plan.roots)] - plan.table_size
    constraints = [C_u @ u >= C_f @ terms + row_terms, t >= cp.sum(u[roots])]
    return FactoredMax(t, constraints, plan.n_rows + 1, plan.n_messages_flat, plan.width)


def _max_ratio(fg: FactorGraph, plan, num: np.ndarray, den: np.ndarray, *, floor: float = 1.0) -> float:
    """max(floor, max_{a != a*} num(a) / den(a)) for factored num, den with num(a*) = den(a*) = 0, den > 0 elsewhere.

    Dinkelbach's iteration: rho <- num(a) / den(a) at a = argmax_a [num(a) - rho den(a)] (max-sum)
    until that maximum is 0 (attained at a*); rho increases strictly, so it stops finitely.
    """
    rho = floor
    for _ in range(1000):
        ms = MaxSum(plan, num - rho * den)
        if ms.value <= 1e-12 * rho * max(1.0, float(np.abs(den).max())):
            return rho
        idx = fg.group_indices(ms.best_action)[0]
        new = float(num[idx].sum() / den[idx].sum())
        if new <= rho * (1 + 1e-14):
            return rho
        rho = new
    return rho


def _deviation_rows(idx: np.ndarray, star: np.ndarray, dev_pos: np.ndarray) -> sp.csr_matrix:
    """Row per joint action a: ones at the columns (e, a_e) of the factors with a_e != a*_e."""
    dev = idx != star[None, :]
    rows = np.nonzero(dev)[0]
    return sp.csr_matrix((np.ones(rows.size), (rows, dev_pos[idx[dev]])),
                         shape=(idx.shape[0], int(dev_pos.max()) + 1))
