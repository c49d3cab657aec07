"""Best-arm identification in multi-agent bandits with factored rewards (MF-TaS, Vannella et al. 2023).

Modules, one concept each:

* :mod:`.environment` — :class:`FactoredBandit`: semi-bandit Gaussian feedback per factor, batched
  through group counts (the runner's arms are the Abar group actions).
* :mod:`.joint_actions` — mixed-radix codes of joint actions and :class:`GroupIndexer` (group-action
  positions and counts of a batch).
* :mod:`.antenna` — antenna-tilt instances (App. I) on a synthetic network.
* :mod:`.exploration` — covering sets A0 (the paper's BUILD-A0 and a max-sum greedy cover) and forced
  exploration.
* :mod:`.glrt` — the factored GLRT: exact (best-first enumeration with H_max and Lagrangian bounds),
  threshold test, conservative.
* :mod:`.best_response` — the exact best response of the GLR: the search, then the Pareto elimination of
  exact T*'s separation.
* :mod:`.problem` — :class:`FactoredProblem`: the pure-exploration problem interface on a factor graph (the
  estimate, the answer, the GLR statistic of the one GLR stop and its best response, the time in rounds, the
  pieces, the exact T* oracle).
* :mod:`.alternatives` — the closest alternative of a joint piece and the piece's gradients.
* :mod:`.optimism` — LinGame's optimistic gains at the best response to a play (the factored problem's ``optimism``).
* :mod:`.thresholds` — beta(t, delta): practical (GK16) and a delta-correct theory threshold.
* :mod:`.tracking` — Track-and-Stop's trackers on a factor graph (the problem's ``allocation_tracker``): the exact T*
  allocation's law over joint actions, C-tracked, and the mean-field allocation drawn agent by agent.
* :mod:`.batches` — the factored batches a rule's state plays joint actions in (:class:`~.batches.RuleState`: the pass
  over A0, forced exploration, tracked rounds, partial rounds).
* :mod:`.sampling` — the factored sampling rules' base (:class:`~.sampling.FactoredSampler`: a sampling rule on a
  problem offering ``factor_graph``, run under the one GLR stop in the factored batches).
* :mod:`.algorithms` — MF-TaS and exact Track-and-Stop (the core Track-and-Stop in the factored batches), MF-TaS's
  Oracle baseline, uniform product sampling.
* :mod:`.top_two` — Top-Two over joint actions: a leader and its exact best response.
* :mod:`.fw_game` — one Frank–Wolfe step: the near-tied pieces and the game over joint actions (column generation).
* :mod:`.frank_wolfe` — Frank–Wolfe sampling over joint actions, and its noise-free iterate.
* :mod:`.gibbs` — AdaHedge over joint actions, its distribution a Gibbs distribution (sum-product).
* :mod:`.lingame` — LinGame over joint actions: the generic rule on the factored problem, in the factored batches.
* :mod:`.mab` — Garivier–Kaufmann Track-and-Stop for one agent (D- and C-tracking).
* :mod:`.instances` — named instance factories for the registry.
"""

from .algorithms import ExactTaS, MFTaS, MFTaSOracle, UniformSampling
from .best_response import BestResponse, exact_best_response
from .environment import FactoredBandit
from .exploration import build_a0, covering_set, greedy_cover
from .frank_wolfe import JointFrankWolfe
from .glrt import FactoredGLRT
from .joint_actions import GroupIndexer
from .lingame import JointLinGame
from .mab import GKTrackAndStop, gk_optimal_weights
from .problem import FactoredProblem
from .thresholds import FactoredTheoryThreshold
from .top_two import JointTopTwo

__all__ = [
    "BestResponse",
    "ExactTaS",
    "FactoredBandit",
    "FactoredGLRT",
    "FactoredProblem",
    "FactoredTheoryThreshold",
    "GKTrackAndStop",
    "GroupIndexer",
    "JointFrankWolfe",
    "JointLinGame",
    "JointTopTwo",
    "MFTaS",
    "MFTaSOracle",
    "UniformSampling",
    "build_a0",
    "covering_set",
    "exact_best_response",
    "gk_optimal_weights",
    "greedy_cover",
]
