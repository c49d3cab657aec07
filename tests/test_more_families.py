"""Poisson and exponential K-armed instances: the families' kl against the closed forms and optdesign's divergences,
their derivatives, reward sums, KL confidence intervals and posteriors; GK16's oracle against optdesign's model;
the generic rules and the other questions (top m, thresholding) run on them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper

import optdesign
from bandits.instances import INSTANCES, parse_instance
from bandits.pure_exploration.families import Exponential, Poisson
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification.families import divergence

FAMILIES = [Poisson(), Exponential()]
X = np.array([0.05, 0.3, 1.0, 1.0, 2.0, 2.5, 7.0, 40.0])
Y = np.array([0.1, 0.31, 1.0, 3.0, 1.5, 2.5 * (1 + 1e-6), 0.02, 39.0])


def closed_form(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d(x, y) as the textbook writes it."""
    if name == "poisson":
        return x * np.log(x / y) - x + y
    return x / y - 1.0 - np.log(x / y)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_kl_is_the_closed_form_and_optdesigns_divergence(family):
    assert family.name in optdesign.identification.FAMILIES
    kl = family.kl(X[:, None], Y[None, :])
    np.testing.assert_allclose(kl, closed_form(family.name, X[:, None], Y[None, :]), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(kl, divergence(X[:, None], Y[None, :], family.name), rtol=1e-9, atol=1e-15)
    assert np.all(kl >= 0) and np.all(np.diag(family.kl(X, X)) == 0)
    close = family.kl(1.0, 1.0 + 1e-9)  # evaluated without cancellation: d ~ (y - x)^2 / (2 v(x))
    assert close == pytest.approx(0.5e-18, rel=1e-5)


def test_the_boundary_stays_finite():
    poisson, exponential = Poisson(), Exponential()
    np.testing.assert_allclose(poisson.kl(0.0, [0.5, 2.0]), [0.5, 2.0])  # d(0, y) = y
    np.testing.assert_allclose(divergence(0.0, [0.5, 2.0], "poisson"), [0.5, 2.0])
    for value in (poisson.kl(1.0, 0.0), exponential.kl(1.0, 0.0), exponential.kl(0.0, 1.0),
                  poisson.kl_derivative(1.0, 0.0), exponential.kl_derivative(1.0, 0.0), poisson.kl(1.0, np.inf)):
        assert np.isfinite(value)
    assert poisson.kl(1.0, 0.0) > 30 and exponential.kl(1.0, 0.0) > 1e14 and exponential.kl(0.0, 1.0) > 30


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_the_derivative_matches_finite_differences(family):
    x, y = np.meshgrid([0.2, 1.0, 3.0], [0.1, 0.5, 1.0, 2.9, 8.0])
    h = 1e-6 * y
    numeric = (family.kl(x, y + h) - family.kl(x, y - h)) / (2 * h)
    np.testing.assert_allclose(family.kl_derivative(x, y), numeric, rtol=1e-6, atol=1e-9)
    variance = y if family.name == "poisson" else y**2
    np.testing.assert_allclose(family.kl_derivative(x, y), (y - x) / variance, rtol=1e-12)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_reward_sums_have_mean_n_mu_and_variance_n_v(family):
    rng = np.random.default_rng(12)
    draws, n = 40_000, 3
    for mu in (0.4, 2.5):
        sums = family.sample_sums(np.full(draws, mu), np.full(draws, n), rng)
        variance = mu if family.name == "poisson" else mu**2
        assert abs(sums.mean() - n * mu) <= 4 * np.sqrt(n * variance / draws)
        centred = (sums - sums.mean()) ** 2
        assert abs(centred.mean() - n * variance) <= 4 * centred.std() / np.sqrt(draws)
    np.testing.assert_array_equal(family.sample_sums(np.array([1.0, 2.0]), np.array([0, 0]), rng), [0.0, 0.0])


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_confidence_bounds_sit_at_the_level(family):
    mu = np.array([0.01, 0.5, 2.0, 10.0, 3.0])
    level = np.array([0.1, 0.2, 1e-3, 5.0, 30.0])
    lower, upper = family.confidence_interval(mu, level)
    assert np.all((0 < lower) & (lower < mu) & (mu < upper))
    np.testing.assert_allclose(family.kl(mu, lower), level, rtol=1e-8)
    np.testing.assert_allclose(family.kl(mu, upper), level, rtol=1e-8)
    huge_lower, huge_upper = family.confidence_interval(np.array([1.0]), np.array([1e300]))  # counts ~ 0
    assert 0 < huge_lower[0] < 1e-12 and np.isfinite(huge_upper[0]) and huge_upper[0] > 1e100


def test_a_poisson_mean_zero_has_the_interval_zero_to_the_level():
    lower, upper = Poisson().confidence_interval(np.array([0.0]), np.array([0.3]))
    assert lower[0] == 0 and upper[0] == pytest.approx(0.3, rel=1e-12)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_posterior_draws_have_the_posterior_mean(family):
    counts, sums = np.array([4.0, 20.0, 9.0]), np.array([3.0, 31.0, 20.0])
    draws = family.posterior_draws(sums / counts, counts, sums, 100_000, np.random.default_rng(3))
    assert draws.shape == (100_000, 3) and np.all(draws > 0) and family.has_posterior
    if family.name == "poisson":  # Gamma(1/2 + S, rate N): mean (1/2 + S) / N
        mean, sd = (0.5 + sums) / counts, np.sqrt(0.5 + sums) / counts
    else:  # 1 / rate, rate ~ Gamma(N, rate S): inverse gamma of mean S / (N - 1)
        mean = sums / (counts - 1)
        sd = mean / np.sqrt(counts - 2)
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 5 * sd / np.sqrt(draws.shape[0]))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
@pytest.mark.parametrize("means", [[2.0, 1.5, 1.0], [0.5, 0.45, 0.43, 0.4], [4.0, 3.0, 0.7, 3.5, 0.2]])
def test_the_oracle_is_optdesigns_characteristic_time(family, means):
    mu = np.array(means)
    oracle = KArmedProblem(mu.size, family).oracle(mu)
    model = optdesign.pairwise_characteristic_time(mu, optdesign.best_arm_pairs(mu), family=family.name)
    assert oracle.T == pytest.approx(model.value, rel=1e-5)
    assert oracle.lower_bound == pytest.approx(oracle.T, rel=1e-9)
    np.testing.assert_allclose(oracle.weights, model.weights, atol=1e-4)


@pytest.mark.parametrize("text", ["poisson:means=2/1.5/1", "exponential:means=2/1.5/1"])
@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "top-two", "top-two:leader=ts"])
def test_generic_rules_identify_the_best_arm(text, rule):
    env = parse_instance(text)
    for seed in range(2):
        result = run(make_algorithm(rule), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == 0


@pytest.mark.parametrize(("rule", "answer"), [("fws:problem=top-m:m=2", 0b11),
                                              ("track-and-stop:problem=threshold:level=1.2", 0b11)])
def test_the_other_questions_run_on_poisson_arms(rule, answer):
    env = parse_instance("poisson:means=2/1.5/1/0.5")
    for seed in range(2):
        result = run(make_algorithm(rule), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == answer


def test_the_instances_are_named_karmed_instances():
    for name, family in (("poisson", Poisson), ("exponential", Exponential)):
        env = parse_instance(name)
        assert INSTANCES[name].kind == env.kind == "karmed" and isinstance(env.family, family)
        assert env.name == f"{name}(2.0/1.5/1.0)" and env.family.describe() == {"family": name}


@pytest.mark.slow
@pytest.mark.parametrize("text", ["poisson:means=2/1.5/1", "exponential:means=2/1.5/1"])
def test_the_error_rate_is_at_most_delta(text):
    """Track-and-Stop under the GLR stop with the practical threshold, 300 runs at delta = 0.1."""
    env = parse_instance(text)
    errors = sum(not run(make_algorithm("track-and-stop"), env, 0.1, seed=s).correct for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: parse_instance("poisson:means=1/-0.5"), "Poisson means must be nonnegative"),
    (lambda: parse_instance("exponential:means=1/0"), "exponential means must be positive"),
    (lambda: parse_instance("exponential:means=1/-2"), "exponential means must be positive"),
    (lambda: parse_instance("poisson:means=1/nan"), "means contains NaN"),
    (lambda: parse_instance("exponential:means=nan/1"), "means contains NaN"),
    (lambda: Poisson().check_means(np.array([1.0, np.nan])), "Poisson means must be nonnegative finite"),
    (lambda: Exponential().check_means(np.array([1.0, np.inf])), "exponential means must be positive finite"),
    (lambda: KArmedProblem(2, Exponential()).oracle(np.array([1.0, 0.0])), "exponential means must be positive"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
