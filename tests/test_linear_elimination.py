"""Elimination algorithms for linear bandits: XY-Adaptive and the fully adaptive XY allocation
(Soare et al. 2014) and RAGE (Fiez et al. 2019). Statistical truths (correctness rates, soundness
of the discard rules), the phase-length and phase-size formulas against independent solves, and
Soare's qualitative comparison with the static XY allocation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.core.statistics import spanning_subset
from bandits.instances import soare, transductive
from bandits.linear import RAGE, FullyAdaptiveXY, LinGapE, StaticAllocation, XYAdaptive
from bandits.linear.adaptive import design_phase, dominated, greedy_phase
from bandits.run import run

DELTA = 0.05
ALGORITHMS = {"xy-adaptive": XYAdaptive, "xy-fully-adaptive": FullyAdaptiveXY, "rage": RAGE}


def play(policy, env, rng, until, max_samples=10**8):
    """Drive a policy by hand until ``until(policy)`` or it stops; returns the samples used."""
    n = 0
    while not policy.stopped(DELTA) and not until(policy) and n < max_samples:
        counts = policy.next_batch(max_samples - n)
        policy.observe(counts, env.pull(counts, rng))
        n += int(counts.sum())
    return n


def correct_rate(algo, env, runs, delta=DELTA):
    results = [run(algo, env, delta, seed, max_samples=10**8) for seed in range(runs)]
    assert all(r.stopped_by == "stopping_rule" for r in results)
    return np.mean([r.correct for r in results])


# ------------------------------------------------------------------------------------------------
# correctness on Soare's instance


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("d", [2, 3])
def test_soare_instance_correct_fast(name, d):
    assert correct_rate(ALGORITHMS[name](), soare(d, omega=0.1), runs=10) >= 0.95


@pytest.mark.slow
@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_soare_instance_correct(name, d):
    assert correct_rate(ALGORITHMS[name](), soare(d, omega=0.1), runs=40) >= 0.95


def test_transductive_instance_correct():
    env = transductive(d=3)
    for algo in (XYAdaptive(), FullyAdaptiveXY(), RAGE()):
        for seed in range(2):
            r = run(algo, env, DELTA, seed)
            assert r.stopped_by == "stopping_rule" and r.correct, (algo.name, seed)


# ------------------------------------------------------------------------------------------------
# XY-Adaptive


def test_xy_adaptive_hard_instance_beats_static_xy():
    """Soare et al. Fig. 4: on omega = 0.01 (Delta_min ~ 1e-4) XY-Adaptive stops, is right, and
    needs fewer samples than the static XY allocation (d = 5, mean over 5 seeds)."""
    env = soare(5, omega=0.01)
    adaptive = [run(XYAdaptive(), env, DELTA, seed, max_samples=10**9) for seed in range(5)]
    static = [run(StaticAllocation("xy"), env, DELTA, seed, max_samples=10**9) for seed in range(5)]
    for r in adaptive:
        assert r.stopped_by == "stopping_rule" and r.correct and 0 < r.samples < 10**9
    print("xy-adaptive", [r.samples for r in adaptive], "xy-static", [r.samples for r in static])
    assert np.mean([r.samples for r in adaptive]) < np.mean([r.samples for r in static])


def test_phases_meet_eq18_and_use_their_own_samples():
    """Each phase ends once max_{Y_j} y^T A_j^{-1} y <= alpha * (the previous phase's value); the
    samples of the run are exactly the sum of the phases' samples; survivors only shrink."""
    env, alpha = soare(3, omega=0.1), 0.2
    policy = XYAdaptive(alpha=alpha).start(env, DELTA, None)
    n = play(policy, env, np.random.default_rng(3), until=lambda p: False)
    assert policy.stopped(DELTA) and policy.recommend() == env.best_item
    phases = policy.state.phases
    assert sum(p["samples"] for p in phases) == n == phases[-1]["total"]
    base = np.zeros(env.n_arms, dtype=np.int64)
    base[spanning_subset(env.X)] = 1
    first = od.minmax_value(env.X, base, od.pairwise_differences(env.Z))
    assert phases[0]["target"] == pytest.approx(alpha * first)
    for prev, cur in itertools.pairwise(phases):
        assert cur["value"] <= alpha * prev["value"] * (1 + 1e-12)
        assert set(cur["survivors"]) <= set(cur["active"]) == set(prev["survivors"])


@pytest.mark.parametrize("d", [2, 3, 5])
def test_greedy_and_design_phase_lengths_agree(d):
    """Both rules reach the Eq. 18 target of a phase after the same order of pulls."""
    X = soare(d, omega=0.1).X
    base = np.zeros(X.shape[0], dtype=np.int64)
    base[spanning_subset(X)] = 1
    for Y, factor in [(od.pairwise_differences(X), 0.1), (od.pairwise_differences(X), 1e-3),
                      ((X[0] - X[-1])[None, :], 1e-2)]:
        target = factor * od.minmax_value(X, base, Y)
        by_design = design_phase(X, Y, base, od.minmax_design(X, Y).weights, target, 10**9)
        by_greedy = greedy_phase(X, Y, base, target, 10**9)
        for counts in (by_design, by_greedy):
            assert od.minmax_value(X, counts, Y) <= target
        assert 0.5 <= by_design.sum() / by_greedy.sum() <= 2.0
        # minimality of the design phase: one pull fewer misses the target
        m = int(by_design.sum() - base.sum())
        if m > 0:
            fewer = base + od.round_design(od.minmax_design(X, Y).weights, m - 1) if m > 1 else base
            assert od.minmax_value(X, fewer, Y) > target


def test_greedy_rule_runs_to_the_same_answer():
    env = soare(2, omega=0.5)
    design = run(XYAdaptive(), env, DELTA, 0)
    greedy = run(XYAdaptive(rule="greedy"), env, DELTA, 0)
    assert design.correct and greedy.correct
    assert 0.5 <= design.samples / greedy.samples <= 2.0


def test_dominated_matches_definition():
    """Lemma 4: z is dominated iff some z' has (z' - z)^T theta > width ||z' - z||_M."""
    Z, theta, M = np.array([[0.0], [1.0]]), np.array([1.0]), np.eye(1)
    np.testing.assert_array_equal(dominated(Z, theta, M, 0.99), [True, False])
    np.testing.assert_array_equal(dominated(Z, theta, M, 1.01), [False, False])
    rng = np.random.default_rng(0)
    Z, theta = rng.standard_normal((30, 3)), rng.standard_normal(3)
    B = rng.standard_normal((3, 3))
    M = B @ B.T + np.eye(3)
    brute = [any((z2 - z) @ theta > 0.7 * np.sqrt((z2 - z) @ M @ (z2 - z)) for z2 in Z) for z in Z]
    np.testing.assert_array_equal(dominated(Z, theta, M, 0.7), brute)


def test_discard_rule_sound_and_effective():
    """X = I_3, theta = (1, 0.9, -9), delta = 0.1: over 200 seeds the arm with gap 10 is discarded
    after phase 1 (its confidence width is ~4 < 10), and the best arm is never discarded in the
    first two phases (Lemma 4 fails with probability <= delta; with c = 2 sqrt 2 far less)."""
    env = LinearBandit(np.eye(3), np.array([1.0, 0.9, -9.0]))
    big_gap_gone, best_dropped = 0, 0
    for seed in range(200):
        policy = XYAdaptive().start(env, 0.1, None)
        play(policy, env, np.random.default_rng(seed), until=lambda p: len(p.state.phases) >= 2)
        big_gap_gone += 2 not in policy.state.phases[0]["survivors"]
        best_dropped += any(0 not in p["survivors"] for p in policy.state.phases)
    assert big_gap_gone >= 198
    assert best_dropped == 0


# ------------------------------------------------------------------------------------------------
# RAGE


def test_rage_transductive_phase_sizes_follow_the_formula():
    """N_k = max(ceil(2 4^k (1 + eps) rho_k log(2 |Z|^2 / delta_k)), ceil(2 p / eps)) with
    rho_k = od.transductive(X, Z_k) solved independently; z* recommended."""
    env, eps = transductive(d=5), 0.1
    policy = RAGE(eps=eps).start(env, DELTA, None)
    n = play(policy, env, np.random.default_rng(1), until=lambda p: False)
    assert policy.stopped(DELTA) and policy.recommend() == env.best_item
    assert n == sum(p["samples"] for p in policy.state.phases)
    K = env.Z.shape[0]
    for k, rec in enumerate(policy.state.phases, start=1):
        rho = od.transductive(env.X, env.Z[rec["active"]]).value
        assert rec["rho"] == pytest.approx(rho, rel=1e-3)
        main = 2 * 4**k * (1 + eps) * rho * np.log(2 * K**2 * k**2 / DELTA)
        expected = max(main, np.ceil(2 * rec["support"] / eps))
        assert rec["samples"] == rec["N"]
        assert rec["N"] == pytest.approx(expected, rel=1e-3, abs=1)
        # the rounded allocation keeps every direction's variance under the level the N_k was sized for
        assert rec["max_var"] <= rec["var_bound"]
    assert len(policy.state.phases) <= int(np.ceil(np.log2(2 / env.gap_min))) + 1


def test_rage_elimination_keeps_best_and_removes_large_gaps():
    """On the good event (probability >= 1 - delta): z* survives every phase and after phase k no
    item with gap >= 2^{1-k} is left. delta = 0.1, 200 seeds, first three phases."""
    env = LinearBandit(np.eye(4), np.array([1.0, 0.9, 0.5, -0.5]))
    violations = 0
    for seed in range(200):
        policy = RAGE().start(env, 0.1, None)
        play(policy, env, np.random.default_rng(seed), until=lambda p: len(p.state.phases) >= 3)
        for k, rec in enumerate(policy.state.phases, start=1):
            left = np.array(rec["survivors"])
            violations += env.best_item not in left or bool(np.any(env.gaps[left] >= 2.0 ** (1 - k)))
    assert violations == 0


def test_rage_respects_the_budget():
    env = transductive(d=5)
    r = run(RAGE(), env, DELTA, 0, max_samples=300)  # phase 1 needs 875 pulls
    assert r.stopped_by == "budget" and r.samples == 300


def test_xy_adaptive_respects_the_budget():
    r = run(XYAdaptive(), soare(3, omega=0.01), DELTA, 0, max_samples=5000)
    assert r.stopped_by == "budget" and r.samples == 5000


# ------------------------------------------------------------------------------------------------
# fully adaptive


def test_fully_adaptive_radius_covers_abbasi_yadkori_for_d_ge_2():
    """The printed Prop. 2 radius sqrt(d log((1 + n L^2/eta)/delta)) is at least the self-normalised
    radius sqrt(2 log(1/delta) + d log(1 + n L^2/(d eta))) of Abbasi-Yadkori et al. (Thm 2) when d >= 2."""
    for d in (2, 3, 10):
        env = soare(d, omega=0.1)
        policy = FullyAdaptiveXY(eta=1.0, S=0.0).start(env, DELTA, None)
        for n in (1, 10, 10**4, 10**8):
            ay = np.sqrt(2 * np.log(1 / DELTA) + d * np.log(1 + n / d))
            assert policy.state.radius(n) >= ay


# ------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("make", [
    lambda: XYAdaptive(alpha=0.0), lambda: XYAdaptive(alpha=1.0), lambda: XYAdaptive(alpha=-0.1),
    lambda: XYAdaptive(alpha=float("nan")), lambda: XYAdaptive(rule="random"),
    lambda: RAGE(eps=0.0), lambda: RAGE(eps=-1.0), lambda: RAGE(eps=2.0), lambda: RAGE(eps=float("inf")),
    lambda: FullyAdaptiveXY(eta=0.0), lambda: FullyAdaptiveXY(S=-1.0), lambda: FullyAdaptiveXY(growth=0.0),
    # a string in the Python API (the command line parses numbers first) was a TypeError of numpy's
    lambda: XYAdaptive(alpha="0.1"), lambda: RAGE(eps="0.1"), lambda: FullyAdaptiveXY(eta="1"),
    lambda: FullyAdaptiveXY(S="2"), lambda: LinGapE(epsilon="0"), lambda: LinGapE(lam="1"), lambda: LinGapE(eta="20"),
])
def test_bad_options_raise(make):
    with pytest.raises(od.InvalidInputError):
        make()


def test_one_delta_per_run():
    with pytest.raises(od.InvalidInputError, match="once per delta"):
        run(RAGE(), soare(2), [0.1, 0.05], 0)
