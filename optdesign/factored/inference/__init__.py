"""Variable elimination on a factored function sum_e f_e(a_e): cost O(N K^{w+1}) for an order of width w.

=====================  ==============================================================================
elimination            the shared index plan of an elimination order
flat_plan              that plan as flat arrays for the compiled passes, and when they run (time budgets, size)
orders                 elimination orders (networkx's min-fill, a lazy-heap min-degree) of the interaction graph
max_sum                max-sum: a*, gaps Delta(a) = sum of local regrets, joint actions in gap order (m best),
                       the largest ratio of two factored functions (Dinkelbach)
max_sum_kernels        max-sum's pass and greedy assignment compiled (numba): the same numbers
constraint_reduction   Factored Constraint Reduction (FCR): t >= max_a sum_e f_e(a_e) as compact cvxpy constraints
sum_product            sum-product in log space: log Z, factor marginals and draws of the Gibbs distribution
sum_product_kernels    sum-product's forward and backward passes and its draws compiled (numba): the same numbers to
                       rounding, the same draws
marginals              the marginal polytope as junction-tree clique distributions; sampling joint actions from them
                       (or their law, on small structures)
=====================  ==============================================================================
"""

from .constraint_reduction import FactoredMax, enumerated_max, factored_max
from .elimination import EliminationPlan
from .marginals import joint_action_probabilities, marginal_polytope, sample_joint_actions
from .max_sum import MaxSum, batched_max_sum
from .sum_product import SumProduct, maximiser_terms

__all__ = [
    "EliminationPlan",
    "FactoredMax",
    "MaxSum",
    "SumProduct",
    "batched_max_sum",
    "enumerated_max",
    "factored_max",
    "joint_action_probabilities",
    "marginal_polytope",
    "maximiser_terms",
    "sample_joint_actions",
]
