"""Epsilon-good identification on Gaussian arms of unequal variances, additive and multiplicative: the shifted and
scaled pieces against brute-force minimisation and against the K-armed Gaussian question, the oracle (the easiest
epsilon-good answer), the runs, the refusals and (slow) the error rate under the theory threshold."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ARM_RULES, clopper_pearson_upper
from scipy.optimize import minimize_scalar

from bandits.instances import parse_instance
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.arm_epsilon_good import HeteroscedasticEpsilonGoodProblem
from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem
from bandits.pure_exploration.families import Gaussian
from bandits.pure_exploration.heteroscedastic import HeteroscedasticProblem
from bandits.pure_exploration.samplers.top_two import TopTwo
from bandits.pure_exploration.stop import GLRStop
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

TWO_GOOD = "heteroscedastic:means=1/0.95/0.6/0.2,sigmas=0.5/1.5/1/0.7"


@pytest.mark.parametrize("epsilon", [0.0, 0.03, 0.1, 0.5])
def test_known_equal_variances_give_the_gaussian_question(epsilon):
    env = parse_instance("heteroscedastic:means=1/0.95/0.6/0.2,sigmas=0.5/0.5/0.5/0.5")
    ours = HeteroscedasticEpsilonGoodProblem(4, epsilon, sigmas=env.sigmas)
    gaussian = EpsilonGoodProblem(4, epsilon, Gaussian(0.5))
    theta, counts = ours.true_parameter(env), np.array([20.0, 30.0, 12.0, 8.0])
    assert ours.pieces(theta, counts).values == pytest.approx(gaussian.pieces(env.means, counts).values, rel=1e-9)
    assert ours.oracle(theta).T == pytest.approx(gaussian.oracle(env.means).T, rel=1e-6)


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.4])
def test_known_equal_variances_give_the_gaussian_multiplicative_question(epsilon):
    """Scaled pieces (c mu_b - mu_j)^2 / (2 sigma^2 (c^2 / w_b + 1 / w_j)) and T* of the K-armed question, whose
    multiplicative oracle is the equalisation of optdesign.identification.shifted (another code path)."""
    env = parse_instance("heteroscedastic:means=1/0.95/0.6/0.2,sigmas=0.5/0.5/0.5/0.5")
    ours = HeteroscedasticEpsilonGoodProblem(4, epsilon, sigmas=env.sigmas, kind="multiplicative")
    gaussian = EpsilonGoodProblem(4, epsilon, Gaussian(0.5), kind="multiplicative")
    theta, counts = ours.true_parameter(env), np.array([20.0, 30.0, 12.0, 8.0])
    assert ours.pieces(theta, counts).values == pytest.approx(gaussian.pieces(env.means, counts).values, rel=1e-9)
    assert ours.oracle(theta).T == pytest.approx(gaussian.oracle(env.means).T, rel=1e-6)
    assert [ours.correct(k, theta) for k in range(4)] == [gaussian.correct(k, env.means) for k in range(4)]


def test_epsilon_zero_is_best_arm_identification():
    env = parse_instance(TWO_GOOD)
    ours, bai = HeteroscedasticEpsilonGoodProblem.of_environment(env), HeteroscedasticProblem.of_environment(env)
    theta, counts = ours.true_parameter(env), np.array([20.0, 30.0, 12.0, 8.0])
    assert ours.pieces(theta, counts).values == pytest.approx(bai.pieces(theta, counts).values, rel=1e-12)
    assert ours.oracle(theta).T == pytest.approx(bai.oracle(theta).T, rel=1e-9)


def test_a_piece_is_the_least_cost_of_putting_an_arm_epsilon_above_the_answer():
    """min over x of w_b g_b(x) + w_j g_j(x + epsilon), g the EV divergence 1/2 log(1 + (mu - x)^2 / sigma^2)."""
    env, epsilon = parse_instance(TWO_GOOD), 0.1
    problem = HeteroscedasticEpsilonGoodProblem.of_environment(env, epsilon=epsilon)
    theta, w = problem.true_parameter(env), np.array([0.3, 0.4, 0.2, 0.1])
    mu, sd = env.means, env.sigmas

    def g(k: int, x: float) -> float:
        return 0.5 * np.log1p((mu[k] - x) ** 2 / sd[k] ** 2)

    pieces = problem.pieces(theta, w)
    for j, value in zip(pieces.answers, pieces.values, strict=True):
        lo, hi = mu[j] - epsilon, mu[0]
        if lo >= hi:
            assert value == 0.0
            continue
        grid = np.linspace(lo, hi, 2001)  # the EV divergence is not convex: a grid, then a local polish
        x0 = grid[np.argmin([w[0] * g(0, x) + w[j] * g(j, x + epsilon) for x in grid])]
        step = (hi - lo) / 2000
        brute = minimize_scalar(lambda x, j=j: w[0] * g(0, x) + w[j] * g(j, x + epsilon),
                                bounds=(max(lo, x0 - step), min(hi, x0 + step)), method="bounded",
                                options={"xatol": 1e-12})
        assert value == pytest.approx(brute.fun, rel=1e-6)


@pytest.mark.parametrize("kind", ["additive", "multiplicative"])
def test_a_scaled_piece_is_the_least_cost_of_putting_an_arm_above_the_answer(kind):
    """min over x of w_b g_b(x) + w_j g_j(c x + s) (additive: c = 1, s = 0.1; multiplicative: c = 1 / 0.9, s = 0),
    g the EV divergence, by a grid and a local polish (the divergence is not convex)."""
    env, epsilon = parse_instance(TWO_GOOD), 0.1
    problem = HeteroscedasticEpsilonGoodProblem.of_environment(env, epsilon=epsilon, kind=kind)
    shift, scale = (epsilon, 1.0) if kind == "additive" else (0.0, 1 / (1 - epsilon))
    theta, w = problem.true_parameter(env), np.array([0.3, 0.4, 0.2, 0.1])
    mu, sd = env.means, env.sigmas

    def cost(j: int, x: float) -> float:
        return w[0] * 0.5 * np.log1p((mu[0] - x) ** 2 / sd[0] ** 2) + w[j] * 0.5 * np.log1p(
            (mu[j] - scale * x - shift) ** 2 / sd[j] ** 2)

    pieces = problem.pieces(theta, w)
    for j, value in zip(pieces.answers, pieces.values, strict=True):
        lo, hi = (mu[j] - shift) / scale, mu[0]
        if lo >= hi:
            assert value == 0.0
            continue
        grid = np.linspace(lo, hi, 2001)
        x0, step = grid[np.argmin([cost(j, x) for x in grid])], (hi - lo) / 2000
        brute = minimize_scalar(lambda x, j=j: cost(j, x), bounds=(max(lo, x0 - step), min(hi, x0 + step)),
                                method="bounded", options={"xatol": 1e-12})
        assert value == pytest.approx(brute.fun, rel=1e-6)


def test_the_oracle_is_the_easiest_epsilon_good_answer():
    env = parse_instance("heteroscedastic:means=1/1/0.5,sigmas=1/0.5/1")
    problem = HeteroscedasticEpsilonGoodProblem.of_environment(env, epsilon=0.1)
    theta = problem.true_parameter(env)
    oracle = problem.oracle(theta)
    # each answer alone: best-arm identification of it against the others lowered by epsilon
    each = [HeteroscedasticProblem(3).oracle(np.concatenate([np.where(np.arange(3) == i, 1.0, env.means - 0.1)
                                                              if i < 2 else env.means, env.sigmas**2])).T
            for i in range(2)]
    assert oracle.T == pytest.approx(min(each), rel=1e-9) and oracle.lower_bound <= oracle.T
    assert problem.correct(0, theta) and problem.correct(1, theta) and not problem.correct(2, theta)
    with pytest.raises(InvalidInputError, match="strictly epsilon-good"):
        HeteroscedasticEpsilonGoodProblem.of_environment(env).oracle(theta)


RULES = ARM_RULES


@pytest.mark.parametrize("question", ["epsilon-good:epsilon=0.1", "multiplicative-epsilon-good:epsilon=0.1"])
@pytest.mark.parametrize("rule", RULES)
def test_every_generic_rule_finds_an_epsilon_good_arm(rule, question):
    """0.95 is within 0.1 of 1, and above 0.9 of it."""
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory,problem={question}"
    result = run(make_algorithm(text), parse_instance(TWO_GOOD), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule" and result.recommendation in (0, 1)


def test_known_variances_and_the_plug_in_statistic_are_options_of_the_question():
    """The question's class takes the arms' model options, by its path or by name with the options grouped."""
    env = parse_instance(TWO_GOOD)
    path = "bandits.pure_exploration.arm_epsilon_good:HeteroscedasticEpsilonGoodProblem"
    known = PureExploration(TopTwo(), GLRStop("theory"), problem=f"{path}:epsilon=0.1,known=true")
    named = make_algorithm("top-two:threshold=theory,problem=(epsilon-good:epsilon=0.1,known=true)")
    assert named.question(env).known and named.question(env).epsilon == 0.1
    assert known.question(env).known and run(known, env, 0.1, seed=0).correct
    plugin = PureExploration(TopTwo(), problem=f"{path}:epsilon=0.1,statistic=plugin")
    assert plugin.question(env).statistic == "plugin" and run(plugin, env, 0.1, seed=0).correct


@pytest.mark.slow
def test_the_theory_threshold_errs_at_most_delta():
    """1,000 runs of EB-TCI under the unknown-variance caps at delta = 0.1, two arms within epsilon."""
    env, runs, delta = parse_instance("heteroscedastic:means=1/0.95/0.8/0.5,sigmas=1/2/0.5/1"), 1000, 0.1
    algorithm = make_algorithm("top-two:challenger=tci,threshold=theory,problem=epsilon-good:epsilon=0.1")
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


def test_bad_input_is_refused_clearly():
    env = parse_instance(TWO_GOOD)
    with pytest.raises(InvalidInputError, match="epsilon"):
        run(make_algorithm("top-two:problem=epsilon-good:epsilon=-0.1"), env, 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="not linear"):
        run(make_algorithm("top-two:problem=multiplicative-epsilon-good:epsilon=0.1"),
            parse_instance("soare:d=2,omega=0.1"), 0.1)
    with pytest.raises(InvalidInputError, match="below 1"):
        run(make_algorithm("top-two:problem=multiplicative-epsilon-good:epsilon=1"), env, 0.1)
    with pytest.raises(InvalidInputError, match="unknown kind"):
        HeteroscedasticEpsilonGoodProblem(4, 0.1, kind="relative")
    negative = HeteroscedasticEpsilonGoodProblem(2, 0.1, kind="multiplicative")
    with pytest.raises(InvalidInputError, match="positive best mean"):
        negative.oracle(np.array([-1.0, -2.0, 1.0, 1.0]))
    problem = HeteroscedasticEpsilonGoodProblem.of_environment(env, epsilon=0.1)
    with pytest.raises(InvalidInputError, match="m = 1"):
        problem.top_m_oracle(problem.true_parameter(env), 2)
