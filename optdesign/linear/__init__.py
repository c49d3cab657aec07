"""Linear experimental design: arms are rows of X (K x d), a design is w in the simplex, A(w) = X^T diag(w) X.

Every problem is F* = min_w max_{y in Y} y^T A(w)^{-1} y for some direction set Y, except D-optimality
(max log det A(w), the same optimum as G by Kiefer–Wolfowitz).

==============  ==================================================================================
designs         public entry points: ``xy_allocation`` (Y = {x - x'}, Soare et al. 2014 eq. 14), ``xy_oracle``
                (value H_LB, Soare eq. 6), ``transductive`` (Fiez et al. 2019, value rho*); G and D on the simplex
dispatch        how they are solved: ``method="auto"`` picks the certified fast path, falls back to cvxpy when its
                model fits, honours ``time_limit`` and Ctrl-C
models          the cvxpy models (an SOCP: y^T A^{-1} y = min {sum_k u_k^2 / w_k : X^T u = y}; log det)
socp            that SOCP and the certified solve step of its models (certificate, barrier polish)
directions      direction sets: pairwise differences, oracle directions (z* - z) / gap
criteria        F(w) in numpy and its dual certificate F* >= f_p(w)^2 / max_k h_k(w)
barrier         certified log-barrier Newton method for every min-max design (the fast path)
barrier_start   its start: a positive design, directions scaled to F = 1, the arm subset when K is large
barrier_newton  its centring stage in numpy (reduced barrier, Newton step, line search): the reference
barrier_kernel  the same stage compiled (numba, loaded before a solve's clock starts), the one the barrier runs
triangular      compiled (numba) Cholesky factor and triangular inverse, shared with the exact designs' kernels
certificate_lp  the barrier's certificate LP: the dual p that (nearly) maximises a design's lower bound
firstorder      Frank–Wolfe with away steps and the multiplicative algorithm for G/D (certified by max_k h_k / d)
interior        a primal-dual interior-point method on a small support (D and the linear criteria, exact KKT)
exchange        G/D on 10^5-10^6 arms: Frank–Wolfe on an active set, one blocked pricing pass h_k over all arms a round
corank          G/D when K - d is small: variances from the left null space of X, O(K (K-d)^2) a step
generation      min-max designs over very many directions: working set, one pricing pass, certified on all
pairs           the pricer of all n(n-1)/2 pairwise differences (never listed); ``top_pairs`` (the farthest
                pairs of a point set, exact) and ``max_pair_variance`` (max_{i<j} ||z_i - z_j||^2 in A^+)
greedy          Soare et al.'s greedy incremental G/XY rules (Sherman–Morrison)
rounding        continuous design -> integer pulls (efficient apportionment, Pukelsheim & Rieder 1992)
bilinear        graphical bilinear bandits: edge arms vec(x x'^T) and the product design mu (x) mu (value d^2)
classical/      the classical criteria: ``g_optimal`` (value d on the simplex), ``d_optimal``, A-, I-, c/L-, E-, Ds-
                and Kiefer phi_p-optimal designs, linear constraints A w <= b, ``criterion_value`` (its own table)
==============  ==================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .bilinear import bilinear_design, edge_arms
    from .classical import (
        ClassicalDesignModel,
        DesignDiagnostics,
        Efficiency,
        LinearConstraints,
        a_optimal,
        augment,
        budget,
        c_optimal,
        caps,
        criterion_value,
        d_optimal,
        design_diagnostics,
        ds_optimal,
        e_optimal,
        fds_curve,
        fds_plot,
        g_optimal,
        group_totals,
        i_optimal,
        phi_optimal,
        variance_function,
    )
    from .criteria import g_value, minmax_lower_bound, minmax_value
    from .designs import transductive, xy_allocation, xy_oracle
    from .directions import oracle_directions, pairwise_differences
    from .dispatch import DEFAULT_TOL, METHODS, minmax_design
    from .greedy import greedy_allocation, greedy_choice, greedy_scores
    from .models import DOptimalModel, MinMaxDesignModel, OracleDesignModel
    from .pairs import max_pair_variance, top_pairs
    from .rounding import round_design

# each name is imported from its module on first access (``from optdesign.linear import g_optimal``), so
# ``import optdesign.linear`` loads none of scipy's solvers
_EXPORTS = {
    ".bilinear": ("bilinear_design", "edge_arms"),
    ".classical": ("ClassicalDesignModel", "LinearConstraints", "a_optimal", "augment", "budget", "c_optimal", "caps",
                   "criterion_value", "d_optimal", "ds_optimal", "e_optimal", "g_optimal", "group_totals", "i_optimal",
                   "phi_optimal",
                   "DesignDiagnostics", "Efficiency", "design_diagnostics", "fds_curve", "fds_plot",
                   "variance_function"),
    ".criteria": ("g_value", "minmax_lower_bound", "minmax_value"),
    ".designs": ("transductive", "xy_allocation", "xy_oracle"),
    ".directions": ("oracle_directions", "pairwise_differences"),
    ".dispatch": ("DEFAULT_TOL", "METHODS", "minmax_design"),
    ".greedy": ("greedy_allocation", "greedy_choice", "greedy_scores"),
    ".models": ("DOptimalModel", "MinMaxDesignModel", "OracleDesignModel"),
    ".pairs": ("max_pair_variance", "top_pairs"),
    ".rounding": ("round_design",),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_TOL",
    "METHODS",
    "ClassicalDesignModel",
    "DOptimalModel",
    "DesignDiagnostics",
    "Efficiency",
    "LinearConstraints",
    "MinMaxDesignModel",
    "OracleDesignModel",
    "a_optimal",
    "augment",
    "bilinear_design",
    "budget",
    "c_optimal",
    "caps",
    "criterion_value",
    "d_optimal",
    "design_diagnostics",
    "ds_optimal",
    "e_optimal",
    "edge_arms",
    "fds_curve",
    "fds_plot",
    "g_optimal",
    "g_value",
    "greedy_allocation",
    "greedy_choice",
    "greedy_scores",
    "group_totals",
    "i_optimal",
    "max_pair_variance",
    "minmax_design",
    "minmax_lower_bound",
    "minmax_value",
    "oracle_directions",
    "pairwise_differences",
    "phi_optimal",
    "round_design",
    "top_pairs",
    "transductive",
    "variance_function",
    "xy_allocation",
    "xy_oracle",
]
