"""Graphical bilinear bandits (Rizk, Thomas, Colin, Laraki, Chevaleyre, ICML 2021): every round each node of
a graph plays a node arm x in X and every directed edge (i, j) reports x^(i)T M x^(j) + noise.

Modules, one concept each:

* :mod:`.graphs` — directed edge lists (an undirected edge counts both ways, m = 2 abs(E)) and the star,
  complete, circle and matching graphs of Sec. 6-7.
* :mod:`.assignments` — joint assignments: the global reward r(a) = sum_{(i,j) in E} x_{a_i}^T M x_{a_j}
  and its brute-force maximum and minimum (the problem is NP-hard, Thm 4.1).
* :mod:`.maxcut` — Alg. 1: greedy local max-cut from M_hat, a 1/2-approximation (Thm 4.2 / A.2).
* :mod:`.environment` — :class:`GraphicalBilinearBandit` (Sec. 2): Gaussian rewards, the runner's arms are
  the K^2 edge arms z = vec(x_k x_k'^T), theta = vec(M).
* :mod:`.algorithms` — Alg. 2, :class:`RandomizedGAllocation` (``gbb-g-allocation``): i.i.d. node arms
  from the G-optimal mu* (Thm 5.1), OLS, GLRT stopping with (S1).
* :mod:`.instances` — ``gbb`` (Sec. 7): soare arms, M = 2 e_1 e_1^T, listed in
  :data:`bandits.instances.INSTANCES`.
"""

from .algorithms import BILINEAR_THRESHOLDS, RandomizedGAllocation, draw_assignments
from .assignments import DRAW_CHUNK, MAX_ASSIGNMENTS, BruteForceResult, brute_force_assignment, global_reward
from .environment import GraphicalBilinearBandit
from .graphs import GRAPHS, directed_edges, make_graph
from .instances import gbb
from .maxcut import algorithm1_allocation

__all__ = [
    "BILINEAR_THRESHOLDS",
    "DRAW_CHUNK",
    "GRAPHS",
    "MAX_ASSIGNMENTS",
    "BruteForceResult",
    "GraphicalBilinearBandit",
    "RandomizedGAllocation",
    "algorithm1_allocation",
    "brute_force_assignment",
    "directed_edges",
    "draw_assignments",
    "gbb",
    "global_reward",
    "make_graph",
]
