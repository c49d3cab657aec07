"""Graves–Lai regret lower bound for multi-agent semi-bandits (MF-TaS paper App. F; Cuvelier et al. 2021).

With unit-variance Gaussian feedback on every factor, every uniformly good algorithm has
liminf R(T) / log T >= c_theta, where (w = expected counts / log T, unnormalised)

    c_theta = min_{w in R^A_{>=0}}  sum_a w_a Delta(a)
              s.t. sum_{e: a_e != a*_e} 1 / wbar_{e,a_e} <= Delta(a)^2 / 2   for every a != a*,

with wbar_{e,b} = sum_{a: a_e = b} w_a. The terms 1/wbar_{e,a*_e} of the pure-exploration
program are absent: w_{a*} costs nothing, so it is sent to infinity. The objective depends on w
only through its factor marginals, sum_a w_a Delta(a) = sum_{e,b} wbar_{e,b} (theta_e(a*_e) -
theta_e(b)), so w is replaced by the exact *cone* of factor marginals: junction-tree clique
counts mu >= 0 consistent on separators (:func:`optdesign.factored.marginals.marginal_maps`) with one
common total mass over the connected components, but no normalisation. Its size is O(N K^{w+1}).
The objective is written r @ mu with the max-sum regrets r >= 0 of the cliques
(Delta(a) = sum_l r_l(clique row of a), :mod:`optdesign.factored.inference`): equal on the cone, and free
of the cancellation between signed local gaps that costs percents when Delta_min << |theta_e|.

* ``method="exact"``: one constraint row per joint action a != a*, refused above
  ``max_joint_actions`` (default 20,000) joint actions.
* ``method="mf"``: an UPPER bound on c_theta for large instances, see :func:`regret_lower_bound`.

Numerics: the program is solved for theta / Delta_max (every gap <= 1, Delta_max the largest gap;
c scales as 1/theta and the counts as 1/theta^2, so value and allocation are scaled back), in passes
(:func:`optdesign.factored.rescaling.solve_in_passes`, as exact T*): each pass is centred on the
allocation of the previous one (pass 1 on a uniform feasible allocation), so that clique counts,
the cone entries of s_{e,b} >= 1/wbar_{e,b} (:class:`~optdesign.factored.rescaling.ScaledAllocation`) and
the cost are all O(1). The zero-cost ray w_{a*} -> infinity is cut by a valid linear row. The
reported value is the objective at the pass's allocation, scaled up if needed to satisfy every
constraint exactly; the pass with the smallest value is kept.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .._lazy import cp
from ..errors import InvalidInputError
from ..result import RegretBoundResult
from ..validation import as_count, check_enumerable, check_m_best
from .factorgraph import FactorGraph
from .fcr import factored_max
from .inference import MaxSum
from .marginals import marginal_maps
from .rescaling import Reference, ScaledAllocation, solve_in_passes

METHODS = ("exact", "mf")
RESTRICTIONS = ("secant", "constant")
# method="exact" has one constraint per joint action: refuse beyond this (3^9 = 19,683 fits)
EXACT_MAX_JOINT_ACTIONS = 20_000

__all__ = ["EXACT_MAX_JOINT_ACTIONS", "METHODS", "RESTRICTIONS", "RegretBoundResult", "regret_lower_bound"]


def regret_lower_bound(fg: FactorGraph, method: str = "exact", *, solver: str | None = None, m: int = 1,
                       max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS, restriction: str = "secant",
                       order="auto") -> RegretBoundResult:
    """c_theta = min_w sum_a w_a Delta(a) s.t. sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= Delta(a)^2/2, a != a*.

    ``method="exact"``: one row per joint action a != a* (InstanceTooLargeError above
    ``max_joint_actions``; use ``method="mf"`` then); ``m`` and ``restriction`` are validated but
    not used. ``order`` is the elimination order of the junction tree / FCR (any order gives the
    same value).

    ``method="mf"``: an upper bound c^MF(m) >= c_theta of polynomial size. The name follows
    T^MF(m): the constraint side is restricted as in MF-TaS App. H, but the allocation is *not*
    a product (see below). With a_1..a_m the m best joint actions after a* (gaps Delta_1 <= ...
    <= Delta_m), rows a_1..a_{m-1} keep their own Delta_j^2 and every a gets a lower estimate of
    Delta(a)^2 that is exact at Delta(a) = Delta_m and decomposes over factors, so that with
    G(a) = sum_e g_e(a_e), g_e(b) = 1{b != a*_e} s_{e,b}, one FCR block
    (:func:`optdesign.factored.fcr.factored_max`) covers every joint action:

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
    if restriction not in RESTRICTIONS:
        raise InvalidInputError(f"restriction must be one of {RESTRICTIONS}, got {restriction!r}")
    m = check_m_best(m, fg.n_joint_actions)
    if method == "exact":
        check_enumerable(fg.n_joint_actions, max_joint_actions, what="the exact regret bound",
                         instead="regret_lower_bound(fg, method='mf') (FCR upper bound)")
    else:
        as_count(max_joint_actions, "max_joint_actions", minimum=0)
    start = time.perf_counter()
    dmin = fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    plan = fg.plan(order)
    # every gap below is in units of the largest gap Delta_max = theta(a*) - min_a theta(a): the program
    # solved is then the same whatever the scale of theta (before, with counts ~ 1/Delta^2 in the units
    # of theta, theta * 1e-4 gave counts ~1e8, optimal_inaccurate and a 1% error, measured)
    unit = fg.best_value + MaxSum(plan, -fg.means).value
    n_tab = fg.abar
    star = fg.group_indices(best)[0]
    # Delta(a) = sum_l r_l(clique row of a) with max-sum regrets r_l >= 0 (optdesign.factored.inference), one per
    # clique row: so sum_a w_a Delta(a) = r @ mu on the cone, with no cancellation between the signed
    # local gaps (these cost ~1e-2 relative accuracy when Delta_min << |theta_e|, measured)
    regrets = np.concatenate(MaxSum(plan, fg.means).regrets) / unit
    dev = np.setdiff1d(np.arange(n_tab), star)  # group actions b != a*_e

    # exact cone of factor marginals: clique counts mu >= 0, consistent on separators, with one
    # common total over the connected components (no normalisation)
    F, C, R = marginal_maps(plan)
    F_dev = F[dev]
    rows = [C] if C.shape[0] else []
    if R.shape[0] > 1:
        rows.append(R[1:] - sp.csr_matrix(np.ones((R.shape[0] - 1, 1))) @ R[:1])
    # w_{a*} is free, so (w_{a*} -> infinity) is a zero-cost ray that interior-point solvers
    # drift along. Every optimum has a copy with w_{a*} = 0, whose total mass is at most
    # sum_{e, b != a*_e} wbar_{e,b} (every a != a* deviates somewhere): imposing it cuts the ray.
    rows.append(R[:1] - sp.csr_matrix(np.ones((1, dev.size))) @ F_dev)
    homogeneous = sp.vstack(rows).tocsr()  # == 0 except the last row (<= 0)

    if method == "exact":
        A = fg.joint_actions()
        A = A[np.any(A != best, axis=1)]
        # rows as (2 / Delta(a)^2) H s <= 1, with s >= 1 / wbar on the group actions b != a*_e
        H = sp.diags(2.0 / (fg.gap(A) / unit) ** 2) @ fg.deviation_matrix(A)[:, dev]
        n_constraints, gaps, G = A.shape[0], None, None
    else:
        ranked = fg.m_best(m + 1)[1:]
        gaps = np.asarray([g for _, g in ranked]) / unit
        # (2 / Delta_m^2) G(a) over the flat group actions (zero at a*_e), as a map of s
        G = sp.csr_matrix((np.full(dev.size, 2.0 / gaps[-1] ** 2), (dev, np.arange(dev.size))),
                          shape=(n_tab, dev.size))
        n_constraints = None  # FCR rows and the m - 1 explicit ones, counted when built
        H = None
        if m > 1:
            H = sp.diags(2.0 / gaps[:-1] ** 2) @ fg.deviation_matrix(np.stack([a for a, _ in ranked[:-1]]))[:, dev]
        # the secant rows in closed form, for the feasibility check: Delta(a) / Delta_m factor by factor
        local_gap = (fg.means[star][np.repeat(np.arange(fg.n_factors), fg.table_sizes)] - fg.means) / unit
    build_time = time.perf_counter() - start

    def violation(wdev: np.ndarray) -> float:
        """max over the program's rows of (row sum of 1/wbar) / (allowed bound); <= 1 iff feasible."""
        if np.any(wdev <= 0):
            return np.inf
        inv = 1.0 / wdev
        worst = float(np.max(H @ inv)) if H is not None else 0.0
        if G is not None:
            if restriction == "secant":  # max_{a != a*} (2 / Delta_m^2) G(a) / (Delta(a) / Delta_m)
                worst = max(worst, _max_ratio(fg, plan, G @ inv, local_gap / gaps[-1]))
            else:
                worst = max(worst, MaxSum(plan, G @ inv).value)
        return worst

    def build(reference: Reference):
        nonlocal n_constraints
        counts = ScaledAllocation(F_dev, reference, name="clique_counts")  # mu, with s >= 1 / (F_dev mu)
        lin = counts.linear(homogeneous, normalise=True)
        constraints = [*counts.constraints, lin[-1] <= 0]
        if homogeneous.shape[0] > 1:
            constraints.append(lin[:-1] == 0)
        if H is not None:
            constraints.append(counts.inverse(H) <= 1)
        if G is not None:
            if restriction == "secant":  # (2 / Delta_m^2) G(a) - Delta(a) / Delta_m <= 0, every term O(1)
                fcr_max = factored_max(counts.inverse(G), plan, row_terms=-regrets / gaps[-1])
                constraints += [*fcr_max.constraints, fcr_max.t <= 0]
            else:  # (2 / Delta_m^2) G(a) <= 1
                fcr_max = factored_max(counts.inverse(G), plan)
                constraints += [*fcr_max.constraints, fcr_max.t <= 1]
            n_constraints = fcr_max.n_constraints + m - 1
        cost, ref = counts.cost(regrets)
        problem = cp.Problem(cp.Minimize(cost), constraints)

        def evaluate():
            mu = counts.value
            wbar = F @ mu
            scale = max(1.0, violation(wbar[dev]))
            point = (wbar, scale)
            return float(scale * (regrets @ mu)), float(problem.value) * ref, point, Reference.around(mu, F_dev)

        return problem, evaluate

    # pass 1 is centred on the uniform allocation of total mass M, feasible for both methods (a != a*
    # deviates in at most n_f factors, each costing 1/wbar <= Delta_min^2 / (2 n_f))
    sizes = np.asarray([step.n_rows for step in plan.steps])
    mu0 = 2.0 * fg.n_factors * float(fg.table_sizes.max()) / (dmin / unit) ** 2 / np.repeat(sizes, sizes)
    out = solve_in_passes(build, Reference.around(mu0, F_dev), solver, label=f"regret bound ({method})")
    kept = out.best
    wbar, scale = kept.point
    extras = {"formulation": "junction-tree", "passes": out.passes, "pass_used": kept.index,
              "feasibility_scale": scale, "build_time": build_time, "wall_time": time.perf_counter() - start,
              "order": list(plan.order), "width": plan.width}
    if gaps is not None:
        extras.update({"gaps": gaps * unit, "restriction": restriction})
    return RegretBoundResult(
        value=kept.value / unit, solver_value=kept.solver_value / unit, method=method,
        m=m if method == "mf" else 0, best_action=best, marginals=fg.split_tables(scale * wbar / unit**2),
        n_constraints=int(n_constraints), n_variables=out.n_variables,
        status=kept.info.status, solver=kept.info.solver, solve_time=out.solve_time, extras=extras,
    )


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
