"""The exact characteristic time T* (MF-TaS paper eq. 1), enumerated or by constraint generation, certified.

=====================  ==============================================================================
characteristic_time    :func:`characteristic_time`: T* over clique marginals; N = 1 is Garivier–Kaufmann's
generated              T* at any number of joint actions, on the constraint-generation engine
constraint_generation  one row per joint action without listing them: working set, exact separation, certified
                       bracket (the engine of exact T* and of the regret bound)
working_set            the joint actions generation starts from, and how many it may hold (refused before
                       allocating)
cutting_plane_master   the master program of that engine (Kelley cuts over the working set)
clarabel_master        that master written directly in CLARABEL's conic form (no cvxpy compilation per solve)
separation             max over ALL joint actions of H_w(a) / Delta(a)^2 by Pareto variable elimination
pareto                 the Pareto layers and bounds that elimination keeps per variable
pareto_kernels         the same elimination pass and bounds compiled (numba), one call per pass
enumerated_separation  the same separation by enumeration, up to 20,000 joint actions
rescaling              multi-pass solves of programs with s >= 1/w, each centred on the previous pass
fallback               certified brackets of T*, T^MF(m) and c_theta that need no solve (closed forms, certified
                       mixtures), returned when a time limit leaves no solved one
fallback_results       those brackets as results, and merged into a solve that a limit cut short
=====================  ==============================================================================
"""

from .characteristic_time import EXACT_MAX_JOINT_ACTIONS, characteristic_time
from .enumerated_separation import EnumeratedSeparation
from .separation import Separation, most_violated

__all__ = ["EXACT_MAX_JOINT_ACTIONS", "EnumeratedSeparation", "Separation", "characteristic_time", "most_violated"]
