"""The Graves–Lai regret lower bound c_theta of multi-agent semi-bandits (MF-TaS paper App. F).

===========  ========================================================================================
lower_bound  :func:`regret_lower_bound`: exact (enumerated or generated) and mean-field
master       the constraint-generation master of the exact bound, and the Dinkelbach max-ratio certificate
cone         the exact cone of factor marginals that program runs on (clique counts, cut ray)
===========  ========================================================================================
"""

from .lower_bound import regret_lower_bound

__all__ = ["regret_lower_bound"]
