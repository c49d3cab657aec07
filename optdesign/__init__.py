"""optdesign: optimal experimental design and lower-bound programs for pure-exploration bandits.

Every design or lower-bound problem is a declarative cvxpy model, built once with Parameters so
that bandit loops re-solve it cheaply, with a certified first-order fast path where one exists.

* :mod:`optdesign.linear`: designs on arm sets (G, D, XY, XY-oracle, transductive, bilinear; the classical
  criteria A, I, c/L, E, Ds, phi_p with linear constraints in :mod:`optdesign.linear.classical`);
* :mod:`optdesign.factored`: lower bounds of multi-agent bandits on factor graphs (T*, T^MF, regret);
* :mod:`optdesign.identification`: lower bounds of identification questions on K arms of one exponential family
  (best arm, top m, epsilon-good, thresholding) and on linear arms (top m, thresholding), certified;
* :mod:`optdesign.exact_designs`: exact N-run designs (D, A, I), certified against the approximate optimum, also in
  blocks, split plots, split-split plots and strip plots;
* :mod:`optdesign.formulas`: candidate sets from model formulas (grids, cubes, simplex lattices) and designs
  reported in factor settings;
* :mod:`optdesign.power`: the power of an exact design's F tests, term by term (as R skpr's ``eval_design``), and of
  a GLM design's Wald or likelihood-ratio tests by Monte Carlo; power curves over the effects or N;
* :mod:`optdesign.glm`: designs of generalised linear models (logit, probit, cloglog, Poisson): locally optimal at a
  guess of the parameter, pseudo-Bayesian D-, A- and I-optimal over prior draws (approximate or with N runs), and
  standardised maximin D-optimal over a set (or box) of parameter values;
* the shared ground in this package: ``errors`` (the exception types and the command lines' exit policy),
  :mod:`optdesign.validation` (input and size checks), ``vocabulary`` (option and status strings as Literal
  types), ``information`` (Bernoulli KL), ``links`` (the GLM links' means, variances and weights, shared by
  :mod:`optdesign.glm` and :mod:`optdesign.power`), ``design_result`` (a continuous design's result: its
  criterion's units, its certificate, its G-value), ``result`` (the other result dataclasses),
  :mod:`optdesign.runtime` (time limits and Ctrl-C, progress lines, which solver runs, a persistent CLARABEL
  solver, single-threaded BLAS, the command lines' width), ``docstrings`` (shared numpydoc entries), ``_lazy``
  (cvxpy, and this package's re-exports, loaded on first use) and ``_version`` (``__version__``, read on first
  access);
* :mod:`optdesign.cli`: the ``optdesign`` command line.

Code built on the toolkit (such as ``bandits``) imports from this top level, from ``optdesign.linear``,
``optdesign.factored``, ``optdesign.identification``, ``optdesign.errors`` and ``optdesign.validation`` only, and only
names in their ``__all__``; everything else may change without notice. ``single_threaded_blas`` and ``shared_doc`` are
re-exported here for that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from .errors import InstanceTooLargeError, InvalidInputError, OptDesignError, SolverError

if TYPE_CHECKING:
    from ._version import __version__ as __version__
    from .design_result import DesignResult
    from .docstrings import shared_doc
    from .exact_designs import (
        BlockedDesignResult,
        ExactDesignResult,
        blocked_design,
        exact_design,
        split_plot_design,
        split_split_plot_design,
        strip_plot_design,
    )
    from .factored import (
        EliminationPlan,
        FactoredMax,
        FactorGraph,
        MeanFieldModel,
        characteristic_time,
        enumerated_max,
        factored_max,
        marginal_polytope,
        mf_characteristic_time,
        regret_lower_bound,
    )
    from .formulas import CandidateSet, candidates, cube, design_table, factor_grid, simplex_lattice
    from .glm import (
        BayesianDModel,
        BayesianTraceModel,
        MaximinDModel,
        bayesian_a_optimal,
        bayesian_d_optimal,
        bayesian_exact_design,
        bayesian_i_optimal,
        glm_design,
        glm_model_matrix,
        glm_weights,
        maximin_box_design,
        maximin_d_optimal,
    )
    from .identification import (
        IdentificationTime,
        best_arm_pairs,
        bounded_characteristic_time,
        epsilon_good_characteristic_time,
        heteroscedastic_characteristic_time,
        linear_epsilon_good_characteristic_time,
        linear_threshold_characteristic_time,
        linear_top_m_characteristic_time,
        pairwise_characteristic_time,
        threshold_characteristic_time,
        top_m_pairs,
    )
    from .information import bernoulli_kl, kl_delta
    from .linear import (
        ClassicalDesignModel,
        DesignDiagnostics,
        DOptimalModel,
        Efficiency,
        LinearConstraints,
        MinMaxDesignModel,
        OracleDesignModel,
        a_optimal,
        augment,
        bilinear_design,
        budget,
        c_optimal,
        caps,
        criterion_value,
        d_optimal,
        design_diagnostics,
        ds_optimal,
        e_optimal,
        edge_arms,
        fds_curve,
        fds_plot,
        g_optimal,
        g_value,
        greedy_allocation,
        greedy_choice,
        greedy_scores,
        group_totals,
        i_optimal,
        minmax_design,
        minmax_lower_bound,
        minmax_value,
        oracle_directions,
        pairwise_differences,
        phi_optimal,
        round_design,
        transductive,
        variance_function,
        xy_allocation,
        xy_oracle,
    )
    from .power import (
        GlmPowerResult,
        PowerResult,
        anticipated_coefficients,
        design_power,
        glm_power,
        glm_power_curve,
        power_curve,
        power_curve_plot,
    )
    from .result import BilinearDesign, CharTimeResult, RegretBoundResult
    from .runtime.blas import single_threaded_blas
    from .runtime.solvers import available_solvers, default_solver, mosek_usable

# every other name of __all__ is imported from its submodule on first access (``od.g_optimal``,
# ``from optdesign import g_optimal``), so ``import optdesign`` loads neither scipy's solvers nor networkx
_EXPORTS = {
    ".formulas": ("CandidateSet", "candidates", "cube", "design_table", "factor_grid", "simplex_lattice"),
    ".exact_designs": ("BlockedDesignResult", "ExactDesignResult", "blocked_design", "exact_design",
                       "split_plot_design", "split_split_plot_design", "strip_plot_design"),
    ".factored": ("EliminationPlan", "FactoredMax", "FactorGraph", "MeanFieldModel", "characteristic_time",
                  "enumerated_max", "factored_max", "marginal_polytope", "mf_characteristic_time",
                  "regret_lower_bound"),
    ".linear": ("ClassicalDesignModel", "DOptimalModel", "LinearConstraints", "MinMaxDesignModel", "OracleDesignModel",
                "a_optimal", "augment", "bilinear_design", "budget", "c_optimal", "caps", "criterion_value",
                "d_optimal", "ds_optimal", "e_optimal", "group_totals", "i_optimal", "phi_optimal",
                "edge_arms", "g_optimal", "g_value", "greedy_allocation", "greedy_choice", "greedy_scores",
                "minmax_design", "minmax_lower_bound", "minmax_value", "oracle_directions", "pairwise_differences",
                "round_design", "transductive", "xy_allocation", "xy_oracle", "DesignDiagnostics", "Efficiency",
                "design_diagnostics", "fds_curve", "fds_plot", "variance_function"),
    ".power": ("GlmPowerResult", "PowerResult", "anticipated_coefficients", "design_power", "glm_power",
               "glm_power_curve", "power_curve", "power_curve_plot"),
    ".glm": ("BayesianDModel", "BayesianTraceModel", "MaximinDModel", "bayesian_a_optimal", "bayesian_d_optimal",
             "bayesian_exact_design", "bayesian_i_optimal", "glm_design", "glm_model_matrix", "glm_weights",
             "maximin_box_design", "maximin_d_optimal"),
    ".design_result": ("DesignResult",),
    ".result": ("BilinearDesign", "CharTimeResult", "RegretBoundResult"),
    ".runtime.solvers": ("available_solvers", "default_solver", "mosek_usable"),
    "._version": ("__version__",),
    ".runtime.blas": ("single_threaded_blas",),
    ".docstrings": ("shared_doc",),
    ".information": ("bernoulli_kl", "kl_delta"),
    ".identification": ("IdentificationTime", "best_arm_pairs", "bounded_characteristic_time",
                        "epsilon_good_characteristic_time",
                        "heteroscedastic_characteristic_time", "linear_epsilon_good_characteristic_time",
                        "linear_threshold_characteristic_time", "linear_top_m_characteristic_time",
                        "pairwise_characteristic_time", "threshold_characteristic_time", "top_m_pairs"),
}
if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name stays an error for them
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "BayesianDModel",
    "BayesianTraceModel",
    "BilinearDesign",
    "BlockedDesignResult",
    "CandidateSet",
    "CharTimeResult",
    "ClassicalDesignModel",
    "DOptimalModel",
    "DesignDiagnostics",
    "DesignResult",
    "Efficiency",
    "EliminationPlan",
    "ExactDesignResult",
    "FactorGraph",
    "FactoredMax",
    "GlmPowerResult",
    "IdentificationTime",
    "InstanceTooLargeError",
    "InvalidInputError",
    "LinearConstraints",
    "MaximinDModel",
    "MeanFieldModel",
    "MinMaxDesignModel",
    "OptDesignError",
    "OracleDesignModel",
    "PowerResult",
    "RegretBoundResult",
    "SolverError",
    "a_optimal",
    "anticipated_coefficients",
    "augment",
    "available_solvers",
    "bayesian_a_optimal",
    "bayesian_d_optimal",
    "bayesian_exact_design",
    "bayesian_i_optimal",
    "bernoulli_kl",
    "best_arm_pairs",
    "bilinear_design",
    "blocked_design",
    "bounded_characteristic_time",
    "budget",
    "c_optimal",
    "candidates",
    "caps",
    "characteristic_time",
    "criterion_value",
    "cube",
    "d_optimal",
    "default_solver",
    "design_diagnostics",
    "design_power",
    "design_table",
    "ds_optimal",
    "e_optimal",
    "edge_arms",
    "enumerated_max",
    "epsilon_good_characteristic_time",
    "exact_design",
    "factor_grid",
    "factored_max",
    "fds_curve",
    "fds_plot",
    "g_optimal",
    "g_value",
    "glm_design",
    "glm_model_matrix",
    "glm_power",
    "glm_power_curve",
    "glm_weights",
    "greedy_allocation",
    "greedy_choice",
    "greedy_scores",
    "group_totals",
    "heteroscedastic_characteristic_time",
    "i_optimal",
    "kl_delta",
    "linear_epsilon_good_characteristic_time",
    "linear_threshold_characteristic_time",
    "linear_top_m_characteristic_time",
    "marginal_polytope",
    "maximin_box_design",
    "maximin_d_optimal",
    "mf_characteristic_time",
    "minmax_design",
    "minmax_lower_bound",
    "minmax_value",
    "mosek_usable",
    "oracle_directions",
    "pairwise_characteristic_time",
    "pairwise_differences",
    "phi_optimal",
    "power_curve",
    "power_curve_plot",
    "regret_lower_bound",
    "round_design",
    "shared_doc",
    "simplex_lattice",
    "single_threaded_blas",
    "split_plot_design",
    "split_split_plot_design",
    "strip_plot_design",
    "threshold_characteristic_time",
    "top_m_pairs",
    "transductive",
    "variance_function",
    "xy_allocation",
    "xy_oracle",
]
