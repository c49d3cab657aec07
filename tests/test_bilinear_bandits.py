"""Graphical bilinear bandits (Rizk et al. 2021): Algorithm 1's 1/2-approximation against brute force,
exactness in law of the batched round simulator, convergence of the edge design to mu* (x) mu*,
and Algorithm 2's correctness on the paper's instance."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import optdesign as od
from bandits.bilinear import (
    GraphicalBilinearBandit,
    RandomizedGAllocation,
    algorithm1_allocation,
    brute_force_assignment,
    draw_assignments,
    gbb,
    global_reward,
    make_graph,
)
from bandits.instances import parse_instance
from bandits.run import run
from optdesign.errors import InstanceTooLargeError, InvalidInputError

GRAPH_KINDS = ("star", "complete", "circle", "matching")


def _random_instances(count: int, seed: int):
    """Random graphs on 4-8 nodes (half undirected with a non-symmetric M, half directed with a
    symmetric M: the two cases Thm 4.2 covers), K = 2..4 arms in R^d, d <= K, plus Max-Cut instances."""
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        n, K = int(rng.integers(4, 9)), int(rng.integers(2, 5))
        d = int(rng.integers(2, K + 1))
        directed = made % 2 == 1
        G = nx.gnp_random_graph(n, float(rng.uniform(0.3, 0.8)), seed=int(rng.integers(1 << 30)), directed=directed)
        if G.number_of_edges() == 0:
            continue
        X = rng.standard_normal((K, d))
        M = rng.standard_normal((d, d))
        if made % 5 == 4:  # Thm 4.1's reduction: r = 2 cut(F) with X = {e_0, e_1}, M = [[0, 1], [1, 0]]
            G, X, M = G.to_undirected(), np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])
        elif directed:
            M = M + M.T
        made += 1
        yield G, X, M


def test_algorithm1_is_a_half_approximation_against_brute_force():
    ratios = []
    for G, X, M in _random_instances(40, seed=7):
        best = brute_force_assignment(G, X, M)
        r = global_reward(G, X, M, algorithm1_allocation(G, X, M))
        assert best.min_value - 1e-9 <= r <= best.value + 1e-9
        assert r >= best.min_value + (best.value - best.min_value) / 2 - 1e-9
        assert global_reward(G, X, M, best.assignment) == pytest.approx(best.value)
        if best.value > best.min_value:
            ratios.append((r - best.min_value) / (best.value - best.min_value))
    assert len(ratios) >= 30


def test_algorithm1_gives_every_node_the_arm_of_a_diagonal_best_pair():
    G = make_graph("circle", 10)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    M = np.diag([2.0, 1.0])  # best pair (e_1, e_1)
    assert algorithm1_allocation(G, X, M).tolist() == [0] * 5


def test_brute_force_max_cut_values():
    # Max-Cut reduction: a joint assignment earns twice the cut (both directions of each cut edge)
    X, M = np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])
    assert brute_force_assignment(nx.cycle_graph(6), X, M).value == pytest.approx(12.0)  # bipartite: all cut
    assert brute_force_assignment(nx.complete_graph(3), X, M).value == pytest.approx(4.0)  # triangle: 2 of 3
    assert brute_force_assignment(nx.complete_graph(3), X, M).min_value == pytest.approx(0.0)


def test_graph_sizes_follow_the_paper():
    for kind, nodes in zip(GRAPH_KINDS, (7, 4, 6, 12), strict=True):
        env = gbb(d=3, graph=kind, m=12)
        assert (env.n_nodes, env.n_edges) == (nodes, 12)
    assert gbb(d=3, graph="complete", m=156).n_nodes == 13


def test_kronecker_identity_edge_design_has_g_value_d_squared():
    X = gbb(d=3, omega=0.1).X
    mu = od.g_optimal(X).weights
    assert od.g_value(od.edge_arms(X), np.outer(mu, mu).ravel()) == pytest.approx(9.0, rel=1e-3)


def test_edge_design_frequencies_converge_to_the_product_design():
    """After R rounds the edge-arm frequencies p_hat (over m R observations) approach mu (x) mu.

    One round's count of an edge arm lies in [0, m], so Var(p_hat_z) <= p_z / R and
    E[TV] <= 1/2 sum_z sqrt(p_z / R) <= K / (2 sqrt(R)). Redrawing one round moves TV by at most 1/R,
    so McDiarmid gives P(TV > E[TV] + eps) <= exp(-2 eps^2 R): eps = 0.01 at R = 10^5 fails w.p. 2e-9.
    The star is the hardest case (every edge shares the centre's draw)."""
    R = 10**5
    rng = np.random.default_rng(3)
    for kind in ("star", "matching"):
        env = gbb(d=3, omega=0.1, graph=kind, m=12)
        mu = od.g_optimal(env.X).weights
        counts = env.edge_counts(draw_assignments(mu, env.n_nodes, R, rng))
        assert counts.sum() == env.n_edges * R
        tv = 0.5 * np.abs(counts / counts.sum() - np.outer(mu, mu).ravel()).sum()
        K = env.n_node_arms
        assert tv <= K / (2 * np.sqrt(R)) + 0.01, (kind, tv)


def _naive_rounds(env, mu, rounds, rng):
    """Per-round, per-edge simulation: each node draws its arm, each directed edge one Gaussian reward."""
    K = env.n_node_arms
    counts, sums = np.zeros(K * K), np.zeros(K * K)
    for _ in range(rounds):
        arms = [rng.choice(K, p=mu) for _ in range(env.n_nodes)]
        for u, v in env.graph.to_directed().edges if not env.graph.is_directed() else env.graph.edges:
            i, j = env.nodes.index(u), env.nodes.index(v)
            k, kk = arms[i], arms[j]
            counts[k * K + kk] += 1
            sums[k * K + kk] += env.X[k] @ env.M @ env.X[kk] + env.sigma * rng.standard_normal()
    return counts, sums


def test_batched_round_simulation_is_exact_in_law():
    """Means and variances of edge-arm counts and reward sums over S = 2000 runs of R = 4 rounds:
    batched (draw_assignments + bincount + one Gaussian per edge arm) vs naive per-observation.
    Each difference is compared with 4.5 standard errors of the difference (the standard error of
    a sample variance from the sample fourth moment): 36 comparisons, false alarm ~ 36 * 7e-6."""
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3)])  # a triangle with a pendant: edges share nodes
    rng = np.random.default_rng(11)
    env = GraphicalBilinearBandit(G, rng.standard_normal((3, 2)), rng.standard_normal((2, 2)), sigma=0.7)
    mu = np.array([0.5, 0.3, 0.2])
    S, R = 2000, 4
    batched = np.empty((S, 2, 9))
    naive = np.empty((S, 2, 9))
    for s in range(S):
        c = env.edge_counts(draw_assignments(mu, env.n_nodes, R, rng))
        batched[s] = c, env.pull(c, rng)
        naive[s] = _naive_rounds(env, mu, R, rng)
    assert np.all(batched[:, 0].sum(axis=1) == R * env.n_edges)

    def moments(x):
        mean, var = x.mean(axis=0), x.var(axis=0, ddof=1)
        m4 = ((x - mean) ** 4).mean(axis=0)
        return mean, var, var / S, np.maximum(m4 - var**2, 0) / S

    ma, va, se_ma, se_va = moments(batched.reshape(S, -1))
    mb, vb, se_mb, se_vb = moments(naive.reshape(S, -1))
    assert np.all(np.abs(ma - mb) <= 4.5 * np.sqrt(se_ma + se_mb) + 1e-12)
    assert np.all(np.abs(va - vb) <= 4.5 * np.sqrt(se_va + se_vb) + 1e-12)
    # sanity of the expectation itself: E[count_z] = R m p_z
    expected = R * env.n_edges * np.outer(mu, mu).ravel()
    assert np.all(np.abs(ma[:9] - expected) <= 4.5 * np.sqrt(se_ma[:9]))


def _correct_runs(omega, kind, m, seeds, d=3):
    env = parse_instance(f"gbb:d={d},omega={omega},graph={kind},m={m}")
    results = [run(RandomizedGAllocation(), env, 0.05, seed=s) for s in seeds]
    for r in results:
        assert r.stopped_by == "stopping_rule"
        assert r.samples == env.n_edges * r.rounds
    return sum(r.correct for r in results), results


@pytest.mark.parametrize("kind", GRAPH_KINDS)
def test_algorithm2_identifies_the_best_edge_arm(kind):
    correct, _ = _correct_runs("pi/2", kind, 12, range(5))
    assert correct == 5
    correct, _ = _correct_runs(0.1, kind, 12, range(2))
    assert correct == 2


@pytest.mark.slow
@pytest.mark.parametrize("omega", [0.1, "pi/2"])
@pytest.mark.parametrize("kind", GRAPH_KINDS)
def test_algorithm2_is_correct_in_95_percent_of_runs(kind, omega):
    correct, _ = _correct_runs(omega, kind, 12, range(100, 120))
    assert correct >= 19


def test_algorithm2_allocation_and_thresholds():
    env = gbb(d=3, omega=0.3, graph="circle", m=8)
    policy = RandomizedGAllocation().start(env, 0.05, np.random.default_rng(0))
    assert policy.rounds == 0 and not policy.stopped(0.05)
    while not policy.stopped(0.05):
        counts = policy.next_batch(10**9)
        policy.observe(counts, env.pull(counts, np.random.default_rng(policy.rounds)))
    assert policy.recommend() == env.best_item == 0
    assert policy.allocation().tolist() == [0] * env.n_nodes  # Alg. 1 on M_hat: every node plays e_1
    assert np.abs(policy.M_hat() - env.M).max() < 1.0
    # the practical and theory thresholds are valid options; one trajectory serves several deltas
    for threshold in ("practical", "theory"):
        res = run(RandomizedGAllocation(threshold=threshold), env, [0.1, 0.01], seed=1)
        assert all(r.correct for r in res) and res[0].rounds <= res[1].rounds


def test_budget_below_one_round_is_respected():
    env = gbb(d=3, omega=0.1, graph="complete", m=12)
    res = run(RandomizedGAllocation(), env, 0.05, seed=0, max_samples=30)
    assert res.stopped_by == "budget" and res.samples == 30 and res.rounds == 2


def test_bad_input():
    X, M = np.eye(2), np.array([[2.0, 0.3], [0.0, 1.0]])
    loop = nx.Graph([(0, 1), (1, 1)])
    with pytest.raises(InvalidInputError, match="self-loops"):
        GraphicalBilinearBandit(loop, X, M)
    empty = nx.empty_graph(3)
    with pytest.raises(InvalidInputError, match="no edges"):
        GraphicalBilinearBandit(empty, X, M)
    with pytest.raises(InvalidInputError, match="2 x 2"):
        GraphicalBilinearBandit(nx.path_graph(3), X, np.eye(3))
    with pytest.raises(InvalidInputError, match="NaN"):
        GraphicalBilinearBandit(nx.path_graph(3), X, np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(InvalidInputError, match="span"):
        GraphicalBilinearBandit(nx.path_graph(3), np.array([[1.0, 0.0], [2.0, 0.0]]), M)
    with pytest.raises(InvalidInputError, match="not unique"):  # symmetric M, best pair off-diagonal
        GraphicalBilinearBandit(nx.path_graph(3), X, np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(InvalidInputError, match="sigma"):
        GraphicalBilinearBandit(nx.path_graph(3), X, M, sigma=0.0)
    with pytest.raises(InvalidInputError, match="multigraph"):
        GraphicalBilinearBandit(nx.MultiGraph([(0, 1)]), X, M)
    with pytest.raises(InstanceTooLargeError):
        brute_force_assignment(nx.path_graph(21), X, M)  # 2^21 > 10^6
    with pytest.raises(InvalidInputError, match="complete graph"):
        parse_instance("gbb:graph=complete,m=10")
    with pytest.raises(InvalidInputError, match="even"):
        gbb(graph="star", m=7)
    with pytest.raises(InvalidInputError, match="graph must be one of"):
        parse_instance("gbb:graph=ring,m=12")
    with pytest.raises(InvalidInputError, match="threshold"):
        RandomizedGAllocation(threshold="soare")
    with pytest.raises(InvalidInputError, match="GraphicalBilinearBandit"):
        RandomizedGAllocation().start(parse_instance("soare"), 0.05, np.random.default_rng(0))
    env = gbb(d=2, graph="star", m=4)
    with pytest.raises(InvalidInputError, match="arm indices"):
        env.reward([0, 5, 1])


def test_best_assignment_is_the_largest_reward_over_every_assignment():
    """The environment's brute force against its own reward r(a) at each of the K^n assignments."""
    env = gbb(d=2, graph="star", m=4)
    every = itertools.product(range(env.n_node_arms), repeat=env.n_nodes)
    rewards = {a: env.reward(list(a)) for a in every}
    best = env.best_assignment()
    assert best.value == pytest.approx(max(rewards.values()), rel=1e-12)
    assert best.min_value == pytest.approx(min(rewards.values()), rel=1e-12)
    assert env.reward(best.assignment) == pytest.approx(best.value, rel=1e-12)
    with pytest.raises(InstanceTooLargeError):
        env.best_assignment(max_assignments=env.n_node_arms ** env.n_nodes - 1)
