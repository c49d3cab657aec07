"""LinGapE (Xu, Honda & Sugiyama 2018) and ALBA (Tao, Blanco & Zhou 2018), the two rows of Fiez et al.'s
figures besides the XY baselines and RAGE: their confidence widths and stopping rules against the formulas,
the minimum-L1 arm ratios and the span G-design against their definitions, and delta-correctness."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import optdesign as od
from bandits.cli import app
from bandits.instances import soare, transductive
from bandits.linear import ALBA, LinGapE
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
    "lingape:eps=0", "alba:S=-2", "alba:alpha=0.1",
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
