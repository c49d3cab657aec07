"""Top-Two over joint actions against independent truths: the challenger is the enumerated best response, one
agent gives the K-armed rule's leader, challenger and IDS proportion, the information share is the closest
alternative's, and the rule is delta-correct over seeded runs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from test_factored_problem import GRAPHS as SMALL_GRAPHS

from bandits.instances import soare
from bandits.multiagent import FactoredBandit
from bandits.multiagent import instances as inst
from bandits.multiagent.best_response import exact_best_response, glr_exceeds
from bandits.multiagent.top_two import JointTopTwo, leader_share
from bandits.pure_exploration import Gaussian, KArmedProblem
from bandits.pure_exploration.algorithm import as_algorithm
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

GRAPHS = {name: make for name, make in SMALL_GRAPHS.items() if name != "one agent"}  # one agent: its own test


def policy_at(fg: FactorGraph, rule: JointTopTwo, seed: int, scale: float = 1.0):
    """A started policy whose statistics are a random state (every group action observed; a small ``scale`` of the
    means gives many near-tied alternatives)."""
    env = FactoredBandit(fg)
    policy = as_algorithm(rule).start(env, 0.1, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 30, size=env.n_arms)
    policy.observe(counts, counts * scale * rng.normal(size=env.n_arms))
    return env, policy


def pair(policy):
    """The empirical leader joint action and its challenger (the factored problem's capability) at the policy's
    statistics."""
    problem = policy.problem
    leader = problem.answer(policy.mu)
    return problem.decode(leader), problem.decode(problem.challenger(policy.mu, policy.counts, leader))


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("seed", range(3))
def test_the_challenger_is_the_enumerated_best_response(name, seed):
    fg = GRAPHS[name]()
    _env, policy = policy_at(fg, JointTopTwo(leader="eb"), seed)
    leader, challenger = pair(policy)
    problem, theta, N = policy.problem, policy.mu, policy.counts
    pieces = problem.pieces(theta, N, gradients=False)
    assert leader.tolist() == problem.decode(pieces.best).tolist()
    flat = problem.indexer.flat(challenger[None, :])[0]
    star = problem.indexer.flat(leader[None, :])[0]
    D = theta[star].sum() - theta[flat].sum()
    changed = flat != star
    H = (1 / N[star][changed] + 1 / N[flat][changed]).sum()
    assert D**2 / (2 * H) == pytest.approx(pieces.value, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_one_agent_gives_the_k_armed_rule(seed):
    rng = np.random.default_rng(seed)
    K = 6
    fg = FactorGraph([K], [((0,), rng.normal(size=K))])
    _env, policy = policy_at(fg, JointTopTwo(leader="eb"), seed)
    leader, challenger = pair(policy)
    mu, N = policy.mu, policy.counts
    karmed = KArmedProblem(K, Gaussian(1.0))
    B = int(np.argmax(mu))
    C = int(np.argmin(karmed.pair_costs(mu, N, B)))
    assert (int(leader[0]), int(challenger[0])) == (B, C)
    ids = N[C] / (N[B] + N[C])  # the K-armed Gaussian IDS proportion
    assert leader_share(N, np.array([B]), np.array([C])) == pytest.approx(ids, rel=1e-12)


def test_leader_share_is_the_leaders_part_of_the_closest_alternative():
    """sum over the leader's entries of N (theta - lambda)^2 over the whole sum, lambda the closest alternative."""
    fg = FactorGraph.line(4, 3, seed=7)
    _env, policy = policy_at(fg, JointTopTwo(leader="eb"), 3)
    leader, challenger = pair(policy)
    theta, N = policy.mu, policy.counts.astype(float)
    ix = policy.problem.indexer
    star, other = ix.flat(leader[None, :])[0], ix.flat(challenger[None, :])[0]
    # the closest alternative: minimise sum N (theta - lam)^2 subject to lam(challenger) = lam(leader)
    direction = np.zeros(theta.size)
    np.add.at(direction, other, 1.0)
    np.add.at(direction, star, -1.0)
    step = (direction @ theta) / (direction**2 / N).sum()
    lam = theta - step * direction / N
    assert direction @ lam == pytest.approx(0.0, abs=1e-12)
    info = N * (theta - lam) ** 2
    changed = star != other
    lead = info[star[changed]].sum()
    assert leader_share(N, star, other) == pytest.approx(lead / (lead + info[other[changed]].sum()), rel=1e-10)


def test_tracking_gives_the_leader_its_share_of_rounds():
    fg = FactorGraph.line(3, 3, seed=2)
    _, policy = policy_at(fg, JointTopTwo(beta=0.3), 0)
    code = 5
    n = sum(policy.state.rule._tracked(code, 0.3) for _ in range(700))
    assert abs(n - 0.3 * 700) <= 1


def test_identifies_the_best_joint_action_on_a_planted_line_of_30_agents():
    env = inst.line(30, 3, seed=0, means="planted", gap=0.5)
    for algo in ("joint-top-two", "joint-top-two:leader=eb,exploration=paper,selection=sampling",
                 "joint-top-two:beta=0.5"):
        result = run(make_algorithm(algo), env, 0.01, seed=1)
        assert result.correct and result.stopped_by == "stopping_rule"


def test_bad_options_are_refused():
    for options in ({"leader": "ucb"}, {"selection": "coin"}, {"beta": 1.0}, {"beta": "half"}, {"beta": True}):
        with pytest.raises(InvalidInputError):
            JointTopTwo(**options)
    with pytest.raises(InvalidInputError, match="factored"):
        run(JointTopTwo(), soare(d=2), 0.1, seed=0)


@pytest.mark.parametrize("leader", ["ts", pytest.param("eb", marks=pytest.mark.slow)])
def test_delta_correct_over_seeded_runs_on_a_small_line(leader):
    """delta = 0.2, the threshold of the experiments, 80 runs: the Clopper-Pearson upper bound is at most delta."""
    env = inst.line(3, 2, seed=0, means="planted", gap=0.3)
    delta, runs = 0.2, 80
    algo = JointTopTwo(leader=leader)
    errors = sum(not run(algo, env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: inst.line(6, 3, seed=0), lambda: inst.ring(5, 3, seed=0)],
                         ids=["line6", "ring5"])
def test_delta_correct_with_the_practical_threshold_over_many_runs(make):
    env, delta, runs = make(), 0.1, 300
    errors = sum(not run(JointTopTwo(), env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta


def test_the_pareto_best_response_equals_enumeration(monkeypatch):
    """With one listing allowed, most states go to the Pareto elimination; its answer is the enumerated minimum."""
    from bandits.multiagent import best_response as br
    from bandits.multiagent import glrt

    monkeypatch.setattr(glrt, "ENUMERATE_ALL", 0)  # the search and the elimination, not the vectorised path
    calls = []
    real = br.most_violated
    monkeypatch.setattr(br, "most_violated", lambda *a, **k: calls.append(1) or real(*a, **k))
    larger = {"line 10": lambda: FactorGraph.line(10, 3, seed=1), "ring 8": lambda: FactorGraph.ring(8, 3, seed=2),
              "grid 3x3": lambda: FactorGraph.grid(3, 3, 2, seed=4)}
    for name, make in {**GRAPHS, **larger}.items():
        for seed in range(6):
            _, policy = policy_at(make(), JointTopTwo(), 100 + seed, scale=0.05)
            problem, theta, N = policy.problem, policy.mu, policy.counts
            result = br.exact_best_response(policy.statistic().state, listed=1)
            pieces = problem.pieces(theta, N, gradients=False)
            assert result.exact, name
            assert result.value == pytest.approx(pieces.value, rel=1e-12), name
            code = int(np.ravel_multi_index(tuple(result.action), problem.structure.n_actions))
            assert pieces.values[pieces.answers == code][0] == pytest.approx(pieces.value, rel=1e-12)
    assert len(calls) >= 5  # the elimination was exercised, not only the search


def test_the_public_helpers_refuse_bad_input():
    fg = FactorGraph.line(3, 2, seed=0)
    _, policy = policy_at(fg, JointTopTwo(leader="eb"), 0)
    state = policy.statistic().state
    counts = policy.counts
    with pytest.raises(InvalidInputError):
        leader_share(counts, np.array([0, 1]), np.array([0, 1, 2]))  # shapes differ
    with pytest.raises(InvalidInputError):
        leader_share(counts, np.array([0, counts.size]), np.array([0, 1]))  # outside the counts
    with pytest.raises(InvalidInputError):
        leader_share(np.zeros_like(counts), np.array([0, 1]), np.array([2, 3]))  # unobserved entries
    with pytest.raises(InvalidInputError):
        exact_best_response(state, listed=0)
    with pytest.raises(InvalidInputError):
        exact_best_response("not a state")
    with pytest.raises(InvalidInputError, match="beta must be a real threshold"):
        glr_exceeds(state, float("nan"))
    with pytest.raises(InvalidInputError):
        state.settle(state.best)  # the empirical best is no alternative
    with pytest.raises(InvalidInputError):
        state.advance(-1)


def test_the_stopping_test_equals_the_enumerated_statistic(monkeypatch):
    """Lambda_t > beta decided with one listing, then the elimination pruned at beta, agrees with the enumerated
    statistic at thresholds just below, at and above it, and a close minimiser found on the way is the true one."""
    from bandits.multiagent import best_response as br
    from bandits.multiagent import glrt

    monkeypatch.setattr(glrt, "ENUMERATE_ALL", 0)  # the search and the elimination, not the vectorised path
    calls = []
    real = br.most_violated
    monkeypatch.setattr(br, "most_violated", lambda *a, **k: calls.append(k["threshold"]) or real(*a, **k))
    larger = {"line 10": lambda: FactorGraph.line(10, 3, seed=1), "ring 8": lambda: FactorGraph.ring(8, 3, seed=2)}
    for name, make in {**GRAPHS, **larger}.items():
        for seed in range(4):
            _, policy = policy_at(make(), JointTopTwo(), 200 + seed, scale=0.05)
            pieces = policy.problem.pieces(policy.mu, policy.counts, gradients=False)
            for factor in (0.5, 1 - 1e-9, 1 + 1e-9, 2.0):
                beta = factor * pieces.value
                state = policy.problem.glr_state(policy.mu, policy.counts)
                assert br.glr_exceeds(state, beta, listed=1) == (pieces.value > beta), (name, seed, factor)
                if state.exhausted:
                    assert state.found == pytest.approx(pieces.value, rel=1e-12), name
    assert sum(t > 0 for t in calls) >= 10  # the pruned elimination decided, not only the search
