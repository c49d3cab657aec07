"""Sampling rules for :class:`bandits.pure_exploration.policy.PureExploration`, one module each.

===========  ======================================================================================
uniform      round robin (argmin of the counts) and fixed weights tracked by C-tracking (the oracle w*)
frank_wolfe  Frank–Wolfe sampling (Wang, Tzeng & Proutiere 2021): FW steps on min_j f_j, tracked
lingame      LinGame (Degenne, Ménard, Shang & Valko 2020): AdaHedge vs best response, C-tracking
games        the exact zero-sum matrix game and the AdaHedge learner they use
===========  ======================================================================================
"""

from .frank_wolfe import FrankWolfe
from .lingame import LinGame
from .uniform import FixedWeights, RoundRobin

__all__ = ["FixedWeights", "FrankWolfe", "LinGame", "RoundRobin"]
