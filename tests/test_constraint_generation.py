"""Exact T* by constraint generation against enumeration: brackets contain the enumerated optimum, values agree."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import optdesign as od
from optdesign import FactorGraph, InvalidInputError
from optdesign.factored.exact.constraint_generation import best_through_entries, initial_working_set


def instances():
    return [
        FactorGraph.line(5, 3, seed=1),
        FactorGraph.ring(4, 6, seed=0),
        FactorGraph.star(5, [2, 3, 4, 3, 2], seed=2),
        FactorGraph.grid(2, 3, 3, seed=3),
        FactorGraph.from_networkx(nx.random_labeled_tree(6, seed=4), [3, 2, 4, 2, 3, 2], seed=5),
    ]


@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_generated_bracket_contains_the_enumerated_optimum(fg):
    ref = od.characteristic_time(fg)  # one constraint per joint action
    res = od.characteristic_time(fg, method="generate", tol=1e-4)
    assert res.status == "optimal" and res.gap <= 1e-4
    assert res.lower_bound <= ref.value * (1 + 1e-6)  # a certified lower bound (the reference is solver-accurate)
    assert res.value >= ref.value * (1 - 1e-6)  # attained by the returned marginals
    assert res.value == pytest.approx(ref.value, rel=1e-4)
    assert res.n_constraints < fg.n_joint_actions
    # the enumerated program is certified the same way (multipliers of its rows, weak duality)
    assert ref.lower_bound <= min(ref.value, res.value) * (1 + 1e-9) and ref.gap <= 1e-3
    assert res.lower_bound <= ref.value * (1 + 1e-9)


def test_value_is_the_objective_at_the_returned_marginals_over_all_joint_actions():
    fg = FactorGraph.ring(5, 3, seed=7)
    res = od.characteristic_time(fg, method="generate", tol=1e-5)
    wbar = np.concatenate([m.ravel() for m in res.marginals])
    A = fg.joint_actions()
    others = np.any(A != fg.best_action(), axis=1)
    H = fg.deviation_matrix(A[others], with_best=True)
    brute = float(np.max(H @ (1 / wbar) / fg.gap(A[others]) ** 2))
    assert res.value == pytest.approx(brute, rel=1e-9)
    # the marginals are those of a distribution: each factor's table sums to one and agents agree
    for table in res.marginals:
        assert table.sum() == pytest.approx(1.0, abs=1e-9)


def test_initial_working_set_holds_single_deviations_and_excludes_the_best_action():
    fg = FactorGraph.line(4, 3, seed=2)
    W = initial_working_set(fg, n_best=5)
    best = fg.best_action()
    assert not np.any(np.all(W == best, axis=1))
    deviations = {tuple(a) for a in W if np.sum(a != best) == 1}
    assert len(deviations) == sum(k - 1 for k in fg.n_actions)


def test_bad_requests():
    fg = FactorGraph.line(3, 2, seed=0)
    with pytest.raises(InvalidInputError, match="method"):
        od.characteristic_time(fg, method="bogus")
    for tol in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidInputError, match="tol"):
            od.characteristic_time(fg, method="generate", tol=tol)
    from optdesign.factored.exact.generated import characteristic_time_generated

    for bad in ({"max_iterations": 0}, {"time_limit": -1.0}, {"add_per_iteration": 0}):
        with pytest.raises(InvalidInputError):
            characteristic_time_generated(fg, **bad)
    # a tied best joint action has no characteristic time: a named error, never a value
    tied = FactorGraph([2, 2], [((0, 1), np.array([[1.0, 0.0], [0.0, 1.0]]))])
    with pytest.raises(InvalidInputError, match=r"tie|unique"):
        characteristic_time_generated(tied)
    from optdesign.factored.regret.lower_bound import regret_lower_bound

    with pytest.raises(InvalidInputError, match=r"tie|unique"):
        regret_lower_bound(tied, strategy="generate")


def test_auto_generates_beyond_the_enumeration_limit_and_stays_below_mean_field():
    fg = FactorGraph.line(12, 3, seed=0)  # 531,441 joint actions: enumeration is refused
    res = od.characteristic_time(fg)
    assert res.extras["formulation"] == "constraint-generation"
    assert res.status == "optimal" and res.gap <= 1e-4 and res.lower_bound <= res.value
    assert res.value <= od.mf_characteristic_time(fg).value * (1 + 1e-6)  # T* <= T^MF
    small = FactorGraph.line(4, 3, seed=0)
    assert od.characteristic_time(small).extras["formulation"] == "junction-tree"


def test_warm_start_from_a_working_set_gives_the_same_value():
    fg = FactorGraph.ring(5, 3, seed=2)
    cold = od.characteristic_time(fg, method="generate", tol=1e-6)
    from optdesign.factored.exact.generated import characteristic_time_generated

    warm = characteristic_time_generated(fg, tol=1e-6, initial=cold.working_set)
    assert warm.value == pytest.approx(cold.value, rel=2e-6)
    assert warm.extras["iterations"] <= cold.extras["iterations"]
    with pytest.raises(InvalidInputError, match="initial"):
        characteristic_time_generated(fg, initial=np.full((2, 5), 7))


def test_public_warm_start_certifies_the_value_of_a_cold_solve():
    fg = FactorGraph.ring(5, 3, seed=2)
    cold = od.characteristic_time(fg, method="generate", tol=1e-6)
    assert cold.structure == (fg.n_actions, fg.scopes) and "structure" not in cold.to_dict()
    warm = od.characteristic_time(fg, tol=1e-6, warm_start=cold)  # "auto" generates from a warm start
    assert warm.status == "optimal" and warm.gap <= 1e-6
    assert warm.value == pytest.approx(cold.value, rel=2e-6)
    assert warm.extras["iterations"] <= cold.extras["iterations"]
    # the same structure with other means (a bandit's next plug-in estimate): still the cold value
    moved = FactorGraph(fg.n_actions, [(s, t * 1.1 + 0.05) for s, t in zip(fg.scopes, fg.tables, strict=True)])
    warm_moved = od.characteristic_time(moved, method="generate", tol=1e-6, warm_start=cold)
    cold_moved = od.characteristic_time(moved, method="generate", tol=1e-6)
    assert warm_moved.value == pytest.approx(cold_moved.value, rel=2e-6)
    assert warm_moved.lower_bound <= cold_moved.value * (1 + 1e-9)


def test_warm_start_from_another_structure_or_not_from_generation_is_refused():
    fg = FactorGraph.ring(5, 3, seed=2)
    res = od.characteristic_time(fg, method="generate", tol=1e-3)
    other_scopes = FactorGraph(fg.n_actions, [((0, 2), fg.tables[0]), *zip(fg.scopes[1:], fg.tables[1:], strict=True)])
    for other in (FactorGraph.ring(6, 3, seed=2), FactorGraph.ring(5, 2, seed=2), FactorGraph.line(5, 3, seed=2),
                  other_scopes):
        with pytest.raises(InvalidInputError, match="another structure"):
            od.characteristic_time(other, warm_start=res)
    enumerated = od.characteristic_time(fg, method="enumerate")
    for bad in (enumerated, od.mf_characteristic_time(fg), res.working_set, "warm"):
        with pytest.raises(InvalidInputError, match="constraint generation"):
            od.characteristic_time(fg, warm_start=bad)
    with pytest.raises(InvalidInputError, match="warm_start"):
        od.characteristic_time(fg, method="enumerate", warm_start=res)


def test_time_limit_returns_the_bracket_reached():
    """1 ms is less than one master solve: the bracket reached is at most one iteration's, or the closed form's."""
    fg = FactorGraph.ring(6, 4, seed=3)
    res = od.characteristic_time(fg, method="generate", tol=1e-9, time_limit=1e-3)
    assert res.status == "not_converged" and res.extras.get("iterations", 0) <= 1
    assert 0 < res.lower_bound <= res.value and res.gap == pytest.approx(res.value / res.lower_bound - 1)
    exact = od.characteristic_time(fg, method="generate", tol=1e-5)
    assert res.lower_bound <= exact.value * (1 + 1e-5) and res.value >= exact.lower_bound


@pytest.mark.parametrize("fg", [FactorGraph.ring(4, 3, seed=0), FactorGraph.star(4, [2, 3, 2, 4], seed=1)], ids=repr)
def test_joint_actions_sampled_from_the_clique_tables_have_the_returned_marginals(fg):
    from optdesign.factored.inference.marginals import sample_joint_actions

    res = od.characteristic_time(fg, method="generate")
    n = 400_000
    A = sample_joint_actions(fg.plan(), res.clique_weights, n, np.random.default_rng(0))
    wbar = np.concatenate([m.ravel() for m in res.marginals])
    empirical = np.bincount(fg.group_indices(A).ravel(), minlength=fg.abar) / n
    # every group frequency within 5 binomial standard errors of its marginal
    assert np.all(np.abs(empirical - wbar) <= 5 * np.sqrt(wbar * (1 - wbar) / n) + 1e-12)


def test_sampling_rejects_bad_clique_tables():
    from optdesign.factored.inference.marginals import sample_joint_actions

    fg = FactorGraph.ring(4, 3, seed=0)
    plan, rng = fg.plan(), np.random.default_rng(0)
    good = od.characteristic_time(fg, method="generate").clique_weights
    for weights, word in ((good[:-1], "length"), (np.full(plan.n_rows, np.nan), "NaN"), (-good, "nonnegative")):
        with pytest.raises(InvalidInputError, match=word):
            sample_joint_actions(plan, weights, 10, rng)
    for n in (-1, 2.5, True):
        with pytest.raises(InvalidInputError, match="n must"):
            sample_joint_actions(plan, good, n, rng)
    with pytest.raises(InvalidInputError, match="Generator"):
        sample_joint_actions(plan, good, 10, 0)
    assert sample_joint_actions(plan, good, 0, rng).shape == (0, 4)


@pytest.mark.parametrize("tol", [0, -1.0, float("nan"), float("inf"), "1e-4", True, None])
def test_every_tolerance_is_checked_the_same_way(tol):
    fg = FactorGraph.line(3, 2, seed=0)
    for call in (lambda: od.characteristic_time(fg, tol=tol), lambda: od.mf_characteristic_time(fg, tol=tol),
                 lambda: od.g_optimal(np.eye(2), tol=tol)):
        with pytest.raises(InvalidInputError, match="tol must be a positive number"):
            call()


@pytest.mark.parametrize("fg", [FactorGraph.ring(5, 3, seed=1), FactorGraph.star(5, [2, 3, 4, 3, 2], seed=2),
                                FactorGraph.grid(2, 3, 3, seed=3)], ids=repr)
def test_best_through_entries_is_the_best_joint_action_through_every_entry(fg):
    """Against enumeration: row i passes through entry i and no joint action through entry i is better."""
    A = fg.joint_actions()
    idx = fg.group_indices(A)
    value = fg.means[idx].sum(axis=1)
    through = best_through_entries(fg)
    assert through.shape == (fg.abar, fg.n_agents)
    got = fg.group_indices(through)
    for i in range(fg.abar):
        assert i in got[i]
        assert fg.means[got[i]].sum() == pytest.approx(value[np.any(idx == i, axis=1)].max(), abs=1e-12)


@pytest.mark.parametrize(("share", "shrink"), [(0.0, 2), (0.5, 10)])  # the T* and the regret masters' choices
@pytest.mark.parametrize("budget", [1, 40, 400, 10**6])
def test_violated_joint_actions_past_the_state_budget_are_the_most_violated(monkeypatch, share, shrink, budget):
    """Against enumeration, whatever top-k budget and share of the violation range: the exact maximum, and the
    returned joint actions are violated and carry the largest ratios H(a) / Delta(a)^2 over all a != a*."""
    from optdesign.factored.exact import cutting_plane_master
    from optdesign.factored.exact.generated import CharTimeMaster

    monkeypatch.setattr(cutting_plane_master, "TOP_K_STATES", budget)
    fg = FactorGraph.ring(5, 3, seed=7)
    master = CharTimeMaster(fg, None)
    master.top_share, master.top_shrink = share, shrink
    wbar = np.concatenate([np.full(n, 1.0 / n) for n in fg.table_sizes])
    h = 1.0 / wbar + 1.0 / wbar[master.star][master.factor_of]
    h[master.star] = 0.0
    A = fg.joint_actions()
    A = A[np.any(A != fg.best_action(), axis=1)]
    ratios = h[fg.group_indices(A)].sum(axis=1) / fg.gap(A) ** 2
    threshold = float(np.quantile(ratios, 0.9))
    sep = master.violated(h, 30, threshold)
    assert sep.exact and sep.max_ratio == pytest.approx(ratios.max(), rel=1e-10)
    n = sep.actions.shape[0]
    assert 1 <= n <= 30 and np.all(sep.ratios >= threshold * (1 - 1e-12))
    got = h[fg.group_indices(sep.actions)].sum(axis=1) / fg.gap(sep.actions) ** 2
    np.testing.assert_allclose(np.sort(got)[::-1], np.sort(ratios)[::-1][:n], rtol=1e-10)
