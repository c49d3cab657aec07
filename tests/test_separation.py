"""Pareto-elimination separation oracle (max of H / Delta^2) against brute-force enumeration."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import optdesign.factored.exact.separation as separation
from optdesign import FactorGraph, InstanceTooLargeError, InvalidInputError
from optdesign.factored import characteristic_time
from optdesign.factored.exact.separation import most_violated


def instances() -> list[FactorGraph]:
    rng = np.random.default_rng(20)
    return [
        FactorGraph.line(6, 4, seed=1),
        FactorGraph.ring(7, 3, seed=2),
        FactorGraph.ring(6, [2, 3, 4, 2, 3, 4], seed=3),
        FactorGraph.star(6, [4, 2, 3, 4, 2, 3], seed=4),
        FactorGraph.grid(2, 3, 4, seed=5),
        FactorGraph.from_networkx(nx.random_labeled_tree(9, seed=6), 3, seed=7),
        # three-agent scopes next to pairwise and unary factors
        FactorGraph([2, 3, 2, 3, 4], [((0, 1, 2), rng.random((2, 3, 2))), ((2, 3, 4), rng.random((2, 3, 4))),
                                      ((4, 0), rng.random((4, 2))), ((1,), rng.random(3))]),
    ]


def factor_gaps(fg: FactorGraph) -> np.ndarray:
    """gap[e, b] = theta_e(a*_e) - theta_e(b), flat like fg.means."""
    star = fg.group_indices(fg.best_action())[0]
    factor = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    return fg.means[star[factor]] - fg.means


def terms_from_marginals(fg: FactorGraph, rng: np.random.Generator) -> np.ndarray:
    """h = 1{b != a*_e} (1 / w_{e,a*_e} + 1 / w_{e,b}) for random positive factor marginals w."""
    w = np.concatenate([rng.dirichlet(np.ones(t.size)) for t in fg.tables])
    star = fg.group_indices(fg.best_action())[0]
    factor = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    h = 1.0 / w + 1.0 / w[star[factor]]
    h[star] = 0.0
    return h


def random_terms(fg: FactorGraph, rng: np.random.Generator) -> np.ndarray:
    h = rng.random(fg.abar) * (rng.random(fg.abar) < 0.7)
    h[fg.group_indices(fg.best_action())[0]] = 0.0
    return h


def enumerated_ratios(fg: FactorGraph, h: np.ndarray, gap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every joint action a != a* with its ratio H(a) / Delta(a)^2, by enumeration."""
    A = fg.joint_actions()
    idx = fg.group_indices(A)
    others = np.any(A != fg.best_action(), axis=1)
    return A[others], h[idx[others]].sum(axis=1) / gap[idx[others]].sum(axis=1) ** 2


def check_against(fg, h, gap, result, *, k: int, threshold: float = 0.0):
    A, R = enumerated_ratios(fg, h, gap)
    top = np.sort(R)[::-1]
    top = top[top >= threshold][:k]
    np.testing.assert_allclose(result.ratios, top, rtol=1e-12, atol=0)
    assert result.actions.shape == (top.size, fg.n_agents)
    assert len({tuple(a) for a in result.actions}) == top.size
    lookup = {tuple(a): r for a, r in zip(A, R, strict=True)}  # a* is not a key
    np.testing.assert_allclose([lookup[tuple(a)] for a in result.actions], result.ratios, rtol=1e-12)
    return R


@pytest.mark.parametrize("kind", ["marginals", "random"])
@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_max_ratio_and_top_k_equal_brute_force(fg, kind):
    rng = np.random.default_rng([fg.abar, fg.n_agents, kind == "random"])
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, rng) if kind == "marginals" else random_terms(fg, rng)
    plan = fg.plan()
    for k in (1, 7):
        result = most_violated(plan, h, gap, delta_min=fg.gap_min(), k=k)
        R = check_against(fg, h, gap, result, k=k)
        assert result.exact
        assert result.max_ratio == pytest.approx(R.max(), rel=1e-12)
        assert result.upper_bound == pytest.approx(R.max(), rel=1e-12)
        np.testing.assert_array_equal(result.best_action, fg.best_action())
        assert result.delta_min == pytest.approx(fg.gap_min(), rel=1e-12)


def test_instances_have_negative_factor_gaps():
    # a* is only jointly optimal: some factors prefer another group action
    negative = [fg for fg in instances() if np.any(factor_gaps(fg) < 0)]
    assert len(negative) >= 3


def test_exact_without_heuristic_thresholds(monkeypatch):
    """With no evaluated candidates tau = 0: dominance alone must give the exact top-k."""
    monkeypatch.setattr(separation, "_linearise", lambda pool, k: None)
    monkeypatch.setattr(separation, "_single_deviations", lambda plan, star: np.zeros((0, plan.n_agents), int))
    rng = np.random.default_rng(3)
    for fg in instances():
        gap = factor_gaps(fg)
        h = terms_from_marginals(fg, rng)
        for k in (1, 4):
            result = most_violated(fg.plan(), h, gap, k=k)
            check_against(fg, h, gap, result, k=k)
            assert result.exact
    # H = 0 on every action: a* ties with the others' partial sums but must not hide them
    for fg in (FactorGraph.single_agent([0.2, 0.7, 0.4]), FactorGraph.ring(4, 2, seed=17)):
        h, gap = np.zeros(fg.abar), factor_gaps(fg)
        result = most_violated(fg.plan(), h, gap, k=fg.n_joint_actions - 1)
        check_against(fg, h, gap, result, k=fg.n_joint_actions - 1)


def test_heavy_ties_keep_distinct_actions():
    # uniform marginals: H counts the deviating factors, so many joint actions share a ratio
    fg = FactorGraph.ring(6, 3, seed=8)
    gap = factor_gaps(fg)
    h = np.full(fg.abar, 2.0 * 9)
    h[fg.group_indices(fg.best_action())[0]] = 0.0
    h_zero = np.zeros(fg.abar)
    for terms in (h, h_zero):
        result = most_violated(fg.plan(), terms, gap, k=25)
        check_against(fg, terms, gap, result, k=25)


def test_exact_at_the_optimal_allocation_with_many_near_ties():
    # at the T* allocation many constraints are active: the top ratios agree to solver accuracy
    fg = FactorGraph.grid(2, 3, 4, seed=18)
    marginals = np.concatenate([m.ravel() for m in characteristic_time(fg).marginals])
    star = fg.group_indices(fg.best_action())[0]
    factor = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    h = 1.0 / marginals + 1.0 / marginals[star[factor]]
    h[star] = 0.0
    gap = factor_gaps(fg)
    result = most_violated(fg.plan(), h, gap, k=30)
    R = check_against(fg, h, gap, result, k=30)
    assert np.sort(R)[-10] > 0.99 * R.max()


def test_threshold_filters_and_bounds():
    fg = FactorGraph.grid(2, 3, 3, seed=9)
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, np.random.default_rng(9))
    _, R = enumerated_ratios(fg, h, gap)
    for q in (0.5, 0.99, 0.999):
        threshold = float(np.quantile(R, q))
        result = most_violated(fg.plan(), h, gap, k=10, threshold=threshold)
        check_against(fg, h, gap, result, k=10, threshold=threshold)
        assert np.all(result.ratios >= threshold)
        assert result.exact and result.max_ratio == pytest.approx(R.max(), rel=1e-12)
    above = 2.0 * R.max()
    result = most_violated(fg.plan(), h, gap, k=3, threshold=above)
    assert result.actions.shape == (0, fg.n_agents) and result.ratios.size == 0
    assert result.max_ratio <= R.max() * (1 + 1e-12)
    assert R.max() <= result.upper_bound <= above


def test_candidates_do_not_change_the_answer():
    fg = FactorGraph.ring(7, 3, seed=10)
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, np.random.default_rng(10))
    A, R = enumerated_ratios(fg, h, gap)
    plain = most_violated(fg.plan(), h, gap, k=5)
    rng = np.random.default_rng(11)
    for cands in (A[rng.choice(A.shape[0], 50, replace=False)],
                  A[np.argsort(-R)[:5]],
                  np.vstack([fg.best_action(), A[np.argsort(R)[:3]]])):  # a* and the worst actions
        with_cands = most_violated(fg.plan(), h, gap, k=5, candidates=cands)
        np.testing.assert_allclose(with_cands.ratios, plain.ratios, rtol=1e-12)
        assert with_cands.max_ratio == pytest.approx(plain.max_ratio, rel=1e-12)
    check_against(fg, h, gap, plain, k=5)


def test_without_the_seeding_single_deviations_the_answer_is_the_same(monkeypatch):
    """Above SEED_ENTRIES the single deviations are not listed (a ring of 20,000 agents would list 4e8 numbers);
    they only seed the pruning, so the top 5 stay the enumerated ones."""
    fg = FactorGraph.ring(7, 3, seed=12)
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, np.random.default_rng(12))
    monkeypatch.setattr(separation, "SEED_ENTRIES", 0)
    assert separation._single_deviations(fg.plan(), fg.best_action()).shape == (0, fg.n_agents)
    check_against(fg, h, gap, most_violated(fg.plan(), h, gap, k=5), k=5)


def test_most_violated_action_far_down_the_gap_order():
    # all of h on one costly group action: the maximiser is the cheapest action using it
    fg = FactorGraph.ring(6, 4, seed=12)
    gap = factor_gaps(fg)
    near = {tuple(a) for a, _ in fg.m_best(21)}  # a* and the 20 smallest gaps
    e = 2
    lo, hi = fg.plan().factor_offsets[e], fg.plan().factor_offsets[e + 1]
    target = lo + int(np.argmax(gap[lo:hi]))
    h = np.zeros(fg.abar)
    h[target] = 1.0
    result = most_violated(fg.plan(), h, gap, k=3)
    check_against(fg, h, gap, result, k=3)
    assert tuple(result.actions[0]) not in near
    A, _ = enumerated_ratios(fg, h, gap)
    rank = int(np.sum(fg.gap(A) < fg.gap(result.actions[0])))
    assert rank > 20


def test_disconnected_graph_and_single_agent():
    rng = np.random.default_rng(13)
    fg = FactorGraph([3, 2, 3, 2, 2], [((0, 1), rng.random((3, 2))), ((2, 3), rng.random((3, 2))),
                                       ((3, 4), rng.random((2, 2)))])
    assert len(fg.plan().roots) == 2
    gap = factor_gaps(fg)
    h = random_terms(fg, rng)
    for k in (1, 6):
        check_against(fg, h, gap, most_violated(fg.plan(), h, gap, k=k), k=k)
    single = FactorGraph.single_agent([0.3, 0.9, 0.5, 0.85])
    gap = factor_gaps(single)
    h = np.array([1.0, 0.0, 2.0, 0.5])
    result = most_violated(single.plan(), h, gap, k=3)
    check_against(single, h, gap, result, k=3)
    np.testing.assert_allclose(result.ratios, [0.5 / 0.05**2, 2.0 / 0.4**2, 1.0 / 0.6**2], rtol=1e-9)
    np.testing.assert_array_equal(result.actions[:, 0], [3, 2, 0])


def test_larger_instance_top_20():
    fg = FactorGraph.ring(9, 3, seed=14)  # 19,683 joint actions
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, np.random.default_rng(14))
    result = most_violated(fg.plan(), h, gap, k=20)
    check_against(fg, h, gap, result, k=20)
    assert result.exact


def test_state_limit_raises():
    fg = FactorGraph.ring(6, 4, seed=15)
    gap = factor_gaps(fg)
    h = random_terms(fg, np.random.default_rng(15))
    with pytest.raises(InstanceTooLargeError, match="max_states=3"):
        most_violated(fg.plan(), h, gap, k=5, max_states=3)


def test_bad_inputs():
    fg = FactorGraph.ring(4, 3, seed=16)
    plan = fg.plan()
    gap = factor_gaps(fg)
    h = terms_from_marginals(fg, np.random.default_rng(16))
    bad_calls = [
        dict(h=h[:-1]),
        dict(h=np.where(np.arange(h.size) == 5, np.nan, h)),
        dict(h=-h),
        dict(gap=np.full(gap.size, np.inf)),
        dict(gap=-gap),  # some Delta(a) < 0
        dict(gap=np.zeros_like(gap)),  # a* not unique
        dict(k=0),
        dict(k=2.5),
        dict(delta_min=0.0),
        dict(delta_min=-1.0),
        dict(delta_min=2.0 * fg.gap_min()),
        dict(threshold=-1.0),
        dict(threshold=float("nan")),
        dict(candidates=np.array([[0, 1, 3, 0]])),
        dict(candidates=np.zeros((2, 3), dtype=int)),
        dict(candidates=np.zeros((2, 4))),
        dict(max_states=0),
    ]
    for bad in bad_calls:
        args = {"h": h, "gap": gap, **bad}
        with pytest.raises(InvalidInputError):
            most_violated(plan, args.pop("h"), args.pop("gap"), **args)
    smaller = most_violated(plan, h, gap, delta_min=0.5 * fg.gap_min())  # a smaller floor is allowed
    assert smaller.max_ratio == pytest.approx(most_violated(plan, h, gap).max_ratio, rel=1e-12)
