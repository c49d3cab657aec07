"""Epsilon-good identification (``problem="epsilon-good:epsilon=0.1"``): several correct answers, the shifted pieces
against brute-force minimisation, the oracle against the closed form of two arms and best-arm identification at
epsilon = 0, and the best arm's characteristic time below every other correct answer's."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import minimize

import optdesign as od
from bandits.instances import parse_instance
from bandits.pure_exploration import Bernoulli, Gaussian, KArmedProblem
from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


@pytest.mark.parametrize("seed", range(3))
def test_epsilon_zero_is_best_arm_identification(seed):
    rng = np.random.default_rng(seed)
    mu, N = rng.normal(size=5), rng.integers(1, 30, size=5).astype(float)
    good, bai = EpsilonGoodProblem(5, 0.0), KArmedProblem(5)
    np.testing.assert_allclose(good.pieces(mu, N).values, bai.pieces(mu, N).values, rtol=1e-12)
    assert good.oracle(mu).T == pytest.approx(bai.oracle(mu).T, rel=1e-5)


@pytest.mark.parametrize(("gap", "epsilon", "sigma"), [(0.5, 0.1, 1.0), (0.05, 0.2, 2.0)])
def test_two_arms_have_the_closed_form(gap, epsilon, sigma):
    oracle = EpsilonGoodProblem(2, epsilon, Gaussian(sigma)).oracle(np.array([gap, 0.0]))
    assert oracle.T == pytest.approx(8 * sigma**2 / (gap + epsilon) ** 2, rel=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_a_piece_is_the_least_cost_move_making_the_recommendation_not_epsilon_good(seed):
    rng = np.random.default_rng(seed)
    mu, N, eps = rng.normal(size=4), rng.integers(1, 30, size=4).astype(float), 0.15
    pieces = EpsilonGoodProblem(4, eps).pieces(mu, N)
    b = pieces.best
    for j, value in zip(pieces.answers, pieces.values, strict=True):
        cons = [{"type": "ineq", "fun": lambda lam, j=j: lam[j] - lam[b] - eps}]
        res = minimize(lambda lam: 0.5 * np.sum(N * (mu - lam) ** 2), mu, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14})
        assert value == pytest.approx(res.fun, rel=1e-6)


def test_the_best_arm_is_the_easiest_correct_answer():
    """For every other epsilon-good arm i, the max-min of its own shifted pieces gives a larger T."""
    mu, eps = np.array([1.0, 0.95, 0.9, 0.3]), 0.12
    best = EpsilonGoodProblem(4, eps).oracle(mu).T
    for i in (1, 2):
        pairs = np.array([(i, j) for j in range(4) if j != i])
        assert od.pairwise_characteristic_time(mu, pairs, shifts=eps).value > best


def test_every_epsilon_good_arm_is_correct():
    problem, mu = EpsilonGoodProblem(4, 0.1), np.array([1.0, 0.95, 0.9, 0.3])
    assert [problem.correct(k, mu) for k in range(4)] == [True, True, True, False]


def test_a_larger_epsilon_stops_sooner_with_an_epsilon_good_answer():
    env = parse_instance("gaussian:means=1/0.97/0.5/0.2")
    for seed in range(3):
        plain = run(make_algorithm("fws"), env, 0.1, seed=seed)
        good = run(make_algorithm("fws:problem=epsilon-good:epsilon=0.1"), env, 0.1, seed=seed)
        assert good.correct and good.recommendation in (0, 1) and good.samples < plain.samples


@pytest.mark.slow
def test_the_error_rate_is_at_most_delta():
    """Frank-Wolfe sampling, 300 runs at delta = 0.1: an error is a recommendation more than epsilon below the best."""
    env = parse_instance("gaussian:means=0.5/0.45/0.3/0.2")
    errors = sum(not run(make_algorithm("fws:problem=epsilon-good:epsilon=0.1"), env, 0.1, seed=s).correct
                 for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: EpsilonGoodProblem(3, -0.1), "epsilon must be"),
    (lambda: EpsilonGoodProblem(3, float("nan")), "epsilon must be"),
    (lambda: EpsilonGoodProblem(3, 1.5, Bernoulli()), "below 1"),
    (lambda: EpsilonGoodProblem(3, 0.1).oracle(np.array([1.0, 1.0, 0.2])), "tie|unique"),
    (lambda: make_algorithm("fws:problem=epsilon-good:eps=0.1"), "unknown option eps"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
