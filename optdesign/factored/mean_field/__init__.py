"""The mean-field characteristic time T^MF(m) (MF-TaS paper eqs. 2-3 and App. H), certified.

=====================  ==============================================================================
model                  :class:`MeanFieldModel`: FCR over action classes, built once per structure and re-solved
characteristic_time    :func:`mf_characteristic_time`: that model solved, warm-started, with its certificate
action_classes         the action classes of the program (the actions of an agent sharing one value of v)
posynomial_bound       the cones of its inverse products and the geometric-program lower bound that certifies it
symmetry               automorphisms of a structure (twins, cycle rotations, given generators) and their orbits
orbits                 T^MF (m = 1) with one allocation per orbit by Kelley's cutting planes (rings of 10^5 agents)
=====================  ==============================================================================
"""

from .characteristic_time import mf_characteristic_time
from .model import MeanFieldModel

__all__ = ["MeanFieldModel", "mf_characteristic_time"]
