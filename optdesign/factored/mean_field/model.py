"""Mean-field characteristic time T^MF(m) (MF-TaS paper eqs. 2-3 and App. H), reduced by symmetry and certified.

With product allocations w_a = prod_i v_{i,a_i} and f_e(b; v) = 1{b != a*_e}(prod_{i in S_e} 1/v_{i,b_i} +
prod_{i in S_e} 1/v_{i,a*_i}),

    T^MF(m) Delta_m^2 = min_v max( max_a sum_e f_e(a_e; v),  max_{j < m} (Delta_m / Delta_j)^2 sum_e f_e(a^(j)_e; v) )

with a^(1), ..., a^(m) the joint actions after a* in gap order. The program is convex in v itself: every term
prod_{i in S_e} 1/v_{i,b_i} is (a posynomial with negative exponents), written with second-order and power cones
(:func:`~.posynomial_bound.inverse_products`; the paper's log coordinates y = log v need exponential
cones, on which CLARABEL stalls at scale), the simplex rows are linear, and FCR compiles the max over joint actions.
:func:`optdesign.factored.mf_characteristic_time` solves it for an instance.

**Symmetry reduction** (``reduce=True``). The actions of agent i fall into *classes* -- a*_i, each action named
by an explicit row, and "the rest" with multiplicity c -- and there is an optimum that gives one value of v to
each class, so the max over joint actions becomes a max over class patterns and the simplex row becomes
sum_c c_{i,c} exp(y_{i,c}) <= 1 (derivation: the *Notes* page of the documentation, section "Symmetry reduction
of the mean-field program"). For m = 1 every agent has two classes: FCR runs on binary tables (ring, K = 10:
8 rows per agent instead of 1,000). ``reduce=False`` keeps one class per action (the reference in tests).

**Certificate.** The upper bound is the objective evaluated exactly (max-sum over class patterns) at the
returned, normalised allocation. The lower bound is Lagrangian weak duality with the solver's multipliers,
repaired so that they are exactly dual feasible: the FCR multipliers become consistent clique weights summing
to one (with the explicit rows' multipliers), which fixes alpha = D^T (C_f^T lambda + B^T gamma) >= 0 as the weight
of each term exp(-(P y)_j); the remaining inner problem min_y sum_j alpha_j exp(-(P y)_j) over the simplex rows is
bounded below by geometric-programming duality, valid for any delta >= 0
(:func:`~optdesign.factored.mean_field.posynomial_bound.gp_lower_bound`). No step trusts the solver's accuracy, so an
``optimal_inaccurate`` answer whose certified gap meets ``tol`` is accepted.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...docstrings import shared_doc
from ...errors import InstanceTooLargeError, InvalidInputError
from ...result import MeanFieldSolution, relative_gap
from ...runtime import solvers
from ...runtime.deadline import overtime
from ...validation import as_count
from ..graph.checks import Structure, structure_key
from ..graph.factor_graph import FactorGraph
from ..inference.constraint_reduction import elimination_matrices, enumerated_max, factored_max
from ..inference.elimination import EliminationPlan
from ..inference.marginals import consistent_clique_weights
from ..inference.max_sum import MaxSum
from .action_classes import ActionClasses
from .orbits import MAX_ORBITS, OrbitMeanField
from .posynomial_bound import gp_lower_bound, inverse_products
from .symmetry import agent_orbits

__all__ = ["MeanFieldModel"]

# fcr=False lists one constraint per class pattern
ENUMERATED_MAX_JOINT_ACTIONS = 200_000
DEFAULT_TOL = 1e-6
# CLARABEL at 1e-9 instead of its default 1e-8 (the simplex rows, violated by ~1e-7 at 1e-8, set the gap of the
# normalised allocation). Measured on the cone form of :func:`inverse_products`: certified gaps 1.6e-8 / 2.9e-8 on
# rings N = 1,000 / 10,000 (K = 10), against 1.5e-7 / 1.6e-7 at 1e-8; at 1e-10 small instances stopped
# optimal_inaccurate and fell back to SCS (lines N <= 4 with m = 2)
#: solved m = 1 models that :meth:`MeanFieldModel.for_structure` keeps
MODEL_CACHE = 16
MEAN_FIELD_SOLVER_OPTIONS = {"CLARABEL": {"tol_feas": 1e-9, "tol_gap_rel": 1e-9, "tol_gap_abs": 1e-9}}

# the parameters MeanFieldModel and mf_characteristic_time share (substituted by _shared_doc)
_DOC = {
    "options": """    fcr : bool
        Factored Constraint Reduction of the max over joint actions (``False`` enumerates class patterns).
    reduce : bool
        Symmetry reduction to action classes (``False``: one class per action, the reference).
    order : str or sequence of int
        Elimination order of FCR (``"auto"``: networkx treewidth heuristics).
    solver : str, optional
        Conic solver (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.""",
    "symmetry": """    symmetry : "auto", None or sequence of permutations
        m = 1: ``"auto"`` ties the agents of each orbit of the structure's automorphisms and, with at most
        MAX_ORBITS orbits, solves by Kelley's cutting planes; agent permutations give the generators instead;
        ``None`` (or ``False``) always solves the conic program.""",
    "too_large": """    InstanceTooLargeError
        ``fcr=False`` above ENUMERATED_MAX_JOINT_ACTIONS class patterns, or an elimination order too wide.""",
}


_shared_doc = shared_doc(_DOC)


@_shared_doc
class MeanFieldModel:
    """The T^MF(m) program on action classes, built once (for m = 1 one model serves every instance of a structure).

    The model is written with a* = class 0. For m = 1 it depends on the instance not at all (only on the
    graph and the K_i), so a bandit loop re-using plug-in estimates solves it once; for m > 1 the explicit rows
    (``ranked``: the next m joint actions with their gaps) are constants of the instance.
    :func:`~optdesign.factored.mf_characteristic_time` builds and solves one; its values are in
    units of Delta_m^2 (t* = T^MF(m) Delta_m^2). :meth:`for_structure` keeps the solved m = 1 models of the last
    structures asked for.

    Parameters
    ----------
    fg : FactorGraph
        The structure (agents, K_i, scopes); for m > 1 also the instance.
    m : int
        The m of T^MF(m) (App. H).
    ranked : list of (joint action, gap), optional
        For m > 1: the m joint actions after a* in gap order with their gaps (``fg.m_best(m + 1)[1:]``).
    best_action : array_like, shape (N,), optional
        a*, required for m > 1 (for m = 1 the model holds for every a*).
%(options)s
%(symmetry)s

    Raises
    ------
    InvalidInputError
        m > 1 without ``ranked`` (of length m) and ``best_action``; m not a positive integer.
%(too_large)s
    """

    def __init__(self, fg: FactorGraph, *, m: int = 1, ranked: list | None = None, best_action: Any = None,
                 fcr: bool = True, reduce: bool = True, order: str | Sequence[int] = "auto", solver: str | None = None,
                 symmetry: str | bool | Sequence[Sequence[int]] | None = "auto"):
        self.fg, self.m, self.fcr, self.reduce, self.solver = fg, as_count(m, "m"), fcr, bool(reduce), solver
        self.plan = fg.plan(order)
        n_f = fg.n_factors
        if self.m > 1 and (ranked is None or len(ranked) != self.m or best_action is None):
            raise InvalidInputError(f"m = {self.m} needs a* and the next {self.m} joint actions with their gaps")
        explicit = [np.asarray(a) for a, _ in cast(list, ranked)[:-1]] if self.m > 1 else []
        if not self.reduce:
            self.classes = ActionClasses.identity(fg.n_actions)
        else:
            named = [sorted({int(a[i]) for a in explicit} - {int(best_action[i])}) if explicit else ()
                     for i in range(fg.n_agents)]
            self.classes = ActionClasses.reduced(fg.n_actions, named)
        n_classes = self.classes.n_classes
        self.class_plan = EliminationPlan(n_classes, fg.scopes, order=self.plan.order)
        cp_ = self.class_plan
        n_tab = cp_.table_size
        self.class_offsets = np.concatenate([[0], np.cumsum(n_classes)]).astype(np.int64)
        self.agent_of_class = np.repeat(np.arange(fg.n_agents), n_classes)
        self.log_mult = np.log(np.concatenate(self.classes.multiplicities))
        self.P = cp_.group_selection()
        sizes = np.diff(cp_.factor_offsets)
        self._factor_of = np.repeat(np.arange(n_f), sizes)
        zero = cp_.factor_offsets[:-1]
        at_best = sp.csr_matrix((np.ones(n_tab), (np.arange(n_tab), zero[self._factor_of])), shape=(n_tab, n_tab))
        deviates = np.ones(n_tab)
        deviates[zero] = 0.0
        # f_e(c) = 1{c != 0} (s_{e,c} + s_{e,0}): one sparse map of s
        self.D = (sp.diags(deviates) @ (sp.eye(n_tab, format="csr") + at_best)).tocsr()

        self.orbits = None
        if symmetry is not None and symmetry is not False and self.m == 1 and self.reduce and fcr:
            auto = isinstance(symmetry, str) and symmetry == "auto"
            orbits = agent_orbits(fg.n_actions, fg.scopes, None if auto else symmetry)
            search = OrbitMeanField(cp_, self.P, self.D, fg.n_actions, orbits)
            if search.n_orbits <= MAX_ORBITS:
                self.orbits, self._search = orbits, search
        if self.orbits is None:
            self._build_conic(ranked, best_action, explicit)
        else:
            self.n_constraints, self.n_variables = 0, self._search.n_orbits + 1
        self._solution: MeanFieldSolution | None = None

    def _build_conic(self, ranked: Any, best_action: Any, explicit: list[np.ndarray]) -> None:
        """The conic program: SOC/power-cone products, simplex rows, FCR (or enumerated) max, explicit rows."""
        fg, cp_, n_f, n_tab = self.fg, self.class_plan, self.fg.n_factors, self.class_plan.table_size
        n_classes, n_y, fcr = self.classes.n_classes, int(self.class_offsets[-1]), self.fcr
        solvers.check_setup_time(cp_.n_rows + 2 * n_tab + n_y, "the mean-field program")  # before building it
        G = sp.csr_matrix((np.ones(n_y), (self.agent_of_class, np.arange(n_y))), shape=(fg.n_agents, n_y))
        # t is solved in units of its value at the uniform allocation, so the program's values are O(1) whatever N
        # and K (t* grows like N): interior-point tolerances are absolute near 1
        uniform = np.exp(-np.log(np.bincount(self.agent_of_class, np.exp(self.log_mult)))[self.agent_of_class])
        self.unit = MaxSum(cp_, self.D @ np.exp(-(self.P @ np.log(uniform))), keep_regrets=False).value
        self.v = cp.Variable(n_y, nonneg=True, name="class_v")
        self.s = cp.Variable(n_tab, name="inverse_marginals")
        terms = self.D @ self.s
        constraints = [G @ cp.multiply(np.exp(self.log_mult), self.v) <= 1,
                       *inverse_products(self.P, self.v, self.s, self.unit)]
        if fcr:
            self.max = factored_max(terms, cp_)
            self._C_f = elimination_matrices(cp_)[1]  # factor entries of every FCR row (for the certificate)
            self._patterns = None
        else:
            n_patterns = int(np.prod(n_classes, dtype=float))
            if n_patterns > ENUMERATED_MAX_JOINT_ACTIONS:
                raise InstanceTooLargeError(f"fcr=False enumerates all {n_patterns:.0f} class patterns (limit "
                                            f"{ENUMERATED_MAX_JOINT_ACTIONS}); use fcr=True")
            self._patterns = cp_.group_indices(np.indices(n_classes).reshape(len(n_classes), -1).T)
            self.max = enumerated_max(terms, self._patterns)
        constraints += self.max.constraints
        self._explicit = None
        if self.m > 1:
            gaps = np.asarray([g for _, g in ranked])
            maps = self.classes.class_maps(best_action)
            patterns = np.stack([[maps[i][a[i]] for i in range(fg.n_agents)] for a in explicit])
            rows = cp_.group_indices(patterns)
            B = sp.csr_matrix((np.ones(rows.size), (np.repeat(np.arange(self.m - 1), n_f), rows.ravel())),
                              shape=(self.m - 1, n_tab))
            self._rho = (gaps[:-1] / gaps[-1]) ** 2
            self._explicit = (B, B @ terms <= self._rho * self.max.t)
            constraints.append(self._explicit[1])
        self.problem = cp.Problem(cp.Minimize(self.max.t), constraints)
        self.n_constraints = self.max.n_constraints + self.m - 1
        self.n_variables = self.problem.size_metrics.num_scalar_variables

    # (action counts, scopes) -> solved m = 1 model, least recently used first
    _shared: ClassVar[dict[Structure, MeanFieldModel]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def for_structure(cls, fg: FactorGraph) -> MeanFieldModel:
        """The solved m = 1 model of ``fg``'s structure, built and solved once per (action counts, scopes).

        For m = 1 the program does not read the means (T^MF = t* / Delta_min^2, the allocation relabelled to a* by
        :meth:`local_allocations`), so instances with equal structures share one model, solved with the default
        options: a bandit loop that rebuilds its instance for every run solves once. The last ``MODEL_CACHE``
        models are kept, the least recently used dropped first (two threads may both solve a new structure).

        Parameters
        ----------
        fg : FactorGraph
            Agents, action counts and scopes (the tables are not read).

        Returns
        -------
        MeanFieldModel
            The solved model: ``solve().t`` is t*, ``local_allocations(a)`` the allocation relabelled to a.

        Raises
        ------
        InvalidInputError
            ``fg`` is not a FactorGraph.
        """
        if not isinstance(fg, FactorGraph):
            raise InvalidInputError(f"fg must be a FactorGraph, got {type(fg).__name__}")
        key = structure_key(fg.n_actions, fg.scopes)
        with cls._shared_lock:
            model = cls._shared.pop(key, None)
        if model is None:
            model = cls(fg)
            if model.solve().info.status in ("not_converged", "interrupted"):  # cut by a time budget: not kept
                return model
        with cls._shared_lock:
            cls._shared[key] = model  # most recently used last
            while len(cls._shared) > MODEL_CACHE:
                del cls._shared[next(iter(cls._shared))]
        return model

    # ------------------------------------------------------------------------------------------ solve
    def solve(self, tol: float = DEFAULT_TOL) -> MeanFieldSolution:
        """Solve once (cached): class allocations, the certified bracket [lower, upper] of t*, solver info.

        Parameters
        ----------
        tol : float
            Certified relative gap at which an ``optimal_inaccurate`` solve is accepted (the orbit search stops).

        Returns
        -------
        MeanFieldSolution
            ``class_v`` (normalised class allocations), ``upper`` (attained), ``lower``, ``gap``, ``t`` (the
            solver's optimum), ``info`` (SolveInfo) and ``compile_time``; the orbit search fills ``passes``,
            ``cuts`` and ``orbit_point``. Values are t* = T^MF(m) Delta_m^2.

        Raises
        ------
        SolverError
            Every conic solver of the chain failed.
        TimeLimitReached
            The enclosing time budget ran out before a first bracket (a solve stopped by it returns its bracket,
            status ``"not_converged"``).
        """
        if self._solution is None and self.orbits is not None:
            self._solution = self._search.solve(tol)
        if self._solution is None:
            # accept_limit: the bracket below is certified at any point, also one the time budget cut short
            info = solvers.solve(self.problem, self.solver, accept=lambda: self._bracket()[2] <= tol,
                                 accept_limit=True, solver_options=MEAN_FIELD_SOLVER_OPTIONS)
            with overtime():
                upper, lower, gap, v = self._bracket()
            self._solution = MeanFieldSolution(
                class_v=v, t=float(cast(np.ndarray, self.max.t.value)) * self.unit, upper=upper, lower=lower, gap=gap,
                info=info, compile_time=float(getattr(self.problem, "compilation_time", 0.0) or 0.0))
        return self._solution

    def _class_allocation(self) -> np.ndarray:
        """Solver's y, normalised so every agent's allocation sums to one over its actions."""
        y = np.log(np.clip(np.asarray(self.v.value, dtype=float), 1e-300, None))
        y = y - y.max()  # exp never overflows; normalisation removes the shift
        mass = np.bincount(self.agent_of_class, np.exp(y + self.log_mult), minlength=self.fg.n_agents)
        return np.exp(y - np.log(mass)[self.agent_of_class])

    def _class_terms(self, v: np.ndarray) -> np.ndarray:
        s = np.exp(-(self.P @ np.log(v)))
        return self.D @ s

    def _upper(self, v: np.ndarray) -> float:
        terms = self._class_terms(v)
        value = MaxSum(self.class_plan, terms, keep_regrets=False).value
        if self._explicit is not None:
            value = max(value, float(np.max((self._explicit[0] @ terms) / self._rho)))
        return value

    def _bracket(self) -> tuple[float, float, float, np.ndarray]:
        """(upper, lower, relative gap, class allocation) at the solver's current point."""
        if self.v.value is None or not np.all(np.isfinite(self.v.value)):
            return float("inf"), 0.0, float("inf"), np.full(self.v.shape[0], np.nan)
        v = self._class_allocation()
        upper = self._upper(v)
        lower = self._lower(v)
        return upper, lower, relative_gap(upper, lower), v

    def _lower(self, v: np.ndarray) -> float:
        """Weak-duality lower bound on t* from the solver's multipliers (module docstring)."""
        rows = self.max.constraints[0]  # FCR rows, or one row per class pattern (fcr=False)
        if rows.dual_value is None:
            return 0.0
        lam = np.clip(np.asarray(rows.dual_value, dtype=float).ravel(), 0.0, None)
        # the multiplier of t >= (root messages) with FCR; without FCR the pattern rows' total
        tau = float(np.clip(np.sum(self.max.constraints[-1].dual_value), 0.0, None)) if self.fcr else float(lam.sum())
        gamma = np.zeros(0)
        if self._explicit is not None:
            gamma = np.clip(np.asarray(self._explicit[1].dual_value, dtype=float).ravel(), 0.0, None)
        total = tau + float(gamma @ self._rho) if gamma.size else tau
        if total <= 0:
            return 0.0
        tau, gamma = tau / total, gamma / total  # dual feasibility in t: tau + sum_j gamma_j rho_j = 1
        if self.fcr:
            factor_weights = self._C_f.T @ consistent_clique_weights(self.class_plan, lam, tau)
        else:
            n_f = cast(np.ndarray, self._patterns).shape[1]
            factor_weights = np.bincount(cast(np.ndarray, self._patterns).ravel(),
                                         np.repeat(lam * (tau / lam.sum()), n_f), minlength=self.class_plan.table_size)
        if gamma.size:
            factor_weights = factor_weights + cast(tuple, self._explicit)[0].T @ gamma  # gamma comes from its rows
        alpha = self.D.T @ factor_weights
        s_hat = np.exp(-(self.P @ np.log(v)))
        return gp_lower_bound(alpha, alpha * s_hat, self.P, self.agent_of_class, np.exp(self.log_mult))

    # ------------------------------------------------------------------------------------------ allocations
    def local_allocations(self, best_action: np.ndarray) -> list[np.ndarray]:
        """The optimal local allocations v_i (over actions, each summing to one) for the instance with a*.

        Parameters
        ----------
        best_action : numpy.ndarray, shape (N,)
            a* of the instance (class 0 of each agent is its a*_i).

        Returns
        -------
        list of numpy.ndarray
            v_i, shape (K_i,), per agent.
        """
        v = self.solve().class_v
        maps = self.classes.class_maps(best_action)
        return [v[self.class_offsets[i] + cmap] for i, cmap in enumerate(maps)]

    def marginals_at(self, local: list[np.ndarray]) -> np.ndarray:
        """Flat factor marginals wbar_{e,b} = prod_{i in S_e} v_{i,b_i} of product allocations (full tables).

        Parameters
        ----------
        local : list of numpy.ndarray
            Local allocations v_i, shape (K_i,), positive.

        Returns
        -------
        numpy.ndarray, shape (fg.abar,)
            The marginals, flat over the factor tables.
        """
        return np.exp(self.plan.group_sums(np.log(np.concatenate(local))))

    def terms_at(self, local: list[np.ndarray], best_action: np.ndarray) -> np.ndarray:
        """Numeric f_e(b; v) = 1{b != a*_e}(prod 1/v_{i,b_i} + prod 1/v_{i,a*_i}) for all full group actions (e, b).

        Parameters
        ----------
        local : list of numpy.ndarray
            Local allocations v_i, shape (K_i,), positive.
        best_action : array_like, shape (N,)
            a* of the instance.

        Returns
        -------
        numpy.ndarray, shape (fg.abar,)
            The terms, flat over the factor tables (0 at a*_e).
        """
        s = 1.0 / self.marginals_at(local)
        star = self.fg.group_indices(np.asarray(best_action))[0]
        terms = s + s[star][np.repeat(np.arange(self.fg.n_factors), self.fg.table_sizes)]
        terms[star] = 0.0
        return terms
