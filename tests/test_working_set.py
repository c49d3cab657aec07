"""The working set of constraint generation is bounded: refused before allocating, capped while it grows, and the
bracket stays certified when the cap stops the run (checked against enumeration)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optdesign as od
from optdesign import FactorGraph, InstanceTooLargeError
from optdesign.factored.exact import working_set
from optdesign.factored.exact.enumerated_separation import EnumeratedSeparation
from optdesign.factored.exact.working_set import initial_working_set, working_set_capacity, working_set_fits


def test_an_instance_whose_single_deviations_overflow_is_refused_in_one_line_before_allocating():
    fg = FactorGraph.ring(20_000, 2, seed=0)  # 20,000 rows of 20,000 agents: 4e8 numbers
    assert not working_set_fits(fg)
    for method in ("auto", "generate"):
        with pytest.raises(InstanceTooLargeError, match="mf_characteristic_time") as err:
            od.characteristic_time(fg, method=method)
        assert "\n" not in str(err.value) and "4e+08" in str(err.value)


def test_under_a_time_limit_the_overflowing_instance_returns_the_certified_closed_form_bracket():
    fg = FactorGraph.ring(20_000, 2, seed=0)
    res = od.characteristic_time(fg, time_limit=20)
    assert res.status == "not_converged" and res.extras["stopped"] == "working-set"
    assert res.extras["fallback"] == "closed-form"
    assert 0 < res.lower_bound <= res.value < np.inf
    regret = od.regret_lower_bound(fg, time_limit=20)
    assert regret.extras["stopped"] == "working-set" and 0 < regret.lower_bound <= regret.value < np.inf


def test_the_initial_working_set_keeps_every_single_deviation_within_a_small_capacity(monkeypatch):
    fg = FactorGraph.ring(6, 3, seed=1)
    deviations = sum(k - 1 for k in fg.n_actions)
    monkeypatch.setattr(working_set, "WORKING_SET_ENTRIES", (deviations + 3) * fg.n_agents)
    assert working_set_capacity(fg) == deviations + 3
    W = initial_working_set(fg)
    best = fg.best_action()
    assert W.shape[0] <= working_set_capacity(fg)
    assert sum(int(np.sum(a != best) == 1) for a in W) == deviations
    monkeypatch.setattr(working_set, "WORKING_SET_ENTRIES", (deviations - 1) * fg.n_agents)
    with pytest.raises(InstanceTooLargeError, match="single deviations"):
        initial_working_set(fg)


@pytest.mark.parametrize("fg", [FactorGraph.ring(6, 3, seed=1), FactorGraph.line(5, 3, seed=4)], ids=repr)
def test_a_full_working_set_stops_generation_with_a_bracket_around_the_enumerated_optimum(monkeypatch, fg):
    exact = od.characteristic_time(fg, method="enumerate").value
    capacity = sum(k - 1 for k in fg.n_actions) + 4
    monkeypatch.setattr(working_set, "WORKING_SET_ENTRIES", capacity * fg.n_agents)
    res = od.characteristic_time(fg, method="generate", tol=1e-9)
    assert res.extras["stopped"] == "working-set" and res.status == "not_converged"
    assert res.extras["working_set"] <= capacity
    assert res.lower_bound <= exact * (1 + 1e-6) and res.value >= exact * (1 - 1e-6)


@pytest.mark.parametrize("fg", [FactorGraph.ring(5, 3, seed=1), FactorGraph.line(5, 4, seed=2),
                                FactorGraph.star(5, 3, seed=0)], ids=repr)
def test_the_enumerated_starting_joint_actions_are_those_of_max_sum(monkeypatch, fg):
    enumeration = EnumeratedSeparation.for_plan(fg.plan())
    np.testing.assert_array_equal(enumeration.best_first(fg.means, 40),
                                  [a for _, a in itertools.islice(fg.iter_best(), 40)])
    through = enumeration.best_through(fg.means)  # theta(row j) = max theta(a) over a through entry j
    positions = fg.group_indices(enumeration.actions)
    values = fg.means[positions].sum(axis=1)
    for j in range(fg.abar):
        assert j in fg.group_indices(through[j])[0]
        assert fg.means[fg.group_indices(through[j])[0]].sum() == pytest.approx(values[np.any(positions == j, 1)].max())
    enumerated = (initial_working_set(fg), working_set.best_through_entries(fg))
    monkeypatch.setattr(working_set, "MAX_JOINT_ACTIONS", 0)  # the max-sum path, on a fresh instance
    fresh = FactorGraph(fg.n_actions, list(zip(fg.scopes, fg.tables, strict=True)))
    np.testing.assert_array_equal(enumerated[0], initial_working_set(fresh))
    np.testing.assert_array_equal(enumerated[1], working_set.best_through_entries(fresh))


@pytest.mark.parametrize("coded", [True, False])
def test_seen_joint_actions_returns_each_new_joint_action_once_in_lexicographic_order(coded):
    rng = np.random.default_rng(3)
    seen = working_set.SeenJointActions([3, 2, 4])
    seen.coded = coded  # the digest path serves structures whose codes overflow int64
    known: set[tuple[int, ...]] = set()
    for _ in range(6):
        batch = rng.integers(0, [3, 2, 4], size=(rng.integers(0, 12), 3))
        fresh = seen.add(batch)
        expected = sorted({tuple(int(x) for x in a) for a in batch} - known)
        np.testing.assert_array_equal(fresh, np.asarray(expected, dtype=np.int64).reshape(-1, 3))
        known.update(expected)
    assert working_set.SeenJointActions([2] * 70).coded is False  # 2^70 joint actions: digests
