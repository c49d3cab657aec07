"""Graphical bilinear bandits (Rizk, Thomas, Colin, Laraki, Chevaleyre, ICML 2021).

Setting (their Sec. 2, spec Sec. 2.1). A graph G = (V, E) with n nodes and m *directed* edges; every
round each node i plays a node arm x^(i) in X (K x d, spanning R^d) and every directed edge (i, j)
reports r = x^(i)T M x^(j) + sigma N(0, 1) = z^T theta + noise, with z = vec(x^(i) x^(j)T) (row-major)
and theta = vec(M) in R^{d^2}. An undirected networkx graph stands for its symmetric directed
version (edge {i, j} gives (i, j) and (j, i), so m = 2 |E|, as the paper counts); a DiGraph is
taken as given. M need not be symmetric: edge (i, j) always earns x^(i)T M x^(j).

* :class:`GraphicalBilinearBandit`: the environment. Its measurement "arms" for the runner are the
  K^2 *edge arms* (index k K + k' for the pair (x_k, x_k')); ``best_item`` is the best edge arm
  z* = argmax_{k, k'} x_k^T M x_k' (what Algorithm 2 identifies); the best *joint* assignment
  (NP-hard, Thm 4.1) is found by brute force for K^n <= 10^6 (:func:`brute_force_assignment`).
* :func:`algorithm1_allocation`: Rizk Alg. 1, the greedy local max-cut 1/2-approximation.
* :class:`RandomizedGAllocation` (``gbb-g-allocation``): Rizk Alg. 2, i.i.d. node arms from the
  G-optimal node design mu*, OLS on theta, GLRT stopping with (S1).
* ``gbb`` instance (Sec. 7): X = {e_1..e_d, (cos w, sin w, 0, ...)}, M = 2 e_1 e_1^T, listed in
  :data:`bandits.instances.INSTANCES` (imported on first use).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import networkx as nx
import numpy as np

import optdesign as od
from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.validation import as_arms, as_matrix, unique_argmax

from .algorithm import Algorithm
from .environments import as_counts, check_sigma, gaussian_sums
from .instances import soare
from .linear.common import LinearGLRPolicy, check_growth
from .stopping import BilinearThreshold, LinearTheoryThreshold, PracticalThreshold, Threshold, check_threshold_option
from .tracking import next_checkpoint
from .validation import check_choice, check_int, check_positive

#: largest number K^n of joint assignments that :func:`brute_force_assignment` enumerates
MAX_ASSIGNMENTS = 10**6
#: node draws held in memory at once when simulating a batch of rounds (entries of the R x n matrix)
DRAW_CHUNK = 2**21


# --------------------------------------------------------------------------------------- graphs


def directed_edges(graph) -> tuple[list, np.ndarray]:
    """Nodes (in ``graph.nodes`` order) and the m x 2 array of directed edges as node positions.

    An undirected graph contributes both orientations of each edge; a DiGraph its edges as given.
    Self-loops, multigraphs and edgeless graphs are rejected.
    """
    if not isinstance(graph, nx.Graph):
        raise InvalidInputError(f"graph must be a networkx Graph or DiGraph, got {type(graph).__name__}")
    if graph.is_multigraph():
        raise InvalidInputError("graph must be a simple Graph or DiGraph, not a multigraph")
    loops = list(nx.selfloop_edges(graph))
    if loops:
        raise InvalidInputError(f"graph must have no self-loops (an edge pairs two distinct nodes); found {loops[:3]}")
    if graph.number_of_edges() == 0:
        raise InvalidInputError("graph has no edges: there is nothing to observe")
    nodes = list(graph.nodes)
    pos = {v: i for i, v in enumerate(nodes)}
    pairs = [(pos[u], pos[v]) for u, v in graph.edges]
    if not graph.is_directed():
        pairs += [(j, i) for i, j in pairs]
    return nodes, np.array(pairs, dtype=np.int64).reshape(-1, 2)


def make_graph(kind: str, m: int) -> nx.Graph:
    """The graphs of Rizk et al. Sec. 6-7 with m directed edges: star (m/2 + 1 nodes), complete
    ((1 + sqrt(4m + 1))/2 nodes), circle (m/2 nodes, at least 3) and matching (m nodes, m/2 pairs)."""
    check_choice(kind, "graph", GRAPHS)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer, float)) or m != int(m) or m < 2:
        raise InvalidInputError(f"m (number of directed edges) must be an integer >= 2, got {m!r}")
    m = int(m)
    if kind == "complete":
        n = round((1 + np.sqrt(4 * m + 1)) / 2)
        if n * (n - 1) != m:
            raise InvalidInputError(f"a complete graph has m = n(n-1) directed edges (2, 6, 12, 20, ...); got m={m}")
        return nx.complete_graph(n)
    if m % 2:
        raise InvalidInputError(f"a {kind} graph has an even number m of directed edges; got m={m}")
    if kind == "star":
        return nx.star_graph(m // 2)  # centre 0 and m/2 leaves
    if kind == "circle":
        if m < 6:
            raise InvalidInputError(f"a circle needs at least 3 nodes, i.e. m >= 6 directed edges; got m={m}")
        return nx.cycle_graph(m // 2)
    graph = nx.Graph()
    graph.add_edges_from((2 * i, 2 * i + 1) for i in range(m // 2))
    return graph


GRAPHS = ("star", "complete", "circle", "matching")


# ------------------------------------------------------------------------------ joint rewards


def global_reward(graph, X, M, assignment) -> float:
    """r(a) = sum over directed edges (i, j) of x_{a_i}^T M x_{a_j} (a in ``graph.nodes`` order)."""
    nodes, edges = directed_edges(graph)
    R = _pair_means(X, M)
    a = _check_assignment(assignment, len(nodes), R.shape[0])
    return float(R[a[edges[:, 0]], a[edges[:, 1]]].sum())


@dataclass(frozen=True)
class BruteForceResult:
    """Best joint assignment (one arm index per node, ``graph.nodes`` order), its global reward
    ``value`` = r*, and the smallest global reward ``min_value`` = r_min over all K^n assignments."""

    assignment: np.ndarray
    value: float
    min_value: float


def brute_force_assignment(graph, X, M, *, max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
    """Enumerate all K^n joint assignments (the problem is NP-hard, Rizk Thm 4.1).

    Raises :class:`InstanceTooLargeError` when K^n exceeds ``max_assignments`` (default 10^6).
    """
    nodes, edges = directed_edges(graph)
    R = _pair_means(X, M)
    K, n = R.shape[0], len(nodes)
    if float(K) ** n > max_assignments:
        raise InstanceTooLargeError(
            f"brute force over K^n = {K}^{n} joint assignments exceeds the limit {max_assignments:g}"
        )
    total = K**n
    chunk = max(1, DRAW_CHUNK // max(n, edges.shape[0]))
    powers = K ** np.arange(n, dtype=np.int64)
    best_val, best_idx, worst = -np.inf, 0, np.inf
    for lo in range(0, total, chunk):
        idx = np.arange(lo, min(total, lo + chunk), dtype=np.int64)
        a = (idx[:, None] // powers) % K  # digit i of idx in base K is the arm of node i
        r = R[a[:, edges[:, 0]], a[:, edges[:, 1]]].sum(axis=1)
        j = int(np.argmax(r))
        if r[j] > best_val:
            best_val, best_idx = float(r[j]), int(idx[j])
        worst = min(worst, float(r.min()))
    return BruteForceResult(assignment=(best_idx // powers) % K, value=best_val, min_value=worst)


# --------------------------------------------------------------------------------- Algorithm 1


def algorithm1_allocation(graph, X, M_hat) -> np.ndarray:
    """Rizk et al. Alg. 1: a joint assignment with (r - r_min)/(r* - r_min) >= 1/2 (Thm 4.2 / A.2).

    (x*, x'*) = argmax_{x, x'} x^T S x' over X^2 with S = (M_hat + M_hat^T)/2 (K^2 evaluations). If
    x* = x'* every node gets x*; otherwise nodes are visited in ``graph.nodes`` order and node i gets
    x* if n2 >= n1, else x'*, where n1 (n2) counts the directed edges, either way, between i and the
    already-assigned nodes holding x* (x'*): a greedy local max-cut (ties go to x*, as in the paper).

    Symmetrisation (App. E.1) leaves the global reward unchanged on a symmetric edge set, since
    each pair contributes x_i^T M x_j + x_j^T M x_i = 2 x_i^T S x_j, and is a no-op for symmetric M.
    Counting edges with their multiplicity keeps the proof valid on any DiGraph when M is symmetric
    (each directed edge is formed exactly once, at its later endpoint). For a non-symmetric M on a
    non-symmetric DiGraph there is no guarantee (one edge 1 -> 2, M = e_1 e_2^T, order (2, 1): r = 0).
    Returns arm indices, one per node in ``graph.nodes`` order.
    """
    nodes, edges = directed_edges(graph)
    X = as_arms(X, "X")
    M_hat = _check_M(M_hat, X.shape[1], "M_hat")
    S = (M_hat + M_hat.T) / 2.0
    K, n = X.shape[0], len(nodes)
    k1, k2 = divmod(int(np.argmax((X @ S @ X.T).ravel())), K)
    if k1 == k2:
        return np.full(n, k1, dtype=np.int64)
    # neighbours with multiplicity: one entry per directed edge, in both directions
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.argsort(src, kind="stable")
    starts = np.searchsorted(src[order], np.arange(n + 1))
    nbrs = dst[order]
    side = np.full(n, -1, dtype=np.int64)  # 0: x*, 1: x'*, -1: not yet assigned
    for i in range(n):
        held = side[nbrs[starts[i]:starts[i + 1]]]
        n1, n2 = np.count_nonzero(held == 0), np.count_nonzero(held == 1)
        side[i] = 0 if n2 >= n1 else 1
    return np.where(side == 0, k1, k2).astype(np.int64)


# -------------------------------------------------------------------------------- environment


@dataclass(frozen=True)
class GraphicalBilinearBandit:
    """Graphical bilinear bandit with Gaussian noise (Rizk et al. 2021; module docstring).

    The runner's arms are the K^2 edge arms z_{kK+k'} = vec(x_k x_k'^T) (``Z``, rows of
    :func:`optdesign.edge_arms`), with means x_k^T M x_k' (``means``); ``pull(counts, rng)`` returns
    their reward sums in one Gaussian draw per edge arm. ``edge_counts(assignments)`` turns the node
    assignments of R rounds into those counts, so a batch of rounds costs one bincount. ``n_arms`` is
    K^2 (what ``pull`` takes); ``n_node_arms`` is K. ``best_item`` is the best edge arm, which must
    be unique (a symmetric M whose best pair is off-diagonal ties (k, k') with (k', k): rejected).
    """

    graph: nx.Graph
    X: np.ndarray
    M: np.ndarray
    sigma: float = 1.0
    name: str = "gbb"
    nodes: list = field(init=False)
    edges: np.ndarray = field(init=False)
    Z: np.ndarray = field(init=False)
    theta: np.ndarray = field(init=False)
    means: np.ndarray = field(init=False)
    best_item: int = field(init=False)
    gaps: np.ndarray = field(init=False)

    def __post_init__(self):
        nodes, edges = directed_edges(self.graph)
        X = as_arms(self.X, "X")
        M = _check_M(self.M, X.shape[1], "M")
        means = _pair_means(X, M).ravel()
        best = unique_argmax(means, "edge-arm means x_k^T M x_k'")
        object.__setattr__(self, "graph", nx.freeze(self.graph.copy()))
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "M", M)
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "Z", od.edge_arms(X))
        object.__setattr__(self, "theta", M.ravel().copy())
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "best_item", best)
        object.__setattr__(self, "gaps", means[best] - means)

    @property
    def n_arms(self) -> int:
        """Number of edge arms K^2 (the length of ``pull``'s counts)."""
        return self.Z.shape[0]

    @property
    def n_node_arms(self) -> int:
        return self.X.shape[0]

    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        """m, the number of directed edges (observations per round)."""
        return self.edges.shape[0]

    @property
    def best_pair(self) -> tuple[int, int]:
        """(k, k') of the best edge arm z* = vec(x_k x_k'^T)."""
        return divmod(self.best_item, self.n_node_arms)

    @property
    def gap_min(self) -> float:
        return float(np.min(np.delete(self.gaps, self.best_item)))

    def edge_counts(self, assignments) -> np.ndarray:
        """Counts of every edge arm k K + k' over the rounds of ``assignments`` (R x n, or n for one
        round): edge (i, j) of round r contributes to k K + k' with k = a[r, i], k' = a[r, j]."""
        a = self._check_assignments(assignments)
        K = self.n_node_arms
        codes = a[:, self.edges[:, 0]] * K + a[:, self.edges[:, 1]]
        return np.bincount(codes.ravel(), minlength=K * K).astype(np.int64)

    def pull(self, counts, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of a batch: ``counts[k K + k']`` observations of edge arm (x_k, x_k')."""
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def play(self, assignments, rng: np.random.Generator) -> np.ndarray:
        """Per-round, per-edge noisy rewards (R x m) of the joint assignments (R x n): the plain
        simulator, one Gaussian per observation (for checks and small runs)."""
        a = self._check_assignments(assignments)
        R = self.means.reshape(self.n_node_arms, -1)
        mean = R[a[:, self.edges[:, 0]], a[:, self.edges[:, 1]]]
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def reward(self, assignment) -> float:
        """Global expected reward sum_{(i,j) in E} x_{a_i}^T M x_{a_j} of one joint assignment."""
        a = _check_assignment(assignment, self.n_nodes, self.n_node_arms)
        return float(self.means.reshape(self.n_node_arms, -1)[a[self.edges[:, 0]], a[self.edges[:, 1]]].sum())

    def best_assignment(self, *, max_assignments: int = MAX_ASSIGNMENTS) -> BruteForceResult:
        """The best joint assignment by brute force (K^n <= ``max_assignments``, else InstanceTooLargeError)."""
        return brute_force_assignment(self.graph, self.X, self.M, max_assignments=max_assignments)

    def describe(self) -> dict:
        return {"name": self.name, "K": self.n_node_arms, "d": self.dim, "n": self.n_nodes, "m": self.n_edges,
                "sigma": self.sigma, "gap_min": self.gap_min}

    def _check_assignments(self, assignments) -> np.ndarray:
        a = np.asarray(assignments)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_nodes:
            raise InvalidInputError(
                f"assignments must have shape (R, {self.n_nodes}) (one arm per node), got {a.shape}")
        return _check_assignment(a, self.n_nodes, self.n_node_arms)


def draw_assignments(weights: np.ndarray, n_nodes: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """``rounds`` x ``n_nodes`` node arms drawn i.i.d. from ``weights`` (inverse-CDF sampling)."""
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    a = np.searchsorted(cdf, rng.random((rounds, n_nodes)), side="right")
    return np.minimum(a, len(weights) - 1)


def _pair_means(X, M) -> np.ndarray:
    X = as_arms(X, "X")
    return X @ _check_M(M, X.shape[1], "M") @ X.T


def _check_M(M, d: int, name: str) -> np.ndarray:
    M = as_matrix(M, name)
    if M.shape != (d, d):
        raise InvalidInputError(f"{name} must be a {d} x {d} matrix (d = the arms' dimension), got shape {M.shape}")
    return M


def _check_assignment(a, n: int, K: int) -> np.ndarray:
    a = np.asarray(a)
    if a.shape[-1:] != (n,):
        raise InvalidInputError(f"an assignment gives one arm index per node: length {n} expected, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= K:
        raise InvalidInputError(f"assignment entries must be arm indices in 0..{K - 1}")
    return a.astype(np.int64, copy=False)


# -------------------------------------------------------------------------------- Algorithm 2

BILINEAR_THRESHOLDS = ("s1", "practical", "theory")


@dataclass(frozen=True)
class RandomizedGAllocation(Algorithm):
    """Rizk et al. Alg. 2: every round each node draws x ~ mu* i.i.d. (mu* the G-optimal design on X),
    theta_hat = OLS over all m t edge observations, stop by the GLRT over the K^2 edge arms.

    In expectation the edge design is mu* (x) mu*, G-optimal on the edge arms with value d^2 (Thm 5.1),
    so A_t ~ m t A(mu*) (x) A(mu*). Thresholds (``threshold``):

    * ``"s1"`` (default): (S1), 4 log(6 m^2 t^2 K^4 / (delta pi)) with t in rounds
      (:class:`~bandits.stopping.BilinearThreshold`, printed form);
    * ``"practical"``: log((1 + log n) / delta) with n = m t observations;
    * ``"theory"``: :class:`~bandits.stopping.LinearTheoryThreshold` with A_0 the information of
      the rounds up to the first checkpoint where A is invertible (node draws ignore the rewards, so
      A_0 is independent of the noise and may serve as the fixed regulariser);
    * a :class:`~bandits.stopping.Threshold` instance, called with t = rounds if it is a
      ``BilinearThreshold`` and t = observations otherwise.

    The stopping rule is checked at the end of every batch; batches end on the geometric grid of
    rounds t -> max(t + 1, ceil(t (1 + growth))). Until the observed edge arms span R^{d^2} (random
    early rounds, e.g. a star whose centre has played one arm only) A is singular and the run just
    keeps sampling. Recommendation: the empirical best edge arm k K + k'; the policy's
    ``allocation()`` gives Alg. 1's node assignment from M_hat (what the paper finally returns).
    """

    threshold: str | Threshold = "s1"
    design: str = "g"
    growth: float = 0.01
    delta_independent = True

    def __post_init__(self):
        check_threshold_option(self.threshold, BILINEAR_THRESHOLDS)
        if self.design not in ("g", "bilinear"):
            raise InvalidInputError(f"design must be 'g' (od.g_optimal) or 'bilinear' (od.bilinear_design); "
                                    f"got {self.design!r}")
        check_growth(self.growth)

    @property
    def name(self) -> str:
        return "gbb-g-allocation"

    def start(self, env, delta, rng):
        if not isinstance(env, GraphicalBilinearBandit):
            raise InvalidInputError(f"{self.name} runs on a GraphicalBilinearBandit, got {type(env).__name__}")
        return _GAllocationPolicy(self, env, rng)


class _GAllocationPolicy(LinearGLRPolicy):
    """Linear GLRT over the edge arms (X = Z = the K^2 edge arms in R^{d^2}), fed by random rounds."""

    def __init__(self, algo: RandomizedGAllocation, env: GraphicalBilinearBandit, rng: np.random.Generator):
        deferred = algo.threshold == "theory"
        threshold = algo.threshold
        if algo.threshold == "s1":
            threshold = BilinearThreshold(n_edges=env.n_edges, n_node_arms=env.n_node_arms)
        elif algo.threshold == "practical" or deferred:
            threshold = PracticalThreshold()  # "theory" is replaced once A is invertible
        super().__init__(SimpleNamespace(X=env.Z, Z=env.Z, sigma=env.sigma), threshold)
        self.algo, self.env, self.rng = algo, env, rng
        self._deferred = deferred
        start = time.perf_counter()
        if algo.design == "g":
            mu = od.g_optimal(env.X).weights
        else:
            mu = od.bilinear_design(env.X).node_weights
        self.solve_time = time.perf_counter() - start
        mu = np.clip(mu, 0.0, None)
        self.mu = mu / mu.sum()
        self.t = 0
        self._pending_rounds = 0  # rounds of the batch handed out, counted once observed
        self._spanning = False

    @property
    def rounds(self) -> int:
        return self.t

    def next_batch(self, budget: int) -> np.ndarray:
        m, n = self.env.n_edges, self.env.n_nodes
        R = min(next_checkpoint(self.t, self.algo.growth) - self.t, budget // m)
        if R == 0:  # budget below one round: observe the first `budget` edges of one round (not counted)
            self._pending_rounds = 0
            a = draw_assignments(self.mu, n, 1, self.rng)
            K = self.env.n_node_arms
            e = self.env.edges[:budget]
            return np.bincount(a[0, e[:, 0]] * K + a[0, e[:, 1]], minlength=K * K).astype(np.int64)
        counts = np.zeros(self.env.n_arms, dtype=np.int64)
        step = max(1, DRAW_CHUNK // max(n, m))
        for lo in range(0, R, step):
            counts += self.env.edge_counts(draw_assignments(self.mu, n, min(step, R - lo), self.rng))
        self._pending_rounds = R
        return counts

    def observe(self, counts, sums) -> None:
        super().observe(counts, sums)
        self.t += self._pending_rounds
        self._pending_rounds = 0
        if not self._spanning:
            seen = self.X[self.stats.counts > 0]
            self._spanning = seen.shape[0] >= seen.shape[1] and np.linalg.matrix_rank(seen) == seen.shape[1]
            if self._spanning and self._deferred:
                self.threshold = LinearTheoryThreshold.from_matrix(self.stats.A)

    def glr(self):
        return super().glr() if self._spanning else None

    def stopped(self, delta: float) -> bool:
        glr = self.glr()
        if glr is None:
            return False
        t = self.t if isinstance(self.threshold, BilinearThreshold) else self.n
        return glr.value > self.threshold(t, delta, self.stats.A)

    def M_hat(self) -> np.ndarray:
        """unvec(theta_hat), the OLS estimate of M (d x d)."""
        d = self.env.dim
        return self.stats.theta_hat().reshape(d, d)

    def allocation(self) -> np.ndarray:
        """Alg. 1's joint assignment computed from M_hat (what Rizk et al.'s procedure returns)."""
        return algorithm1_allocation(self.env.graph, self.env.X, self.M_hat())

    def stop_statistic(self) -> dict:
        return {**super().stop_statistic(), "rounds": self.t}


# ----------------------------------------------------------------------------------- instance


def gbb(d: int = 5, omega: float = 0.1, graph: str = "complete", m: int = 156, sigma: float = 1.0):
    """Rizk et al. Sec. 7: X = {e_1..e_d, (cos omega, sin omega, 0, ...)} (K = d + 1), M = 2 e_1 e_1^T
    (theta = (2, 0, ..., 0) in R^{d^2}), on a star/complete/circle/matching graph with m directed edges.
    z* = vec(e_1 e_1^T); its closest competitors are (e_1, x_{d+1}) and (x_{d+1}, e_1), gap 2 (1 - cos omega),
    then (x_{d+1}, x_{d+1}), gap 2 sin^2 omega."""
    d = check_int(d, "d", 2)
    omega = check_positive(omega, "omega")
    if not isinstance(graph, str):
        raise InvalidInputError(f"graph must be one of {', '.join(GRAPHS)}; got {graph!r}")
    G = make_graph(graph, m)
    M = np.zeros((d, d))
    M[0, 0] = 2.0
    return GraphicalBilinearBandit(G, soare(d, omega).X, M, sigma=sigma,
                                   name=f"gbb(d={d},omega={omega:g},graph={graph},m={int(m)})")

