"""Gaussian arms of unequal variances, known to the learner or not: the simulated statistics, the estimate, the GLR
against brute force, the delta-correct pairwise threshold and its two time-uniform bounds, runs of every generic rule
and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy import stats

from bandits.instances import parse_instance
from bandits.pure_exploration import HeteroscedasticBandit, HeteroscedasticProblem
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.variance_bounds import PairThresholds, VarianceThreshold, variance_lower_bound
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


def test_the_variance_bound_holds_uniformly_along_simulated_paths():
    """sigma_hat^2 / sigma^2 >= rho(N) for every N <= 3000 on all but a fraction eta of paths (one-sided 95 %
    Clopper-Pearson), and rho tends to one."""
    eta, paths, horizon = 0.2, 2000, 3000
    rng = np.random.default_rng(5)
    N = np.arange(1, horizon + 1)
    rho = variance_lower_bound(N, eta)
    misses = 0
    for _ in range(paths):
        x = rng.normal(size=horizon)
        s, q = np.cumsum(x), np.cumsum(x**2)
        var = q / N - (s / N) ** 2
        misses += bool(np.any(var < rho - 1e-12))
    assert clopper_pearson_upper(misses, paths) <= eta, misses
    assert np.all(np.diff(rho[1:]) >= -1e-12) and rho[0] == 0 and variance_lower_bound(np.array([1e8]), eta)[0] > 0.999


def test_the_pair_bounds_are_the_water_filling_and_the_worst_variance():
    """Plug-in: beta / min(rho); EV-GLR: the largest sum_k (N_k / 2) log(1 + 2 s_k / (N_k rho_k)) over
    s_a + s_b <= beta, by a grid; every bound at least the floor."""
    counts, rho = np.array([40.0, 300.0, 9.0]), np.array([0.4, 0.8, 0.1])
    for log in (False, True):
        bounds = PairThresholds(3.0, rho, counts, log)
        got = bounds.of_pairs(1, np.array([0, 2]))
        if not log:
            assert got == pytest.approx([3.0 / 0.4, 3.0 / 0.1])
        else:
            s = np.linspace(0, 3.0, 30001)
            for value, j in zip(got, (0, 2), strict=True):
                total = (0.5 * counts[1] * np.log1p(2 * s / (counts[1] * rho[1]))
                         + 0.5 * counts[j] * np.log1p(2 * (3.0 - s) / (counts[j] * rho[j])))
                assert value == pytest.approx(total.max(), rel=1e-6)
        assert np.all(got >= bounds.floor)
    zero = PairThresholds(3.0, np.array([0.0, 0.5]), np.array([1.0, 20.0]), True)
    assert zero.of_pairs(1, np.array([0]))[0] == np.inf


def test_the_threshold_reads_the_counts_and_splits_delta():
    thresholds = VarianceThreshold(4)(1000, 0.01, np.array([100, 300, 500, 100]))
    assert isinstance(thresholds, PairThresholds) and thresholds.log_divergence
    assert thresholds.rho == pytest.approx(variance_lower_bound(np.array([100, 300, 500, 100]), 0.01 / 8))


RULES = ["round-robin", "oracle-weights", "track-and-stop", "fws", "lazy-tas", "top-two", "top-two:challenger=tci",
         "top-two:beta=ids"]


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
    ("top-two:problem=top-m:m=2", INSTANCE, InvalidInputError, "not heteroscedastic"),
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
