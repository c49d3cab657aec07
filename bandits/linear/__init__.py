"""Linear and transductive best-arm identification: Soare et al. (2014), Fiez et al. (2019),
and a Track-and-Stop baseline. Each algorithm is a sampling rule, a stopping rule (the linear
GLRT of :mod:`bandits.linear.common` unless it eliminates) and a recommendation rule."""

from .adaptive import FullyAdaptiveXY, XYAdaptive
from .common import LinearGLRPolicy, spanning_arms
from .rage import RAGE
from .static import StaticAllocation
from .track_and_stop import LinearTrackAndStop

__all__ = [
    "RAGE",
    "FullyAdaptiveXY",
    "LinearGLRPolicy",
    "LinearTrackAndStop",
    "StaticAllocation",
    "XYAdaptive",
    "spanning_arms",
]
