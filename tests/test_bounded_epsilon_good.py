"""Epsilon-good identification on arms with rewards in [0, 1], additive and multiplicative: the shifted and scaled
KL_inf pieces against the joint cvxpy program and against Bernoulli's question on two levels, the oracle's two
methods against each other (shifted pairs inside and outside [0, 1]), epsilon = 0 against best-arm identification,
the runs, the refusals and (slow) the error rate under the betting threshold."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ARM_RULES, clopper_pearson_upper

import optdesign as od
from bandits.instances import parse_instance
from bandits.pure_exploration.arm_epsilon_good import BoundedEpsilonGoodProblem
from bandits.pure_exploration.bounded import BoundedProblem
from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem
from bandits.pure_exploration.families import Bernoulli
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import bounded_pieces, pair_cost_program

TWO_GOOD = "bounded:means=0.8/0.75/0.5/0.3,levels=5"


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.2, 0.6, 0.9])
def test_the_pieces_are_the_joint_programs_cost(epsilon):
    """min w_i KL(F_i, G_i) + w_j KL(F_j, G_j) over mean(G_i) + epsilon <= mean(G_j), one cvxpy model per pair; at 0.6
    and 0.9 the shifted pairs leave [0, 1] (the answer's mean above 1 - epsilon, other means below epsilon)."""
    rng = np.random.default_rng(4)
    support = np.array([0.0, 0.3, 0.5, 0.8, 1.0])
    P = rng.dirichlet(np.ones(5), size=4)
    w = rng.dirichlet(np.ones(4))
    for answer in range(4):
        _, values, _, _ = bounded_pieces(P, support, w, best=answer, shift=epsilon)
        others = [j for j in range(4) if j != answer]
        programs = [pair_cost_program(P, support, w, answer, j, shift=epsilon) for j in others]
        assert values == pytest.approx(programs, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize(("shift", "scale"), [(0.0, 1 / 0.9), (0.0, 1 / 0.6), (0.0, 1.5), (0.1, 1.2), (0.3, 2.0)])
def test_the_scaled_pieces_are_the_joint_programs_cost(shift, scale):
    """min over c mean(G_i) + s <= mean(G_j): the multiplicative question's pieces (s = 0), and both moves at once;
    c mu_i + s leaves [0, 1] for the larger answers."""
    rng = np.random.default_rng(5)
    support = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    P = rng.dirichlet(np.ones(5), size=4)
    w = rng.dirichlet(np.ones(4))
    for answer in range(4):
        _, values, _, _ = bounded_pieces(P, support, w, best=answer, shift=shift, scale=scale)
        others = [j for j in range(4) if j != answer]
        programs = [pair_cost_program(P, support, w, answer, j, shift=shift, scale=scale) for j in others]
        assert values == pytest.approx(programs, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.3])
def test_two_levels_give_bernoullis_multiplicative_question(epsilon):
    """On {0, 1}: the scaled pieces and T* are Bernoulli multiplicative epsilon-good's (the shifted-pieces model)."""
    env = parse_instance("bounded:means=0.7/0.65/0.4/0.2,levels=2")
    ours = BoundedEpsilonGoodProblem.of_environment(env, epsilon=epsilon, kind="multiplicative")
    bernoulli = EpsilonGoodProblem(4, epsilon, Bernoulli(), kind="multiplicative")
    means, counts = np.array([0.7, 0.65, 0.4, 0.2]), np.array([20.0, 30.0, 12.0, 8.0])
    theta = ours.true_parameter(env)
    assert ours.pieces(theta, counts).values == pytest.approx(bernoulli.pieces(means, counts).values, rel=1e-7)
    reference = od.epsilon_good_characteristic_time(means, epsilon, family="bernoulli", kind="multiplicative")
    oracle = ours.oracle(theta)
    assert oracle.T == pytest.approx(reference.value, rel=1e-4)
    assert oracle.lower_bound <= reference.value * (1 + 1e-9) and reference.lower_bound <= oracle.T * (1 + 1e-9)
    assert [ours.correct(k, theta) for k in range(4)] == [bernoulli.correct(k, means) for k in range(4)]


@pytest.mark.parametrize("epsilon", [0.02, 0.1, 0.3])
def test_two_levels_give_bernoullis_question(epsilon):
    """On {0, 1} KL_inf is the Bernoulli kl: the pieces and T* are Bernoulli epsilon-good's (an independent model)."""
    env = parse_instance("bounded:means=0.7/0.65/0.4/0.2,levels=2")
    ours = BoundedEpsilonGoodProblem.of_environment(env, epsilon=epsilon)
    bernoulli = EpsilonGoodProblem(4, epsilon, Bernoulli())
    means, counts = np.array([0.7, 0.65, 0.4, 0.2]), np.array([20.0, 30.0, 12.0, 8.0])
    theta = ours.true_parameter(env)
    assert ours.pieces(theta, counts).values == pytest.approx(bernoulli.pieces(means, counts).values, rel=1e-7)
    reference = od.epsilon_good_characteristic_time(means, epsilon, family="bernoulli")
    oracle = ours.oracle(theta)
    assert oracle.T == pytest.approx(reference.value, rel=1e-4)
    assert oracle.lower_bound <= reference.value * (1 + 1e-9) and reference.lower_bound <= oracle.T * (1 + 1e-9)


def test_epsilon_zero_is_best_arm_identification():
    env = parse_instance(TWO_GOOD)
    ours, bai = BoundedEpsilonGoodProblem.of_environment(env), BoundedProblem.of_environment(env)
    theta, counts = ours.true_parameter(env), np.array([20.0, 30.0, 12.0, 8.0])
    assert ours.pieces(theta, counts).values == pytest.approx(bai.pieces(theta, counts).values, rel=1e-12)
    assert ours.oracle(theta).T == pytest.approx(bai.oracle(theta).T, rel=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_the_equalisation_and_the_cutting_planes_agree(seed):
    """Certified brackets that overlap, on random distributions (point masses at the ends included) and slacks that
    put shifted pairs inside and outside [0, 1]."""
    rng = np.random.default_rng(seed)
    support = np.linspace(0.0, 1.0, 4)
    P = rng.dirichlet(np.full(4, 0.5), size=int(rng.integers(3, 6)))
    P[0] = np.eye(4)[3 if seed % 2 else 0]
    if np.sort(P @ support)[-2] == (P @ support).max():
        pytest.skip("a tie for the best mean")
    for epsilon, kind in ((0.05, "additive"), (0.3, "additive"), (0.7, "additive"), (0.1, "multiplicative"),
                          (0.5, "multiplicative")):
        fast = od.bounded_characteristic_time(P, support, epsilon=epsilon, kind=kind, method="equalise")
        planes = od.bounded_characteristic_time(P, support, epsilon=epsilon, kind=kind, method="program")
        assert fast.value == pytest.approx(planes.value, rel=1e-5)
        assert fast.lower_bound <= planes.value * (1 + 1e-9) and planes.lower_bound <= fast.value * (1 + 1e-9)


def test_the_oracle_is_the_easiest_epsilon_good_answer():
    """T* is the least over the strictly epsilon-good answers of their own max-min (the cutting planes on each
    answer's pieces, written here), and correctness accepts any epsilon-good arm."""
    env, epsilon = parse_instance(TWO_GOOD), 0.1
    problem = BoundedEpsilonGoodProblem.of_environment(env, epsilon=epsilon)
    theta = problem.true_parameter(env)
    from optdesign.identification.cutting_planes import cutting_plane_time

    each = [cutting_plane_time(lambda w, i=i: bounded_pieces(env.probs, env.support, w, best=i, shift=epsilon)[1:3],
                               4, i).value for i in (0, 1)]
    oracle = problem.oracle(theta)
    assert oracle.T == pytest.approx(min(each), rel=1e-4) and oracle.lower_bound <= oracle.T
    assert problem.correct(0, theta) and problem.correct(1, theta) and not problem.correct(2, theta)


@pytest.mark.parametrize("question", ["epsilon-good:epsilon=0.1", "multiplicative-epsilon-good:epsilon=0.1"])
@pytest.mark.parametrize("rule", ARM_RULES)
def test_every_generic_rule_finds_an_epsilon_good_arm(rule, question):
    """0.75 is within 0.1 of 0.8, and above 0.9 times it."""
    text = f"{rule}{',' if ':' in rule else ':'}threshold=theory,problem={question}"
    result = run(make_algorithm(text), parse_instance(TWO_GOOD), 0.1, seed=3)
    assert result.correct and result.stopped_by == "stopping_rule" and result.recommendation in (0, 1)


def test_a_multiplicative_answer_is_a_fraction_of_the_best():
    """mu_b >= (1 - epsilon) max mu: 0.5 is within a fraction 0.4 of 0.8 (0.48) but not within 0.2 of it."""
    env = parse_instance(TWO_GOOD)
    ratio = BoundedEpsilonGoodProblem.of_environment(env, epsilon=0.4, kind="multiplicative")
    theta = ratio.true_parameter(env)
    assert [ratio.correct(k, theta) for k in range(4)] == [True, True, True, False]
    additive = BoundedEpsilonGoodProblem.of_environment(env, epsilon=0.2)
    assert [additive.correct(k, theta) for k in range(4)] == [True, True, False, False]
    assert ratio.oracle(theta).T < additive.oracle(theta).T  # more correct answers, farther apart


@pytest.mark.slow
def test_the_betting_threshold_errs_at_most_delta():
    """1,000 runs of EB-TCI under the betting threshold at delta = 0.1, two arms within epsilon of the best."""
    env, runs, delta = parse_instance("bounded:means=0.6/0.57/0.45/0.4,levels=5"), 1000, 0.1
    algorithm = make_algorithm("top-two:challenger=tci,threshold=theory,problem=epsilon-good:epsilon=0.05")
    errors = sum(not run(algorithm, env, delta, seed=seed).correct for seed in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta, errors


@pytest.mark.parametrize(("text", "match"), [
    ("top-two:problem=epsilon-good:epsilon=1", "below 1"),
    ("top-two:problem=epsilon-good:epsilon=-0.1", "epsilon"),
    ("top-two:problem=epsilon-good:epsilon=nan", "epsilon"),
    ("top-two:problem=multiplicative-epsilon-good:epsilon=1", "below 1"),
    ("top-two:problem=(epsilon-good:epsilon=0.1,kind=relative)", "unknown kind"),
])
def test_bad_input_is_refused_clearly(text, match):
    with pytest.raises(InvalidInputError, match=match):
        run(make_algorithm(text), parse_instance(TWO_GOOD), 0.1, seed=0)


@pytest.mark.parametrize(("shift", "scale"), [(-0.1, 1.0), (1.0, 1.0), (np.nan, 1.0), (0.0, 0.0), (0.0, -1.0),
                                            (0.0, np.inf), (0.0, np.nan)])
def test_the_pieces_refuse_a_bad_shift_or_scale(shift, scale):
    support = np.array([0.0, 1.0])
    with pytest.raises(InvalidInputError, match="shift must lie"):
        bounded_pieces(np.array([[0.2, 0.8], [0.6, 0.4]]), support, np.ones(2), shift=shift, scale=scale)


@pytest.mark.parametrize(("epsilon", "kind", "match"), [
    (-0.1, "additive", "epsilon"), (np.nan, "additive", "epsilon"), ("0.1", "additive", "epsilon"),
    (1.0, "multiplicative", "below 1"), (0.1, "relative", "unknown kind"),
])
def test_the_question_ends_refuse_bad_input(epsilon, kind, match):
    with pytest.raises(InvalidInputError, match=match):
        od.identification.epsilon_ends(epsilon, kind)


def test_a_multiplicative_question_needs_a_positive_best_mean():
    with pytest.raises(InvalidInputError, match="positive best mean"):
        od.bounded_characteristic_time([[1.0, 0.0], [1.0, 0.0]], [0.0, 1.0], epsilon=0.1, kind="multiplicative")


def test_an_answer_of_several_arms_is_refused():
    env = parse_instance(TWO_GOOD)
    problem = BoundedEpsilonGoodProblem.of_environment(env, epsilon=0.1)
    with pytest.raises(InvalidInputError, match="m = 1"):
        problem.top_m_oracle(problem.true_parameter(env), 2)
    with pytest.raises(InvalidInputError, match="m = 1"):
        od.bounded_characteristic_time(env.probs, env.support, m=2, epsilon=0.1)
