"""Compiled max-sum against the numpy pass: the same messages, regrets, choices and joint actions, bit for bit."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import optdesign.factored.inference.flat_plan as flat_plan
from optdesign import FactorGraph
from optdesign.factored.inference.max_sum import MaxSum
from optdesign.runtime.deadline import time_budget


def graphs() -> list[FactorGraph]:
    rng = np.random.default_rng(5)
    out = [FactorGraph.line(30, 3, seed=1), FactorGraph.ring(9, [2, 3, 4] * 3, seed=2),
           FactorGraph.star(7, 3, seed=3), FactorGraph.star(11, 2, seed=3),  # a step of 10 inputs: numpy's sums
           FactorGraph.grid(3, 3, 3, seed=4),
           FactorGraph([2, 3, 2, 3], [((0, 1, 2), rng.random((2, 3, 2))), ((2, 3), rng.random((2, 3))),
                                      ((3,), rng.random(3))])]
    tree = nx.random_labeled_tree(10, seed=6)
    out.append(FactorGraph.from_networkx(tree, 3, seed=7))
    return out


@pytest.mark.parametrize("fg", graphs(), ids=lambda fg: f"N{fg.n_agents}F{fg.n_factors}")
@pytest.mark.parametrize("ties", [False, True])
def test_compiled_pass_equals_numpy(fg, ties):
    values = fg.means.copy()
    if ties:  # rounded tables: many rows tie, so the choices test the first-maximiser rule
        values = np.round(values * 2) / 2
    plan = fg.plan()
    a, b = MaxSum(plan, values, compiled=False), MaxSum(plan, values, compiled=True)
    assert a.value == b.value
    assert np.array_equal(a.best_action, b.best_action)
    assert np.array_equal(a._flat, b._flat)
    for x, y in zip(a.choices, b.choices, strict=True):
        assert np.array_equal(x, y)
    for x, y in zip(a.regrets, b.regrets, strict=True):
        assert np.array_equal(x, y)
    first = a.runner_up()
    second = b.runner_up()
    assert (first is None) == (second is None)
    if first is not None:
        assert first[0] == second[0] and np.array_equal(first[1], second[1])
    for (g1, x1), (g2, x2) in zip(itertools.islice(a.iter_best(), 30), itertools.islice(b.iter_best(), 30),
                                  strict=True):
        assert g1 == g2 and np.array_equal(x1, x2)


def test_without_regrets_and_the_default_path(monkeypatch):
    fg = FactorGraph.line(12, 3, seed=8)
    a = MaxSum(fg.plan(), fg.means, keep_regrets=False, compiled=True)
    assert a.regrets is None and np.array_equal(a.best_action, fg.best_action())
    assert flat_plan.compiled_by_default(fg.plan())
    monkeypatch.setattr(flat_plan, "COMPILED_MAX_ROWS", 0)
    with time_budget(60.0):
        assert not flat_plan.compiled_by_default(fg.plan())
    assert flat_plan.compiled_by_default(fg.plan())  # outside the budget again
    monkeypatch.setattr(flat_plan, "COMPILED_MAX_ENTRIES", 0)
    assert not flat_plan.compiled_by_default(fg.plan())
