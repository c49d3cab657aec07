"""Characteristic times of multi-agent best-arm identification (Vannella et al., ICML 2023).

Convention (MF-TaS paper): with unit-variance Gaussian semi-bandit feedback every delta-PAC
algorithm has E[tau] >= 2 T* kl(delta, 1 - delta); the Garivier–Kaufmann T* of a single agent is
twice this T*. With H_w(a) = sum_{e: a_e != a*_e} (1/wbar_{e,a*_e} + 1/wbar_{e,a_e}):

* exact     T*      = inf over the marginal polytope  max_{a != a*} H_w(a) / Delta(a)^2   (eq. 1);
* mean-field T^MF(m) = the same over product allocations w_a = prod_i v_{i,a_i}, with Delta(a)
  replaced by Delta_m (the m-th smallest gap) for every a outside the m + 1 best joint actions
  (App. H; m = 1 is eqs. 2-3). T* <= T^MF(m+1) <= T^MF(m) <= T^MF(1) = T^MF <= 2 Abar / Delta_min^2.

The mean-field program, reduced by symmetry and certified, is in :mod:`optdesign.factored.mean_field`.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...errors import InvalidInputError, TimeLimitReached
from ...result import CharTimeResult, relative_gap
from ...runtime.deadline import budget_expired, stop_reason, time_budget
from ...validation import as_count, as_tolerance, check_enumerable
from ...vocabulary import EXACT_FORMULATIONS, EXACT_METHODS, ExactFormulation, ExactMethod, check_option
from ..graph.checks import structure_key
from ..graph.factor_graph import FactorGraph
from ..inference.marginals import consistent_clique_weights, marginal_maps
from .constraint_generation import MASTER_SOLVER_OPTIONS, check_time_limit
from .enumerated_separation import MAX_JOINT_ACTIONS as ENUMERATED_SEPARATION
from .fallback import SHARE, char_time_bracket, deferred, solve_blocker, unsolved_reason
from .fallback_results import char_time_result, merge_char_time
from .generated import certified_lower_bound, characteristic_time_generated
from .rescaling import Reference, ScaledAllocation, solve_in_passes

__all__ = ["EXACT_MAX_JOINT_ACTIONS", "characteristic_time"]

# method="enumerate" has one constraint per joint action: refused beyond this (3^9 = 19,683 fits); "auto" switches
# to constraint generation there
EXACT_MAX_JOINT_ACTIONS = 20_000


# EXACT_METHODS and EXACT_FORMULATIONS: optdesign.vocabulary (ExactMethod, ExactFormulation)


def characteristic_time(fg: FactorGraph, *, method: ExactMethod = "auto",
                        formulation: ExactFormulation = "junction-tree", solver: str | None = None,
                        max_joint_actions: int = EXACT_MAX_JOINT_ACTIONS, tol: float = 1e-4,
                        time_limit: float | None = None, warm_start: CharTimeResult | None = None) -> CharTimeResult:
    """Exact T* (MF-TaS eq. 1): inf over the marginal polytope of max_{a != a*} H_w(a) / Delta(a)^2.

    ``method="generate"`` solves it by constraint generation with exact separation, for any number of joint
    actions, and certifies the result to relative gap ``tol`` (:mod:`optdesign.factored.exact.constraint_generation`).

    ``time_limit`` bounds the whole call (a few seconds of slack: the bracket of a point already computed is
    finished): every conic solve gets the time left, every loop checks it, and when it runs out the best certified
    bracket so far is returned with status ``"not_converged"`` (``"interrupted"`` after Ctrl-C under
    :func:`optdesign.runtime.deadline.graceful_interrupt`): ``value`` an upper bound on T* attained by ``marginals``,
    ``lower_bound`` a lower bound. Before any solve has bracketed T* that is the closed-form bracket of
    :mod:`optdesign.factored.exact.fallback` (``extras["fallback"]`` says which allocation attains it), and if even
    a* was not found (after Ctrl-C, or when its max-sum pass outlasts its overtime), value inf and lower bound 0 with an
    empty ``best_action`` (``extras["fallback"] == "none"``: no bound computed). When no program over the clique tables
    can start in the time limit (``extras["stopped"] == "setup"``: a ring of 1,000 agents with K = 10 needs about 36 s,
    :func:`optdesign.factored.exact.fallback.solve_blocker`), no solve is attempted and the budget goes to that bracket:
    mixtures of the best joint actions and the uniform distribution lower its upper end, and the call returns once
    they are tried, possibly before the limit.
    ``method="enumerate"`` lists every joint action, as follows; ``"auto"`` (default) enumerates up to
    ``max_joint_actions`` joint actions (and generates when that solve's certified gap exceeds ``tol``) and
    generates beyond.

    ``warm_start``, a previous result of constraint generation on an instance of the same structure (agents,
    action counts, scopes; the means may differ), seeds the generation's working set with that result's
    ``working_set``, the joint actions whose rows carried its optimum, and centres the first master solve on its
    ``clique_weights``: a bandit re-solving T* at its plug-in estimates converges in fewer iterations, each on a
    smaller master. A warm start changes where the search starts, not what is certified.
    It only serves constraint generation: with one, ``"auto"`` generates and ``"enumerate"`` refuses it.

    One constraint per joint action a != a*, so ``"enumerate"`` refuses instances with more than
    ``max_joint_actions`` joint actions (InstanceTooLargeError). ``formulation`` describes the marginal polytope:

    * ``"junction-tree"`` (default): clique distributions of an elimination order, consistent on
      separators (:mod:`optdesign.factored.inference.marginals`), exact and O(N K^{w+1}) variables;
    * ``"global"``: the paper's global simplex over all prod_i K_i joint actions (a cross-check;
      its many equivalent optima make interior-point solvers stall earlier).

    Solved in passes centred on the previous allocation (:func:`optdesign.factored.exact.rescaling.solve_in_passes`,
    shared with the regret bound); ``value`` is the objective at the kept pass's marginals, ``lower_bound`` comes
    from the rows' multipliers by weak duality, and a RuntimeWarning says when their gap exceeds ``tol``.

    Parameters
    ----------
    fg : FactorGraph
        The instance: agents, action counts, factor scopes and mean tables; a* must be unique.
    method : str
        ``"auto"`` (default), ``"enumerate"`` or ``"generate"`` (above).
    formulation : str
        ``"junction-tree"`` (default) or ``"global"``, the description of the marginal polytope when enumerating.
    solver : str, optional
        Conic solver (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    max_joint_actions : int
        Largest number of joint actions ``"enumerate"`` accepts (and where ``"auto"`` switches to generation).
    tol : float
        Certified relative gap ``value / lower_bound - 1`` to reach.
    time_limit : float, optional
        Seconds for the whole call; past them the best certified bracket is returned (status ``"not_converged"``).
        None: no limit on enumeration, constraint generation stops after 600 s.
    warm_start : CharTimeResult, optional
        A result of constraint generation (it has a ``working_set``) on an instance of the same structure.

    Returns
    -------
    CharTimeResult
        ``value`` (T*, convention E[tau] >= 2 T* kl(delta, 1 - delta)), ``lower_bound`` and ``gap`` (certified),
        the factor ``marginals`` of the optimal allocation, ``best_action``, ``status``, ``solver``, ``extras``.

    Raises
    ------
    InvalidInputError
        Not a FactorGraph, a tie for the best joint action, unknown method or formulation, bad limits; a
        ``warm_start`` that is not a result of constraint generation, comes from an instance of another structure,
        or comes with ``method="enumerate"``.
    InstanceTooLargeError
        ``"enumerate"`` above ``max_joint_actions``, or an elimination order too wide for generation.
    SolverError
        Every conic solver of the chain failed (the message names each status).

    Examples
    --------
    One agent with two arms and gap 0.5: the optimal allocation is (1/2, 1/2), so T* = (2 + 2) / 0.5^2 = 16.

    >>> import numpy as np
    >>> import optdesign as od
    >>> two_arms = od.FactorGraph([2], [((0,), np.array([1.0, 0.5]))])
    >>> print(round(od.characteristic_time(two_arms).value, 3))
    16.0

    On a ring the exact T* lies below the mean-field value T^MF (Lemma 5.1 of the MF-TaS paper):

    >>> fg = od.FactorGraph.ring(4, 2, seed=0)
    >>> res = od.characteristic_time(fg)
    >>> print(res.lower_bound <= res.value <= od.mf_characteristic_time(fg).value)
    True

    Re-solving after the means moved, warm-started from the previous solve of the same structure:

    >>> first = od.characteristic_time(fg, method="generate")
    >>> moved = od.FactorGraph(fg.n_actions, [(s, t + 0.01) for s, t in zip(fg.scopes, fg.tables)])
    >>> again = od.characteristic_time(moved, method="generate", warm_start=first)
    >>> print(again.status)
    optimal
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    method = check_option(method, "method", EXACT_METHODS)
    tol = as_tolerance(tol)
    formulation = check_option(formulation, "formulation", EXACT_FORMULATIONS)
    limit = None if time_limit is None else check_time_limit(time_limit)
    if warm_start is not None and method == "enumerate":
        raise InvalidInputError("warm_start seeds constraint generation: use method='generate' or 'auto'")
    warm = None if warm_start is None else (_warm_actions(fg, warm_start), _warm_centre(fg, warm_start))
    start = time.perf_counter()
    with time_budget(limit):
        blocked = solve_blocker(fg)
        # the answer if no solve brackets T* in time: computed first under a time limit, else only when needed; a
        # structure separated by enumeration brackets in about a millisecond, also when the budget is spent (a bandit
        # re-solving T* under a time limit spent 7 % of each re-solve on a bracket it never used). When no solve can
        # start, it is the answer and gets the whole budget to improve its allocation (fallback module docstring)
        bracket = deferred(functools.partial(char_time_bracket, fg, 1.0 if blocked else SHARE, refine=bool(blocked)),
                           limit is not None and (fg.n_joint_actions > ENUMERATED_SEPARATION or bool(blocked)))
        try:  # no solve when no program over the clique tables can start in the time left
            res = None if blocked else _solve(fg, method, formulation, solver, max_joint_actions, tol, limit, warm)
        except TimeLimitReached:
            res = None
        if res is None:
            return char_time_result(fg, bracket(), status=stop_reason(), start=start,
                                    extras={"stopped": unsolved_reason(fg, blocked)})
    return merge_char_time(fg, res, bracket()) if res.status in ("not_converged", "interrupted") else res


def _solve(fg: FactorGraph, method: str, formulation: str, solver: str | None, max_joint_actions: int, tol: float,
           limit: float | None, warm: tuple[np.ndarray, np.ndarray | None] | None) -> CharTimeResult:
    """The dispatch of :func:`characteristic_time` between enumeration and constraint generation; ``warm`` is a
    warm start's (joint actions, clique tables)."""
    limits: dict[str, Any] = {} if limit is None else {"time_limit": limit}
    if warm is not None:
        return characteristic_time_generated(fg, tol=tol, solver=solver, initial=warm[0], centre=warm[1], **limits)
    if method == "auto":
        if fg.n_joint_actions > as_count(max_joint_actions, "max_joint_actions", minimum=0):
            return characteristic_time_generated(fg, tol=tol, solver=solver, **limits)
        enumerated = _enumerated(fg, formulation, solver, max_joint_actions, tol, warn=False)
        if cast(float, enumerated.gap) <= tol:  # both paths certify: their gaps are set
            return enumerated
        # the enumerated solve's multipliers did not certify tol (measured: 3e-2 on a line N = 14, K = 2):
        # generation certifies by construction
        if enumerated.status in ("not_converged", "interrupted"):  # the time ran out
            return enumerated
        try:
            generated = characteristic_time_generated(fg, tol=tol, solver=solver, **limits)
        except TimeLimitReached:
            return replace(enumerated, status=stop_reason())
        return generated if cast(float, generated.gap) <= cast(float, enumerated.gap) else enumerated
    if method == "generate":
        return characteristic_time_generated(fg, tol=tol, solver=solver, **limits)
    return _enumerated(fg, formulation, solver, max_joint_actions, tol, warn=True)


def _allocation_maps(fg: FactorGraph, formulation: str,
                     A: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix | None, sp.csr_matrix, np.ndarray]:
    """(W mapping the allocation to factor marginals, the separator consistency rows or None, the total-mass row,
    the uniform allocation) of the global distribution over the joint actions A or of the junction-tree cliques."""
    if formulation == "global":  # W maps the global allocation to its factor marginals
        idx = fg.group_indices(A)
        W = sp.csr_matrix((np.ones(idx.size), (idx.ravel(), np.repeat(np.arange(A.shape[0]), fg.n_factors))),
                          shape=(fg.abar, A.shape[0]))
        total = sp.csr_matrix(np.ones((1, A.shape[0])))
        return W, None, total, np.full(A.shape[0], 1.0 / A.shape[0])
    # clique distributions of the junction tree, consistent on separators, one per root
    W, consistency, total = marginal_maps(fg.plan())
    sizes = np.asarray([step.n_rows for step in fg.plan().steps])
    return W, consistency, total, 1.0 / np.repeat(sizes, sizes)


class _TStarProgram:
    """min z s.t. (Delta_min^2 / Delta(a)^2) sum_e 1 / wbar_{e,a_e} <= z for every a != a* (z = T* Delta_min^2), over
    an allocation that W maps to factor marginals, rebuilt around each pass's reference."""

    def __init__(self, fg: FactorGraph, formulation: str, maps: tuple, H: sp.spmatrix, gaps: np.ndarray, dmin: float):
        self.fg, self.formulation, self.H, self.gaps, self.dmin = fg, formulation, H, gaps, dmin
        self.W, self.consistency, self.total, _ = maps
        # s_{e,b} >= 1 / wbar_{e,b} around a reference (exact.rescaling): unscaled cones mix entries from 1
        # to 1e5 and the solver's absolute tolerances then cost percents on small marginals (measured), and an
        # unscaled pass 1 can leave a point the next pass fails on (line N=7, K=4, seed 0: 300 s in SCS). Pass
        # 1 is centred on the uniform allocation, every later pass on the previous one.
        self.H_scaled = sp.diags((dmin / gaps) ** 2) @ H  # rows scaled by Delta_min^2 / Delta(a)^2

    def marginals(self, y: np.ndarray) -> np.ndarray:
        """Factor marginals of the distribution nearest to the allocation y (global, or consistent cliques)."""
        if self.formulation == "global":
            return self.W @ (y / y.sum())
        return self.W @ consistent_clique_weights(self.fg.plan(), y, 1.0)

    def build(self, reference: Reference) -> tuple[cp.Problem, Callable[[], tuple]]:
        """The conic program of one pass around ``reference``, and the evaluation of its solution."""
        alloc = ScaledAllocation(self.W, reference, name="w")
        z = cp.Variable(name="z")
        rows = alloc.inverse(self.H_scaled) <= z
        constraints = [*alloc.constraints, alloc.linear(self.total) == 1, rows]
        if self.consistency is not None and self.consistency.shape[0]:
            constraints.append(alloc.linear(self.consistency, normalise=True) == 0)
        problem = cp.Problem(cp.Minimize(z), constraints)

        def evaluate() -> tuple:
            """(T* at the marginals of an actual distribution, the solver's value, the pass's point, next reference)."""
            y = alloc.value
            wbar_val = self.marginals(y)  # marginals of an actual distribution: the value is attained
            with np.errstate(divide="ignore"):
                value = float(np.max((self.H @ (1.0 / wbar_val)) / self.gaps ** 2))
            solved = float(cast(np.ndarray, z.value)) / self.dmin**2
            return value, solved, (wbar_val, y, rows.dual_value), Reference.around(y, self.W)

        return problem, evaluate


def _warm_actions(fg: FactorGraph, warm_start: object) -> np.ndarray:
    """The working set of ``warm_start``, a result of constraint generation on an instance of ``fg``'s structure."""
    if not isinstance(warm_start, CharTimeResult) or warm_start.working_set is None or warm_start.structure is None:
        raise InvalidInputError("warm_start must be a CharTimeResult of constraint generation (method='generate'), "
                                f"which carries its working set; got {type(warm_start).__name__}")
    if warm_start.structure != structure_key(fg.n_actions, fg.scopes):
        raise InvalidInputError("warm_start comes from an instance of another structure (agents, action counts or "
                                "factor scopes differ); its working set does not apply")
    return warm_start.working_set


def _warm_centre(fg: FactorGraph, warm_start: CharTimeResult) -> np.ndarray | None:
    """The clique tables of ``warm_start`` (checked by :func:`_warm_actions`) when they follow ``fg.plan()``'s
    elimination order, to centre the first master solve on them; None otherwise (uniform tables)."""
    if warm_start.clique_weights is None or warm_start.extras.get("order") != list(fg.plan().order):
        return None
    return warm_start.clique_weights


def _enumerated(fg: FactorGraph, formulation: str, solver: str | None, max_joint_actions: int, tol: float, *,
                warn: bool) -> CharTimeResult:
    """T* with one constraint per joint action (:func:`characteristic_time`, ``method="enumerate"``)."""
    check_enumerable(fg.n_joint_actions, max_joint_actions, what="exact T* by enumeration",
                     instead="method='generate' (constraint generation, any size)")
    start = time.perf_counter()
    dmin = fg.gap_min()  # raises if a* is not unique
    best = fg.best_action()
    A = fg.joint_actions()
    gaps = cast(np.ndarray, fg.gap(A))  # an array for an array of actions
    others = np.flatnonzero(np.any(A != best, axis=1))
    H = fg.deviation_matrix(A[others], with_best=True)
    maps = _allocation_maps(fg, formulation, A)
    program = _TStarProgram(fg, formulation, maps, H, gaps[others], dmin)
    # the master's tolerance: the certified lower bound is only as good as the rows' multipliers
    out = solve_in_passes(program.build, Reference.around(maps[3], program.W), solver, label="exact T*",
                          solver_options=MASTER_SOLVER_OPTIONS, warn=False)
    best_pass = out.best
    wbar_val, y, dual = best_pass.point
    info = best_pass.info
    lower = certified_lower_bound(fg, program.H_scaled, dual, wbar_val, solver)
    if warn and relative_gap(best_pass.value, lower) > tol:  # the certificate, not the solver's status, decides
        warnings.warn(f"exact T*: certified relative gap {relative_gap(best_pass.value, lower):.2e} above tol {tol:g} "
                      f"({info.solver} status {info.status} after {out.passes} passes); value {best_pass.value:.6g} is "
                      f"attained, lower bound {lower:.6g}", RuntimeWarning, stacklevel=2)
    marginals = fg.split_tables(wbar_val)
    glob = (y / y.sum()).reshape(fg.n_actions) if formulation == "global" else None
    return CharTimeResult(
        value=best_pass.value, solver_value=best_pass.solver_value, method="exact", m=0, best_action=best,
        gaps=np.asarray([dmin]), marginals=marginals, local_allocations=None, global_allocation=glob,
        n_constraints=int(others.size), n_variables=out.n_variables, width=None,
        status=stop_reason() if out.cut or budget_expired() else info.status, solver=info.solver,
        solve_time=time.perf_counter() - start, compile_time=out.compile_time,
        extras={"formulation": formulation, "passes": out.passes, "pass_used": best_pass.index},
        lower_bound=lower, gap=relative_gap(best_pass.value, lower),
    )
