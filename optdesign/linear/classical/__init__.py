"""Classical design criteria: G-, D-, A-, I-, c/L-, E-, Ds- and phi_p-optimal designs, with linear constraints.

Every criterion is a function Phi(A(w)) of the information matrix A(w) = X^T diag(w) X, minimised over designs w
(w >= 0, sum w = 1, optionally A w <= b), convex and homogeneous of degree -1, reported in its own units (a
variance) with a certified lower bound: Phi* >= Phi(w)^2 / max_{w' in P} sum_k w'_k h_k(w), h_k = -dPhi/dw_k (the
general equivalence theorem; Kiefer 1974, Pukelsheim 1993).

============  ==================================================================================================
designs       public entry points: ``a_optimal`` (tr A^{-1}), ``i_optimal`` (tr A^{-1} B, B a region's moments),
              ``c_optimal`` (c^T A^- c, or tr C A^- C^T: L), ``e_optimal`` (1 / lambda_min), ``ds_optimal``
              (det((A^-)_ss)^{1/s}), ``phi_optimal`` (Kiefer's (tr A^{-p} / d)^{1/p}: D at 0, A at 1, E at inf)
dg_designs    public entry points: ``g_optimal`` (max_x x^T A^{-1} x, d on the simplex) and ``d_optimal``
              (det A^{-1/d}), on the simplex (:mod:`optdesign.linear.dispatch`) or under constraints
minmax_g      G under constraints: the min-max SOCP on a working set of rows, certified by its dual's L-criterion
values        ``criterion_value``: any criterion (and D, G) at a given design, singular ones included
diagnostics   ``design_diagnostics``: a design's certified efficiency under every criterion (od_print), the
              eigenvalues of M(w), ``variance_function`` d(x, w) = x^T M(w)^- x
fds           ``fds_curve``, ``fds_plot``: fraction-of-design-space curves of d(x, w) (matplotlib)
constraints   A w <= b: ``budget``, ``caps``, ``augment``, ``group_totals``, ``LinearConstraints``
polytope      the designs they leave: emptiness, the LP bound of the certificates and its vertex (HiGHS), the
              repair of a conic design into it, the candidates a cap of zero removes
dispatch      how they are solved: ``method`` auto / fast / cvxpy, constraints through the model, time limits
problems      checks the arguments: arms, the region's moment factor, c in the range of X^T X, subsets, p
criteria      the convention, the base class, the 2 x 2 algebra of a pairwise step (Woodbury)
linear        tr(C A^- C^T) (A, I, c, L): value, gradient, closed-form pairwise step, O(m d) updates on a support
subset        Ds: det(K^T A^- K)^{1/s} and its closed-form pairwise step
kiefer        phi_p: (tr A^{-p} / d)^{1/p} from the eigenvalues, Brent's step
frankwolfe    fast path of the smooth criteria: pairwise Frank–Wolfe on an active set, one pricing pass per round
elfving       fast path of c: Elfving's LP with column generation (exact for singular optima)
working       fast path of E and of constrained designs: the conic model on a working set of candidates, its
              dual priced over all of them
models        the cvxpy models (Sagnol's SOCP for the linear criteria, the SDPs of E, D, Ds, phi_2), built once
certify       certified lower bounds of any design (regularised gradients, conic duals; simplex or polytope)
============  ==================================================================================================
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .constraints import LinearConstraints, augment, budget, caps, group_totals
    from .designs import a_optimal, c_optimal, ds_optimal, e_optimal, i_optimal, phi_optimal
    from .dg_designs import d_optimal, g_optimal
    from .diagnostics import DesignDiagnostics, Efficiency, design_diagnostics, variance_function
    from .fds import fds_curve, fds_plot
    from .models import ClassicalDesignModel
    from .values import criterion_value

_EXPORTS = {
    ".constraints": ("LinearConstraints", "augment", "budget", "caps", "group_totals"),
    ".designs": ("a_optimal", "c_optimal", "ds_optimal", "e_optimal", "i_optimal", "phi_optimal"),
    ".dg_designs": ("d_optimal", "g_optimal"),
    ".diagnostics": ("DesignDiagnostics", "Efficiency", "design_diagnostics", "variance_function"),
    ".fds": ("fds_curve", "fds_plot"),
    ".models": ("ClassicalDesignModel",),
    ".values": ("criterion_value",),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ClassicalDesignModel",
    "DesignDiagnostics",
    "Efficiency",
    "LinearConstraints",
    "a_optimal",
    "augment",
    "budget",
    "c_optimal",
    "caps",
    "criterion_value",
    "d_optimal",
    "design_diagnostics",
    "ds_optimal",
    "e_optimal",
    "fds_curve",
    "fds_plot",
    "g_optimal",
    "group_totals",
    "i_optimal",
    "phi_optimal",
    "variance_function",
]
