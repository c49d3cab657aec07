"""optdesign: optimal experimental design and lower-bound programs for pure-exploration bandits.

Every design or lower-bound problem is a declarative cvxpy model, built once with Parameters so
that bandit loops re-solve it cheaply, with a certified first-order fast path where one exists.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from .bilinear import bilinear_design, edge_arms
from .characteristic_time import MeanFieldModel, characteristic_time, mf_characteristic_time
from .criteria import g_value, minmax_lower_bound, minmax_value
from .elimination import EliminationPlan
from .errors import InstanceTooLargeError, InvalidInputError, OptDesignError, SolverError
from .factorgraph import FactorGraph
from .fcr import FactoredMax, enumerated_max, factored_max
from .greedy import greedy_allocation, greedy_choice, greedy_scores
from .linear import (
    DOptimalModel,
    MinMaxDesignModel,
    OracleDesignModel,
    d_optimal,
    g_optimal,
    minmax_design,
    oracle_directions,
    pairwise_differences,
    transductive,
    xy_allocation,
    xy_oracle,
)
from .marginals import marginal_polytope
from .regret import regret_lower_bound
from .result import BilinearDesign, CharTimeResult, DesignResult, RegretBoundResult
from .rounding import round_design
from .solvers import available_solvers, default_solver, mosek_usable

try:
    __version__ = version("optdesign-bandits")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = [
    "BilinearDesign",
    "CharTimeResult",
    "DOptimalModel",
    "DesignResult",
    "EliminationPlan",
    "FactorGraph",
    "FactoredMax",
    "InstanceTooLargeError",
    "InvalidInputError",
    "MeanFieldModel",
    "MinMaxDesignModel",
    "OptDesignError",
    "OracleDesignModel",
    "RegretBoundResult",
    "SolverError",
    "available_solvers",
    "bilinear_design",
    "characteristic_time",
    "d_optimal",
    "default_solver",
    "edge_arms",
    "enumerated_max",
    "factored_max",
    "g_optimal",
    "g_value",
    "greedy_allocation",
    "greedy_choice",
    "greedy_scores",
    "marginal_polytope",
    "mf_characteristic_time",
    "minmax_design",
    "minmax_lower_bound",
    "minmax_value",
    "mosek_usable",
    "oracle_directions",
    "pairwise_differences",
    "regret_lower_bound",
    "round_design",
    "transductive",
    "xy_allocation",
    "xy_oracle",
]
