"""Best-arm identification in multi-agent bandits with factored rewards (MF-TaS, Vannella et al. 2023).

Modules, one concept each:

* :mod:`.environment` — :class:`FactoredBandit`: semi-bandit Gaussian feedback per factor, batched
  through group counts (the runner's arms are the Abar group actions).
* :mod:`.joint_actions` — mixed-radix codes of joint actions and :class:`GroupIndexer` (group-action
  positions and counts of a batch).
* :mod:`.antenna` — antenna-tilt instances (App. I) on a synthetic network.
* :mod:`.exploration` — covering sets A0 (the paper's BUILD-A0 and a max-sum greedy cover) and forced
  exploration.
* :mod:`.glrt` — sufficient statistics and the factored GLRT: exact (best-first enumeration with
  H_max and Lagrangian bounds), threshold test, conservative.
* :mod:`.problem` — :class:`FactoredProblem`: the pure-exploration problem interface on a factor graph (the
  estimate, the answer, the GLR and its exact best response, the pieces, the exact T* oracle).
* :mod:`.thresholds` — beta(t, delta): practical (GK16) and a delta-correct theory threshold.
* :mod:`.tracking` — independent per-agent sampling of a product allocation.
* :mod:`.policy` — the loop shared by every factored policy.
* :mod:`.algorithms` — MF-TaS, its Oracle baseline, uniform product sampling, exact Track-and-Stop.
* :mod:`.mab` — Garivier–Kaufmann Track-and-Stop for one agent (D- and C-tracking).
* :mod:`.instances` — named instance factories for the registry.
"""

from .algorithms import ExactTaS, MFTaS, MFTaSOracle, UniformSampling
from .environment import FactoredBandit
from .exploration import build_a0, covering_set, greedy_cover
from .glrt import FactoredGLRT
from .joint_actions import GroupIndexer
from .mab import GKTrackAndStop, gk_optimal_weights
from .problem import BestResponse, FactoredProblem
from .statistics import FactoredStatistics
from .thresholds import FactoredTheoryThreshold

__all__ = [
    "BestResponse",
    "ExactTaS",
    "FactoredBandit",
    "FactoredGLRT",
    "FactoredProblem",
    "FactoredStatistics",
    "FactoredTheoryThreshold",
    "GKTrackAndStop",
    "GroupIndexer",
    "MFTaS",
    "MFTaSOracle",
    "UniformSampling",
    "build_a0",
    "covering_set",
    "gk_optimal_weights",
    "greedy_cover",
]
