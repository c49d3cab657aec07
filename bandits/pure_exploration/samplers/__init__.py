"""Sampling rules for :class:`bandits.pure_exploration.algorithm.PureExploration`, one module each.

==============  ===================================================================================
uniform         round robin (argmin of the counts) and fixed weights tracked by C-tracking (the oracle w*)
track_and_stop  Track-and-Stop: C- or D-tracking of the plug-in w*(mu_hat), re-solved on a geometric schedule
top_two         Top-Two rules: EB/TS/UCB leader, TC/TCI/TS challenger, fixed beta or IDS (one pull per pair on linear)
frank_wolfe     Frank–Wolfe sampling (Wang, Tzeng & Proutiere 2021): FW steps on min_j f_j, tracked
lingame         LinGame (Degenne, Ménard, Shang & Valko 2020): AdaHedge vs best response, C-tracking
lingame_c       LinGame-C (same paper): one AdaHedge over (answer, arm) pairs, best responses for every answer
lazy_tas        Lazy Track-and-Stop (Jedra & Proutière 2020): Frank–Wolfe targets at powers of two, C-tracking
games           re-exports :mod:`bandits.pure_exploration.games` (its former home)
==============  ===================================================================================
"""

from .frank_wolfe import FrankWolfe
from .lazy_tas import LazyTrackAndStop
from .lingame import LinGame
from .lingame_c import LinGameC
from .top_two import TopTwo
from .track_and_stop import TrackAndStop
from .uniform import FixedWeights, RoundRobin

__all__ = ["FixedWeights", "FrankWolfe", "LazyTrackAndStop", "LinGame", "LinGameC", "RoundRobin", "TopTwo",
           "TrackAndStop"]
