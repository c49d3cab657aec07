"""Frank–Wolfe sampling over joint actions against independent truths: the near-tied pieces and the direction game
against enumeration of every joint action, one agent against the K-armed FWS step, the noise-free iterate against
the exact T*, the forced schedule against counting, delta-correctness over seeded runs, bad options."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from test_factored_problem import GRAPHS as SMALL_GRAPHS

from bandits.instances import soare
from bandits.multiagent import FactoredBandit, fw_game
from bandits.multiagent import instances as inst
from bandits.multiagent.frank_wolfe import JointFrankWolfe, forced_rounds, oracle_frank_wolfe
from bandits.multiagent.fw_game import frank_wolfe_step, is_tied, near_tied_pieces
from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import Gaussian, KArmedProblem, Observations
from bandits.pure_exploration.algorithm import as_algorithm
from bandits.pure_exploration.games import game_strategies
from bandits.pure_exploration.samplers import FrankWolfe
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

GRAPHS = {name: make for name, make in SMALL_GRAPHS.items() if name != "one agent"}
GRAPHS |= {"line 4, K = 3": lambda: FactorGraph.line(4, 3, seed=8),
           "star 4, mixed K": lambda: FactorGraph.star(4, [3, 2, 3, 2], seed=9)}


def policy_at(fg: FactorGraph, rule: JointFrankWolfe, seed: int, scale: float = 1.0):
    """A started policy whose statistics are a random state (every group action observed)."""
    env = FactoredBandit(fg)
    policy = as_algorithm(rule).start(env, 0.1, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 30, size=env.n_arms)
    policy.observe(counts, counts * scale * rng.normal(size=env.n_arms))
    return env, policy


def every_joint_action(fg: FactorGraph) -> np.ndarray:
    return np.array(np.unravel_index(np.arange(math.prod(fg.n_actions)), fg.n_actions)).T


@pytest.mark.parametrize("limit", [5, 1], ids=["five", "best-response"])
@pytest.mark.parametrize("eliminate", [False, True], ids=["enumerated", "eliminated"])
@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("seed", range(3))
def test_near_tied_pieces_are_the_smallest_enumerated_pieces(name, seed, eliminate, limit, monkeypatch):
    """limit = 1 on these small graphs reads the best response the GLR state found when it read every alternative."""
    if eliminate:  # the Pareto elimination instead of the enumeration
        monkeypatch.setattr(fw_game, "ENUMERATED_MAX", 0)
    _, policy = policy_at(GRAPHS[name](), JointFrankWolfe(), seed, scale=0.2)
    theta, N = policy.mu, policy.counts.astype(float)
    near = near_tied_pieces(policy.statistic().state, N, slack=0.5, limit=limit)
    pieces = policy.problem.pieces(theta, N)
    order = np.argsort(pieces.values, kind="stable")
    values = pieces.values[order]
    expected = values[:limit][values[:limit] <= values[0] * 1.5]
    assert near.exact
    np.testing.assert_allclose(near.values, expected, rtol=1e-10)
    codes = [int(np.ravel_multi_index(tuple(a), policy.problem.structure.n_actions)) for a in near.actions]
    rows = [int(np.flatnonzero(pieces.answers == c)[0]) for c in codes]
    np.testing.assert_allclose(near.values, pieces.values[rows], rtol=1e-10)
    assert pieces.gradients is not None
    np.testing.assert_allclose(near.gradients, pieces.gradients[rows], rtol=1e-10)


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("seed", range(3))
def test_the_direction_game_equals_its_solution_over_every_joint_action(name, seed):
    """Column generation over max-sum against the game with one column per joint action (HiGHS)."""
    fg = GRAPHS[name]()
    _, policy = policy_at(fg, JointFrankWolfe(), seed, scale=0.2)
    N = policy.counts.astype(float)
    w = N / policy.rounds
    near = near_tied_pieces(policy.statistic().state, N, slack=1.0, limit=6)
    step = frank_wolfe_step(policy.problem.glrt, near.gradients, w, prefer=policy.statistic().state.best)
    flat = policy.problem.indexer.flat(every_joint_action(fg))
    payoff = near.gradients[:, flat].sum(axis=2) - (near.gradients @ w)[:, None]  # <g_i, e_a - w>
    _, _, value = game_strategies(payoff, method="highs")
    assert step.exact and step.value == pytest.approx(value, rel=1e-7, abs=1e-12)
    z = np.zeros(w.size)
    np.add.at(z, policy.problem.indexer.flat(step.actions).ravel(), np.repeat(step.weights, fg.n_factors))
    assert (near.gradients @ (z - w)).min() == pytest.approx(value, rel=1e-7, abs=1e-12)
    assert step.weights.min() > 0 and step.weights.sum() == pytest.approx(1.0)
    assert np.all(np.diff(step.weights) <= 0)
    if near.values.size == 1:  # one piece: the single best joint action of its gradient
        assert step.actions.shape[0] == 1 and payoff[0].max() == pytest.approx(step.value, rel=1e-12)


def test_one_agent_takes_the_k_armed_fws_step():
    """At x = N / t and the same r: the same pieces and game value, each direction optimal in the other's game (the
    optimal z need not be unique), and the same pull whenever both directions are the same vertex."""
    same_pull = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        K = 6
        env = FactoredBandit(FactorGraph([K], [((0,), rng.normal(size=K))]))
        N = rng.integers(2, 30, size=K)
        t = int(N.sum())
        while math.isqrt(t // K) ** 2 == t // K:  # the K-armed rule's forced step
            N[0], t = N[0] + 1, t + 1
        mu = rng.normal(size=K) * 0.3
        karmed = KArmedProblem(K, Gaussian(1.0))
        state = FrankWolfe().start(karmed, None, rng)
        state.x = N / t
        obs = Observations(karmed, N, N * mu, mu)
        z = state.direction(obs, t)
        pieces = karmed.pieces(mu, N / t)
        r = t**-0.9 / K
        G = pieces.gradients[pieces.near_minimal(r)]
        payoff = G - (G @ state.x)[:, None]
        rule = JointFrankWolfe(slack=r / pieces.value, pieces=K, exploration="none")
        policy = as_algorithm(rule).start(env, 0.1, rng)
        policy.observe(N, N * mu)
        near = near_tied_pieces(policy.statistic().state, N.astype(float), slack=r / pieces.value, limit=K)
        assert sorted(near.actions[:, 0]) == sorted(pieces.answers[pieces.near_minimal(r)])
        step = policy.state.rule.directions.step_at(policy.statistic().state, N.astype(float))
        mine = np.zeros(K)
        mine[step.actions[:, 0]] = step.weights
        assert step.value == pytest.approx((payoff @ z).min(), rel=1e-9)
        assert (payoff @ mine).min() == pytest.approx(step.value, rel=1e-9)
        pull = int(np.argmax(policy.state.plan(policy.observations(), 1)))
        assert pull == int(step.actions[0, 0])  # the joint action of largest weight
        if np.count_nonzero(z) == 1 and np.count_nonzero(mine) == 1 and np.array_equal(z, mine):
            assert pull == state.choose(obs, N)
            same_pull += 1
    assert same_pull >= 4


@pytest.mark.parametrize("make", [lambda: FactorGraph.line(3, 2, seed=1), lambda: FactorGraph.ring(4, 2, seed=2),
                                  lambda: FactorGraph.star(4, 3, seed=3),
                                  lambda: FactorGraph.line(4, [2, 3, 2, 3], seed=5)],
                         ids=["line", "ring", "star", "mixed K"])
def test_the_noise_free_iterate_approaches_the_exact_characteristic_time(make):
    """1 / F(w) >= 2 sigma^2 T* always, and within 3 % of it after 2,000 rounds on the 1 % grid."""
    fg = make()
    T = FactoredProblem(fg, 1.5).oracle(fg.means).T
    result = oracle_frank_wolfe(fg, 2000, sigma=1.5)
    assert result.characteristic_time >= T * (1 - 1e-4)
    assert result.characteristic_time <= 1.03 * T
    assert result.rounds == 2000
    per_factor = np.add.reduceat(result.weights, np.asarray(fg.plan().factor_offsets[:-1]))
    np.testing.assert_allclose(per_factor, 1.0)


def test_the_forced_schedule_counts_the_rounds_whose_quotient_is_a_square():
    for size in (1, 3, 9):
        for t in range(0, 300, 7):
            for rounds in (0, 1, 5, 40):
                expected = sum(math.isqrt(u // size) ** 2 == u // size for u in range(t, t + rounds))
                assert forced_rounds(t, rounds, size) == expected


def test_an_empirical_tie_plays_the_covering_set_in_turn():
    fg = FactorGraph.line(3, 2, seed=0)
    env = FactoredBandit(fg)
    policy = as_algorithm(JointFrankWolfe()).start(env, 0.1, np.random.default_rng(0))
    counts = np.full(env.n_arms, 4)
    policy.observe(counts, np.zeros(env.n_arms))  # every mean 0: every joint action ties
    assert is_tied(policy.statistic().state)
    size = policy.state.cover.size
    played = policy.state.plan(policy.observations(), 2 * size + 1)
    expected = env.indexer.counts(policy.state.cover.actions[np.arange(2 * size + 1) % size], np.ones(2 * size + 1,
                                                                                                  dtype=np.int64))
    np.testing.assert_array_equal(played, expected)
    with pytest.raises(InvalidInputError, match="unique best"):
        near_tied_pieces(policy.statistic().state, counts, slack=0.1, limit=2)


def test_identifies_the_best_joint_action_on_a_planted_line_of_30_agents():
    env = inst.line(30, 3, seed=0, means="planted", gap=0.5)
    for algo in ("joint-fws", "joint-fws:exploration=fws,pieces=3", "joint-fws:game=highs,slack=0"):
        result = run(make_algorithm(algo), env, 0.01, seed=1)
        assert result.correct and result.stopped_by == "stopping_rule"


def test_bad_options_and_inputs_are_refused():
    for options in ({"slack": -0.1}, {"slack": "wide"}, {"slack": True}, {"slack": float("inf")}, {"pieces": 0},
                    {"pieces": 2.5}, {"game": "lp"}, {"exploration": "sometimes"}, {"growth": 1.5}):
        with pytest.raises(InvalidInputError):
            JointFrankWolfe(**options)
    with pytest.raises(InvalidInputError, match="factored"):
        run(JointFrankWolfe(), soare(d=2), 0.1, seed=0)
    _, policy = policy_at(FactorGraph.line(3, 2, seed=0), JointFrankWolfe(), 0)
    state, N = policy.statistic().state, policy.counts.astype(float)
    glrt = policy.problem.glrt
    with pytest.raises(InvalidInputError):
        near_tied_pieces("not a state", N, slack=0.1, limit=2)
    with pytest.raises(InvalidInputError):
        near_tied_pieces(state, N[:-1], slack=0.1, limit=2)
    with pytest.raises(InvalidInputError):
        near_tied_pieces(state, N, slack=0.1, limit=0)
    with pytest.raises(InvalidInputError):
        near_tied_pieces(state, N, slack=0.1, limit=2, candidates=np.array([[0, 0]]))
    grads = near_tied_pieces(state, N, slack=0.1, limit=2).gradients
    with pytest.raises(InvalidInputError):
        frank_wolfe_step(glrt, grads[:, :-1], N / policy.rounds)
    with pytest.raises(InvalidInputError):
        frank_wolfe_step(glrt, -grads, N / policy.rounds)
    with pytest.raises(InvalidInputError):
        frank_wolfe_step(glrt, grads, N / policy.rounds, method="lp")
    with pytest.raises(InvalidInputError):
        frank_wolfe_step("not a glrt", grads, N / policy.rounds)
    with pytest.raises(InvalidInputError):
        forced_rounds(0, 5, 0)
    with pytest.raises(InvalidInputError):
        oracle_frank_wolfe(FactorGraph.line(3, 2, seed=0), 1)  # below the covering set's size


def test_delta_correct_over_seeded_runs_on_a_small_line():
    """delta = 0.2, the threshold of the experiments, 50 runs: the Clopper-Pearson upper bound is at most delta."""
    env = inst.line(3, 2, seed=0, means="planted", gap=0.4)
    delta, runs = 0.2, 50
    errors = sum(not run(JointFrankWolfe(), env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: inst.line(6, 3, seed=0), lambda: inst.ring(5, 3, seed=0)],
                         ids=["line6", "ring5"])
def test_delta_correct_with_the_practical_threshold_over_many_runs(make):
    env, delta, runs = make(), 0.1, 300
    errors = sum(not run(JointFrankWolfe(), env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta
