"""Linear and transductive best-arm identification: Soare et al. (2014), Fiez et al. (2019),
LinGapE (Xu et al. 2018; m-LinGapE and LinGIFA, Réda et al. 2021, for the m best items), ALBA (Tao et al. 2018)
and a Track-and-Stop baseline. Each algorithm is a sampling rule, a stopping rule (the linear
GLRT of :mod:`bandits.linear.common` unless it eliminates) and a recommendation rule."""

from ..core.statistics import spanning_subset
from .adaptive import FullyAdaptiveXY, XYAdaptive
from .alba import ALBA
from .lingape import LinGapE, LinGIFA
from .rage import RAGE
from .static import StaticAllocation
from .track_and_stop import LinearTrackAndStop

__all__ = [
    "ALBA",
    "RAGE",
    "FullyAdaptiveXY",
    "LinGIFA",
    "LinGapE",
    "LinearTrackAndStop",
    "StaticAllocation",
    "XYAdaptive",
    "spanning_subset",
]
