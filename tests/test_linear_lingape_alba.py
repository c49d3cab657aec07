"""LinGapE (Xu, Honda & Sugiyama 2018) and ALBA (Tao, Blanco & Zhou 2018), the two rows of Fiez et al.'s
figures besides the XY baselines and RAGE: their confidence widths and stopping rules against the formulas,
the minimum-L1 arm ratios and the span G-design against their definitions, and delta-correctness; the top-m rules
m-LinGapE and LinGIFA (Réda, Kaufmann & Delahaye-Duriez 2021): their gap indices, leaders and challengers against
their definitions, and delta-correctness."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import optdesign as od
from bandits.cli import app
from bandits.instances import parse_instance, soare, transductive
from bandits.linear import ALBA, LinGapE, LinGIFA
from bandits.linear.alba import span_design
from bandits.linear.lingape import l1_ratio
from bandits.registry import make_algorithm
from bandits.run import run

DELTA = 0.05


def play(policy, env, rng, max_samples=10**8):
    n = 0
    while not policy.stopped(DELTA) and n < max_samples:
        counts = policy.next_batch(max_samples - n)
        policy.observe(counts, env.pull(counts, rng))
        n += int(counts.sum())
    return n


def error_rate(algo, env, runs, delta=DELTA):
    results = [run(algo, env, delta, seed) for seed in range(runs)]
    assert all(r.stopped_by == "stopping_rule" for r in results)
    return np.mean([not r.correct for r in results])


# ------------------------------------------------------------------------------------------------ LinGapE


def test_l1_ratio_is_the_minimum_l1_representation():
    # canonical arms only: the representation is y itself
    y = np.array([0.5, -1.5, 0.0])
    np.testing.assert_allclose(l1_ratio(np.eye(3), y), np.abs(y) / np.abs(y).sum(), atol=1e-9)
    # Soare's arms, y = e_1 - x_{d+1}: the canonical representation (1 - cos, -sin) beats (1, 0, -1)
    X = soare(2, omega=0.3).X
    y = X[0] - X[2]
    p = l1_ratio(X, y)
    np.testing.assert_allclose(p, np.r_[np.abs(y), 0.0] / np.abs(y).sum(), atol=1e-9)


def test_lingape_stops_only_when_every_upper_gap_is_negative():
    env = soare(2, omega=0.3)
    rng = np.random.default_rng(3)
    policy = LinGapE().start(env, DELTA, rng)
    play(policy, env, rng)
    V = np.eye(2) + policy.state.stats.A
    theta = np.linalg.solve(V, policy.state.stats.b)
    K, logdet = 3, np.linalg.slogdet(V)[1]
    C = np.sqrt(2 * np.log(K**2 * np.exp(0.5 * logdet) / DELTA)) + np.linalg.norm(env.theta)
    i = int(np.argmax(env.Z @ theta))
    gaps = [(z - env.Z[i]) @ theta + np.sqrt((z - env.Z[i]) @ np.linalg.solve(V, z - env.Z[i])) * C
            for j, z in enumerate(env.Z) if j != i]
    assert max(gaps) <= 0 and policy.recommend() == i == env.best_item


def test_lingape_batched_decisions_cost_about_the_same_as_per_pull_decisions():
    env = soare(2, omega=0.3)
    exact = np.mean([run(LinGapE(growth=0.0), env, DELTA, s).samples for s in range(5)])
    batched = np.mean([run(LinGapE(), env, DELTA, s).samples for s in range(5)])
    assert 0.7 <= batched / exact <= 1.4


@pytest.mark.parametrize("selection", ["ratio", "greedy"])
def test_lingape_correct_fast(selection):
    assert error_rate(LinGapE(selection=selection), soare(2, omega=0.3), runs=20) <= DELTA
    assert run(LinGapE(selection=selection), transductive(d=2), DELTA, 0).correct


def _reference_decision(algo, state, m):
    """(b_t, c_t, B(t), J(t)) from the definitions, by loops over the pairs of items."""
    V = state.lam * np.eye(state.X.shape[1]) + state.stats.A
    theta = np.linalg.solve(V, state.stats.b)
    C = state.confidence(np.linalg.slogdet(V)[1])
    Z, M = state.Z, state.Z.shape[0]
    B = np.full((M, M), -np.inf)
    for i in range(M):
        for j in range(M):
            if i != j:
                y = Z[i] - Z[j]
                B[i, j] = y @ theta + C * np.sqrt(y @ np.linalg.solve(V, y))
    if isinstance(algo, LinGIFA):
        index = np.array([sorted(B[:, j])[-m] for j in range(M)])
        top = sorted(np.argsort(index, kind="stable")[:m])
    else:
        top = sorted(np.argsort(-(Z @ theta), kind="stable")[:m])
        index = np.array([max(B[i, j] for i in range(M) if i not in top) for j in range(M)])
    b = max(top, key=lambda j: (index[j], -j))
    c = max((i for i in range(M) if i not in top), key=lambda i: (B[i, b], -i))
    return b, c, (index[b] if isinstance(algo, LinGIFA) else B[c, b]), top


@pytest.mark.parametrize("algo", [LinGapE(m=2), LinGapE(m=3, selection="greedy"), LinGIFA(m=2), LinGIFA(m=1)])
def test_top_m_gap_indices_follow_their_definitions(algo):
    env = parse_instance("sphere:n=7,d=3,seed=2")
    rng = np.random.default_rng(0)
    policy = algo.start(env, DELTA, rng)
    for _ in range(40):  # a few batches, then the decision against the definitions
        counts = policy.next_batch(10**6)
        policy.observe(counts, env.pull(counts, rng))
    b, c, B, top = _reference_decision(algo, policy.state, algo.m)
    got = policy.state._decide()
    assert (got[0], got[1]) == (b, c) and got[2] == pytest.approx(B, rel=1e-9, abs=1e-12)
    assert sorted(policy.state._top.tolist()) == top


@pytest.mark.parametrize("algo", [LinGapE(m=2), LinGIFA(m=2), LinGIFA(m=3, selection="ratio")])
def test_top_m_rules_identify_the_m_best_items(algo):
    env = parse_instance("sphere:n=8,d=3,seed=1")
    results = [run(algo, env, 0.1, seed) for seed in range(10)]
    assert all(r.correct and r.stopped_by == "stopping_rule" for r in results)
    best = sorted(np.argsort(-(env.Z @ env.theta))[: algo.m].tolist())
    assert results[0].recommendation == sum(1 << k for k in best)


def test_the_frequentist_width_is_reda_et_als_beta():
    """C_t = sigma (sqrt(2 log(1/delta) + d log(1 + (t + 1) L^2 / (lambda'^2 d))) + lambda' S / sigma), lambda' =
    sigma / eta, t the samples so far: the width their code's m-LinGapE uses (sqrt(2 beta(t)) times sigma)."""
    env = parse_instance("top-m-classic:K=4,m=2,omega=0.5")
    algo = LinGapE(m=2, width="frequentist", eta=20.0)
    rng = np.random.default_rng(0)
    policy = algo.start(env, DELTA, rng)
    for _ in range(5):
        counts = policy.next_batch(10**6)
        policy.observe(counts, env.pull(counts, rng))
    state, t, d = policy.state, float(policy.state.stats.counts.sum()), env.X.shape[1]
    lam, L2 = env.sigma / 20.0, max(float(x @ x) for x in env.X)
    beta = 0.5 * (np.sqrt(2 * np.log(1 / DELTA) + d * np.log(1 + (t + 1) * L2 / (lam**2 * d)))
                  + lam / env.sigma * np.linalg.norm(env.theta)) ** 2
    assert state.confidence(0.0) == pytest.approx(env.sigma * np.sqrt(2 * beta), rel=1e-12)
    b, c, B, _ = _reference_decision(algo, state, 2)
    assert state._decide()[:2] == (b, c) and state._decide()[2] == pytest.approx(B, rel=1e-9)


def test_lingifa_takes_the_ridge_of_the_frequentist_width():
    """Réda et al.'s LinGIFA regularises with lambda'^2 = (sigma / eta)^2 (their B_inv = I / lambda'^2), the ridge their
    "Frequentist" beta is computed for; their m-LinGapE keeps 1, and both keep 1 under this module's bound."""
    env = parse_instance("top-m-classic:K=4,m=2,omega=0.5")
    rng = np.random.default_rng(0)
    ridge = {(type(a).__name__, a.width): a.start(env, DELTA, rng).state.lam
             for a in (LinGIFA(m=2, width="frequentist", eta=20.0), LinGIFA(m=2), LinGapE(m=2, width="frequentist"),
                       LinGapE(m=2))}
    assert ridge == {("LinGIFA", "frequentist"): (env.sigma / 20.0) ** 2, ("LinGIFA", "bound"): 1.0,
                     ("LinGapE", "frequentist"): 1.0, ("LinGapE", "bound"): 1.0}
    assert LinGIFA(m=2, lam=2.0, width="frequentist").start(env, DELTA, rng).state.lam == 2.0


def test_top_m_rules_refuse_m_of_every_item():
    with pytest.raises(od.InvalidInputError, match="below the number of items"):
        run(LinGIFA(m=3), soare(2, omega=0.3), DELTA, 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lingape:m=2", "lingifa:m=2"])
def test_top_m_rules_are_delta_correct_over_many_runs(name):
    """200 runs at delta = 0.2 on a sphere instance (2nd and 3rd item values 0.84 and 0.12)."""
    env = parse_instance("sphere:n=6,d=3,seed=4")
    errors = sum(not run(make_algorithm(name), env, 0.2, seed).correct for seed in range(200))
    assert errors / 200 <= 0.266


# ------------------------------------------------------------------------------------------------ ALBA


def test_span_design_is_g_optimal_on_the_span_of_the_survivors():
    X = soare(4, omega=0.2).X
    active = np.array([0, 4])  # e_1 and (cos w, sin w, 0, 0): their span holds e_1, e_2 and x_5
    w = span_design(X, active)
    assert set(np.flatnonzero(w > 1e-9)) <= {0, 1, 4} and w[2] == w[3] == 0
    # Kiefer–Wolfowitz in the 2-dimensional span: max_x x^T M^+ x = 2 over the arms in it
    M = X.T @ (w[:, None] * X)
    assert max(x @ np.linalg.pinv(M) @ x for x in X[[0, 1, 4]]) == pytest.approx(2.0, rel=1e-3)


def test_alba_steps_follow_the_schedule():
    env = soare(3, omega=0.1)
    rng = np.random.default_rng(0)
    policy = ALBA().start(env, DELTA, rng)
    play(policy, env, rng)
    assert policy.recommend() == env.best_item and policy.state.active.size == 1
    S, d = 2.0, 3
    for rec in policy.state.phases:
        r, s = rec["round"], rec["step"]
        delta_s = 36 * DELTA / (np.pi**4 * (r + 1) ** 2 * s**2)
        l_s = 4 * max(4 * S**2, 3) * (2 + (6 + 4 / 1.1**s) * d) * (1.1**s / 4) ** 2
        assert rec["l"] == pytest.approx(l_s)
        K_r = len(rec["active"]) if s == 1 else None
        if K_r is not None:
            assert rec["N"] == int(np.ceil(l_s * np.log(5 * K_r**2 / (2 * delta_s))))
        assert rec["samples"] == rec["N"]


def test_alba_correct_fast():
    assert error_rate(ALBA(), soare(2, omega=0.3), runs=20) <= DELTA
    assert error_rate(ALBA(), soare(3, omega=0.1), runs=10) <= DELTA


def test_alba_refuses_transductive_instances():
    with pytest.raises(od.InvalidInputError, match="Z must equal"):
        run(ALBA(), transductive(d=2), DELTA, 0)


# ------------------------------------------------------------------------------------------------ both


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lingape", "alba"])
def test_delta_correct_over_many_runs(name):
    # delta = 0.2: the observed error rate must stay below 0.2 + 2.33 sqrt(0.16 / 200) = 0.266 (99 % one-sided)
    assert error_rate(make_algorithm(name), soare(3, omega=0.1), runs=200, delta=0.2) <= 0.266


@pytest.mark.parametrize("text", [
    "lingape:epsilon=-1", "lingape:lam=0", "lingape:S=-1", "lingape:selection=random", "lingape:growth=2",
    "lingape:eps=0", "alba:S=-2", "alba:alpha=0.1", "lingape:m=0", "lingifa:m=1.5", "lingape:width=bayes",
    "lingifa:width=frequentist,eta=0",
])
def test_bad_options_raise(text):
    with pytest.raises(od.InvalidInputError):
        make_algorithm(text)


@pytest.mark.parametrize("name", ["lingape", "alba"])
def test_cli_runs_them(name):
    out = CliRunner().invoke(app, ["run", name, "-i", "soare:d=2", "--seed", "1", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)[0]
    assert data["correct"] is True and data["stopped_by"] == "stopping_rule"
    assert data["samples"] == run(make_algorithm(name), soare(2), 0.05, seed=1).samples
