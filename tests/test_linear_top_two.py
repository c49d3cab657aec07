"""Top-Two on linear and transductive problems: the TC challenger against the transportation costs written out
pair by pair, the one pull per pair against a brute-force minimisation of the pair's variance, the canonical arms
against the K-armed rule's choices, the Gaussian posterior's moments, and whole runs on best-item, top-m and
thresholding questions (the error rate over many seeds is slow-marked)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper

from bandits.core.environments import LinearBandit
from bandits.instances import parse_instance
from bandits.pure_exploration.families import Gaussian
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.pure_exploration.linear import LinearProblem
from bandits.pure_exploration.linear_sets import LinearThresholdProblem, LinearTopMProblem
from bandits.registry import make_algorithm
from bandits.run import run


def _random_problem(seed, n_items=6):
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(7, 3)), rng.normal(size=(n_items, 3))
    return LinearProblem(X, Z, sigma=0.8), rng.normal(size=3), rng.integers(1, 20, size=7).astype(float)


def _transport_cost(problem, mu, counts, b, j):
    """W_b,j = max(z_b^T mu - z_j^T mu, 0)^2 / (2 sigma^2 ||z_b - z_j||^2_{A^{-1}}), A the information at counts."""
    y = problem.Z[b] - problem.Z[j]
    A = sum(n * np.outer(x, x) for n, x in zip(counts, problem.X, strict=True))
    return max(y @ mu, 0.0) ** 2 / (2 * problem.sigma**2 * (y @ np.linalg.solve(A, y)))


@pytest.mark.parametrize("seed", range(4))
def test_the_challenger_has_the_least_transportation_cost_from_any_leader(seed):
    problem, mu, counts = _random_problem(seed)
    for leader in range(problem.n_answers):  # the empirical best and leaders mu does not prefer (TS draws)
        costs = [np.inf if j == leader else _transport_cost(problem, mu, counts, leader, j)
                 for j in range(problem.n_answers)]
        assert problem.challenger(mu, counts, leader) == int(np.argmin(costs))


@pytest.mark.parametrize("seed", range(4))
def test_the_penalised_challenger_adds_the_log_information_of_the_direction(seed):
    """TCI on linear arms: cost plus log(||y_j||^2 / ||y_j||^2_{A^{-1}}), pair by pair."""
    problem, mu, counts = _random_problem(seed)
    A = problem.information(counts)
    leader = problem.answer(mu)
    scores = []
    for j in range(problem.n_answers):
        y = problem.Z[leader] - problem.Z[j]
        scores.append(np.inf if j == leader else
                      _transport_cost(problem, mu, counts, leader, j) + np.log(y @ y / (y @ np.linalg.solve(A, y))))
    assert problem.penalised_challenger(mu, counts, leader) == int(np.argmin(scores))


@pytest.mark.parametrize("seed", range(4))
def test_the_pull_minimises_the_variance_of_the_pairs_gap(seed):
    problem, _, counts = _random_problem(seed)
    A = problem.information(counts)
    y = problem.Z[0] - problem.Z[3]
    variances = [y @ np.linalg.solve(A + np.outer(x, x), y) for x in problem.X]
    lead, chal = problem.top_two_pulls(0, 3, counts)
    assert lead == chal == int(np.argmin(variances))


def test_canonical_arms_choose_as_the_karmed_rule():
    """With X = Z = I the challenger is the Gaussian K-armed one, and the pull the less pulled arm of the pair (the
    one whose pull lowers 1/N_B + 1/N_C the most)."""
    mu, counts = np.array([0.9, 0.7, 0.75, 0.1]), np.array([12.0, 3.0, 7.0, 2.0])
    linear, karmed = LinearProblem(np.eye(4), sigma=1.3), KArmedProblem(4, Gaussian(1.3))
    for leader in range(4):
        C = linear.challenger(mu, counts, leader)
        assert C == karmed.challenger(mu, counts, leader)
        assert linear.top_two_pulls(leader, C, counts)[0] == (leader if counts[leader] < counts[C] else C)


def test_set_questions_test_the_swap_or_the_flip():
    rng = np.random.default_rng(5)
    X, Z, mu, counts = rng.normal(size=(6, 3)), rng.normal(size=(5, 3)), rng.normal(size=3), np.full(6, 4.0)
    top = LinearTopMProblem(X, Z, 2)
    S = top.answer(mu)
    C = top.challenger(mu, counts, S)
    pieces = top.pieces(mu, counts, gradients=False)
    assert C == pieces.answers[int(np.argmin(pieces.values))]  # the empirical answer's least piece
    (i,), (j,) = top.members(S & ~C), top.members(C & ~S)
    np.testing.assert_allclose(top.duel_direction(S, C), Z[i] - Z[j])
    level = LinearThresholdProblem(X, Z, 0.2)
    answer = level.answer(mu)
    np.testing.assert_allclose(level.duel_direction(answer, answer ^ 0b100), Z[2])
    flipped = level.halfspaces(mu, answer ^ 0b100)  # a leader with item 2 on the wrong side: its piece is free
    assert flipped.gaps[2] < 0 and level.challenger(mu, counts, answer ^ 0b100) == answer


def test_the_posterior_is_gaussian_around_the_estimate():
    problem, mu, counts = _random_problem(1)
    draws = problem.posterior_draws(mu, counts, np.zeros(7), 200_000, np.random.default_rng(0))
    covariance = problem.sigma**2 * np.linalg.inv(problem.information(counts))
    np.testing.assert_allclose(draws.mean(axis=0), mu, atol=5 * np.sqrt(covariance.diagonal().max() / 200_000))
    np.testing.assert_allclose(np.cov(draws.T), covariance, rtol=0.03, atol=0.03 * np.abs(covariance).max())


@pytest.mark.parametrize("rule", ["top-two", "top-two:leader=ts", "top-two:growth=0", "top-two:challenger=tci",
                                  "top-two:leader=ts,challenger=ts"])
@pytest.mark.parametrize("instance", ["soare:d=3,omega=0.3", "transductive:d=2,omega=0.3"])
def test_top_two_identifies_the_best_item(rule, instance):
    for seed in range(3):
        result = run(make_algorithm(rule), parse_instance(instance), 0.05, seed=seed)
        assert result.correct and result.stopped_by == "stopping_rule"


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["top-two", "top-two:leader=ts,problem=top-m:m=2",
                                  "top-two:challenger=tci,problem=threshold:level=0.5"])
def test_the_error_rate_is_at_most_delta(rule):
    """300 runs at delta = 0.1 under the GLR stop with the practical threshold."""
    env = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]), np.array([0.8, 0.4]),
                       Z=np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6], [0.2, -0.5]]))
    errors = sum(not run(make_algorithm(rule), env, 0.1, seed=s).correct for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda p, mu, n: p.halfspaces(mu, 6), r"an index in \[0, 6\)"),
    (lambda p, mu, n: p.challenger(mu, n, -1), "an index in"),
    (lambda p, mu, n: p.duel_direction(0, 1.5), "an index in"),
    (lambda p, mu, n: LinearTopMProblem(p.X, p.Z, 2).challenger(mu, n, 0b111), "m = 2 members"),
    (lambda p, mu, n: LinearTopMProblem(p.X, p.Z, 2).halfspaces(mu, 1 << 6 | 1), "bit mask of the 6 members"),
    (lambda p, mu, n: LinearThresholdProblem(p.X, p.Z, 0.0).penalised_challenger(mu, n, 1 << 7), "bit mask"),
])
def test_an_answer_that_is_not_one_is_one_clear_error(call, match):
    from optdesign.errors import InvalidInputError

    problem, mu, counts = _random_problem(0)
    with pytest.raises(InvalidInputError, match=match):
        call(problem, mu, counts)
