"""Arms with rewards in [0, 1], nothing else known to the learner: the simulated counts, the estimate, the GLR against
brute force, the betting threshold (Cover's mixture and its regret, coverage along simulated paths), runs of every
generic rule, Bernoulli arms run through either model, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ARM_RULES, clopper_pearson_upper
from scipy import stats
from scipy.special import logsumexp

from bandits.instances import parse_instance
from bandits.pure_exploration.betting_bounds import BettingThreshold, portfolio_regret
from bandits.pure_exploration.bounded import BoundedProblem
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.environment import BoundedBandit
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import kl_inf

INSTANCE = "bounded:means=0.8/0.6/0.5/0.3,levels=5"


def test_a_batch_draws_the_counts_on_the_support_in_law():
    env = BoundedBandit(np.array([0.0, 0.5, 1.0]), np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    rng = np.random.default_rng(0)
    draws = np.array([env.pull([40, 7], rng) for _ in range(4000)])
    assert np.all(draws.sum(axis=2) == [40, 7])
    assert draws[:, 0].mean(axis=0) == pytest.approx(40 * env.probs[0], rel=0.02)
    # arm 1's count at 0 after 7 pulls is Binomial(7, 0.6)
    observed = np.bincount(draws[:, 1, 0].astype(int), minlength=8)
    assert stats.chisquare(observed, 4000 * stats.binom.pmf(np.arange(8), 7, 0.6)).pvalue > 1e-3
    assert np.all(env.pull([0, 0], rng) == 0) and env.means == pytest.approx([0.65, 0.25])


def test_the_estimate_is_the_empirical_distribution():
    problem = BoundedProblem(2, [0.0, 0.5, 1.0])
    theta = problem.estimate(np.array([4, 2]), np.array([[1.0, 1.0, 2.0], [0.0, 2.0, 0.0]]))
    assert theta == pytest.approx([0.25, 0.25, 0.5, 0.0, 1.0, 0.0])
    assert problem.arm_means(theta) == pytest.approx([0.625, 0.5]) and problem.answer(theta) == 0
    assert problem.moments == 3 and problem.dim == 6


def test_the_glr_is_the_least_cost_of_moving_the_best_below_another_arm():
    """Each piece against a dense grid over the common mean x of N_B K-(F_B, x) + N_j K+(F_j, x)."""
    rng = np.random.default_rng(7)
    support = np.linspace(0, 1, 4)
    problem = BoundedProblem(3, support)
    P = rng.dirichlet(np.ones(4), size=3)
    counts = np.array([30.0, 12.0, 50.0])
    pieces = problem.pieces(P.ravel(), counts)
    means = P @ support
    for row, j in enumerate(pieces.answers):
        grid = np.linspace(means[j], means[pieces.best], 2001)
        brute = min(counts[pieces.best] * kl_inf(P[pieces.best], support, x) + counts[j] * kl_inf(P[j], support, x)
                    for x in grid)
        assert pieces.values[row] <= brute + 1e-12 and pieces.values[row] == pytest.approx(brute, rel=1e-5)
    costs = problem.pair_costs(P.ravel(), counts, pieces.best)
    assert np.isinf(costs[pieces.best]) and np.delete(costs, pieces.best) == pytest.approx(pieces.values)
    share = problem.pair_share(P.ravel(), counts, pieces.best, int(pieces.answers[0]))
    assert 0 < share < 1


def bets(x, mu, u):
    """log W_n(u) for every n along x (rows) and every bet u (columns)."""
    factors = np.log(np.outer(x / mu, u) + np.outer((1 - x) / (1 - mu), 1 - u))
    return np.cumsum(factors, axis=0)


def test_cover_mixture_loses_at_most_v_n_to_the_best_bet():
    """log max_u W_n(u) - log E_{Beta(1/2, 1/2)} W_n(u) <= log V(n) for every n, on random sequences in [0, 1] and on
    the extreme one (all ones), where the bound is nearly met; n KL_inf(F_hat_n, mu) is log max_u W_n(u)."""
    theta = (np.arange(20000) + 0.5) / 20000 * np.pi / 2  # u = sin^2(theta): Beta(1/2, 1/2) is uniform in theta
    u = np.sin(theta) ** 2
    rng = np.random.default_rng(11)
    n = np.arange(1, 301)
    for x, mu in ((rng.uniform(size=300), 0.5), (rng.beta(0.3, 0.7, size=300), 0.45), (np.ones(300), 0.6)):
        logW = bets(x, mu, u)
        mixture = logsumexp(logW, axis=1) - np.log(u.size)
        regret = logW.max(axis=1) - mixture
        assert np.all(regret <= portfolio_regret(n) + 1e-6)
        for k in (10, 100, 300):
            values, counts = np.unique(x[:k], return_counts=True)
            support, p = np.clip(values, 0, 1), counts / k
            assert k * kl_inf(p, support, mu) == pytest.approx(max(logW[k - 1].max(), 0.0), rel=1e-4, abs=1e-6)
    assert regret[-1] == pytest.approx(portfolio_regret(300), abs=0.01)


def test_the_betting_cap_holds_uniformly_along_simulated_paths():
    """n KL_inf(F_hat_n, mu) <= log(1 / eta) + log V(n) for every n <= 1000 on all but a fraction eta of paths
    (one-sided 95 % Clopper-Pearson), on a skewed distribution of [0, 1]."""
    eta, paths, horizon = 0.1, 400, 1000
    support = np.array([0.0, 0.3, 1.0])
    p = np.array([0.5, 0.4, 0.1])
    mu = p @ support
    rng = np.random.default_rng(3)
    checks = np.unique(np.geomspace(1, horizon, 60).astype(int))
    cap = np.log(1 / eta) + portfolio_regret(checks)
    misses = 0
    for _ in range(paths):
        counts = np.cumsum(rng.multinomial(1, p, size=horizon), axis=0)
        misses += any(n * kl_inf(counts[n - 1] / n, support, mu) > c for n, c in zip(checks, cap, strict=True))
    assert clopper_pearson_upper(misses, paths) <= eta, misses


def test_the_cap_bounds_are_the_sum_of_the_arms_caps():
    counts = np.array([40.0, 300.0, 9.0])
    bounds = BettingThreshold(3)(349, 0.01, counts)
    caps = 0.5 * np.log(2 / 0.01) + portfolio_regret(counts)
    assert bounds.of_pairs(1, np.array([0, 2])) == pytest.approx([caps[1] + caps[0], caps[1] + caps[2]])
    assert portfolio_regret(np.array([0.0]))[0] == pytest.approx(0.0, abs=1e-12)
    assert np.all(portfolio_regret(np.arange(1, 500)) <= np.log(2 * np.sqrt(np.arange(1, 500) + 1)))


RULES = ARM_RULES


@pytest.mark.parametrize("rule", RULES)
def test_every_generic_rule_identifies_the_best_arm(rule):
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory"
    result = run(make_algorithm(text), parse_instance(INSTANCE), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule"


@pytest.mark.parametrize("rule", ["top-two:challenger=tci", "round-robin"])
def test_bernoulli_arms_run_the_same_through_either_model(rule):
    """On two levels the bounded instance draws what the Bernoulli one draws (while batches stay small; numpy's
    multinomial and binomial realise large batches differently), and KL_inf is Bernoulli's kl: the same seed gives
    the same run under the same threshold."""
    bounded = run(make_algorithm(rule), parse_instance("bounded:means=0.5/0.45/0.43/0.4,levels=2"), 0.1, seed=2)
    bernoulli = run(make_algorithm(rule), parse_instance("bernoulli:means=0.5/0.45/0.43/0.4"), 0.1, seed=2)
    assert bounded.samples == bernoulli.samples and bounded.recommendation == bernoulli.recommendation


def test_the_study_lower_bound_is_the_bernoulli_one_on_two_levels():
    env = parse_instance("bounded:means=0.5/0.45/0.43/0.4,levels=2")
    problem = BoundedProblem.of_environment(env)
    assert problem.lower_bound(problem.true_parameter(env))["value"] == pytest.approx(989.79, abs=0.01)


@pytest.mark.slow
def test_the_theory_threshold_errs_at_most_delta():
    """1,000 runs of EB-TCI under the betting threshold at delta = 0.1 on random distributions with close means."""
    env, runs, delta = parse_instance("bounded:K=4,seed=2,gap=0.02"), 1000, 0.1
    algorithm = make_algorithm("top-two:challenger=tci,threshold=theory")
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


@pytest.mark.parametrize(("text", "instance", "error", "match"), [
    ("lingame", INSTANCE, MissingCapability, "lingame needs optimism"),
    ("top-two:problem=multiplicative-epsilon-good:epsilon=1", INSTANCE, InvalidInputError, "below 1"),
    ("top-two", "bounded:means=1.2/0.5", InvalidInputError, r"\[0, 1\]"),
    ("top-two", "bounded:means=0.7/0.5,seed=2", InvalidInputError, "not both"),
    ("top-two", "bounded:means=0.7/0.5,levels=1", InvalidInputError, "levels must be at least 2"),
    ("top-two", "bounded:means=0.5/0.5", InvalidInputError, "tie"),
    ("top-two", "bounded:K=3,seed=1,gap=0.9", InvalidInputError, "lower gap"),
])
def test_bad_input_is_refused_clearly(text, instance, error, match):
    with pytest.raises(error, match=match):
        run(make_algorithm(text), parse_instance(instance), 0.1, seed=0)


def test_a_random_instance_is_reproducible_and_separated():
    one, two = parse_instance("bounded:K=10,seed=4"), parse_instance("bounded:K=10,seed=4,levels=5")
    assert np.array_equal(one.probs, two.probs) and one.n_arms == 10 and one.support.size == 5
    top = np.sort(one.means)
    assert top[-1] - top[-2] >= 0.05
