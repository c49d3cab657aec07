"""FactorGraph: validation, generators, JSON, and max-sum inference against brute-force enumeration."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import optdesign as od
from optdesign import FactorGraph, InstanceTooLargeError, InvalidInputError


def small_instances():
    return [
        FactorGraph.line(5, 3, seed=1),
        FactorGraph.ring(5, 3, seed=2),
        FactorGraph.star(5, [2, 3, 4, 2, 3], seed=3),
        FactorGraph.grid(2, 3, [2, 3, 2, 3, 2, 2], seed=4),
        FactorGraph.from_networkx(nx.petersen_graph(), 2, seed=5),
        # a factor over three agents next to pairwise and unary ones
        FactorGraph([2, 3, 2, 2], [((0, 1, 2), np.random.default_rng(6).random((2, 3, 2))),
                                   ((2, 3), np.random.default_rng(7).random((2, 2))),
                                   ((3,), np.random.default_rng(8).random(2))]),
    ]


def brute_force(fg: FactorGraph):
    A = fg.joint_actions()
    values = np.array([sum(t[tuple(a[list(s)])] for s, t in zip(fg.scopes, fg.tables, strict=True)) for a in A])
    return A, values


@pytest.mark.parametrize("fg", small_instances(), ids=repr)
def test_best_action_gaps_and_m_best_equal_brute_force(fg):
    A, values = brute_force(fg)
    order = np.argsort(-values, kind="stable")
    np.testing.assert_array_equal(fg.best_action(), A[order[0]])
    assert fg.best_value == pytest.approx(values.max(), rel=1e-12)
    gaps_sorted = values.max() - values[order]
    assert fg.gap_min() == pytest.approx(gaps_sorted[1], rel=1e-10)
    ranked = fg.m_best(10)
    np.testing.assert_allclose([g for _, g in ranked], gaps_sorted[:10], rtol=1e-10, atol=1e-12)
    for action, gap in ranked:  # each listed action really has the gap it reports
        assert fg.gap(action) == pytest.approx(gap, abs=1e-10)
    np.testing.assert_allclose(fg.gap(A), values.max() - values, atol=1e-12)


@pytest.mark.parametrize("fg", small_instances()[:4], ids=repr)
def test_full_enumeration_lists_every_joint_action_once_in_order(fg):
    A, values = brute_force(fg)
    listed = list(fg.iter_best())
    assert len(listed) == A.shape[0]
    assert len({tuple(a) for _, a in listed}) == A.shape[0]
    gaps = np.array([g for g, _ in listed])
    assert np.all(np.diff(gaps) >= -1e-12)
    np.testing.assert_allclose(gaps, np.sort(values.max() - values), atol=1e-12)


def test_large_line_inference_is_exact_on_planted_instance():
    fg = FactorGraph.line(2000, 3, seed=0, means="planted", gap=0.05)
    np.testing.assert_array_equal(fg.best_action(), fg.metadata["planted_best"])
    assert fg.gap_min() == pytest.approx(0.05, rel=1e-8)
    assert fg.plan().width == 1
    ranked = fg.m_best(5)
    assert [g for _, g in ranked] == sorted(g for _, g in ranked)


def test_planted_model_on_grid_and_ring():
    for fg in (FactorGraph.grid(2, 4, 3, seed=1, means="planted", gap=0.2),
               FactorGraph.ring(7, 2, seed=2, means="planted", gap=1.0)):
        _, values = brute_force(fg)
        assert np.sort(values)[-1] - np.sort(values)[-2] == pytest.approx(fg.metadata["gap"], rel=1e-9)
        np.testing.assert_array_equal(fg.best_action(), fg.metadata["planted_best"])


def test_json_round_trip(tmp_path):
    fg = FactorGraph.star(4, [2, 3, 2, 4], seed=9)
    path = tmp_path / "star.json"
    fg.save(path)
    back = FactorGraph.load(path)
    assert back.n_actions == fg.n_actions and back.scopes == fg.scopes
    for a, b in zip(back.tables, fg.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    assert back.metadata["generator"] == "star"
    doc = fg.to_dict()
    assert doc["format"] == "optdesign.factorgraph" and doc["version"] == 1


def test_generators_shapes():
    assert FactorGraph.line(4, 2).scopes == ((0, 1), (1, 2), (2, 3))
    assert FactorGraph.ring(4, 2).scopes[-1] == (3, 0)
    assert FactorGraph.star(4, 2).scopes == ((0, 1), (0, 2), (0, 3))
    g = FactorGraph.grid(2, 3, 2)
    assert g.n_agents == 6 and g.n_factors == 7
    single = FactorGraph.single_agent([0.1, 0.5, 0.2])
    assert single.n_agents == 1 and single.best_action().tolist() == [1]
    assert single.gap_min() == pytest.approx(0.3)
    assert FactorGraph.line(1000, 3).n_joint_actions == 3**1000  # exact integer


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: FactorGraph([2, 2], [((0, 1), [[0.0, np.nan], [1.0, 2.0]])]), "NaN"),
        (lambda: FactorGraph([2, 2], [((0, 2), np.zeros((2, 2)))]), "outside"),
        (lambda: FactorGraph([2, 2], [((0, 0), np.zeros((2, 2)))]), "repeats"),
        (lambda: FactorGraph([2, 3], [((0, 1), np.zeros((2, 2)))]), "shape"),
        (lambda: FactorGraph([2, 2, 2], [((0, 1), np.zeros((2, 2)))]), "no factor"),
        (lambda: FactorGraph([2, 0], [((0, 1), np.zeros((2, 0)))]), "positive integer"),
        (lambda: FactorGraph([2, 2], []), "empty"),
        (lambda: FactorGraph.from_dict({"format": "other"}), "format"),
        (lambda: FactorGraph.line(4, 2, means="gaussian"), "means"),
        (lambda: FactorGraph.line(4, 2, means="planted", gap=-1.0), "gap"),
        (lambda: FactorGraph.line(4, [2, 2]), "length"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(InvalidInputError, match=match):
        make()


def test_ties_for_the_best_joint_action_are_rejected():
    fg = FactorGraph([2, 2], [((0, 1), [[1.0, 0.0], [0.0, 1.0]])])
    with pytest.raises(InvalidInputError, match="not unique"):
        fg.best_action()
    with pytest.raises(InvalidInputError, match="not unique"):
        od.mf_characteristic_time(fg)


def test_bad_joint_actions_and_m():
    fg = FactorGraph.line(3, 2, seed=0)
    with pytest.raises(InvalidInputError):
        fg.value([0, 1])
    with pytest.raises(InvalidInputError):
        fg.value([0, 1, 2])
    with pytest.raises(InvalidInputError):
        fg.m_best(0)
    with pytest.raises(InstanceTooLargeError):
        FactorGraph.line(30, 3).joint_actions()


def test_elimination_orders_from_networkx_heuristics_are_valid():
    fg = FactorGraph.grid(4, 5, 2, seed=0)
    for order in ("min-fill", "min-degree", list(range(20))):
        plan = fg.plan(order)
        assert sorted(plan.order) == list(range(20))
        assert plan.width >= 4 or order != list(range(20))
    assert fg.plan("min-fill").width <= 5
    with pytest.raises(InvalidInputError):
        fg.plan("alphabetical")
    with pytest.raises(InvalidInputError):
        fg.plan([0, 1, 2])


def test_too_wide_an_elimination_is_refused_before_allocating():
    """A 10 x 10 grid with K = 10 has width 10: its plan would need about 4e9 index entries (32 GiB)."""
    from optdesign import InstanceTooLargeError

    fg = FactorGraph.grid(10, 10, 10, seed=0)
    with pytest.raises(InstanceTooLargeError, match="too wide"):
        fg.gap_min()


def test_min_degree_order_is_a_permutation_with_the_known_widths():
    from optdesign.factored.inference.elimination import EliminationPlan, min_degree_order

    cases = [(nx.random_labeled_tree(40, seed=1), 1), (nx.cycle_graph(50), 2), (nx.complete_graph(6), 5),
             (nx.path_graph(30), 1)]
    for graph, width in cases:
        order = min_degree_order(graph)
        assert sorted(order) == list(graph.nodes)
        plan = EliminationPlan([2] * graph.number_of_nodes(), [tuple(e) for e in graph.edges], order=order)
        assert plan.width == width
    # large graphs: linear time, not networkx's quadratic min-degree decomposition
    ring = FactorGraph.ring(50_000, 2, seed=0)
    assert ring.plan("min-degree").width == 2


def test_generators_refuse_mean_tables_too_large_before_drawing():
    from optdesign.errors import InstanceTooLargeError

    with pytest.raises(InstanceTooLargeError, match="A-bar"):
        FactorGraph.line(100_000, 50, seed=0)
