"""The characteristic time of Gaussian arms of unequal variances (optdesign.identification.variances), against closed
forms, GK16's Gaussian model, brute-force grids and the order of the two models."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.identification import heteroscedastic_pieces, variance_divergence


def brute_piece(mi, si, wi, mj, sj, wj, known, n=200_001):
    """min over a dense grid of [mu_j, mu_i] of w_i g_i(x) + w_j g_j(x)."""
    x = np.linspace(mj, mi, n)
    return float(np.min(wi * variance_divergence(mi, si, x, known_variances=known)
                        + wj * variance_divergence(mj, sj, x, known_variances=known)))


@pytest.mark.parametrize(("s1", "s2", "gap"), [(1.0, 2.0, 1.0), (0.3, 0.7, 0.2), (2.0, 0.5, 3.0)])
def test_two_arms_with_known_variances_have_neymans_closed_form(s1, s2, gap):
    """T* = 2 (sigma_1 + sigma_2)^2 / gap^2 with w proportional to sigma (the known-variance two-arm optimum)."""
    result = od.heteroscedastic_characteristic_time([gap, 0.0], [s1, s2], known_variances=True)
    assert result.value == pytest.approx(2 * (s1 + s2) ** 2 / gap**2, rel=1e-5)
    assert result.weights == pytest.approx([s1 / (s1 + s2), s2 / (s1 + s2)], abs=1e-3)
    assert result.lower_bound <= result.value and result.gap <= 1e-5


def test_equal_known_variances_give_the_gaussian_model():
    mu = np.array([1.0, 0.8, 0.75, 0.4, 0.1])
    ours = od.heteroscedastic_characteristic_time(mu, np.full(5, 0.7), known_variances=True)
    theirs = od.pairwise_characteristic_time(mu, od.best_arm_pairs(mu), sigma=0.7)
    assert ours.value == pytest.approx(theirs.value, rel=2e-6)
    assert ours.weights == pytest.approx(theirs.weights, abs=2e-3)


@pytest.mark.parametrize("known", [True, False])
def test_two_arms_against_a_brute_force_grid(known):
    """max over w_1 of the piece, both by the program and by grids over w_1 and over x."""
    mu, sd = np.array([1.0, -0.5]), np.array([0.4, 1.3])
    result = od.heteroscedastic_characteristic_time(mu, sd, known_variances=known)
    grid = np.linspace(0.01, 0.99, 981)
    best = max(brute_piece(mu[0], sd[0], w, mu[1], sd[1], 1 - w, known, n=4001) for w in grid)
    assert result.value == pytest.approx(1 / best, rel=1e-4)


def test_the_pieces_reach_the_global_minimum_of_a_nonconvex_cost():
    """log(1 + z^2) is not convex past |z| = 1: gaps of several sigmas and lopsided weights give two local minima; the
    cubic's roots and the interval's ends find the global one."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        mu = np.concatenate([[3.0], rng.uniform(-3, 2.5, 3)])
        sd, w = rng.uniform(0.1, 2.0, 4), rng.uniform(0.0, 5.0, 4)
        best, values, G, x = heteroscedastic_pieces(mu, sd, w, known_variances=False)
        assert best == 0
        for row, j in enumerate(range(1, 4)):
            brute = brute_piece(mu[0], sd[0], w[0], mu[j], sd[j], w[j], False)
            assert values[row] <= brute + 1e-12 and values[row] == pytest.approx(brute, rel=1e-6, abs=1e-12)
            assert values[row] == pytest.approx(G[row] @ w, rel=1e-12)
            assert mu[j] <= x[row] <= mu[0]


def test_not_knowing_the_variances_costs_more_and_little_for_small_gaps():
    """g_unknown <= g_known (log(1 + z) <= z) gives T*_unknown >= T*_known; for gaps far below sigma they meet."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        mu, sd = np.concatenate([[1.0], rng.uniform(-1, 0.8, 4)]), rng.uniform(0.5, 2.0, 5)
        known = od.heteroscedastic_characteristic_time(mu, sd, known_variances=True)
        unknown = od.heteroscedastic_characteristic_time(mu, sd)
        assert unknown.lower_bound >= known.value * (1 - 1e-5)
        small = od.heteroscedastic_characteristic_time(mu * 1e-3, sd)
        assert small.value == pytest.approx(known.value * 1e6, rel=1e-4)


@pytest.mark.parametrize("known", [True, False])
def test_the_time_is_invariant_to_the_scale_of_the_rewards(known):
    mu, sd = np.array([0.9, 0.2, 0.5, -0.4]), np.array([1.0, 0.3, 2.0, 0.8])
    one = od.heteroscedastic_characteristic_time(mu, sd, known_variances=known)
    scaled = od.heteroscedastic_characteristic_time(7 * mu + 3, 7 * sd, known_variances=known)
    assert scaled.value == pytest.approx(one.value, rel=1e-5)
    assert one.gap <= 1e-6 and scaled.gap <= 1e-6
    assert one.active.shape[1] == 2 and np.all(one.active[:, 0] == 0)


@pytest.mark.parametrize(("means", "sigmas", "match"), [
    ([1.0, 1.0], [1.0, 1.0], "tie"),
    ([1.0, 0.0], [1.0, 0.0], "sigmas"),
    ([1.0, 0.0], [1.0], "sigmas"),
    ([1.0, np.nan], [1.0, 1.0], "finite"),
    ([1.0], [1.0], "at least two"),
])
def test_bad_instances_are_refused(means, sigmas, match):
    with pytest.raises(InvalidInputError, match=match):
        od.heteroscedastic_characteristic_time(means, sigmas)


@pytest.mark.parametrize("known", [True, False])
def test_the_equalisation_is_the_program_s_optimum(known):
    """The fast path (Garivier & Kaufmann's equalisation with these pieces) against the cutting-plane program: the
    same T* and weights, and its own certified gap at round-off."""
    rng = np.random.default_rng(11)
    for _ in range(4):
        mu, sd = np.concatenate([[1.0], rng.uniform(-1.0, 0.9, 6)]), rng.uniform(0.3, 2.0, 7)
        program = od.heteroscedastic_characteristic_time(mu, sd, known_variances=known)
        fast = od.heteroscedastic_characteristic_time(mu, sd, known_variances=known, method="equalise")
        assert fast.gap <= 1e-9 and fast.lower_bound <= fast.value
        assert fast.value == pytest.approx(program.value, rel=2e-6)
        assert program.lower_bound <= fast.value * (1 + 1e-9) and fast.lower_bound <= program.value * (1 + 1e-9)
        assert fast.weights == pytest.approx(program.weights, abs=2e-3)
    two = od.heteroscedastic_characteristic_time([2.0, 0.0], [1.0, 3.0], known_variances=True, method="equalise")
    assert two.value == pytest.approx(2 * 16 / 4, rel=1e-12) and two.weights == pytest.approx([0.25, 0.75])


def test_an_unknown_method_is_refused():
    with pytest.raises(InvalidInputError, match="method"):
        od.heteroscedastic_characteristic_time([1.0, 0.0], [1.0, 1.0], method="newton")


@pytest.mark.parametrize(("option", "match"), [({"tol": "small"}, "tol"), ({"tol": 0.0}, "tol"),
                                               ({"max_cuts": "many"}, "max_cuts")])
def test_bad_options_are_refused(option, match):
    with pytest.raises(InvalidInputError, match=match):
        od.heteroscedastic_characteristic_time([1.0, 0.0], [1.0, 1.0], **option)
