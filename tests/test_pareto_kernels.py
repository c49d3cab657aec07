"""The compiled Pareto elimination against the numpy reference: the same separation, field by field."""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest
from test_separation import factor_gaps, instances, random_terms, terms_from_marginals

import optdesign.factored.exact.pareto_kernels as kernels
import optdesign.factored.inference.flat_plan as flat_plan
from optdesign import FactorGraph, InstanceTooLargeError
from optdesign.factored.exact.separation import most_violated
from optdesign.runtime.deadline import time_budget


def both(fg: FactorGraph, h: np.ndarray, gap: np.ndarray, **options: object) -> None:
    """most_violated compiled and in numpy agree on every field (answer, bound and work counters)."""
    plan = fg.plan()
    reference = most_violated(plan, h, gap, compiled=False, **options)
    compiled = most_violated(plan, h, gap, compiled=True, **options)
    for field in dataclasses.fields(reference):
        a, b = getattr(reference, field.name), getattr(compiled, field.name)
        assert np.array_equal(a, b), field.name


def structures() -> list[FactorGraph]:
    rng = np.random.default_rng(3)
    graphs = [*instances(), FactorGraph.line(40, 3, seed=9), FactorGraph.ring(30, [2, 3] * 15, seed=10),
              FactorGraph.grid(3, 4, 3, seed=11)]
    for seed in range(6):  # random trees with unary factors on some agents
        tree = nx.random_labeled_tree(12, seed=seed)
        n_actions = rng.integers(2, 5, size=12).tolist()
        factors = [((int(i), int(j)), rng.random((n_actions[i], n_actions[j]))) for i, j in tree.edges]
        factors += [((i,), rng.random(n_actions[i])) for i in range(12) if rng.random() < 0.3]
        graphs.append(FactorGraph(n_actions, factors))
    return graphs


@pytest.mark.parametrize("fg", structures(), ids=lambda fg: f"N{fg.n_agents}F{fg.n_factors}")
@pytest.mark.parametrize("k", [1, 4, 12])
def test_compiled_equals_reference(fg, k):
    gap = factor_gaps(fg)
    rng = np.random.default_rng(fg.n_agents + k)
    for h in (terms_from_marginals(fg, rng), random_terms(fg, rng)):
        both(fg, h, gap, k=k)


def test_options_and_ties_agree():
    fg = FactorGraph.ring(6, 3, seed=8)
    gap = factor_gaps(fg)
    tied = np.full(fg.abar, 18.0)  # uniform marginals: many joint actions share a ratio
    tied[fg.group_indices(fg.best_action())[0]] = 0.0
    both(fg, tied, gap, k=25)
    both(fg, np.zeros(fg.abar), gap, k=25)
    h = terms_from_marginals(fg, np.random.default_rng(1))
    best = most_violated(fg.plan(), h, gap, compiled=False)
    both(fg, h, gap, k=3, threshold=0.5 * best.max_ratio)
    both(fg, h, gap, k=3, candidates=fg.joint_actions()[:40])
    both(fg, h, gap, k=2, delta_min=0.5 * best.delta_min)


def test_a_long_line_agrees():
    fg = FactorGraph.line(100, 3, seed=12)
    h = terms_from_marginals(fg, np.random.default_rng(12))
    both(fg, h, factor_gaps(fg), k=8)


@pytest.mark.parametrize("compiled", [False, True])
def test_limits_raise_on_both_paths(compiled):
    fg = FactorGraph.ring(6, 4, seed=15)
    gap = factor_gaps(fg)
    h = random_terms(fg, np.random.default_rng(15))
    with pytest.raises(InstanceTooLargeError, match="max_states=3"):
        most_violated(fg.plan(), h, gap, k=5, max_states=3, compiled=compiled)


@pytest.mark.parametrize(("fg", "k", "limit"), [(FactorGraph.star(8, 4, seed=3), 100, 50),
                                              (FactorGraph.ring(8, 4, seed=15), 100, 500),
                                              (FactorGraph.grid(3, 3, 4, seed=2), 100, 80)],
                         ids=["star", "ring", "grid"])
def test_a_merge_past_the_limit_raises_the_same_error_on_both_paths(fg, k, limit):
    """Before it allocates, a merge whose partial pairs exceed max_states is refused, with the count it would form
    (while the frontier points stored so far are within the limit)."""
    gap, h = factor_gaps(fg), random_terms(fg, np.random.default_rng(15))
    messages = []
    for compiled in (False, True):
        with pytest.raises(InstanceTooLargeError, match="partial pairs in one merge") as raised:
            most_violated(fg.plan(), h, gap, k=k, max_states=limit, compiled=compiled)
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


def test_default_path_follows_the_time_budget(monkeypatch):
    fg = FactorGraph.line(8, 3, seed=2)
    gap, h = factor_gaps(fg), terms_from_marginals(fg, np.random.default_rng(2))
    calls = []
    original = kernels.elimination_pass

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(kernels, "elimination_pass", counted)
    most_violated(fg.plan(), h, gap)  # no budget: compiled
    assert calls
    calls.clear()
    monkeypatch.setattr(flat_plan, "COMPILED_MAX_ROWS", 0)
    with time_budget(60.0):  # a budget and a plan above the row limit: the reference, which checks it per step
        most_violated(fg.plan(), h, gap)
    assert not calls


def test_the_group_order_is_lexicographic_and_stable_on_both_paths():
    from optdesign.factored.exact.pareto import _group_order

    rng = np.random.default_rng(4)
    cases = [(np.array([5, 5, 0, 5]), np.array([2e-16, 0.0, 0.0, 1e-16])),  # the float key rounds: the exact sort
             (rng.integers(0, 4, 50), rng.integers(0, 3, 50) * 0.25)]  # many ties: stable
    for group, D in cases:
        expected = np.lexsort((D, group))
        assert np.array_equal(_group_order(group, D), expected)
        assert np.array_equal(kernels._group_order(group, D), expected)


def test_unique_joint_actions_equal_numpys_unique_rows():
    from optdesign import InvalidInputError
    from optdesign.factored import unique_joint_actions

    rng = np.random.default_rng(8)
    for shape in [(300, 100), (7, 3), (1, 5), (0, 4)]:
        actions = rng.integers(0, 3, shape)
        actions = np.concatenate([actions, actions[: shape[0] // 3]])
        rows, first = unique_joint_actions(actions)
        expected_rows, expected_first = np.unique(actions, axis=0, return_index=True)
        assert np.array_equal(rows, expected_rows) and np.array_equal(first, expected_first)
    big = np.array([[300, 2], [2, 70_000], [300, 1]])  # byte order must follow the values, not the little-endian bytes
    assert unique_joint_actions(big)[0].tolist() == [[2, 70_000], [300, 1], [300, 2]]
    for bad in (np.array([[-1, 0]]), np.zeros(3, dtype=int), np.zeros((2, 2))):
        with pytest.raises(InvalidInputError):
            unique_joint_actions(bad)


def test_the_compiled_option_is_a_bool_or_none():
    from optdesign import InvalidInputError
    from optdesign.factored.inference.max_sum import MaxSum

    fg = FactorGraph.line(4, 2, seed=0)
    gap, h = factor_gaps(fg), terms_from_marginals(fg, np.random.default_rng(0))
    for bad in ("yes", 1, 0.5):
        with pytest.raises(InvalidInputError, match="compiled must be"):
            most_violated(fg.plan(), h, gap, compiled=bad)
        with pytest.raises(InvalidInputError, match="compiled must be"):
            MaxSum(fg.plan(), fg.means, compiled=bad)
