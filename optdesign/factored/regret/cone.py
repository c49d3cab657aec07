"""The exact cone of factor marginals of the Graves–Lai regret program (:mod:`optdesign.factored.regret.lower_bound`).

Clique counts mu of a junction tree (consistent on separators, equal component masses) in units of the largest
gap, with the cut of the zero-cost ray w_{a*} -> infinity; its rows (2 / Delta(a)^2) sum_{e: a_e != a*_e}
s_{e,a_e} <= 1 with s >= 1 / wbar on the deviating group actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import scipy.sparse as sp

from ..exact.constraint_generation import best_through_entries
from ..exact.rescaling import Reference, ScaledAllocation
from ..graph.factor_graph import FactorGraph
from ..inference.elimination import EliminationPlan
from ..inference.marginals import marginal_maps
from ..inference.max_sum import MaxSum

# Cone is the feasible set of regret_lower_bound's program, built and used there only
__all__: list[str] = []


@dataclass(frozen=True)
class Cone:
    """The exact cone of factor marginals, in units of the largest gap (module docstring).

    ``regrets`` are the max-sum clique regrets / ``unit`` (r . mu = sum_a w_a Delta(a) / unit), ``dev`` the group
    actions b != a*_e, ``homogeneous`` the rows == 0 (separators, equal component masses) and the last row <= 0
    (the cut of the zero-cost ray w_{a*} -> infinity), ``mu0`` uniform feasible counts of total mass
    2 n_f max(table sizes) / Delta_min^2 (a != a* deviates in at most n_f factors, each costing
    1/wbar <= Delta_min^2 / 2 n_f): far from the optimum's shape, which :meth:`mixture` has (benchmarks compare
    the two starts).
    """

    unit: float
    regrets: np.ndarray
    dev: np.ndarray
    F: sp.csr_matrix
    R: sp.csr_matrix
    homogeneous: sp.csr_matrix
    mu0: np.ndarray

    @classmethod
    def of(cls, fg: FactorGraph, plan: EliminationPlan) -> Cone:
        """The cone of the instance ``fg`` over the clique tables of ``plan``."""
        # every gap is in units of the largest gap Delta_max = theta(a*) - min_a theta(a): the program solved is
        # then the same whatever the scale of theta (with counts ~ 1/Delta^2 in the units of theta, theta * 1e-4
        # gave counts ~1e8, optimal_inaccurate and a 1% error, measured)
        unit = fg.best_value + MaxSum(plan, -fg.means, keep_regrets=False).value
        star = fg.group_indices(fg.best_action())[0]
        # Delta(a) = sum_l r_l(clique row of a) with max-sum regrets r_l >= 0: no cancellation between the signed
        # local gaps (these cost ~1e-2 relative accuracy when Delta_min << |theta_e|, measured)
        regrets = np.concatenate(cast(list, MaxSum(plan, fg.means).regrets)) / unit
        dev = np.setdiff1d(np.arange(fg.abar), star)
        F, C, R = marginal_maps(plan)
        rows = [C] if C.shape[0] else []
        if R.shape[0] > 1:
            rows.append(R[1:] - sp.csr_matrix(np.ones((R.shape[0] - 1, 1))) @ R[:1])
        # every optimum has a copy with w_{a*} = 0, whose total mass is at most sum_{e, b != a*_e} wbar_{e,b}
        rows.append(R[:1] - sp.csr_matrix(np.ones((1, dev.size))) @ F[dev])
        sizes = np.asarray([step.n_rows for step in plan.steps])
        mu0 = 2.0 * fg.n_factors * float(fg.table_sizes.max()) / (fg.gap_min() / unit) ** 2 / np.repeat(sizes, sizes)
        return cls(unit, regrets, dev, F, R, sp.vstack(rows).tocsr(), mu0)

    def allocation(self, reference: Reference) -> tuple[ScaledAllocation, list]:
        """Clique counts mu (with s >= 1 / wbar on the group actions b != a*_e) and the cone's constraints."""
        counts = ScaledAllocation(self.F[self.dev], reference, name="clique_counts")
        lin = counts.linear(self.homogeneous, normalise=True)
        constraints = [*counts.constraints, lin[-1] <= 0]
        if self.homogeneous.shape[0] > 1:
            constraints.append(lin[:-1] == 0)
        return counts, constraints

    def mixture(self, fg: FactorGraph, plan: EliminationPlan) -> np.ndarray:
        """Clique counts (unit / Delta_{e,b})^2 on the best joint action through each entry (e, b), b != a*_e, with
        Delta_{e,b} its gap: the shape of the optimum, every wbar_{e,b} > 0; scale it to satisfy the rows.

        Every row holds at this mixture times 2 n_f (a != a* deviates in at most n_f factors and
        Delta(a) >= Delta_{e,a_e}); the callers scale it by the exact worst row instead.
        """
        A = best_through_entries(fg)[self.dev]
        A = np.unique(A[np.any(A != fg.best_action(), axis=1)], axis=0)
        return self.point_masses(plan, A, (self.unit / np.asarray(fg.gap(A))) ** 2)

    def point_masses(self, plan: EliminationPlan, actions: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Clique counts of the allocation putting ``weights[j]`` on joint action ``actions[j]`` (exactly consistent).

        Row (z, k) of step l is hit by a iff a agrees with z on the separator and a_{i_l} = k.
        """
        starts = np.concatenate([[0], np.cumsum([step.n_rows for step in plan.steps])]).astype(np.int64)
        mu = np.zeros(plan.n_rows)
        for n, step in enumerate(plan.steps):
            k = plan.n_actions[step.variable]
            z = (np.ravel_multi_index(tuple(actions[:, j] for j in step.scope), step.shape) if step.scope
                 else np.zeros(actions.shape[0], dtype=np.int64))
            np.add.at(mu, starts[n] + z * k + actions[:, step.variable], weights)
        return mu

    def rows(self, fg: FactorGraph, actions: np.ndarray) -> sp.csr_matrix:
        """(2 / Delta(a)^2) sum_{e: a_e != a*_e} s_{e,a_e} <= 1 as rows over the group actions b != a*_e."""
        return sp.diags(2.0 / (fg.gap(actions) / self.unit) ** 2) @ fg.deviation_matrix(actions)[:, self.dev]
