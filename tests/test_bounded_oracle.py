"""KL_inf and the characteristic time of arms with rewards in [0, 1] (optdesign.identification.bounded): the compiled
dual against the cvxpy primal and Bernoulli's kl, the pieces against the joint convex program, T* of the fast path
against the cutting-plane program and against Bernoulli's T* on two atoms."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.identification import bounded_pieces, kl_inf, kl_inf_program, pair_cost_program


def bernoulli_kl(p, q):
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def bernoulli_rows(means):
    return np.array([[1 - m, m] for m in means])


@pytest.mark.parametrize(("p", "x"), [(0.4, 0.7), (0.4, 0.1), (0.9, 0.95), (0.05, 0.5)])
def test_on_two_atoms_kl_inf_is_the_bernoulli_kl(p, x):
    """The closest distribution on [0, 1] to a Bernoulli with another mean is the Bernoulli of that mean."""
    assert kl_inf([1 - p, p], [0.0, 1.0], x) == pytest.approx(bernoulli_kl(p, x), rel=1e-12)


def test_the_compiled_dual_equals_the_primal_program():
    """Honda & Takemura's one-variable dual against min KL(F, G) over distributions on the support and {0, 1}, on both
    sides of the mean, with supports that hold 0 or 1 or neither."""
    rng = np.random.default_rng(2)
    for support in (np.linspace(0, 1, 5), np.array([0.1, 0.35, 0.8]), np.array([0.0, 0.2, 0.9])):
        for _ in range(4):
            p = rng.dirichlet(np.ones(support.size))
            mean = p @ support
            for x in (0.5 * mean, mean + 0.5 * (1 - mean), 0.999 * mean, 0.02, 0.97):
                assert kl_inf(p, support, x) == pytest.approx(kl_inf_program(p, support, x), rel=1e-6, abs=1e-8)


def test_kl_inf_is_zero_at_the_mean_and_convex_with_the_dual_variable_as_slope():
    """K+(F, x) has derivative lambda*(x) (the envelope theorem), so its finite differences match the dual's
    maximiser; it is convex and vanishes at the mean."""
    from optdesign.identification.bounded_kernels import kl_inf_above

    p, s = np.array([0.3, 0.5, 0.2]), np.array([0.0, 0.4, 0.7])  # no atom at 1: lambda* reaches its end for large x
    mean = p @ s
    assert kl_inf(p, s, mean) == 0.0
    xs = np.linspace(mean + 0.01, 0.99, 60)
    values = np.array([kl_inf_above(p, s, x)[0] for x in xs])
    assert np.all(np.diff(values, 2) >= -1e-12)
    h = 1e-6
    for x in xs[::7]:
        slope = (kl_inf_above(p, s, x + h)[0] - kl_inf_above(p, s, x - h)[0]) / (2 * h)
        assert slope == pytest.approx(kl_inf_above(p, s, x)[1], rel=1e-4)


def test_the_pieces_equal_the_joint_convex_program():
    rng = np.random.default_rng(4)
    support = np.linspace(0, 1, 4)
    for _ in range(3):
        P = rng.dirichlet(np.ones(4), size=4)
        w = rng.uniform(0.1, 3.0, 4)
        best, values, G, x = bounded_pieces(P, support, w)
        means = P @ support
        assert best == int(np.argmax(means))
        for row, j in enumerate(np.delete(np.arange(4), best)):
            assert values[row] == pytest.approx(pair_cost_program(P, support, w, best, j), rel=1e-5, abs=1e-9)
            assert values[row] == pytest.approx(G[row] @ w, rel=1e-12)
            assert means[j] <= x[row] <= means[best]


def test_an_arm_at_or_above_the_best_costs_nothing():
    P, s = bernoulli_rows([0.6, 0.7, 0.2]), np.array([0.0, 1.0])
    _, values, _, x = bounded_pieces(P, s, np.ones(3), best=0)
    assert values[0] == 0.0 and x[0] == pytest.approx(0.7) and values[1] > 0


def test_on_bernoulli_arms_t_star_is_bernoullis():
    """On the support {0, 1} the model of every distribution on [0, 1] has Bernoulli's costs: GK16's first
    experiment's T* (the pairwise model's certified bracket)."""
    means = [0.5, 0.45, 0.43, 0.4]
    ours = od.bounded_characteristic_time(bernoulli_rows(means), [0.0, 1.0], method="equalise")
    theirs = od.pairwise_characteristic_time(means, od.best_arm_pairs(means), family="bernoulli")
    assert theirs.lower_bound * (1 - 1e-9) <= ours.value <= theirs.value * (1 + 1e-9)
    assert ours.gap <= 1e-9 and ours.weights == pytest.approx(theirs.weights, abs=1e-4)


def test_the_fast_path_equals_the_cutting_plane_program():
    rng = np.random.default_rng(1)
    support = np.linspace(0, 1, 5)
    P = rng.dirichlet(np.ones(5), size=5)
    program = od.bounded_characteristic_time(P, support)
    fast = od.bounded_characteristic_time(P, support, method="equalise")
    assert fast.value == pytest.approx(program.value, rel=1e-5)
    assert program.lower_bound <= program.value and program.gap <= 1e-5
    assert fast.lower_bound <= fast.value and fast.gap <= 1e-9
    assert fast.weights == pytest.approx(program.weights, abs=1e-3)
    assert fast.active.shape[1] == 2 and np.all(fast.active[:, 0] == np.argmax(P @ support))


def test_point_masses_whose_cost_has_a_kink_at_the_mean():
    """An empirical distribution may be a point mass a: K-(F, x) = log(a / x) has slope -1 / a at its mean, so a pair's
    closest mean may be the best arm's mean itself; the fast path meets the program there too."""
    P = np.array([[0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 2 / 3, 0, 1 / 3], [0, 0, 1, 0, 0.0]])
    support = np.linspace(0, 1, 5)
    assert kl_inf(P[1], support, 0.6) == pytest.approx(np.log(0.75 / 0.6), rel=1e-12)
    program = od.bounded_characteristic_time(P, support)
    fast = od.bounded_characteristic_time(P, support, method="equalise")
    assert fast.value == pytest.approx(program.value, rel=1e-6) and fast.gap <= 1e-9
    assert fast.weights[0] == pytest.approx(fast.weights[3]) and fast.weights[0] > 0


def test_spreading_a_bernoulli_arm_over_more_levels_changes_t_star_as_its_divergences_do():
    """A binomial arm on more levels has less variance than the Bernoulli of the same mean, so it is easier to tell
    apart: T* decreases from 2 to 5 levels (the same means)."""
    from scipy.stats import binom

    means = np.array([0.6, 0.5, 0.3])
    times = []
    for L in (2, 3, 5):
        P = binom.pmf(np.arange(L)[None, :], L - 1, means[:, None])
        times.append(od.bounded_characteristic_time(P, np.linspace(0, 1, L), method="equalise").value)
    assert times[0] > times[1] > times[2]


@pytest.mark.parametrize(("probs", "support", "options", "match"), [
    ([[0.5, 0.6], [0.5, 0.5]], [0.0, 1.0], {}, "sum to one"),
    ([[0.5, 0.5], [0.7, 0.3]], [0.0, 1.2], {}, r"\[0, 1\]"),
    ([[0.5, 0.5], [0.5, 0.5]], [0.0, 1.0], {}, "tie"),
    ([[0.5, 0.5]], [0.0, 1.0], {}, "at least two arms"),
    ([[0.5, 0.5], [0.7, 0.3]], [0.0, 1.0], {"method": "newton"}, "method must be"),
    ([[0.5, 0.5], [0.7, 0.3]], [0.0, np.nan], {}, "NaN"),
    ([[0.5, 0.5, 0.0], [0.7, 0.3, 0.0]], [0.0, 1.0], {}, "columns"),
])
def test_bad_input_is_refused_clearly(probs, support, options, match):
    with pytest.raises(InvalidInputError, match=match):
        od.bounded_characteristic_time(probs, support, **options)


def test_kl_inf_refuses_a_mean_outside_the_unit_interval():
    with pytest.raises(InvalidInputError, match=r"x must lie in \[0, 1\]"):
        kl_inf([0.5, 0.5], [0.0, 1.0], 1.5)


@pytest.mark.parametrize(("w", "best", "other"), [([1.0, -1.0], 0, 1), ([1.0, 1.0], 0, 0), ([1.0, 1.0], 0, 2)])
def test_the_pair_model_refuses_bad_weights_and_arms(w, best, other):
    with pytest.raises(InvalidInputError, match="two different arms"):
        pair_cost_program([[0.5, 0.5], [0.7, 0.3]], [0.0, 1.0], w, best, other)
