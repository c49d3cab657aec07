"""Thresholding with a confidence level (``problem="threshold:level=0.5"``): the closed-form oracle against the linear
program it solves, the GLR statistic against every other answer (sign vector), set answers scored by the problem,
and the generic rules on it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import linprog

import optdesign as od
from bandits.instances import parse_instance
from bandits.pure_exploration import Bernoulli, Gaussian
from bandits.pure_exploration.threshold import ThresholdProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import divergence


@pytest.mark.parametrize(("family", "means", "level"), [("gaussian", [1.0, -0.5, 0.3, 0.8], 0.5),
                                                        ("bernoulli", [0.7, 0.4, 0.55, 0.2], 0.5),
                                                        ("poisson", [2.0, 0.5, 1.2], 1.0)])
def test_the_closed_form_solves_the_linear_program(family, means, level):
    """max t s.t. w_k d(mu_k, tau) >= t, sum w = 1, by a linear-programming solver."""
    means = np.asarray(means)
    d = divergence(means, level, family)
    K = means.size
    res = linprog(np.r_[np.zeros(K), -1.0], A_ub=np.c_[-np.diag(d), np.ones(K)], b_ub=np.zeros(K),
                  A_eq=np.r_[np.ones(K), 0.0][None], b_eq=[1.0], bounds=[(0, None)] * K + [(None, None)])
    result = od.threshold_characteristic_time(means, level, family=family)
    assert result.value == pytest.approx(1 / -res.fun, rel=1e-8) and result.gap <= 1e-12
    np.testing.assert_allclose(result.weights, res.x[:K], atol=1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_the_glr_statistic_is_the_least_cost_other_answer(seed):
    """Every other sign vector costs the sum over the arms it flips of N_k d(mu_k, tau): the minimum flips one."""
    rng = np.random.default_rng(seed)
    mu, N, tau = rng.normal(size=5), rng.integers(1, 30, size=5).astype(float), 0.1
    problem = ThresholdProblem(5, tau)
    flips = [np.array(bits, dtype=bool) for bits in itertools.product([0, 1], repeat=5) if any(bits)]
    brute = min(float(np.sum(N[f] * (mu[f] - tau) ** 2 / 2)) for f in flips)
    assert problem.pieces(mu, N).value == pytest.approx(brute, rel=1e-12)


def test_answers_are_the_arms_above_the_level():
    problem = ThresholdProblem(4, 0.5, Bernoulli())
    mu = np.array([0.7, 0.4, 0.55, 0.2])
    answer = problem.answer(mu)
    assert problem.describe_answer(answer) == "{0,2}" and problem.correct(answer, mu)
    assert not problem.correct(answer ^ 0b10, mu)
    assert problem.correct(0b101, np.array([0.7, 0.4, 0.55, 0.5])) and problem.correct(0b1101,
                                                                                        np.array([0.7, 0.4, 0.55, 0.5]))
    pieces = problem.pieces(np.array([1.0, 0.0, 0.55, 0.2]), np.ones(4))  # estimates on the boundary: finite
    assert np.all(np.isfinite(pieces.values))


@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "round-robin", "lingame", "lingame-c", "top-two",
                                  "top-two:leader=ts", "top-two:leader=ucb", "top-two:challenger=ts"])
def test_generic_rules_identify_the_arms_above_the_level(rule):
    env = parse_instance("gaussian:means=1/0.8/0.3/0.1/0.6")
    for seed in range(2):
        text = f"{rule},problem=threshold:level=0.5" if ":" in rule else f"{rule}:problem=threshold:level=0.5"
        result = run(make_algorithm(text), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == 0b10011


def test_lingames_best_response_moves_the_least_pieces_arm_to_the_level():
    problem = ThresholdProblem(4, 0.5, Bernoulli())
    mu, w = np.array([0.7, 0.4, 0.55, 0.2]), np.array([0.1, 0.2, 0.6, 0.1])
    lam = problem.response(mu, w)
    moved = np.flatnonzero(lam != mu)
    assert moved.size == 1 and lam[moved[0]] == 0.5
    assert float(np.sum(w * problem.family.kl(mu, lam))) == pytest.approx(problem.pieces(mu, w).value, rel=1e-12)


def test_top_twos_challenger_flips_the_least_cost_arm():
    problem = ThresholdProblem(4, 0.5, Bernoulli())
    mu, N = np.array([0.7, 0.4, 0.55, 0.2]), np.array([10.0, 20.0, 60.0, 10.0])
    leader = problem.answer(mu)
    costs = N * divergence(mu, 0.5, "bernoulli")
    assert problem.challenger(mu, N, leader) == leader ^ (1 << int(np.argmin(costs)))
    assert problem.duel_pulls(leader, leader ^ 0b100) == (2, 2)  # one arm differs: both sides pull it
    wrong = leader ^ 0b1  # a leader placing arm 0 below the level contradicts mu: flipping it back costs nothing
    assert problem.challenger(mu, N, wrong) == leader
    assert problem.penalised_challenger(mu, N, leader) == leader ^ (1 << int(np.argmin(costs + np.log(N))))
    with pytest.raises(InvalidInputError, match="bit mask of the 4 members"):
        problem.challenger(mu, N, 1 << 4)


@pytest.mark.slow
def test_the_error_rate_is_at_most_delta():
    """Track-and-Stop (closed-form oracle) under the GLR stop, 300 runs at delta = 0.1 on Bernoulli arms."""
    env = parse_instance("bernoulli:means=0.7/0.4/0.6/0.3")
    errors = sum(not run(make_algorithm("track-and-stop:problem=threshold:level=0.5"), env, 0.1, seed=s).correct
                 for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: ThresholdProblem(3, 1.5, Bernoulli()), "strictly between 0 and 1"),
    (lambda: ThresholdProblem(3, float("inf")), "finite"),
    (lambda: ThresholdProblem(63, 0.0), "at most 62"),
    (lambda: ThresholdProblem(3, 0.5, Gaussian()).oracle(np.array([1.0, 0.5, 0.2])), "equals the level"),
    (lambda: od.threshold_characteristic_time([0.2, 0.8], 0.5, family="cauchy"), "unknown family"),
    (lambda: make_algorithm("fws:problem=threshold:tau=0.5"), "unknown option tau"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_a_level_outside_the_mean_space_of_positive_families_is_refused():
    from bandits.pure_exploration import Exponential, Poisson

    for family in (Poisson(), Exponential()):
        with pytest.raises(InvalidInputError, match="must be positive"):
            ThresholdProblem(3, 0.0, family)
