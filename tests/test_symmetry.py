"""Automorphism orbits and the orbit-tied mean-field search, against the conic program and mathematical truths.

Truths used: averaging over a group of automorphisms keeps a convex program's optimum, so T^MF on orbits equals the
untied conic program (symmetry=None) on rings, stars, complete graphs and lines with their reflection; each certified
bracket contains the other's optimum; a Danskin subgradient gives a global under-estimator of the convex objective;
batched max-sum agrees with the one-column max-sum and the maximiser attains the maximum.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import optdesign as od
from optdesign import FactorGraph, InvalidInputError
from optdesign.factored.inference.max_sum import MaxSum, batched_max_sum
from optdesign.factored.mean_field.model import MeanFieldModel
from optdesign.factored.mean_field.orbits import MAX_ORBITS
from optdesign.factored.mean_field.symmetry import Structure, agent_orbits


def complete(n, K, seed=0):
    return FactorGraph.from_networkx(nx.complete_graph(n), K, seed=seed)


@pytest.mark.parametrize(("fg", "n_orbits"), [
    (FactorGraph.ring(7, 3, seed=0), 1),
    (FactorGraph.star(6, 3, seed=0), 2),
    (FactorGraph.star(6, [4, 3, 3, 5, 3, 3], seed=0), 3),  # the leaf with K = 5 is alone
    (complete(5, 2), 1),
    (FactorGraph.line(5, 3, seed=0), 5),  # its reflection is not proposed
    (FactorGraph.grid(2, 3, 2, seed=0), 6),
    (FactorGraph.ring(6, [2, 3, 2, 3, 2, 3], seed=0), 6),  # the rotation by one agent changes K
])
def test_orbits_proposed_from_the_structure(fg, n_orbits):
    orbits = agent_orbits(fg.n_actions, fg.scopes)
    assert orbits.max() + 1 == n_orbits
    assert orbits[0] == 0 and all(len(set(np.asarray(fg.n_actions)[orbits == o])) == 1 for o in range(n_orbits))


def test_given_generators_are_checked():
    fg = FactorGraph.line(6, 3, seed=0)
    reflection = np.arange(6)[::-1]
    assert agent_orbits(fg.n_actions, fg.scopes, [reflection]).tolist() == [0, 1, 2, 2, 1, 0]
    structure = Structure(fg.n_actions, fg.scopes)
    assert structure.is_automorphism(reflection) and not structure.is_automorphism(np.roll(np.arange(6), 1))
    assert not structure.is_automorphism(np.zeros(6, dtype=int))
    with pytest.raises(InvalidInputError, match="not an automorphism"):
        agent_orbits(fg.n_actions, fg.scopes, [np.roll(np.arange(6), 1)])
    with pytest.raises(InvalidInputError, match="not a sequence of agent ids"):
        agent_orbits(fg.n_actions, fg.scopes, [["a", "b"]])
    with pytest.raises(InvalidInputError):
        od.mf_characteristic_time(fg, symmetry=[np.roll(np.arange(6), 1)])


def test_batched_max_sum_matches_max_sum():
    fg = FactorGraph.grid(3, 3, 3, seed=2)
    plan = fg.plan()
    values = np.random.default_rng(0).normal(size=(plan.table_size, 4))
    maxima, actions = batched_max_sum(plan, values)
    for b in range(4):
        assert maxima[b] == pytest.approx(MaxSum(plan, values[:, b]).value, rel=1e-12)
        assert values[plan.group_indices(actions[b:b + 1])[0], b].sum() == pytest.approx(maxima[b], rel=1e-12)


@pytest.mark.parametrize("fg", [FactorGraph.ring(6, 4, seed=1), FactorGraph.star(5, [3, 4, 4, 4, 4], seed=0)])
def test_subgradients_are_global_under_estimators(fg):
    search = MeanFieldModel(fg)._search
    rng = np.random.default_rng(0)
    points = rng.uniform(0.02, 0.9, size=(30, search.n_orbits))
    F, G = search.evaluate(points)
    # F(q) >= F(p) + g(p) (q - p) for every pair: the cuts are valid
    cuts = F[:, None] + np.einsum("kr,kjr->kj", G, points[None, :, :] - points[:, None, :])
    assert np.all(cuts <= F[None, :] * (1 + 1e-10))


SYMMETRIC = [
    FactorGraph.ring(10, 10, seed=0),
    FactorGraph.ring(5, 6, seed=3),
    FactorGraph.star(6, [10, 3, 3, 3, 3, 3], seed=0),
    FactorGraph.star(7, [2, 4, 4, 4, 3, 3, 3], seed=1),  # three orbits: the LP model
    complete(4, 3, seed=0),
    FactorGraph.star(5, [1, 3, 3, 3, 3], seed=2),  # a centre without a choice: one free orbit
    FactorGraph([3, 3, 3], [((0, 1), np.random.default_rng(1).random((3, 3))), ((1, 2), np.random.default_rng(2)
                .random((3, 3))), ((2, 0), np.random.default_rng(3).random((3, 3))), ((0,), np.ones(3)),
                ((1,), np.zeros(3)), ((2,), np.ones(3))]),  # unary factors on every agent of a triangle
]


@pytest.mark.parametrize("fg", SYMMETRIC)
def test_orbit_search_equals_the_conic_program(fg):
    tied = od.mf_characteristic_time(fg)
    conic = od.mf_characteristic_time(fg, symmetry=None)
    assert tied.extras["orbits"] is not None and tied.extras["orbits"] <= MAX_ORBITS
    assert tied.solver == "orbit-kelley" and tied.status == "optimal" and tied.gap <= 1e-7
    assert tied.value == pytest.approx(conic.value, rel=1e-7)
    assert tied.lower_bound <= conic.value * (1 + 1e-9) and conic.lower_bound <= tied.value * (1 + 1e-9)
    for v in tied.local_allocations:
        assert v.sum() == pytest.approx(1.0, abs=1e-12)


def test_orbit_search_on_a_line_with_its_reflection():
    fg = FactorGraph.line(6, 3, seed=4)
    tied = od.mf_characteristic_time(fg, symmetry=[np.arange(6)[::-1]])
    conic = od.mf_characteristic_time(fg, symmetry=None)
    assert tied.extras["orbits"] == 3 and tied.solver == "orbit-kelley"
    assert tied.value == pytest.approx(conic.value, rel=1e-7)
    assert tied.lower_bound <= conic.value * (1 + 1e-9)


def test_large_ring_matches_its_closed_form():
    """On a ring with one K every term peaks when all agents deviate (*Notes* page, "Symmetry reduction"), so
    T^MF Delta_min^2 = N min_p (1/p^2 + (K-1)^2/(1-p)^2) at (1-p)/p = (K-1)^(2/3); the search gets it at N = 3,000."""
    N, K = 3000, 7
    fg = FactorGraph.ring(N, K, seed=1)
    res = od.mf_characteristic_time(fg)
    p = 1 / (1 + (K - 1) ** (2 / 3))
    closed = N * (1 / p**2 + (K - 1) ** 2 / (1 - p) ** 2) / fg.gap_min() ** 2
    assert res.value == pytest.approx(closed, rel=1e-9) and res.lower_bound <= closed * (1 + 1e-12)


def test_an_early_stop_keeps_a_valid_bracket():
    N, K = 8, 5
    search = MeanFieldModel(FactorGraph.ring(N, K, seed=0))._search
    p = 1 / (1 + (K - 1) ** (2 / 3))
    truth = N * (1 / p**2 + (K - 1) ** 2 / (1 - p) ** 2)  # T^MF Delta_min^2, the units of the search
    for passes in (1, 2, 3):
        out = search.solve(1e-12, max_passes=passes)
        assert out.info.status == "max_passes" and out.passes == passes
        assert out.lower <= truth * (1 + 1e-12) and truth <= out.upper * (1 + 1e-12)
    assert search.solve(1e-12).upper == pytest.approx(truth, rel=1e-10)


def test_bad_symmetry_and_solver_arguments_are_project_errors():
    fg = FactorGraph.ring(4, 3, seed=0)
    for kw in ({"symmetry": 5}, {"symmetry": "bogus"}, {"solver": "NOPE"}):
        with pytest.raises(InvalidInputError):
            od.mf_characteristic_time(fg, **kw)
    rotation = np.roll(np.arange(4), 1)
    tied = od.mf_characteristic_time(fg, symmetry=np.stack([rotation]))  # generators as one 2-D array
    assert tied.extras["orbits"] == 1
