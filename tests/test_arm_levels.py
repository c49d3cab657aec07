"""Thresholding with a confidence level on arms with rewards in [0, 1] and on Gaussian arms of unknown variances:
the oracle against the Bernoulli closed form and the arms' own costs, the GLR against brute force, the per-arm caps
of the theory threshold, runs of every generic rule, the refusals, and (slow) the error rate under the theory
threshold."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper

from bandits.fixed_budget import run_fixed_budget
from bandits.instances import parse_instance
from bandits.pure_exploration.arm_levels import BoundedLevelsProblem, HeteroscedasticLevelsProblem
from bandits.pure_exploration.betting_bounds import BettingThreshold, portfolio_regret
from bandits.pure_exploration.cap_bounds import CapBounds
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.threshold import ThresholdProblem
from bandits.pure_exploration.variance_bounds import VarianceThreshold, mean_deviation_cap
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import kl_inf, variance_divergence

BOUNDED = "bounded:means=0.8/0.6/0.4/0.2,levels=5"
HETEROSCEDASTIC = "heteroscedastic:means=1/0.6/0.2/-0.2,sigmas=0.5/1/1.5/1"


def test_on_two_levels_t_star_is_the_bernoulli_closed_form():
    env = parse_instance("bounded:means=0.7/0.55/0.35/0.2,levels=2")
    ours = BoundedLevelsProblem.of_environment(env, level=0.45)
    bernoulli = ThresholdProblem.of_environment(parse_instance("bernoulli:means=0.7/0.55/0.35/0.2"), level=0.45)
    mine, theirs = ours.oracle(ours.true_parameter(env)), bernoulli.oracle(np.array([0.7, 0.55, 0.35, 0.2]))
    assert mine.T == pytest.approx(theirs.T, rel=1e-9) and mine.weights == pytest.approx(theirs.weights, rel=1e-9)
    assert mine.lower_bound == pytest.approx(mine.T, rel=1e-12)


def test_unknown_variances_t_star_sums_the_inverse_costs():
    env = parse_instance(HETEROSCEDASTIC)
    problem = HeteroscedasticLevelsProblem.of_environment(env, level=0.4)
    d = variance_divergence(env.means, env.sigmas, 0.4, known_variances=False)
    oracle = problem.oracle(problem.true_parameter(env))
    assert oracle.T == pytest.approx(np.sum(1 / d), rel=1e-12)
    assert oracle.weights == pytest.approx((1 / d) / np.sum(1 / d))


def test_the_glr_is_the_least_cost_of_moving_one_arm_across_the_level():
    env = parse_instance(BOUNDED)
    problem = BoundedLevelsProblem.of_environment(env, level=0.5)
    theta, counts = problem.true_parameter(env), np.array([30.0, 12.0, 50.0, 7.0])
    pieces = problem.pieces(theta, counts)
    brute = [counts[k] * kl_inf(env.probs[k], env.support, 0.5) for k in range(4)]
    assert pieces.values == pytest.approx(brute, rel=1e-9) and pieces.best == 0b0011
    assert set(pieces.answers) == {0b0010, 0b0001, 0b0111, 0b1011}
    assert problem.describe_answer(pieces.best) == "{0,1}"


def test_the_theory_caps_are_read_per_arm():
    counts = np.array([40.0, 300.0, 9.0])
    bounds = BettingThreshold(3, per_arm=True)(349, 0.01, counts)
    assert isinstance(bounds, CapBounds) and bounds.per_arm
    assert bounds.of_pieces(0, np.array([1, 2, 4])) == pytest.approx(np.log(3 / 0.01) + portfolio_regret(counts))
    assert bounds.floor == pytest.approx(np.min(bounds.caps))
    variances = VarianceThreshold(3, True, per_arm=True)(349, 0.01, counts)
    z = mean_deviation_cap(counts, 0.01 / 3)
    assert variances.of_pieces(0, np.array([1, 2, 4]))[:2] == pytest.approx(0.5 * counts[:2] * np.log1p(z[:2]))


RULES = ["round-robin", "oracle-weights", "track-and-stop", "fws", "lazy-tas", "top-two", "top-two:challenger=tci"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("instance", "level"), [(BOUNDED, 0.5), (HETEROSCEDASTIC, 0.4)])
def test_every_generic_rule_finds_the_arms_above_the_level(rule, instance, level):
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory,problem=threshold:level={level}"
    result = run(make_algorithm(text), parse_instance(instance), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule" and result.recommendation == 0b0011


def test_a_fixed_budget_run_is_scored_by_the_level_set():
    env = parse_instance(BOUNDED)
    results = run_fixed_budget(make_algorithm("round-robin:problem=threshold:level=0.5"), env, [8, 400], seed=1)
    assert results[-1].correct and results[-1].recommendation == 0b0011 and results[-1].simple_regret is None


@pytest.mark.slow
@pytest.mark.parametrize(("instance", "level"), [("bounded:means=0.6/0.5/0.4/0.45,levels=3", 0.52),
                                                 ("heteroscedastic:means=1/0.5/0.2,sigmas=1/2/0.5", 0.6)])
def test_the_theory_threshold_errs_at_most_delta(instance, level):
    """1,000 runs of EB-TCI under the per-arm caps at delta = 0.1."""
    env, runs, delta = parse_instance(instance), 1000, 0.1
    algorithm = make_algorithm(f"top-two:challenger=tci,threshold=theory,problem=threshold:level={level}")
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


@pytest.mark.parametrize(("text", "instance", "error", "match"), [
    ("lingame:problem=threshold:level=0.5", BOUNDED, MissingCapability, "lingame needs optimism"),
    ("top-two:problem=threshold:level=1.5", BOUNDED, InvalidInputError, "strictly between 0 and 1"),
    ("top-two:threshold=theory,problem=threshold:level=0.4", "heteroscedastic:means=1/0.2,sigmas=1/1",
     None, None),
])
def test_bad_input_is_refused_clearly(text, instance, error, match):
    if error is None:  # a valid run, for contrast
        assert run(make_algorithm(text), parse_instance(instance), 0.1, seed=0).correct
        return
    with pytest.raises(error, match=match):
        run(make_algorithm(text), parse_instance(instance), 0.1, seed=0)


def test_an_arm_on_the_level_has_no_finite_characteristic_time():
    env = parse_instance(BOUNDED)
    problem = BoundedLevelsProblem.of_environment(env, level=0.6)
    with pytest.raises(InvalidInputError, match="on the level"):
        problem.oracle(problem.true_parameter(env))
