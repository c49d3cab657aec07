"""Gaussian arms of unequal variances, known to the learner or not: the simulated statistics, the estimate, the GLR
against brute force, the delta-correct pairwise threshold and its time-uniform bound (the t-test martingale), runs
of every generic rule and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ARM_RULES, clopper_pearson_upper
from scipy import stats

from bandits.instances import parse_instance
from bandits.pure_exploration import HeteroscedasticBandit, HeteroscedasticProblem
from bandits.pure_exploration.cap_bounds import CapBounds
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.variance_bounds import VarianceThreshold, mean_deviation_cap
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import variance_divergence

INSTANCE = "heteroscedastic:means=1/0.6/0.2/-0.2,sigmas=0.5/1/1.5/1"


def test_a_batch_draws_the_sum_and_the_sum_of_squares_in_law():
    """(sum, centred sum of squares) of n pulls against n separate draws: Kolmogorov-Smirnov on both."""
    env = HeteroscedasticBandit(np.array([0.3, -1.0]), np.array([0.7, 2.0]))
    rng, n, reps = np.random.default_rng(0), np.array([5, 9]), 3000
    batches = np.array([env.pull(n, rng) for _ in range(reps)])  # (reps, K, 2)
    for k in range(2):
        draws = rng.normal(env.means[k], env.sigmas[k], size=(reps, n[k]))
        centred = batches[:, k, 1] - batches[:, k, 0] ** 2 / n[k]
        assert stats.ks_2samp(batches[:, k, 0], draws.sum(axis=1)).pvalue > 1e-3
        assert stats.ks_2samp(centred, ((draws - draws.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)).pvalue > 1e-3


def test_no_pull_gives_zeros_and_one_pull_its_square():
    env = HeteroscedasticBandit(np.array([1.0, 0.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    out = env.pull(np.array([0, 1, 0]), np.random.default_rng(1))
    assert out.shape == (3, 2) and np.all(out[[0, 2]] == 0) and out[1, 1] == pytest.approx(out[1, 0] ** 2)


def test_the_estimate_is_the_mean_and_the_maximum_likelihood_variance():
    rng = np.random.default_rng(2)
    samples = [rng.normal(size=n) for n in (3, 7, 12)]
    counts = np.array([s.size for s in samples])
    moments = np.array([[s.sum(), (s**2).sum()] for s in samples])
    theta = HeteroscedasticProblem(3).estimate(counts, moments)
    assert theta[:3] == pytest.approx([s.mean() for s in samples])
    assert theta[3:] == pytest.approx([s.var() for s in samples])
    known = HeteroscedasticProblem(3, sigmas=[1.0, 2.0, 3.0]).estimate(counts, moments)
    assert known[3:] == pytest.approx([1.0, 4.0, 9.0])


@pytest.mark.parametrize(("statistic", "known"), [("ev", False), ("plugin", False), ("ev", True)])
def test_the_glr_is_the_least_cost_of_moving_the_best_below_another_arm(statistic, known):
    """Each piece against a brute-force minimum over both arms' moved means with lambda_best <= lambda_j."""
    rng = np.random.default_rng(4)
    problem = HeteroscedasticProblem(4, statistic, [0.5, 1.0, 1.5, 1.0] if known else None)
    theta = np.concatenate([[1.0, 0.7, 0.1, -0.3], [0.3, 1.2, 2.0, 0.6] if not known else [0.25, 1.0, 2.25, 1.0]])
    counts = rng.integers(2, 40, size=4).astype(float)
    pieces = problem.pieces(theta, counts)
    sd, log = np.sqrt(theta[4:]), not known and statistic == "ev"
    grid = np.linspace(-0.5, 1.2, 1201)
    for value, j in zip(pieces.values, pieces.answers, strict=True):
        cost_b = counts[0] * variance_divergence(theta[0], sd[0], grid, known_variances=not log)
        cost_j = counts[j] * variance_divergence(theta[j], sd[j], grid, known_variances=not log)
        moved = cost_b[:, None] + cost_j[None, :]  # lambda_best on rows, lambda_j on columns
        brute = np.min(np.where(grid[:, None] <= grid[None, :], moved, np.inf))
        assert value <= brute + 1e-12 and value == pytest.approx(brute, rel=1e-3)


def test_the_t_test_bayes_factor_has_mean_one_under_the_true_mean():
    """E[B_n] = 1 whatever sigma (a likelihood ratio): the formula of the mixture, by Monte Carlo at small n."""
    rng = np.random.default_rng(6)
    for n, g, sigma in ((2, 1.0, 3.0), (3, 0.1, 0.2), (5, 0.5, 1.0)):
        x = rng.normal(0.0, sigma, size=(1_000_000, n))
        z = x.mean(axis=1) ** 2 / x.var(axis=1)
        B = (1 + n * g) ** -0.5 * ((1 + z) / (1 + z / (1 + n * g))) ** (n / 2)
        assert B.mean() == pytest.approx(1.0, abs=0.01)
        # the cap is where B reaches 1 / eta: the same inequality, solved for z
        eta = 0.05
        cap = mean_deviation_cap(np.array([n]), eta, g)[0]
        assert np.mean(z > cap) <= np.mean(B >= 1 / eta) + 1e-12


def test_the_mean_cap_holds_uniformly_along_simulated_paths():
    """(mu_hat - mu)^2 / sigma_hat^2 <= z_max(N) for every N <= 3000 on all but a fraction eta of paths (one-sided
    95 % Clopper-Pearson), whatever sigma; the cap shrinks like log(N) / N."""
    eta, paths, horizon = 0.1, 2000, 3000
    rng = np.random.default_rng(5)
    N = np.arange(1, horizon + 1)
    cap = mean_deviation_cap(N, eta)
    finite = np.isfinite(cap)
    misses = 0
    for _ in range(paths):
        x = rng.normal(2.0, 7.0, size=horizon)
        s, q = np.cumsum(x - 2.0), np.cumsum((x - 2.0) ** 2)
        var = q / N - (s / N) ** 2
        misses += bool(np.any((s / N)[finite] ** 2 > cap[finite] * var[finite]))
    assert clopper_pearson_upper(misses, paths) <= eta, misses
    assert np.all(np.isinf(cap[:2])) and cap[-1] < 0.01 and np.all(np.diff(cap[np.isfinite(cap)]) <= 0)


def test_the_cap_bounds_are_the_sum_of_the_arms_caps():
    counts = np.array([40.0, 300.0, 9.0])
    z = mean_deviation_cap(counts, 0.01 / 3)
    for log in (False, True):
        bounds = VarianceThreshold(3, log)(349, 0.01, counts)
        caps = 0.5 * counts * (np.log1p(z) if log else z)
        assert bounds.of_pairs(1, np.array([0, 2])) == pytest.approx([caps[1] + caps[0], np.inf])
        assert bounds.floor <= caps[0] + caps[1]
    assert isinstance(bounds, CapBounds)


RULES = ARM_RULES


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("question", ["", "problem=unknown-variances:statistic=plugin", "problem=known-variances"])
def test_every_generic_rule_identifies_the_best_arm(rule, question):
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory{',' + question if question else ''}"
    result = run(make_algorithm(text), parse_instance(INSTANCE), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule"


def test_known_and_unknown_runs_share_the_instance_and_its_draws():
    """The same seed draws the same first pass; the known-variance run may stop earlier but reports the smaller
    lower bound."""
    env = parse_instance(INSTANCE)
    unknown = run(make_algorithm("top-two:threshold=theory"), env, 0.05, seed=7, trace=True)
    known = run(make_algorithm("top-two:threshold=theory,problem=known-variances"), env, 0.05, seed=7, trace=True)
    assert unknown.correct and known.correct and unknown.trace[0]["samples"] == known.trace[0]["samples"] == 8
    theta = np.concatenate([env.means, env.sigmas**2])
    assert (HeteroscedasticProblem(4).lower_bound(theta)["value"]
            > HeteroscedasticProblem(4, sigmas=env.sigmas).lower_bound(theta)["value"])


@pytest.mark.slow
@pytest.mark.parametrize("question", ["", "problem=unknown-variances:statistic=plugin"])
def test_the_theory_threshold_errs_at_most_delta(question):
    """1,000 runs of EB-TC under the pairwise threshold at delta = 0.1 (a harder instance than the run tests')."""
    env, runs, delta = parse_instance("heteroscedastic:means=1/0.8/0.6/0.3,sigmas=1/1.5/0.5/2"), 1000, 0.1
    algorithm = make_algorithm(",".join(p for p in ("top-two:threshold=theory", question) if p))
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


@pytest.mark.parametrize(("text", "instance", "error", "match"), [
    ("lingame", INSTANCE, MissingCapability, "lingame needs optimism"),
    ("top-two:problem=multiplicative-epsilon-good:epsilon=1", INSTANCE, InvalidInputError, "below 1"),
    ("top-two:threshold=kk21", INSTANCE, InvalidInputError, "kk21"),
    ("top-two:problem=unknown-variances:statistic=t", INSTANCE, InvalidInputError, "statistic must be one of"),
    ("top-two", "heteroscedastic:means=1/0.5,sigmas=1", InvalidInputError, "one standard deviation per arm"),
    ("top-two", "heteroscedastic:means=1/0.5,seed=2", InvalidInputError, "not both"),
    ("top-two", "heteroscedastic:means=1/0.5,sigmas=1/-1", InvalidInputError, "positive"),
    ("top-two", "heteroscedastic:means=1/1,sigmas=1/2", InvalidInputError, "tie"),
])
def test_bad_input_is_refused_clearly(text, instance, error, match):
    with pytest.raises(error, match=match):
        run(make_algorithm(text), parse_instance(instance), 0.1, seed=0)


def test_a_random_instance_is_reproducible_and_separated():
    one, two = parse_instance("heteroscedastic:K=10,seed=4"), parse_instance("heteroscedastic:K=10,seed=4")
    assert np.array_equal(one.means, two.means) and np.array_equal(one.sigmas, two.sigmas)
    assert one.n_arms == 10 and one.best_item == 0 and np.sort(one.means)[-2] <= 0.8
    assert np.all((one.sigmas >= 0.5) & (one.sigmas <= 1.5))
