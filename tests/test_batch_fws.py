"""Frank–Wolfe sampling in batches (``fws:steps=batch``): one rule on every problem offering ``fw_directions``.

On arm pulls the directions list the pieces and solve the game over the arms; on a factored problem they are joint
FWS's (the search of near-tied alternatives, the game over joint actions), and the generic rule there is joint FWS
run for run. Checked: that identity, the oracle weights reached by the proportions, the game's value equal on one
agent whichever side computes it, delta-correct stops on every problem kind, and the options refused."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.experiment import Experiment
from bandits.instances import parse_instance
from bandits.kinds import kind_of
from bandits.multiagent.frank_wolfe import JointFrankWolfe
from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.families import Gaussian
from bandits.pure_exploration.fw_directions import ArmDirections, forced_rounds
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.pure_exploration.sampler import Observations
from bandits.pure_exploration.samplers import FrankWolfe
from bandits.pure_exploration.samplers.frank_wolfe import BatchFrankWolfeState
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError


def _result(algorithm: str | PureExploration, instance: str, seed: int) -> tuple[int, int, bool]:
    """(samples, recommendation, correct) of one run at delta = 0.01."""
    algorithm = make_algorithm(algorithm) if isinstance(algorithm, str) else algorithm
    result = run(algorithm, parse_instance(instance), 0.01, seed=seed)
    return result.samples, result.recommendation, result.correct


@pytest.mark.parametrize("instance", ["ring:N=3,K=2,scale=4", "line:N=4,K=3", "line:N=20,K=2,means=planted"])
def test_the_generic_rule_in_batches_on_a_factored_problem_is_joint_fws(instance):
    """``fws:steps=batch`` on a factored instance (the problem's A0 pass, its directions) stops where
    ``joint-fws:exploration=fws`` does (the factored batches around the same state, no D-tracking level), seed for
    seed; past 20,000 joint actions too (the searches on a grid)."""
    for seed in range(3):
        generic = _result(PureExploration(FrankWolfe(steps="batch")), instance, seed)
        assert generic == _result("joint-fws:exploration=fws", instance, seed) and generic[2]


def test_joint_fws_runs_the_generic_state():
    env = parse_instance("ring:N=3,K=2")
    problem = FactoredProblem.of_environment(env)
    state = JointFrankWolfe().state(problem, env, np.random.default_rng(0))
    assert isinstance(state.rule, BatchFrankWolfeState)
    assert JointFrankWolfe(slack=0.05, pieces=3).batched() == FrankWolfe(steps="batch", slack=0.05, pieces=3)
    assert not JointFrankWolfe(exploration="dtracking").batched().forced


@pytest.mark.parametrize("means", [[1.0, 0.8, 0.7, 0.5], [0.5, 0.45, 0.1, 0.0, -0.2]])
def test_on_one_agent_both_directions_reach_the_same_game_value(means):
    """A factor graph of one agent is a K-armed Gaussian problem: the factored directions (column generation over
    joint actions) and the arm directions (the game over the arms) take the same near-tied pieces and reach the same
    value min_i <grad f_i, z - w> (the optimal mixture may differ when it is not unique)."""
    K = len(means)
    rng = np.random.default_rng(5)
    factored = FactoredProblem(FactorGraph([K], [((0,), np.asarray(means))]))
    karmed = KArmedProblem(K, Gaussian(1.0))
    arms = ArmDirections(0.3, 8, "simplex")
    for _ in range(30):
        N = rng.integers(1, 40, size=K).astype(float)
        mu = np.asarray(means) + 0.1 * rng.standard_normal(K)
        obs_k = Observations(karmed, N, N * mu, mu)
        obs_f = Observations(factored, N, N * mu, mu)
        if arms.tied(obs_k):
            continue
        w = N / N.sum()
        pieces = karmed.pieces(mu, w)
        near = pieces.values <= 1.3 * pieces.value
        G = pieces.gradients[near]
        values = []
        for direction in (arms.step(obs_k), factored.fw_directions(slack=0.3, limit=8, search_growth=0.1,
                                                                   game="simplex").step(obs_f)):
            z = np.zeros(K)
            np.add.at(z, direction.pulls[:, 0], direction.weights)
            values.append(float((G @ (z - w)).min()))
        assert values[0] == pytest.approx(values[1], rel=1e-7, abs=1e-12)


@pytest.mark.parametrize(("slack", "weights_tol", "objective"), [(0.05, 0.01, 0.98), (0.3, 0.05, 0.9)])
def test_proportions_of_a_batched_run_at_the_truth_approach_the_oracle_weights(slack, weights_tol, objective):
    """Fed the true means (no noise), batches on a 1 % grid: N / t ends near w*(mu) and the objective at N / t near
    1 / T*. Measured: 0.0067 and 0.991 at slack 0.05; 0.038 and 0.942 at joint FWS's default 0.3, whose games also
    weigh pieces up to 30 % above the minimum."""
    problem = KArmedProblem(4, Gaussian(1.0))
    mu = np.array([1.0, 0.8, 0.7, 0.5])
    state = FrankWolfe(steps="batch", slack=slack).start(problem, None, np.random.default_rng(0))
    counts = np.ones(4, dtype=np.int64)
    while counts.sum() < 20_000:
        n = max(1, int(0.01 * counts.sum()))
        counts = counts + state.plan(Observations(problem, counts, counts * mu, mu), n)
    oracle = problem.oracle(mu)
    assert np.abs(counts / counts.sum() - oracle.weights).max() <= weights_tol
    assert problem.pieces(mu, counts / counts.sum()).value * oracle.T >= objective


@pytest.mark.parametrize("instance", ["gaussian:means=1/0.7/0.6/0.2", "bernoulli:means=0.6/0.5/0.3",
                                      "soare:d=2,omega=0.3", "ring:N=3,K=2,scale=4"])
def test_batched_fws_identifies_the_answer_on_every_kind(instance):
    rule = PureExploration(FrankWolfe(steps="batch"))
    assert all(_result(rule, instance, seed)[2] for seed in range(4))


def test_forced_pulls_follow_the_schedule_of_wang_et_al():
    assert forced_rounds(0, 4, 4) == 4 and forced_rounds(4, 12, 4) == 4  # floor(t / 4) in {0, 1, 4}: t < 8, 16..19
    assert sum(forced_rounds(t, 1, 3) for t in range(300)) == forced_rounds(0, 300, 3)
    problem = KArmedProblem(3, Gaussian(1.0))
    state = FrankWolfe(steps="batch").start(problem, None, np.random.default_rng(0))
    mu = np.array([1.0, 0.5, 0.0])
    counts = np.array([4, 4, 4])  # t = 12..14: floor(t / 3) = 4, all forced, the arms in turn
    assert state.plan(Observations(problem, counts, counts * mu, mu), 3).tolist() == [1, 1, 1]
    counts = np.array([5, 5, 5])  # t = 15..17: floor(t / 3) = 5, none forced: the direction's arms
    plays = state.plan(Observations(problem, counts, counts * mu, mu), 3)
    assert state.forced_pulls == 3 and plays.sum() == 3 and plays[2] == 0  # the far arm: no near-tied piece


def test_bad_options_are_refused():
    for text in ("fws:steps=bogus", "fws:steps=batch,pieces=0", "fws:steps=batch,slack=-1",
                 "fws:steps=batch,inverse_update=as-published", "fws:forced=maybe"):
        with pytest.raises(InvalidInputError):
            make_algorithm(text)
    for options in ({"slack": -1.0, "limit": 8, "game": "simplex"}, {"slack": 0.3, "limit": 0, "game": "simplex"},
                    {"slack": float("nan"), "limit": 8, "game": "simplex"}, {"slack": 0.3, "limit": 8, "game": "lp"}):
        with pytest.raises(InvalidInputError):
            ArmDirections(**options)
        with pytest.raises(InvalidInputError):
            FactoredProblem.of_environment(parse_instance("ring:N=3,K=2")).fw_directions(search_growth=0.1, **options)
    with pytest.raises(InvalidInputError, match="fws needs arm_pull"):
        PureExploration(FrankWolfe()).start(parse_instance("ring:N=3,K=2"), 0.1, np.random.default_rng(0))


def test_the_options_decide_where_the_rule_runs():
    """``fws`` lists the arm-pull kinds (its default steps pull one arm); with ``steps=batch`` an experiment runs it
    wherever the kind's problem offers ``fw_directions``, factored instances included."""
    assert kind_of("factored").offers(("fw_directions",)) and not kind_of("factored").offers(("arm_pull",))
    assert kind_of("karmed").offers(("fw_directions", "arm_pull")) and not kind_of("thresholding").offers(())
    record = Experiment("fws:steps=batch", "ring:N=3,K=2,scale=4", deltas=(0.01,), seed=1).execute()[0]
    joint = _result("joint-fws:exploration=fws", "ring:N=3,K=2,scale=4", 1)
    assert record["correct"] and record["samples"] == joint[0]
    with pytest.raises(InvalidInputError, match=r"options it needs arm_pull\); 'ring:N=3,K=2' is factored"):
        Experiment("fws", "ring:N=3,K=2", deltas=(0.01,), seed=1).check()
