"""T^MF(m) reduced by symmetry, against the full program, enumeration, closed forms and its own certificate.

Truths used: the reduced program is equivalent to the full one (the argument is on the *Notes* page of the
documentation, section "Symmetry reduction of the mean-field program"), so both optima agree to solver accuracy on
graphs with heterogeneous K; every certified bracket contains the other model's optimum; T* <= T^MF(m) <= T^MF(1);
for N = 1 T^MF is half the Garivier–Kaufmann time; the lower bound is weak duality and holds for any multipliers
(checked with deliberately wrong ones).
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import optdesign as od
from optdesign import FactorGraph, InvalidInputError
from optdesign.factored.inference.elimination import EliminationPlan
from optdesign.factored.mean_field.action_classes import ActionClasses
from optdesign.factored.mean_field.model import MeanFieldModel
from optdesign.factored.mean_field.posynomial_bound import gp_lower_bound


def heterogeneous_instances():
    tree = nx.random_labeled_tree(7, seed=3)
    return [
        FactorGraph.star(6, [10, 3, 4, 5, 6, 7], seed=0),
        FactorGraph.grid(2, 3, 4, seed=1),
        FactorGraph.line(6, [2, 3, 4, 5, 6, 7], seed=2),
        FactorGraph.ring(5, 6, seed=0),
        FactorGraph.from_networkx(tree, [2, 5, 3, 4, 2, 6, 3], seed=4),
        FactorGraph(  # a three-agent factor and a unary one
            [3, 4, 2, 3],
            [((0, 1, 2), np.random.default_rng(5).random((3, 4, 2))), ((2, 3), np.random.default_rng(6).random((2, 3))),
             ((3,), np.random.default_rng(7).random(3))],
        ),
    ]


def brackets(res) -> tuple[float, float]:
    return res.lower_bound, res.value


@pytest.mark.parametrize("fg", heterogeneous_instances(), ids=repr)
def test_reduced_program_equals_the_full_program(fg):
    red = od.mf_characteristic_time(fg, solver="CLARABEL")
    full = od.mf_characteristic_time(fg, reduce=False, solver="CLARABEL")
    assert red.extras["reduce"] and not full.extras["reduce"]
    assert max(red.extras["n_classes"]) <= 2
    assert red.value == pytest.approx(full.value, rel=2e-6)
    for res, other in ((red, full), (full, red)):
        lower, upper = brackets(res)
        assert lower <= other.value * (1 + 1e-9)  # a certified lower bound is below every attained value
        assert lower <= upper and res.gap == pytest.approx(upper / lower - 1, abs=1e-12)
    assert red.gap <= 1e-6


@pytest.mark.parametrize("fg", heterogeneous_instances()[:4], ids=repr)
def test_reduced_m_best_program_equals_the_full_one_and_enumeration(fg):
    for m in (2, 4):
        red = od.mf_characteristic_time(fg, m, solver="CLARABEL")
        full = od.mf_characteristic_time(fg, m, reduce=False, solver="CLARABEL")
        enum = od.mf_characteristic_time(fg, m, fcr=False, solver="CLARABEL")
        assert red.value == pytest.approx(full.value, rel=2e-6)
        assert enum.value == pytest.approx(full.value, rel=2e-6)
        for res in (red, full, enum):
            assert res.lower_bound <= min(red.value, full.value, enum.value) * (1 + 1e-9)
        assert red.gap <= 1e-6 and enum.gap <= 1e-6


def test_class_allocations_expand_to_symmetric_local_allocations():
    fg = FactorGraph.ring(6, 7, seed=3)
    res = od.mf_characteristic_time(fg)
    best = fg.best_action()
    for i, v in enumerate(res.local_allocations):
        assert v.sum() == pytest.approx(1.0, abs=1e-12)
        others = np.delete(v, best[i])
        np.testing.assert_allclose(others, others[0], rtol=1e-12)
    # the value is the objective at these allocations over ALL joint actions (max-sum on the full tables)
    model = MeanFieldModel(fg, reduce=False)
    from optdesign.factored.inference.max_sum import MaxSum

    full_value = MaxSum(model.plan, model.terms_at(res.local_allocations, best)).value / fg.gap_min() ** 2
    assert full_value == pytest.approx(res.value, rel=1e-12)


@pytest.mark.parametrize("K", [2, 3, 10])
def test_ring_optimum_is_one_number_for_every_size(K):
    """A ring with one K is vertex-transitive and every term is largest when all agents deviate, so
    t* = T^MF Delta_min^2 = N min_p (1/p^2 + 1/q^2) with q = (1 - p)/(K - 1): t*/N and p* do not depend on N."""
    values, ps = [], []
    for N in (5, 8, 12):
        fg = FactorGraph.ring(N, K, seed=0)
        res = od.mf_characteristic_time(fg)
        values.append(res.value * fg.gap_min() ** 2 / N)
        ps.append(res.local_allocations[0][fg.best_action()[0]])
    assert np.ptp(ps) <= 1e-4
    assert np.ptp(values) <= 1e-6 * np.mean(values)


def test_reference_value_of_the_paper_ring():
    """Ring N = 10, K = 10, seed 0: T^MF = 2,896,594.13. On a ring with one K every term peaks when all agents
    deviate, so t* = N min_p (1/p^2 + (K-1)^2/(1-p)^2), minimised at (1 - p)/p = (K - 1)^(2/3): a closed form to
    check the solver against (derivation: the *Notes* page, section "Symmetry reduction")."""
    fg = FactorGraph.ring(10, 10, seed=0)
    res = od.mf_characteristic_time(fg)
    p = 1 / (1 + 9 ** (2 / 3))
    closed = 10 * (1 / p**2 + 81 / (1 - p) ** 2) / fg.gap_min() ** 2
    assert res.value == pytest.approx(closed, rel=1e-6)
    assert res.value == pytest.approx(2_896_594.13, rel=1e-7)
    assert res.lower_bound <= closed * (1 + 1e-12) and res.gap <= 1e-6
    assert res.local_allocations[0][fg.best_action()[0]] == pytest.approx(p, rel=1e-4)  # the optimum is flat in p


@pytest.mark.parametrize("means", [[0.5, 0.45, 0.43, 0.4], [2.0, 1.5, -1.0, 1.4, 0.9]])
def test_single_agent_is_half_of_garivier_kaufmann_with_one_gap(means):
    """N = 1: the mean-field objective uses Delta_min for every arm, so T^MF = min_w max_a (1/w_1 + 1/w_a) / Dmin^2
    with a symmetric optimum w_a = q for a != 1: (1/p + 1/q) / Dmin^2 at p + (K - 1) q = 1, minimised at
    p = sqrt(K - 1) q (closed form (1 + sqrt(K - 1))^2 / Dmin^2)."""
    fg = FactorGraph.single_agent(means)
    K = len(means)
    dmin = fg.gap_min()
    expected = (1 + np.sqrt(K - 1)) ** 2 / dmin**2
    res = od.mf_characteristic_time(fg)
    assert res.value == pytest.approx(expected, rel=1e-7)
    assert res.lower_bound <= expected * (1 + 1e-12)
    assert res.local_allocations[0].max() == pytest.approx(1 / (1 + np.sqrt(K - 1)), rel=1e-4)


@pytest.mark.parametrize("seed", range(3))
def test_chain_with_exact_characteristic_time(seed):
    fg = FactorGraph.line(5, 3, seed=seed)
    exact = od.characteristic_time(fg)
    mf = [od.mf_characteristic_time(fg, m) for m in (1, 2, 3, 6)]
    assert exact.value <= mf[-1].value * (1 + 1e-6)
    for a, b in itertools.pairwise(mf):
        assert b.value <= a.value * (1 + 1e-6)
        assert b.lower_bound <= a.value * (1 + 1e-9)


def test_lower_bound_is_weak_duality_for_any_multipliers():
    """gp_lower_bound never exceeds the true minimum, whatever delta; the true minimum of a one-agent problem
    min (a0/v0 + a1/v1) over v0 + v1 <= 1 is (sqrt a0 + sqrt a1)^2."""
    P = EliminationPlan([2], [(0,)]).group_selection()
    rng = np.random.default_rng(0)
    for _ in range(200):
        alpha = rng.random(2) * 10
        truth = (np.sqrt(alpha[0]) + np.sqrt(alpha[1])) ** 2
        delta = rng.random(2) * rng.choice([1e-3, 1.0, 1e3])
        bound = gp_lower_bound(alpha, delta, P, np.array([0, 0]), np.ones(2))
        assert bound <= truth * (1 + 1e-12)
    alpha = np.array([1.0, 4.0])
    v = np.array([1 / 3, 2 / 3])  # the minimiser: v proportional to sqrt(alpha)
    assert gp_lower_bound(alpha, alpha / v, P, np.array([0, 0]), np.ones(2)) == pytest.approx(9.0, rel=1e-12)


def test_action_classes():
    classes = ActionClasses.reduced((5, 2, 3), [(2,), (), (0, 1)])
    assert classes.n_classes == (3, 2, 3)
    mult = classes.multiplicities
    np.testing.assert_array_equal(mult[0], [1, 1, 3])
    np.testing.assert_array_equal(mult[2], [1, 1, 1])
    maps = classes.class_maps([0, 1, 2])
    np.testing.assert_array_equal(maps[0], [0, 2, 1, 2, 2])
    np.testing.assert_array_equal(maps[1], [1, 0])
    np.testing.assert_array_equal(maps[2], [1, 2, 0])
    full = ActionClasses.identity((3, 2)).class_maps([2, 0])
    np.testing.assert_array_equal(full[0], [2, 1, 0])


def test_bad_requests():
    fg = FactorGraph.line(3, 2, seed=0)
    for tol in (0.0, -1.0, float("nan")):
        with pytest.raises(InvalidInputError, match="tol"):
            od.mf_characteristic_time(fg, tol=tol)
    tied = FactorGraph([2, 2], [((0, 1), np.array([[1.0, 0.0], [0.0, 1.0]]))])
    with pytest.raises(InvalidInputError):
        od.mf_characteristic_time(tied)
