"""Factored (multi-agent) lower bounds: theta(a) = sum_e theta_e(a_e) over joint actions a of N agents.

Every program here has one constraint per joint action; variable elimination along an order of width w
makes each polynomial, O(N K^{w+1}), instead of prod_i K_i.

==========  ============================================================================================
graph       :class:`FactorGraph` (agents, action counts, factors with scopes and mean tables), its generators,
            its JSON format and its input checks
inference   variable elimination: orders, max-sum (a*, gaps, m best), Factored Constraint Reduction, the
            marginal polytope
exact       the exact characteristic time T* (eq. 1): enumerated, or by constraint generation with exact
            separation
mean_field  the mean-field characteristic time T^MF(m) (eqs. 2-3, App. H), on action classes and orbits
regret      the Graves–Lai regret lower bound c_theta (App. F), exact and mean-field
==========  ============================================================================================

Dependencies go up the table: ``graph`` and ``inference`` need nothing below them, ``exact`` builds on both,
``mean_field`` and ``regret`` also on ``exact``: it holds the closed-form fallback brackets of all three bounds
(its separation oracle evaluates them), and its engine serves the regret bound.

Convention (MF-TaS paper): E[tau] >= 2 T* kl(delta, 1 - delta) for unit-variance Gaussian rewards.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .exact.characteristic_time import EXACT_MAX_JOINT_ACTIONS, characteristic_time
    from .exact.enumerated_separation import EnumeratedSeparation
    from .exact.separation import Separation, most_violated
    from .graph import FactorGraph, factor_graph_entries, unique_joint_actions
    from .inference import (
        EliminationPlan,
        FactoredMax,
        MaxSum,
        SumProduct,
        enumerated_max,
        factored_max,
        joint_action_probabilities,
        marginal_polytope,
        maximiser_terms,
        sample_joint_actions,
    )
    from .mean_field import MeanFieldModel, mf_characteristic_time
    from .regret import regret_lower_bound

# each name is imported from its subpackage on first access, so ``from optdesign.factored import FactorGraph``
# does not load the exact, mean-field and regret programs
_EXPORTS = {
    ".exact": ("EXACT_MAX_JOINT_ACTIONS", "EnumeratedSeparation", "Separation", "characteristic_time", "most_violated"),
    ".graph": ("FactorGraph", "factor_graph_entries", "unique_joint_actions"),
    ".inference": ("EliminationPlan", "FactoredMax", "MaxSum", "SumProduct", "enumerated_max", "factored_max",
                   "joint_action_probabilities", "marginal_polytope", "maximiser_terms", "sample_joint_actions"),
    ".mean_field": ("MeanFieldModel", "mf_characteristic_time"),
    ".regret": ("regret_lower_bound",),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "EXACT_MAX_JOINT_ACTIONS",
    "EliminationPlan",
    "EnumeratedSeparation",
    "FactorGraph",
    "FactoredMax",
    "MaxSum",
    "MeanFieldModel",
    "Separation",
    "SumProduct",
    "characteristic_time",
    "enumerated_max",
    "factor_graph_entries",
    "factored_max",
    "joint_action_probabilities",
    "marginal_polytope",
    "maximiser_terms",
    "mf_characteristic_time",
    "most_violated",
    "regret_lower_bound",
    "sample_joint_actions",
    "unique_joint_actions",
]
