"""The constraint-generation master of the exact regret bound c_theta.

``RegretMaster`` is the working-set program of ``regret_lower_bound(strategy="generate")``
(:mod:`optdesign.factored.regret.lower_bound`, engine :mod:`optdesign.factored.exact.constraint_generation`); its
``dual_bound`` also certifies the enumerated program of that module.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._lazy import cp
from ...errors import SolverError, TimeLimitReached
from ...runtime import solvers
from ...runtime.solvers import SolveInfo
from ..exact.constraint_generation import MASTER_SOLVER_OPTIONS
from ..exact.cutting_plane_master import CuttingPlaneMaster, Iterate
from ..exact.rescaling import Reference
from ..exact.separation import Separation
from ..graph.factor_graph import FactorGraph
from ..inference.marginals import consistent_clique_weights
from ..inference.max_sum import max_ratio
from .cone import Cone

__all__: list[str] = []  # internal to the package: regret_lower_bound is the public entry

REGULARISED_OPTIONS = {"CLARABEL": {**MASTER_SOLVER_OPTIONS["CLARABEL"], "static_regularization_constant": 1e-6}}


class RegretMaster(CuttingPlaneMaster):
    """c_theta on a working set W: min r . mu s.t. (2 / Delta(a)^2) sum_{e: a_e != a*_e} 1/wbar_{e,a_e} <= 1, a in W.

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    solver : str, optional
        Conic solver of the master; CLARABEL (then with more static regularisation) and the default chain otherwise.
    """

    def __init__(self, fg: FactorGraph, solver: str | None):
        super().__init__(fg, solver)
        self.cone = Cone.of(fg, self.plan)
        #: the feasible counts of :meth:`start_counts` once computed (an upper bound before any master solve)
        self.started: np.ndarray | None = None
        self.gap_terms = self.gap_terms / self.cone.unit
        self.dmin = self.dmin / self.cone.unit

    @property
    def n_columns(self) -> int:
        return self.fg.abar - self.fg.n_factors

    def start(self) -> Reference:
        """Centred on :meth:`start_counts`: the optimum's shape, unlike the uniform ``Cone.mu0`` (from which
        the masters of rings with K = 10 stop far above the optimum or fail: bench_factored.py --only regret-scale)."""
        return self.reference(self.start_counts())

    def start_counts(self) -> np.ndarray:
        """:meth:`Cone.mixture` scaled so that the worst row over all joint actions holds with equality (a feasible
        point of the cone)."""
        mu = self.cone.mixture(self.fg, self.plan)
        worst, _ = self._worst_row(self.F @ mu, 1)  # every row is homogeneous of degree -1 in mu
        self.started = mu * worst
        return self.started

    def reference(self, y: np.ndarray) -> Reference:
        return Reference.around(y, self.F[self.cone.dev])

    def scaled_rows(self, actions: np.ndarray) -> sp.csr_matrix:
        return self.cone.rows(self.fg, actions)

    def solve(self, reference: Reference) -> Iterate:
        solvers.check_setup_time(self.size, "the regret bound's master")  # before building a problem too large
        counts, constraints = self.cone.allocation(reference)
        rows = counts.inverse(self.rows) <= 1
        cost, ref = counts.cost(self.cone.regrets)
        problem = cp.Problem(cp.Minimize(cost), [*constraints, rows])
        info = self._solve(problem)
        mu = counts.value
        exact = consistent_clique_weights(self.plan, mu, float(np.mean(self.R @ mu)))
        return Iterate(mu, exact, self.F @ exact, self.multipliers(rows.dual_value), float(problem.value) * ref, info)

    def _solve(self, problem: cp.Problem) -> SolveInfo:
        """CLARABEL, then CLARABEL with more static regularisation, before the solver chain: on rings with K = 10
        from N = 6 the master stops CLARABEL with a NumericalError and SCS took 20-45 s per master (measured)."""
        if self.solver is None:
            for options in (MASTER_SOLVER_OPTIONS, REGULARISED_OPTIONS):
                try:  # a point stopped by the time budget is still bracketed (accept_limit)
                    return solvers.solve(problem, "CLARABEL", accept_inaccurate=True, accept_limit=True,
                                         solver_options=options)
                except TimeLimitReached:
                    raise
                except SolverError:
                    pass
        return solvers.solve(problem, self.solver, accept_inaccurate=True, accept_limit=True,
                             solver_options=MASTER_SOLVER_OPTIONS)

    def separate(self, it: Iterate, k: int) -> tuple[float, Separation]:
        """Scaled so that every row holds: v = max_a (2 / Delta(a)^2) H(a), value v r . mu (attained at mu v)."""
        worst, sep = self._worst_row(it.wbar, k)
        return worst * float(self.cone.regrets @ it.exact), sep

    def _worst_row(self, wbar: np.ndarray, k: int) -> tuple[float, Separation]:
        """(max over ALL joint actions a != a* of (2 / Delta(a)^2) H(a) at ``wbar``, the separation)."""
        h = np.zeros(self.fg.abar)
        h[self.cone.dev] = 1.0 / np.maximum(wbar[self.cone.dev], 1e-300)
        sep = self.violated(h, k, 0.5)
        return 2.0 * (sep.max_ratio if sep.exact else max(sep.max_ratio, sep.upper_bound)), sep

    def dual_bound(self, c: np.ndarray, wbar: np.ndarray) -> float:
        """(sum c / wbar)^2 / max_{a != a*} S(a) / Delta(a), S = c / wbar^2 on the group actions b != a*_e."""
        w = wbar[self.cone.dev]
        if np.any(w <= 0):
            return 0.0
        s = np.zeros(self.fg.abar)
        s[self.cone.dev] = c / w**2
        top = max_ratio(self.plan, s, self.gap_terms, floor=0.0)
        return 0.0 if top <= 0 else float(np.sum(c / w)) ** 2 / top

    def minimiser_bound(self, c: np.ndarray, reference: Reference) -> float:
        y = reference.allocation
        counts, constraints = self.cone.allocation(self.reference(y / float(self.cone.regrets @ y)))  # r . mu = 1
        cost, ref = counts.cost(self.cone.regrets)
        objective = counts.inverse(sp.csr_matrix(c / max(float(c.max()), 1e-300)))
        problem = cp.Problem(cp.Minimize(cp.sum(objective)), [*constraints, cost == 1.0 / ref])
        self._solve(problem)
        mu = counts.value
        return self.dual_bound(c, self.F @ consistent_clique_weights(self.plan, mu, float(np.mean(self.R @ mu))))
