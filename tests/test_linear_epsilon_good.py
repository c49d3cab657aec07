"""Epsilon-good identification on linear arms: the certified oracle against the K-armed Gaussian question it reduces
to (canonical arms; epsilon = 0, best-item identification, in tests/test_linear_questions.py), an independent cvxpy
model of every answer's min-max design, and an instance whose easiest answer is not the best item; the GLR pieces
against a constrained solver's closest alternative; epsilon = 0 as best-item identification run for run; the generic
rules on the question, asked by name of linear instances."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import minimize

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.instances import parse_instance
from bandits.pure_exploration.linear import LinearProblem
from bandits.pure_exploration.linear_epsilon_good import LinearEpsilonGoodProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

TIGHT = 1e-8
#: an instance whose easiest epsilon-good answer (item 1, T* = 1.4756) is not the best item (item 2, T*_2 = 2.1997)
EASIER_X, EASIER_EPSILON = np.eye(2), 1.69
EASIER_Z = np.array([[-0.32, 0.41], [1.04, -0.13], [1.37, -0.67], [0.35, 0.9]])
EASIER_THETA = np.array([0.09, -0.74])


def _cvxpy_time(X, Z, theta, epsilon, sigma=1.0):
    """min over the epsilon-good items i of 2 sigma^2 min_w max_j ||(z_i - z_j) / gap_ij||^2_{A(w)^{-1}}, each answer
    a cvxpy model of its own (matrix_frac), and the easiest answer."""
    scores, times = Z @ theta, {}
    for i in np.flatnonzero(scores + epsilon > scores.max()):
        w = cp.Variable(X.shape[0], nonneg=True)
        A = X.T @ cp.diag(w) @ X
        Y = np.delete(Z[i] - Z, i, axis=0)
        gaps = Y @ theta + epsilon
        terms = [cp.matrix_frac(y / g, A) for y, g in zip(Y, gaps, strict=True)]
        problem = cp.Problem(cp.Minimize(cp.maximum(*terms)), [cp.sum(w) == 1])
        problem.solve(solver="CLARABEL")
        times[int(i)] = 2 * sigma**2 * problem.value
    easiest = min(times, key=times.get)
    return times[easiest], easiest, times


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.2, 0.6])
@pytest.mark.parametrize("sigma", [1.0, 0.5])
def test_canonical_arms_give_the_karmed_gaussian_time(epsilon, sigma):
    mu = np.array([1.0, 0.9, 0.8, 0.5, 0.2])
    karmed = od.epsilon_good_characteristic_time(mu, epsilon, sigma=sigma, tol=TIGHT)
    linear = od.linear_epsilon_good_characteristic_time(np.eye(5), np.eye(5), mu, epsilon, sigma=sigma, tol=TIGHT)
    assert linear.value == pytest.approx(karmed.value, rel=1e-6)
    assert linear.lower_bound <= karmed.value * (1 + 1e-7) and linear.gap <= 10 * TIGHT
    assert linear.active[0, 0] == 0  # on Gaussian arms the best arm is the easiest answer
    np.testing.assert_allclose(linear.weights, karmed.weights, atol=1e-3)


def test_two_arms_give_the_closed_form():
    res = od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], 0.25, sigma=2.0, tol=TIGHT)
    assert res.value == pytest.approx(8 * 4.0 / 0.75**2, rel=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_the_oracle_is_every_answers_cvxpy_model(seed):
    rng = np.random.default_rng(seed)
    X, Z, theta = rng.normal(size=(5, 3)), rng.normal(size=(6, 3)), rng.normal(size=3)
    scores = np.sort(Z @ theta)
    epsilon = float(scores[-1] - scores[-3]) + 0.05  # at least three correct answers
    res = od.linear_epsilon_good_characteristic_time(X, Z, theta, epsilon, sigma=0.7, tol=TIGHT)
    value, easiest, _ = _cvxpy_time(X, Z, theta, epsilon, sigma=0.7)
    assert res.value == pytest.approx(value, rel=1e-5)
    assert res.lower_bound <= value * (1 + 1e-6) and res.active[0, 0] == easiest


def test_the_easiest_answer_need_not_be_the_best_item():
    res = od.linear_epsilon_good_characteristic_time(EASIER_X, EASIER_Z, EASIER_THETA, EASIER_EPSILON, tol=TIGHT)
    value, easiest, times = _cvxpy_time(EASIER_X, EASIER_Z, EASIER_THETA, EASIER_EPSILON)
    best = int(np.argmax(EASIER_Z @ EASIER_THETA))
    assert (best, easiest) == (2, 1) and times[best] > 1.4 * times[easiest]
    assert res.value == pytest.approx(value, rel=1e-6) and res.active[0, 0] == easiest
    problem = LinearEpsilonGoodProblem(EASIER_X, EASIER_Z, EASIER_EPSILON)
    oracle = problem.oracle(EASIER_THETA)  # at the default tolerance of the design
    assert oracle.lower_bound <= value * (1 + 1e-7) and oracle.T == pytest.approx(value, rel=1e-4)
    assert problem.lower_bound(EASIER_THETA) == {"kind": "T*", "value": oracle.T, "unit": "samples"}
    assert all(problem.correct(i, EASIER_THETA) for i in times)  # every answer solved is correct
    smaller = LinearEpsilonGoodProblem(EASIER_X, EASIER_Z, 0.5)
    assert smaller.correct(1, EASIER_THETA) and not smaller.correct(0, EASIER_THETA)


def _brute_force_glr(problem, mu, N):
    """min over the other items j of min_lambda sum_k N_k (x_k^T (mu - lambda))^2 / (2 sigma^2) subject to
    lambda^T z_j >= lambda^T z_b + epsilon (b the empirical best), by a constrained solver."""
    X, Z = problem.X, problem.Z
    b = int(np.argmax(Z @ mu))
    values = []
    for j in np.delete(np.arange(Z.shape[0]), b):
        cons = [{"type": "ineq", "fun": lambda lam, j=j: (Z[j] - Z[b]) @ lam - problem.epsilon}]
        res = minimize(lambda lam: np.sum(N * (X @ (mu - lam)) ** 2) / (2 * problem.sigma**2), mu,
                       constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
        values.append(res.fun)
    return min(values)


@pytest.mark.parametrize("seed", range(3))
def test_the_glr_statistic_is_the_least_cost_alternative(seed):
    rng = np.random.default_rng(seed)
    X, Z, mu = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)
    N = rng.integers(1, 30, size=5).astype(float)
    problem = LinearEpsilonGoodProblem(X, Z, 0.3, sigma=0.7)
    assert problem.pieces(mu, N).value == pytest.approx(_brute_force_glr(problem, mu, N), rel=1e-5)


def test_an_item_equal_to_the_answer_has_no_piece():
    Z = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    problem = LinearEpsilonGoodProblem(np.eye(2), Z, 0.1)
    halfspaces = problem.halfspaces(np.array([1.0, 0.5]))
    assert halfspaces.best == 0 and halfspaces.answers.tolist() == [2]
    np.testing.assert_allclose(halfspaces.gaps, [0.6])
    assert problem.true_parameter(LinearBandit(np.eye(2), np.array([1.0, 0.5]), Z=Z)).tolist() == [1.0, 0.5]


@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "top-two", "lingame", "round-robin"])
def test_epsilon_zero_runs_are_best_item_runs(rule):
    """The same samples, recommendation and stopping time as best-item identification on every seed."""
    env = parse_instance("soare:d=3,omega=0.3")
    for seed in range(2):
        plain = run(make_algorithm(f"{rule}:problem=epsilon-good:epsilon=0"), env, 0.1, seed=seed)
        bai = run(make_algorithm(rule), env, 0.1, seed=seed)
        assert (plain.samples, plain.recommendation) == (bai.samples, bai.recommendation)


@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "round-robin", "lingame", "lingame-c", "lazy-tas",
                                  "top-two", "top-two:leader=ts", "oracle-weights"])
def test_generic_rules_answer_the_question_on_linear_instances(rule):
    env = LinearBandit(EASIER_X, EASIER_THETA, Z=EASIER_Z)
    for seed in range(2):
        result = run(make_algorithm(f"{rule}{',' if ':' in rule else ':'}problem=epsilon-good:epsilon=1.69"), env,
                     0.1, seed=seed)
        assert result.correct


def test_a_small_epsilon_needs_fewer_samples_than_best_item_identification():
    """Soare et al.'s instance: the best arm and x_(d+1) are cos(omega) apart, so a slack above 1 - cos(omega)
    makes both correct and the question far easier (the oracles say so, and the runs follow)."""
    env = parse_instance("soare:d=4,omega=0.1")
    eps_good = LinearEpsilonGoodProblem.of_environment(env, 0.05)
    bai = LinearProblem.of_environment(env)
    assert eps_good.oracle(env.theta).T < bai.oracle(env.theta).T / 20
    runs = [run(make_algorithm("fws:problem=epsilon-good:epsilon=0.05"), env, 0.1, seed=s) for s in range(3)]
    assert all(r.correct for r in runs) and max(r.samples for r in runs) < 200


@pytest.mark.slow
def test_the_error_rate_is_at_most_delta():
    """Frank-Wolfe sampling under the GLR stop with the practical threshold, 300 runs at delta = 0.1, on an instance
    with a correct answer other than the best item."""
    env = LinearBandit(EASIER_X, EASIER_THETA, Z=EASIER_Z)
    errors = sum(not run(make_algorithm("fws:problem=epsilon-good:epsilon=0.3"), env, 0.1, seed=s).correct
                 for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 1.0], 0.0), "not unique"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], -0.1), "epsilon"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], np.inf), "epsilon"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], True), "epsilon"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.ones((3, 2)), np.eye(2), [1.0, 0.5], 0.1), "span"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, np.nan], 0.1), "theta"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.ones((3, 2)), [1.0, 0.5], 0.1), "equals"),
    (lambda: od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], 0.1, sigma=-1), "sigma"),
    (lambda: LinearEpsilonGoodProblem(np.eye(2), None, -1.0), "epsilon"),
    (lambda: LinearEpsilonGoodProblem(np.eye(2), None, 0.1, kind="multiplicative"), "additive"),
    (lambda: LinearEpsilonGoodProblem(np.eye(2), None, 0.1).correct(5, np.ones(2)), r"\[0, 2\)"),
    (lambda: run(make_algorithm("fws:problem=epsilon-good:epsilon=0"), LinearBandit(np.eye(2), np.array([1.0, 1.0])),
                 0.1, seed=0), "tie"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
