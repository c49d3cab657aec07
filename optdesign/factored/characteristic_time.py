"""Characteristic times of multi-agent best-arm identification (Vannella et al., ICML 2023).

Convention (MF-TaS paper): with unit-variance Gaussian semi-bandit feedback every delta-PAC
algorithm has E[tau] >= 2 T* kl(delta, 1 - delta); the Garivier–Kaufmann T* of a single agent is
twice this T*. With H_w(a) = sum_{e: a_e != a*_e} (1/wbar_{e,a*_e} + 1/wbar_{e,a_e}):

* exact     T*      = inf over the marginal polytope  max_{a != a*} H_w(a) / Delta(a)^2   (eq. 1);
* mean-field T^MF(m) = the same over product allocations w_a = prod_i v_{i,a_i}, with Delta(a)
  replaced by Delta_m (the m-th smallest gap) for every a outside the m + 1 best joint actions
  (App. H; m = 1 is eqs. 2-3). T* <= T^MF(m+1) <= T^MF(m) <= T^MF(1) = T^MF <= 2 Abar / Delta_min^2.

The mean-field program is written in exponential-cone form with y = log v: the group terms
prod_{i in S_e} 1/v_{i,b_i} = exp(-(P y)_{e,b}) for a sparse selection P, all in one vectorised
exp-cone block, and the simplex rows relaxed to sum_k exp(y_{i,k}) <= 1 (tight at the optimum,
since the objective decreases in v). The max over joint actions is compiled by FCR
(:func:`optdesign.factored.fcr.factored_max`), or enumerated with ``fcr=False`` for verification.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .. import solvers
from .._lazy import cp
from ..errors import InstanceTooLargeError, InvalidInputError
from ..result import CharTimeResult
from ..validation import as_count, check_enumerable, check_m_best
from .factorgraph import FactorGraph
from .fcr import enumerated_max, factored_max
from .inference import MaxSum
from .marginals import marginal_maps
from .rescaling import Reference, ScaledAllocation, solve_in_passes

# exact T* has one constraint per joint action: refuse beyond this (3^9 = 19,683 fits)
EXACT_MAX_JOINT_ACTIONS = 20_000
# fcr=False lists one constraint per joint action
ENUMERATED_MAX_JOINT_ACTIONS = 200_000


class MeanFieldModel:
    """The T^MF(m) program for one factor-graph structure, built once.

    The program depends on the instance only through a* and, for m > 1, the next m joint
    actions and the gap ratios Delta_j / Delta_m. Relabelling every agent's actions so that
    a*_i becomes action 0 maps any a* to a* = 0, so the model is built for a* = 0 and the
    solution is relabelled: for m = 1 one solve serves every instance of the structure
    (T^MF = t* / Delta_min^2 with t* a property of the graph and the K_i alone), which is what a
    bandit loop re-using plug-in estimates needs. For m > 1 the explicit rows are constants of
    the instance (``ranked``: the next m joint actions with their gaps).
    """

    def __init__(self, fg: FactorGraph, *, m: int = 1, ranked: list | None = None, best_action=None,
                 fcr: bool = True, order="auto", solver: str | None = None):
        self.fg, self.m, self.fcr, self.solver = fg, as_count(m, "m"), fcr, solver
        self.plan = fg.plan(order)
        n_tab, n_f = fg.abar, fg.n_factors
        self.agent_offsets = np.concatenate([[0], np.cumsum(fg.n_actions)]).astype(np.int64)
        self.P = _group_selection(fg, self.agent_offsets)
        G = sp.csr_matrix((np.ones(self.agent_offsets[-1]),
                           (np.repeat(np.arange(fg.n_agents), fg.n_actions), np.arange(self.agent_offsets[-1]))))
        self._factor_of = np.repeat(np.arange(n_f), fg.table_sizes)
        zero = fg.plan().factor_offsets[:-1]  # flat position of group action 0 of every factor
        at_best = sp.csr_matrix((np.ones(n_tab), (np.arange(n_tab), zero[self._factor_of])), shape=(n_tab, n_tab))
        deviates = np.ones(n_tab)
        deviates[zero] = 0.0
        # f_e(b) = 1{b != 0} (s_{e,b} + s_{e,0}) in relabelled coordinates, as one sparse map of s
        self.D = sp.diags(deviates) @ (sp.eye(n_tab, format="csr") + at_best)

        self.y = cp.Variable(int(self.agent_offsets[-1]), name="log_v")
        self.s = cp.Variable(n_tab, name="inverse_marginals")
        terms = self.D @ self.s
        constraints = [cp.exp(-(self.P @ self.y)) <= self.s, G @ cp.exp(self.y) <= 1]
        if fcr:
            self.max = factored_max(terms, self.plan)
        else:
            if fg.n_joint_actions > ENUMERATED_MAX_JOINT_ACTIONS:
                raise InstanceTooLargeError(
                    f"fcr=False enumerates all {fg.n_joint_actions} joint actions (limit "
                    f"{ENUMERATED_MAX_JOINT_ACTIONS}); use fcr=True"
                )
            self.max = enumerated_max(terms, fg.group_indices(fg.joint_actions()))
        constraints += self.max.constraints
        if self.m > 1:
            if ranked is None or len(ranked) != self.m or best_action is None:
                raise InvalidInputError(f"m = {self.m} needs a* and the next {self.m} joint actions with their gaps")
            gaps = np.asarray([g for _, g in ranked])
            actions = np.stack([self.relabel(a, best_action) for a, _ in ranked[:-1]])
            rows = fg.group_indices(actions)
            B = sp.csr_matrix((np.ones(rows.size), (np.repeat(np.arange(self.m - 1), n_f), rows.ravel())),
                              shape=(self.m - 1, n_tab))
            constraints.append(B @ terms <= ((gaps[:-1] / gaps[-1]) ** 2) * self.max.t)
        self.problem = cp.Problem(cp.Minimize(self.max.t), constraints)
        self.n_constraints = self.max.n_constraints + self.m - 1
        self._solution: dict | None = None

    def relabel(self, action: np.ndarray, best_action: np.ndarray) -> np.ndarray:
        """Swap actions 0 and a*_i of every agent (an involution): a* maps to 0."""
        a, star = np.asarray(action), np.asarray(best_action)
        out = a.copy()
        out[a == star] = 0
        out[a == 0] = star[a == 0]
        return out

    def solve(self) -> dict:
        """Solve (once; cached) in relabelled coordinates: t* and the relabelled allocations."""
        if self._solution is None:
            info = solvers.solve(self.problem, self.solver)
            v = np.exp(self.y.value)
            bounds = zip(self.agent_offsets[:-1], self.agent_offsets[1:], strict=True)
            local = [v[a:b] / v[a:b].sum() for a, b in bounds]
            self._solution = {"local": local, "t": float(self.max.t.value), "info": info,
                              "compile_time": float(getattr(self.problem, "compilation_time", 0.0) or 0.0)}
        return self._solution

    def local_allocations(self, best_action: np.ndarray) -> list[np.ndarray]:
        """The optimal local allocations v_i for the instance whose best joint action is a*."""
        local = self.solve()["local"]
        out = []
        for v, star in zip(local, np.asarray(best_action), strict=True):
            perm = np.arange(v.size)
            perm[[0, star]] = perm[[star, 0]]
            out.append(v[perm])
        return out

    def terms_at(self, local: list[np.ndarray], best_action: np.ndarray) -> np.ndarray:
        """Numeric f_e(b; v) = 1{b != a*_e}(prod 1/v_{i,b_i} + prod 1/v_{i,a*_i}) for all (e, b)."""
        s = np.exp(-(self.P @ np.log(np.concatenate(local))))
        star = self.fg.group_indices(np.asarray(best_action))[0]
        terms = s + s[star][self._factor_of]
        terms[star] = 0.0
        return terms


def mf_characteristic_time(fg: FactorGraph, m: int = 1, *, fcr: bool = True, order="auto",
                           solver: str | None = None) -> CharTimeResult:
    """T^MF(m) (MF-TaS eqs. 2-3 and App. H) with product allocations; see the module docstring.

    ``fcr=False`` enumerates every joint action instead of FCR (verification, small instances).
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    m = check_m_best(m, fg.n_joint_actions)
    ranked = fg.m_best(m + 1)  # raises if a* is not unique
    best = ranked[0][0]
    gaps = np.asarray([g for _, g in ranked[1:]])
    start = time.perf_counter()
    model = MeanFieldModel(fg, m=m, ranked=ranked[1:], best_action=best, fcr=fcr, order=order, solver=solver)
    build = time.perf_counter() - start
    out = model.solve()
    local = model.local_allocations(best)
    # evaluate the objective exactly at the normalised allocation
    terms = model.terms_at(local, best)
    value = MaxSum(model.plan, terms).value / gaps[-1] ** 2
    for (a, _), g in zip(ranked[1:-1], gaps[:-1], strict=True):
        value = max(value, float(terms[fg.group_indices(a)[0]].sum()) / g**2)
    marginals = fg.split_tables(np.exp(model.P @ np.log(np.concatenate(local))))
    info = out["info"]
    return CharTimeResult(
        value=float(value), solver_value=out["t"] / gaps[-1] ** 2, method="mean-field", m=int(m),
        best_action=best, gaps=gaps, marginals=marginals, local_allocations=local, global_allocation=None,
        n_constraints=model.n_constraints, n_variables=model.problem.size_metrics.num_scalar_variables,
        width=model.plan.width if fcr else None, status=info.status, solver=info.solver,
        solve_time=info.solve_time, compile_time=out["compile_time"],
        extras={"fcr": fcr, "build_time": build, "order": list(model.plan.order) if fcr else None},
    )


EXACT_FORMULATIONS = ("junction-tree", "global")


def characteristic_time(fg: FactorGraph, *, formulation: str = "junction-tree", solver: str | None = None,
                        max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS) -> CharTimeResult:
    """Exact T* (MF-TaS eq. 1): inf over the marginal polytope of max_{a != a*} H_w(a) / Delta(a)^2.

    One constraint per joint action a != a*, so instances with more than ``max_joint_actions``
    joint actions are refused (InstanceTooLargeError); use :func:`mf_characteristic_time` (mean
    field with FCR) for those. ``formulation`` describes the marginal polytope:

    * ``"junction-tree"`` (default): clique distributions of an elimination order, consistent on
      separators (:mod:`optdesign.factored.marginals`), exact and O(N K^{w+1}) variables;
    * ``"global"``: the paper's global simplex over all prod_i K_i joint actions (a cross-check;
      its many equivalent optima make interior-point solvers stall earlier).

    Solved in passes centred on the previous allocation (:func:`optdesign.factored.rescaling.solve_in_passes`,
    shared with the regret bound); ``value`` is the objective at the kept pass's marginals.
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    if formulation not in EXACT_FORMULATIONS:
        raise InvalidInputError(f"formulation must be one of {EXACT_FORMULATIONS}, got {formulation!r}")
    check_enumerable(fg.n_joint_actions, max_joint_actions, what="exact T*",
                     instead="mf_characteristic_time(fg) (mean field with FCR)")
    start = time.perf_counter()
    dmin = fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    A = fg.joint_actions()
    gaps = fg.gap(A)
    others = np.flatnonzero(np.any(A != best, axis=1))
    H = fg.deviation_matrix(A[others], with_best=True)
    if formulation == "global":  # W maps the global allocation to its factor marginals
        idx = fg.group_indices(A)
        W = sp.csr_matrix((np.ones(idx.size), (idx.ravel(), np.repeat(np.arange(A.shape[0]), fg.n_factors))),
                          shape=(fg.abar, A.shape[0]))
        total = sp.csr_matrix(np.ones((1, A.shape[0])))
        uniform = np.full(A.shape[0], 1.0 / A.shape[0])
    else:  # clique distributions of the junction tree, consistent on separators, one per root
        W, consistency, total = marginal_maps(fg.plan())
        sizes = np.asarray([step.n_rows for step in fg.plan().steps])
        uniform = 1.0 / np.repeat(sizes, sizes)
    # s_{e,b} >= 1 / wbar_{e,b} around a reference (optdesign.factored.rescaling): unscaled cones mix entries from 1
    # to 1e5 and the solver's absolute tolerances then cost percents on small marginals (measured), and an
    # unscaled pass 1 can leave a point the next pass fails on (line N=7, K=4, seed 0: 300 s in SCS). Pass
    # 1 is centred on the uniform allocation, every later pass on the previous one.
    H_scaled = sp.diags((dmin / gaps[others]) ** 2) @ H  # rows scaled by Delta_min^2 / Delta(a)^2: z = T* Delta_min^2

    def build(reference: Reference):
        alloc = ScaledAllocation(W, reference, name="w")
        z = cp.Variable(name="z")
        constraints = [*alloc.constraints, alloc.linear(total) == 1, alloc.inverse(H_scaled) <= z]
        if formulation != "global" and consistency.shape[0]:
            constraints.append(alloc.linear(consistency, normalise=True) == 0)
        problem = cp.Problem(cp.Minimize(z), constraints)

        def evaluate():
            y = alloc.value
            wbar_val = W @ y
            with np.errstate(divide="ignore"):
                value = float(np.max((H @ (1.0 / wbar_val)) / gaps[others] ** 2))
            return value, float(z.value) / dmin**2, (wbar_val, y), Reference.around(y, W)

        return problem, evaluate

    out = solve_in_passes(build, Reference.around(uniform, W), solver, label="exact T*")
    best_pass = out.best
    wbar_val, y = best_pass.point
    info = best_pass.info
    marginals = fg.split_tables(wbar_val)
    glob = (y / y.sum()).reshape(fg.n_actions) if formulation == "global" else None
    return CharTimeResult(
        value=best_pass.value, solver_value=best_pass.solver_value, method="exact", m=0, best_action=best,
        gaps=np.asarray([dmin]), marginals=marginals, local_allocations=None, global_allocation=glob,
        n_constraints=int(others.size), n_variables=out.n_variables, width=None,
        status=info.status, solver=info.solver, solve_time=time.perf_counter() - start,
        compile_time=out.compile_time,
        extras={"formulation": formulation, "passes": out.passes, "pass_used": best_pass.index},
    )


def _group_selection(fg: FactorGraph, agent_offsets: np.ndarray) -> sp.csr_matrix:
    """P with (P log v)_{e,b} = sum_{i in S_e} log v_{i,b_i}: one row per group action."""
    rows, cols = [], []
    start = 0
    for scope, table in zip(fg.scopes, fg.tables, strict=True):
        grid = np.indices(table.shape).reshape(len(scope), -1)
        r = start + np.arange(table.size)
        for p, i in enumerate(scope):
            rows.append(r)
            cols.append(agent_offsets[i] + grid[p])
        start += table.size
    rows_a, cols_a = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(rows_a.size), (rows_a, cols_a)), shape=(fg.abar, int(agent_offsets[-1])))
