"""Top-m identification on bounded arms and on Gaussian arms of unequal variances: the certified oracles against the
exponential-family models they reduce to, the pieces against brute-force minimisation, the runs and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ARM_RULES, clopper_pearson_upper
from scipy.optimize import minimize_scalar

import optdesign as od
from bandits.instances import parse_instance
from bandits.pure_exploration.arm_top_m import BoundedTopMProblem, HeteroscedasticTopMProblem
from bandits.pure_exploration.betting_bounds import BettingThreshold, portfolio_regret
from bandits.pure_exploration.families import Gaussian
from bandits.pure_exploration.heteroscedastic import HeteroscedasticProblem
from bandits.pure_exploration.pieces import GLRStatistic
from bandits.pure_exploration.top_m import TopMProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import PairsModel, bounded_pieces, kl_inf, pieces_of_pairs, top_m_pairs

MEANS = np.array([0.7, 0.6, 0.45, 0.4, 0.2])


def bernoulli_rows(means: np.ndarray) -> np.ndarray:
    return np.stack([1.0 - means, means], axis=1)


@pytest.mark.parametrize("m", [2, 3, 4])
def test_bounded_top_m_on_two_atoms_is_bernoulli_top_m(m):
    """On {0, 1} KL_inf is the Bernoulli kl: the bounded top-m T* is the Bernoulli one of the pairs model."""
    r = od.bounded_characteristic_time(bernoulli_rows(MEANS), [0.0, 1.0], m=m)
    ref = PairsModel(MEANS.size, top_m_pairs(MEANS, m), family="bernoulli").solve(MEANS)
    assert r.value == pytest.approx(ref.value, rel=1e-5)
    assert r.lower_bound <= r.value and r.gap <= 1e-5
    assert {tuple(p) for p in r.active} <= {tuple(p) for p in top_m_pairs(MEANS, m)}


@pytest.mark.parametrize("m", [1, 2, 4])
def test_known_equal_variances_give_gaussian_top_m(m):
    r = od.heteroscedastic_characteristic_time(MEANS, np.full(5, 0.5), known_variances=True, m=m)
    ref = PairsModel(MEANS.size, top_m_pairs(MEANS, m), family="gaussian", sigma=0.5).solve(MEANS)
    assert r.value == pytest.approx(ref.value, rel=1e-5)


def test_top_m_with_m_k_minus_one_is_the_worst_arm_against_each_other():
    """With m = K - 1 the pieces are (i, worst) for every other arm i: K - 1 independent two-arm games in the worst
    arm, whose T* is the unknown-variance model's least-weight allocation; checked against m = 1 on the reflected
    means (top K - 1 of mu is bottom 1, i.e. best arm of -mu, with the same variances)."""
    sd = np.array([0.5, 1.0, 1.5, 1.0, 2.0])
    top = od.heteroscedastic_characteristic_time(MEANS, sd, m=4)
    best_of_reflected = od.heteroscedastic_characteristic_time(-MEANS, sd)
    assert top.value == pytest.approx(best_of_reflected.value, rel=1e-5)
    probs = np.array([[0.3, 0.2, 0.5], [0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [0.6, 0.3, 0.1]])
    support = np.array([0.0, 0.4, 1.0])
    reflected = od.bounded_characteristic_time(probs[:, ::-1], 1.0 - support[::-1], method="equalise")
    assert od.bounded_characteristic_time(probs, support, m=3).value == pytest.approx(reflected.value, rel=1e-5)


def test_top_m_pieces_are_the_pairs_minimised_by_brute_force():
    """f_ij(w) = min over x of w_i K-(F_i, x) + w_j K+(F_j, x), the closest common mean found by a scalar search."""
    probs = np.array([[0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1]])
    support = np.array([0.0, 0.5, 1.0])
    w = np.array([0.4, 0.3, 0.2, 0.1])
    mu = probs @ support
    pairs = top_m_pairs(mu, 2)
    values, _ = pieces_of_pairs(lambda i: bounded_pieces(probs, support, w, best=i)[1:3], pairs, 4)
    for (i, j), value in zip(pairs, values, strict=True):
        def pair_cost(x: float, i: int = i, j: int = j) -> float:
            return w[i] * kl_inf(probs[i], support, x) + w[j] * kl_inf(probs[j], support, x)

        cost = minimize_scalar(pair_cost, bounds=(mu[j], mu[i]), method="bounded", options={"xatol": 1e-10})
        assert value == pytest.approx(cost.fun, rel=1e-6, abs=1e-9)


def test_pieces_of_pairs_refuses_pairs_that_are_not_two_arms():
    def leader(i: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(2), np.zeros((2, 3))

    for bad in ([[0, 3]], [[1, 1]], [[0.0, 1.0]], [0, 1], [[-1, 0]], [[0, 1], [2, 2]]):
        with pytest.raises(InvalidInputError, match=r"pairs must|pair must"):
            pieces_of_pairs(leader, np.array(bad), 3)
    values, G = pieces_of_pairs(leader, np.array([[0, 2], [1, 0]]), 3)
    assert values.shape == (2,) and G is not None and G.shape == (2, 3)


def test_pieces_of_pairs_reads_each_pair_from_its_leaders_row():
    """Pairs in any order, leaders repeated and unsorted: pair (i, j) gets leader i's entry for arm j."""
    def leader(i: int) -> tuple[np.ndarray, np.ndarray]:
        others = np.delete(np.arange(4), i)
        return 10.0 * i + others, np.outer(10.0 * i + others, np.ones(4))

    pairs = np.array([[2, 0], [0, 1], [3, 2], [2, 1], [0, 3]])
    values, G = pieces_of_pairs(leader, pairs, 4)
    assert values.tolist() == [20, 1, 32, 21, 3] and G is not None and G[:, 0].tolist() == values.tolist()
    assert pieces_of_pairs(leader, np.empty((0, 2), dtype=int), 4)[0].shape == (0,)


def test_bad_top_m_oracle_input_is_refused():
    rows = bernoulli_rows(MEANS)
    with pytest.raises(InvalidInputError, match="m must be"):
        od.bounded_characteristic_time(rows, [0, 1], m=5)
    with pytest.raises(InvalidInputError, match="best-arm identification's"):
        od.bounded_characteristic_time(rows, [0, 1], m=2, method="equalise")
    with pytest.raises(InvalidInputError, match="top-2 set is not unique"):
        od.heteroscedastic_characteristic_time([1.0, 0.5, 0.5, 0.0], np.ones(4), m=2)


# ------------------------------------------------------------------------------------------------ the question

BOUNDED = "bounded:means=0.8/0.6/0.4/0.35/0.2,levels=5"
HETEROSCEDASTIC = "heteroscedastic:means=1/0.7/0.2/0/-0.2,sigmas=0.5/1/1.5/1/0.7"


def test_on_two_levels_the_pieces_and_t_star_are_bernoulli_top_m():
    means = np.array([0.7, 0.55, 0.35, 0.3, 0.2])
    env = parse_instance("bounded:means=0.7/0.55/0.35/0.3/0.2,levels=2")
    ours = BoundedTopMProblem.of_environment(env, m=2)
    bernoulli = TopMProblem.of_environment(parse_instance("bernoulli:means=0.7/0.55/0.35/0.3/0.2"), m=2)
    theta, counts = ours.true_parameter(env), np.array([40.0, 25.0, 30.0, 12.0, 9.0])
    mine, theirs = ours.pieces(theta, counts), bernoulli.pieces(means, counts)
    assert mine.best == theirs.best == 0b00011 and list(mine.answers) == list(theirs.answers)
    assert mine.values == pytest.approx(theirs.values, rel=1e-7)
    assert mine.gradients == pytest.approx(theirs.gradients, rel=1e-6, abs=1e-12)
    assert ours.oracle(theta).T == pytest.approx(bernoulli.oracle(means).T, rel=2e-4)
    assert ours.lower_bound(theta)["value"] == pytest.approx(bernoulli.oracle(means).T, rel=1e-5)
    assert ours.describe_answer(mine.best) == "{0,1}"


def test_known_variances_equal_sigmas_give_gaussian_top_m_pieces():
    env = parse_instance("heteroscedastic:means=1/0.7/0.2/0,sigmas=0.5/0.5/0.5/0.5")
    ours = HeteroscedasticTopMProblem(HeteroscedasticProblem(4, sigmas=env.sigmas), m=2)
    gaussian = TopMProblem(4, 2, Gaussian(0.5))
    theta, counts = ours.true_parameter(env), np.array([20.0, 30.0, 12.0, 8.0])
    assert ours.pieces(theta, counts).values == pytest.approx(gaussian.pieces(env.means, counts).values, rel=1e-9)
    assert ours.oracle(theta).T == pytest.approx(gaussian.oracle(env.means).T, rel=2e-4)


def test_the_theory_threshold_bounds_each_swap_by_its_pair_s_caps():
    env = parse_instance(BOUNDED)
    problem = BoundedTopMProblem.of_environment(env, m=2)
    theta, counts = problem.true_parameter(env), np.array([40.0, 25.0, 30.0, 12.0, 9.0])
    beta = problem.threshold_context(counts).theory()
    assert isinstance(beta, BettingThreshold) and beta.pairs == 2 * 3
    bounds = beta(116, 0.01, counts)
    pieces = problem.pieces(theta, counts, gradients=False)
    expected = [bounds.caps[i] + bounds.caps[j] for i, j in pieces.pairs]
    assert bounds.of_pieces(pieces.best, pieces.answers, pieces.pairs) == pytest.approx(expected)
    assert bounds.caps == pytest.approx(0.5 * np.log(6 / 0.01) + portfolio_regret(counts))
    assert GLRStatistic(pieces).exceeds(bounds) == bool(np.all(pieces.values > np.array(expected)))


RULES = ARM_RULES


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("instance", [BOUNDED, HETEROSCEDASTIC])
def test_every_generic_rule_finds_the_top_two(rule, instance):
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory,problem=top-m:m=2"
    result = run(make_algorithm(text), parse_instance(instance), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule" and result.recommendation == 0b00011


def test_a_study_reports_the_top_m_lower_bound():
    env = parse_instance(HETEROSCEDASTIC)
    problem = HeteroscedasticTopMProblem.of_environment(env, m=3)
    bound = problem.lower_bound(problem.true_parameter(env))
    sd = env.sigmas
    assert bound["value"] == pytest.approx(od.heteroscedastic_characteristic_time(env.means, sd, m=3).value)


@pytest.mark.slow
@pytest.mark.parametrize("instance", ["bounded:means=0.6/0.5/0.45/0.3,levels=3",
                                      "heteroscedastic:means=1/0.6/0.4/0,sigmas=1/2/0.5/1"])
def test_the_theory_threshold_errs_at_most_delta(instance):
    """1,000 runs of EB-TCI under the pairwise caps (a union over the m (K - m) pairs) at delta = 0.1."""
    env, runs, delta = parse_instance(instance), 1000, 0.1
    algorithm = make_algorithm("top-two:challenger=tci,threshold=theory,problem=top-m:m=2")
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


@pytest.mark.parametrize(("text", "match"), [
    ("top-two:problem=top-m:m=5", "m must be below the number of arms"),
    ("top-two:problem=top-m:m=0", "m"),
    ("lingame:problem=top-m:m=2", "lingame needs optimism"),
])
def test_bad_questions_are_refused_clearly(text, match):
    with pytest.raises(InvalidInputError, match=match):
        run(make_algorithm(text), parse_instance(BOUNDED), 0.1, seed=0)


def test_a_tie_at_the_m_th_mean_has_no_oracle():
    env = parse_instance("heteroscedastic:means=1/0.5/0.5/0,sigmas=1/1/1/1")
    problem = HeteroscedasticTopMProblem.of_environment(env, m=2)
    with pytest.raises(InvalidInputError, match="not unique"):
        problem.oracle(problem.true_parameter(env))


def test_known_variances_and_the_plug_in_statistic_are_options_of_top_m():
    """Two problem options in an algorithm's text, grouped in parentheses: the arms' model they choose answers."""
    env = parse_instance("heteroscedastic:means=1/0.8/0.3/0,sigmas=0.5/1/1/0.5")
    known = make_algorithm("top-two:threshold=theory,problem=(top-m:m=2,known=true)")
    assert known.question(env).arms.known and run(known, env, 0.1, seed=0).correct
    plugin = make_algorithm("fws:threshold=theory,problem=(top-m:m=2,statistic=plugin)")
    assert plugin.question(env).arms.statistic == "plugin" and run(plugin, env, 0.1, seed=0).correct
    assert not make_algorithm("fws:problem=top-m:m=2").question(env).arms.known



def test_a_tie_to_rounding_at_the_m_th_mean_is_a_clear_error_and_track_and_stop_keeps_its_target():
    """An estimate met in a run (seed 72 of the error-rate matrix): the second and third means are 0.5 up to rounding,
    so a pair's piece is zero at every weight and T* is infinite. The cutting planes refuse it with
    InvalidInputError (a division by zero before); Track-and-Stop keeps its previous target there."""
    support = np.linspace(0.0, 1.0, 5)
    probs = np.array([[0, 0, 0, 0.5, 0.5], [0, 2 / 7, 4 / 7, 0, 1 / 7], [0, 0.2, 0.6, 0.2, 0], [1 / 3, 2 / 3, 0, 0, 0]])
    with pytest.raises(InvalidInputError, match="infinite"):
        od.bounded_characteristic_time(probs, support, m=2, tol=1e-4)
    env = parse_instance("bounded:means=0.8/0.6/0.4/0.2,levels=5")
    assert run(make_algorithm("track-and-stop:problem=top-m:m=2"), env, 0.1, seed=72).correct
