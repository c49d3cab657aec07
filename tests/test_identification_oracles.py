"""The characteristic times of pairwise identification questions (optdesign.identification) against closed forms, the
K-armed oracle of Garivier & Kaufmann's Theorem 5 (an independent method), brute-force minimisation over the
alternative sets, and weak duality."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import optdesign as od
from bandits.pure_exploration import Bernoulli, Gaussian, KArmedProblem
from optdesign.errors import InvalidInputError
from optdesign.identification import certified_bracket, divergence, pair_pieces

FAMILY_MEANS = {
    "gaussian": np.array([1.0, 0.8, 0.5, 0.2]),
    "bernoulli": np.array([0.5, 0.45, 0.3, 0.1]),
    "poisson": np.array([2.0, 1.6, 1.0, 0.4]),
    "exponential": np.array([2.0, 1.6, 1.0, 0.4]),
}


@pytest.mark.parametrize(("gap", "sigma", "shift"), [(0.5, 1.0, 0.0), (0.1, 2.0, 0.0), (0.5, 1.0, 0.2)])
def test_two_gaussian_arms_have_the_closed_form(gap, sigma, shift):
    """T* = 8 sigma^2 / (gap + shift)^2, w* = (1/2, 1/2)."""
    result = od.pairwise_characteristic_time([gap, 0.0], [[0, 1]], sigma=sigma, shifts=[shift])
    assert result.value == pytest.approx(8 * sigma**2 / (gap + shift) ** 2, rel=1e-6)
    assert result.lower_bound <= 8 * sigma**2 / (gap + shift) ** 2 * (1 + 1e-12)
    np.testing.assert_allclose(result.weights, [0.5, 0.5], atol=1e-3)


@pytest.mark.parametrize(("family", "means"), [("gaussian", [1.0, 0.8, 0.5, 0.2]), ("gaussian", [0.3, 0.9, 0.85]),
                                               ("bernoulli", [0.5, 0.45, 0.3, 0.1]), ("bernoulli", [0.9, 0.2, 0.85])])
def test_best_arm_equals_the_theorem_5_oracle(family, means):
    means = np.asarray(means)
    result = od.pairwise_characteristic_time(means, od.best_arm_pairs(means), family=family)
    reference = KArmedProblem(means.size, Gaussian() if family == "gaussian" else Bernoulli()).oracle(means)
    assert result.value == pytest.approx(reference.T, rel=1e-5)
    np.testing.assert_allclose(result.weights, reference.weights, atol=2e-3)
    assert result.gap <= 1e-5 and result.lower_bound <= reference.T * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_top_k_minus_one_is_best_arm_identification_of_the_worst(seed):
    """The top K - 1 arms are known once the worst arm is: Gaussian means negated, Bernoulli means mirrored (kl(1 - x,
    1 - y) = kl(x, y)) give the best-arm problem of the worst arm, solved by Theorem 5."""
    rng = np.random.default_rng(seed)
    mu = rng.uniform(0.1, 0.9, size=5)
    for family, mirrored, problem in [("gaussian", -mu, KArmedProblem(5)), ("bernoulli", 1 - mu,
                                                                             KArmedProblem(5, Bernoulli()))]:
        result = od.pairwise_characteristic_time(mu, od.top_m_pairs(mu, 4), family=family)
        assert result.value == pytest.approx(problem.oracle(mirrored).T, rel=1e-5), family


@pytest.mark.parametrize("family", sorted(FAMILY_MEANS))
def test_a_piece_is_the_least_cost_move_of_its_pair(family):
    """f_ij(w) = min over a common mean lambda of w_i d(mu_i, lambda) + w_j d(mu_j, lambda), by brute force."""
    mu = FAMILY_MEANS[family]
    w = np.array([0.4, 0.3, 0.2, 0.1])
    pairs = np.array([[0, 1], [0, 3], [1, 2], [2, 3]])
    values, G = pair_pieces(mu, pairs, w, family=family)
    for (i, j), value, grad in zip(pairs, values, G, strict=True):
        def cost(lam, i=i, j=j):
            return w[i] * divergence(mu[i], lam, family) + w[j] * divergence(mu[j], lam, family)

        best = minimize_scalar(cost, bounds=(mu[j], mu[i]), method="bounded", options={"xatol": 1e-12})
        assert value == pytest.approx(best.fun, rel=1e-8)
        assert value == pytest.approx(grad @ w, rel=1e-12)  # homogeneous of degree one (Euler)


@pytest.mark.parametrize("family", sorted(FAMILY_MEANS))
def test_the_bracket_holds_from_any_weights(family):
    mu = FAMILY_MEANS[family]
    pairs = od.top_m_pairs(mu, 2)
    optimum = od.pairwise_characteristic_time(mu, pairs, family=family)
    assert optimum.gap <= 1e-5
    rng = np.random.default_rng(1)
    for _ in range(5):
        w = rng.dirichlet(np.ones(mu.size))
        lower, upper = certified_bracket(*pair_pieces(mu, pairs, w, family=family))
        assert lower <= optimum.value * (1 + 1e-6) and upper >= optimum.lower_bound * (1 - 1e-9)


def test_top_m_pairs_and_the_active_pairs():
    mu = np.array([0.1, 0.9, 0.5, 0.7, 0.3])
    pairs = od.top_m_pairs(mu, 2)
    assert sorted(map(tuple, pairs)) == [(1, 0), (1, 2), (1, 4), (3, 0), (3, 2), (3, 4)]
    result = od.pairwise_characteristic_time(mu, pairs)
    assert (3, 2) in map(tuple, result.active)  # the closest alternative swaps the 2nd and the 3rd best


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.pairwise_characteristic_time([1.0, 0.5], [[0, 1]], family="cauchy"), "unknown family"),
    (lambda: od.pairwise_characteristic_time([1.0, 0.5], [[0, 1]], family="bernoulli"), "strictly between 0 and 1"),
    (lambda: od.pairwise_characteristic_time([1.0, -0.5], [[0, 1]], family="poisson"), "positive"),
    (lambda: od.pairwise_characteristic_time([1.0, np.nan], [[0, 1]]), "finite"),
    (lambda: od.pairwise_characteristic_time([0.5, 1.0], [[0, 1]]), "not above arm 1"),
    (lambda: od.pairwise_characteristic_time([1.0, 0.5], [[0, 2]]), "two different arms"),
    (lambda: od.pairwise_characteristic_time([1.0, 0.5], [[0, 1]], sigma=0.0), "sigma"),
    (lambda: od.pairwise_characteristic_time([0.6, 0.5], [[0, 1]], family="bernoulli", shifts=[0.1]),
     "Gaussian arms only"),
    (lambda: od.top_m_pairs([1.0, 0.5, 0.2], 3), "1 <= m < K"),
    (lambda: od.top_m_pairs([1.0, 0.5, 0.5], 2), "not unique"),
    (lambda: od.best_arm_pairs([1.0, 1.0]), "not unique"),
    (lambda: certified_bracket(np.ones(2), np.ones((3, 2))), "shape"),
    (lambda: certified_bracket(np.array([1.0, np.nan]), np.ones((2, 2))), "NaN"),
    (lambda: od.pairwise_characteristic_time([1.0, 0.5], [[0, 1]], tol=0.0), "tol must be"),
    (lambda: od.identification.PairsModel(1, [[0, 0]]), "n_arms"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
