"""The factored pure-exploration problem against independent truths: the closest alternative by numerical
minimisation, the best response against enumeration, gradients against finite differences, and the oracle
against the K-armed closed form when there is one agent."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import Gaussian, KArmedProblem
from optdesign import FactorGraph
from optdesign.errors import InstanceTooLargeError, InvalidInputError

GRAPHS = {
    "line": lambda: FactorGraph.line(3, 2, seed=1),
    "ring": lambda: FactorGraph.ring(4, 2, seed=2),
    "star": lambda: FactorGraph.star(4, 2, seed=3),
    "grid": lambda: FactorGraph.grid(2, 2, 2, seed=4),
    "mixed K": lambda: FactorGraph.line(3, [2, 3, 2], seed=5),
    "one agent": lambda: FactorGraph([5], [((0,), np.random.default_rng(6).normal(size=5))]),
    "one factor, scope reversed": lambda: FactorGraph([2, 3], [((1, 0), np.random.default_rng(7).normal(size=(3, 2)))]),
}


def case(name: str, seed: int, sigma: float = 1.0) -> tuple[FactoredProblem, np.ndarray, np.ndarray]:
    fg = GRAPHS[name]()
    problem = FactoredProblem(fg, sigma)
    rng = np.random.default_rng(seed)
    return problem, rng.normal(size=problem.n_arms), rng.uniform(0.2, 3.0, size=problem.n_arms)


def brute_piece(problem: FactoredProblem, mu: np.ndarray, w: np.ndarray, action: np.ndarray) -> float:
    """inf over lambda with lambda(action) >= lambda(a_hat) of sum_k w_k (mu_k - lambda_k)^2 / (2 sigma^2)."""
    ix = problem.indexer
    star = ix.flat(problem.decode(problem.answer(mu))[None, :])[0]
    other = ix.flat(action[None, :])[0]
    direction = np.zeros(problem.n_arms)
    np.add.at(direction, other, 1.0)
    np.add.at(direction, star, -1.0)  # lambda(action) - lambda(a_hat) = direction @ lambda
    res = minimize(lambda lam: w @ (mu - lam) ** 2 / (2 * problem.sigma**2), mu, method="SLSQP",
                   jac=lambda lam: -w * (mu - lam) / problem.sigma**2,
                   constraints=[{"type": "ineq", "fun": lambda lam: direction @ lam, "jac": lambda lam: direction}],
                   options={"ftol": 1e-14, "maxiter": 500})
    return float(res.fun)


@pytest.mark.parametrize("name", GRAPHS)
def test_pieces_equal_the_closest_alternative_found_numerically(name):
    problem, mu, w = case(name, 0, sigma=1.5)
    pieces = problem.pieces(mu, w)
    rng = np.random.default_rng(1)
    for j in rng.choice(pieces.answers.size, size=min(6, pieces.answers.size), replace=False):
        action = problem.decode(int(pieces.answers[j]))
        assert pieces.values[j] == pytest.approx(brute_piece(problem, mu, w, action), rel=1e-6, abs=1e-10)


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("seed", range(4))
def test_best_response_equals_enumeration(name, seed):
    problem, mu, w = case(name, seed)
    pieces = problem.pieces(mu, w, gradients=False)
    response = problem.best_response(mu, w)
    assert response.exact and response.value == pytest.approx(pieces.value, rel=1e-12)
    assert response.action is not None
    mine = problem.decode(pieces.challenger)
    # the same joint action, or one with the same value (a tie)
    same = np.array_equal(response.action, mine)
    tied = pieces.values[list(pieces.answers).index(int(np.ravel_multi_index(
        response.action, problem.structure.n_actions)))] == pytest.approx(pieces.value, rel=1e-12)
    assert same or tied


@pytest.mark.parametrize("name", ["line", "mixed K", "one agent"])
def test_gradients_are_the_derivatives_of_the_pieces(name):
    problem, mu, w = case(name, 3)
    pieces = problem.pieces(mu, w)
    eps = 1e-6
    for k in range(problem.n_arms):
        step = np.zeros(problem.n_arms)
        step[k] = eps
        numeric = (problem.pieces(mu, w + step, gradients=False).values
                   - problem.pieces(mu, w - step, gradients=False).values) / (2 * eps)
        assert np.allclose(pieces.gradients[:, k], numeric, rtol=1e-5, atol=1e-8)
    assert np.allclose(pieces.gradients @ w, pieces.values)  # f_a(w) = <grad f_a, w> (the envelope form)


def test_one_agent_is_best_arm_identification():
    problem, mu, _ = case("one agent", 7, sigma=2.0)
    oracle = problem.oracle(mu)
    karmed = KArmedProblem(problem.n_arms, Gaussian(2.0)).oracle(mu)
    assert oracle.T == pytest.approx(karmed.T, rel=1e-3)
    assert oracle.lower_bound <= oracle.T * (1 + 1e-9)
    assert np.allclose(oracle.weights, karmed.weights, atol=1e-2)


@pytest.mark.parametrize("name", ["line", "ring", "mixed K"])
def test_the_oracle_weights_attain_one_over_T(name):
    problem, mu, _ = case(name, 8)
    oracle = problem.oracle(mu)
    value = problem.pieces(mu, oracle.weights, gradients=False).value
    assert value == pytest.approx(1.0 / oracle.T, rel=1e-6)
    assert oracle.lower_bound <= oracle.T and oracle.lower_bound >= 0.999 * oracle.T
    starts = np.cumsum([0, *problem.structure.table_sizes])
    assert np.allclose([oracle.weights[a:b].sum() for a, b in itertools.pairwise(starts)], 1.0)


def test_glr_at_counts_and_unobserved_group_actions():
    problem, mu, w = case("ring", 9)
    counts = np.round(w * 10).astype(np.int64) + 1
    assert problem.best_response(mu, counts).value == pytest.approx(problem.pieces(mu, counts).value, rel=1e-12)
    counts[3] = 0  # an alternative can move an unobserved mean for free
    assert problem.best_response(mu, counts).value == 0.0
    estimate = problem.estimate(counts, counts * mu)
    assert estimate[3] == 0.0 and np.allclose(np.delete(estimate, 3), np.delete(mu, 3))


def test_bad_input():
    problem, mu, w = case("line", 0)
    with pytest.raises(InvalidInputError):
        FactoredProblem("ring")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        FactoredProblem(GRAPHS["line"](), sigma=0.0)
    with pytest.raises(InvalidInputError):
        problem.pieces(mu[:-1], w)
    with pytest.raises(InstanceTooLargeError, match="best_response"):
        FactoredProblem(FactorGraph.ring(30, 3, seed=0)).pieces(np.zeros(270), np.ones(270))
