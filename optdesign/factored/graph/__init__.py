"""Factor graphs: N agents, K_i actions each, factors e with a scope S_e and a mean table theta_e.

=================  ==================================================================================
factor_graph       :class:`FactorGraph`: values theta(a) = sum_e theta_e(a_e), group positions, brute force
best_actions       its max-sum queries: a*, Delta_min, gaps, the m best joint actions
generators         its seeded named structures (line, ring, star, grid, edge lists, networkx) and mean models
json_format        its JSON format (to_dict, from_dict, save, load)
checks             input checks of factor graphs (action counts, scopes, mean tables), the size of one
joint_action_sets  the distinct joint actions of a list, in lexicographic order
=================  ==================================================================================
"""

from .checks import factor_graph_entries
from .factor_graph import FactorGraph
from .joint_action_sets import unique_joint_actions

__all__ = ["FactorGraph", "factor_graph_entries", "unique_joint_actions"]
