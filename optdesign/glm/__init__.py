"""Designs of generalised linear models: locally optimal at a guess theta0, and pseudo-Bayesian over prior draws.

A GLM with linear predictor eta = x^T theta has information M(w) = sum_i w_i nu(x_i^T theta) x_i x_i^T, with the
weight nu(eta) = (dmu/deta)^2 / Var(y | eta) of its link. At a guess theta0 every criterion of a linear model applies
to the linearised candidates sqrt(nu_i) x_i (locally optimal designs, Chernoff 1953); over a prior, the
pseudo-Bayesian D-criterion is the prior mean of log det M(w) (Chaloner & Larntz 1989), estimated by S draws theta_s,
and the A- and I-criteria the prior means of tr M(w)^{-1} and tr(B M(w)^{-1}); over a set of values theta_s (or a
box), the standardised maximin D-criterion is the least D-efficiency min_s (det M_s(w) / det M_s(w_s*))^{1/p}
(Dette 1997), the minimax one the largest det M_s(w)^{-1/p}.

==============  =====================================================================================================
weights         ``glm_weights(X, theta0, link)``: nu of the logit, probit, cloglog, log (Poisson) and identity links,
                in numerically stable forms (``link_weights`` on values of eta)
local           ``glm_model_matrix`` (the rows sqrt(nu_i) x_i, for every linear design function) and ``glm_design``
                (the locally D-, A- or I-optimal design, approximate or with n runs, certified)
bayesian        public entry points ``bayesian_d_optimal(X, draws, link)``, ``bayesian_a_optimal`` and
                ``bayesian_i_optimal``: the pseudo-Bayesian designs, dispatched between the fast path and the cvxpy
                model
prior           the checked problem: candidates, draws, the K x S weights nu_is (size-checked), prior weights
variances       Phi(w) = sum_s pi_s log det M_s(w), its prices d_i(w) and Hessian, batched over the draws
certificate     Phi* <= Phi(w) + p log(max_i d_i / p), and the DesignResult in variance units exp(-Phi / p)
exchange        the fast path (D, A, I): Newton steps on an active set, one pricing pass over all candidates per round
model           ``BayesianDModel``: the cvxpy model, one log det per draw, the weights a Parameter
bayesian_exact  public entry point ``bayesian_exact_design(X, draws, link, n)``: the N-run pseudo-Bayesian D-, A- or
                I-optimal design, certified by the approximate optimum's bound
draw_exchange   its exchange: one run moved at a time, the gain the prior mean of the per-draw determinant (or
                Woodbury) ratios, vectorised over draws and candidates, pruned by the approximate designs' prices
draw_pairs      two runs moved at once out of its local optima: the 4 x 4 determinant lemma and Woodbury per draw,
                batched over the pairs and the draws
trace_prior     the A/I problem: the D problem and the matrix B_s of each draw's tr(B_s M_s^{-1}) (I, A = identity)
traces          Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}), its prices h_i(w) and Hessian, batched over the draws
trace_bound     Phi* >= Phi(w)^2 / max_i h_i (the homogeneous equivalence theorem), and the DesignResult
trace_model     ``BayesianTraceModel``: the cvxpy model of A or I, one matrix fraction per draw
maximin         public entry point ``maximin_d_optimal(X, thetas, link)``: the standardised maximin (or minimax)
                D-optimal design over parameter values, dispatched between the fast path and the cvxpy model
standardise     the checked problem over parameter values: weights nu_is, and each local optimum c_s bracketed by a
                certified local design
duality         max_w min_s f_s(w) <= sum_s q_s f_s(w') + log(max_i d_i^q(w') / p) for every prior q and design w'
                (the pseudo-Bayesian bound), with the local brackets; the DesignResult
maximin_ipm     the fast path: primal-dual Newton steps on an active set, priced with the least favourable prior q
maximin_cvx     ``MaximinDModel``: the cvxpy model, one log det per value and an epigraph variable, q from its duals
maximin_box     ``maximin_box_design(X, lower, upper, link)``: a grid of a parameter box, refined by searching the box
                where the design is weakest (what is certified there)
==============  =====================================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .bayesian import bayesian_a_optimal, bayesian_d_optimal, bayesian_i_optimal
    from .bayesian_exact import bayesian_exact_design
    from .local import GLM_CRITERIA, glm_design, glm_model_matrix
    from .maximin import maximin_d_optimal
    from .maximin_box import box_grid, maximin_box_design
    from .maximin_cvx import MaximinDModel
    from .model import BayesianDModel
    from .trace_model import BayesianTraceModel
    from .weights import glm_weights, link_weights

# scipy.special and cvxpy load on first use of a name
_EXPORTS = {
    ".bayesian": ("bayesian_a_optimal", "bayesian_d_optimal", "bayesian_i_optimal"),
    ".bayesian_exact": ("bayesian_exact_design",),
    ".local": ("GLM_CRITERIA", "glm_design", "glm_model_matrix"),
    ".maximin": ("maximin_d_optimal",),
    ".maximin_box": ("box_grid", "maximin_box_design"),
    ".maximin_cvx": ("MaximinDModel",),
    ".model": ("BayesianDModel",),
    ".trace_model": ("BayesianTraceModel",),
    ".weights": ("glm_weights", "link_weights"),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["GLM_CRITERIA", "BayesianDModel", "BayesianTraceModel", "MaximinDModel", "bayesian_a_optimal",
           "bayesian_d_optimal", "bayesian_exact_design", "bayesian_i_optimal", "box_grid", "glm_design",
           "glm_model_matrix", "glm_weights", "link_weights", "maximin_box_design", "maximin_d_optimal"]
