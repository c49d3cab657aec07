"""Factored (multi-agent) lower bounds: theta(a) = sum_e theta_e(a_e) over joint actions a of N agents.

Every program here has one constraint per joint action; variable elimination along an order of width w
makes each polynomial, O(N K^{w+1}), instead of prod_i K_i.

=====================  ==============================================================================
factorgraph            FactorGraph: agents, K_i, factors (scope, mean table); values, gaps, m best joint actions
generators             its seeded named structures (line, ring, star, grid, edge lists, networkx) and mean models
json_format            its JSON format (to_dict, from_dict, save, load)
construction           input checks of factor graphs (action counts, scopes, mean tables)
elimination            elimination orders (networkx treewidth heuristics) and the shared index plan
inference              max-sum: a*, gaps Delta(a) = sum of local regrets, joint actions in gap order (m best)
fcr                    Factored Constraint Reduction: t >= max_a sum_e f_e(a_e) as compact constraints
marginals              the marginal polytope as junction-tree clique distributions; sampling joint actions from them
rescaling              multi-pass solves of programs with s >= 1/w, each centred on the previous pass
mean_field             T^MF(m) (eqs. 2-3, App. H) on action classes (a*, named, the rest), certified by weak duality
action_classes         the action classes of that program: the actions of an agent that share one value of v
symmetry               automorphisms of a structure (twins, cycle rotations, given generators, all checked) and orbits
mean_field_orbits      T^MF (m = 1) with one allocation per orbit: Kelley's cutting planes, certified (rings: N = 10^5)
characteristic_time    exact T* (MF-TaS eq. 1) over clique marginals; N = 1 is Garivier–Kaufmann's
separation             max over ALL joint actions of H_w(a) / Delta(a)^2 by Pareto variable elimination
constraint_generation  one constraint per joint action without listing them: working-set master, exact
                       separation, certified bracket (the engine of exact T* and of the regret bound)
char_time_generated    exact T* for any number of joint actions on that engine
regret                 Graves–Lai regret lower bound c_theta, exact (enumerated or generated) and mean-field (App. F)
regret_cone            the exact cone of factor marginals that program runs on (clique counts, cut ray)
=====================  ==============================================================================

Convention (MF-TaS paper): E[tau] >= 2 T* kl(delta, 1 - delta) for unit-variance Gaussian rewards.
"""

from .characteristic_time import MeanFieldModel, characteristic_time, mf_characteristic_time
from .elimination import EliminationPlan
from .factorgraph import FactorGraph
from .fcr import FactoredMax, enumerated_max, factored_max
from .marginals import marginal_polytope
from .regret import regret_lower_bound

__all__ = [
    "EliminationPlan",
    "FactorGraph",
    "FactoredMax",
    "MeanFieldModel",
    "characteristic_time",
    "enumerated_max",
    "factored_max",
    "marginal_polytope",
    "mf_characteristic_time",
    "regret_lower_bound",
]
