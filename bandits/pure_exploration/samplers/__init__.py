"""Sampling rules for :class:`bandits.pure_exploration.policy.PureExploration`, one module each.

==============  ===================================================================================
uniform         round robin (argmin of the counts) and fixed weights tracked by C-tracking (the oracle w*)
track_and_stop  Track-and-Stop: C- or D-tracking of the plug-in w*(mu_hat), re-solved on a geometric schedule
top_two         Top-Two rules (K-armed): EB/TS/UCB leader, TC/TCI/TS challenger, fixed beta or IDS
==============  ===================================================================================
"""

from .top_two import TopTwo
from .track_and_stop import TrackAndStop
from .uniform import FixedWeights, RoundRobin

__all__ = ["FixedWeights", "RoundRobin", "TopTwo", "TrackAndStop"]
