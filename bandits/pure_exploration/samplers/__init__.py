"""Sampling rules for :class:`bandits.pure_exploration.policy.PureExploration`, one module each.

=======  ==========================================================================================
uniform  round robin (argmin of the counts) and fixed weights tracked by C-tracking (the oracle w*)
=======  ==========================================================================================
"""

from .uniform import FixedWeights, RoundRobin

__all__ = ["FixedWeights", "RoundRobin"]
