"""The configurations Fiez et al. (2019) ran for their baselines (``variant="fiez"`` of XY-Static, XY-Oracle and
XY-Adaptive): batch schedule, stopping and discard levels against their formulas, the Frank–Wolfe design
against the certified optimum, and delta-correctness over seeded runs."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from bandits.instances import soare, transductive
from bandits.linear import StaticAllocation, XYAdaptive
from bandits.linear.fiez_adaptive import fiez_log, fiez_phase, ridge_value
from bandits.linear.static import fiez_frank_wolfe
from bandits.registry import make_algorithm
from bandits.run import run

DELTA = 0.05


def drive(policy, env, rng, batches):
    """Play ``batches`` whole batches by hand; returns their sizes."""
    sizes = []
    for _ in range(batches):
        counts = policy.next_batch(10**9)
        policy.observe(counts, env.pull(counts, rng))
        sizes.append(int(counts.sum()))
    return sizes


@pytest.mark.parametrize("design, growth, power", [("oracle", 1.1, 1), ("xy", 1.35, 2)])
def test_static_batches_and_stopping_level_follow_the_authors_schedule(design, growth, power):
    env = soare(3, omega=0.3)
    rng = np.random.default_rng(1)
    policy = StaticAllocation(design=design, variant="fiez").start(env, DELTA, rng)
    sizes = drive(policy, env, rng, 12)
    ks = 2 * np.arange(1, 13) - 1  # the code advances its phase index twice per batch
    assert sizes == [int(np.ceil(growth**k)) for k in ks]
    assert policy.state.k == 23
    K = env.Z.shape[0]
    assert policy.state.delta_k(DELTA) == pytest.approx(DELTA / (2 * 23**2 * K**power))
    # the stopping rule is the pairwise test sqrt(2 ||y||^2 log(1/delta_k)) < y^T theta for the empirical best
    A, b = policy.state.stats.A, policy.state.stats.b
    theta = np.linalg.solve(A, b)
    best = int(np.argmax(env.Z @ theta))
    level = np.log(1 / policy.state.delta_k(DELTA))
    passes = all(np.sqrt(2 * (y := env.Z[best] - z) @ np.linalg.solve(A, y) * level) < y @ theta
                 for i, z in enumerate(env.Z) if i != best)
    assert policy.stopped(DELTA) == passes


def test_static_draws_follow_the_design():
    """Batches are i.i.d. draws from the design: the counts' frequencies converge to the weights."""
    env = soare(3, omega=0.3)
    rng = np.random.default_rng(2)
    policy = StaticAllocation(design="xy", variant="fiez").start(env, DELTA, rng)
    drive(policy, env, rng, 30)  # about 1.35^59 / 0.82 = 5e7 draws
    freq = policy.state.stats.counts / policy.state.stats.n
    np.testing.assert_allclose(freq, policy.state.weights, atol=1e-3)


def test_frank_wolfe_design_is_near_the_certified_optimum():
    env = soare(5, omega=0.01)
    Y, _ = od.oracle_directions(env.Z, env.theta)
    optimum = od.transductive(env.X, env.Z, env.theta)
    fw = fiez_frank_wolfe(env.X, Y)
    value = od.minmax_value(env.X, fw, Y)
    assert od.minmax_value(env.X, optimum.weights, Y) <= value * (1 + 1e-6)  # the optimum is a lower bound
    assert value <= 1.05 * od.minmax_value(env.X, optimum.weights, Y)
    assert fw.sum() == pytest.approx(1.0) and np.all((fw == 0) | (fw >= 1e-5))
    # the unlisted pair scan and the explicit list of differences give the same iterates (generic items: no ties)
    rng = np.random.default_rng(0)
    X, Z = rng.standard_normal((6, 3)), rng.standard_normal((9, 3))
    np.testing.assert_allclose(fiez_frank_wolfe(X, None, Z), fiez_frank_wolfe(X, od.pairwise_differences(Z)),
                               atol=1e-12)


def test_frank_wolfe_over_unlisted_pairs_of_many_arms_equals_the_explicit_list():
    """Fiez et al.'s many arms (an arc of nearly equal directions: the norm bound alone prunes nothing) and points
    on a sphere: the farthest-pair scan gives the iterates of the explicit list of differences."""
    from bandits.instances import many_arms, sphere

    for env in (many_arms(150), sphere(120, 3)):
        np.testing.assert_allclose(fiez_frank_wolfe(env.X, None, env.X),
                                   fiez_frank_wolfe(env.X, od.pairwise_differences(env.X)), atol=1e-12)
    with pytest.raises(od.InvalidInputError, match="two items"):
        fiez_frank_wolfe(np.eye(2), None, np.ones((1, 2)))


def test_adaptive_phases_end_at_the_authors_rule():
    """Phase j ends at the first n = d + m with rho(m) / n < alpha rho_{j-1} / n_{j-1}; one pull fewer misses it."""
    env = soare(3, omega=0.1)
    X, d = env.X, env.X.shape[1]
    Y = od.pairwise_differences(env.Z)
    target = 0.1 / (d * (d + 1) + 1)
    w = od.minmax_design(X, Y).weights
    for weights in (w, None):
        counts, rho = fiez_phase(X, Y, weights, target, 10**9)
        m = int(counts.sum())
        assert rho == pytest.approx(ridge_value(X, counts, Y))
        assert rho / (d + m) < target
        if weights is not None and m > 1:
            assert ridge_value(X, od.round_design(w, m - 1), Y) / (d + m - 1) >= target
    assert fiez_log(3, 4, DELTA) == pytest.approx(np.log(2 * np.pi**2 * 16 * 9 / (6 * DELTA)))


def test_adaptive_discards_with_the_authors_width():
    env = soare(2, omega=0.5)
    rng = np.random.default_rng(0)
    policy = XYAdaptive(variant="fiez").start(env, DELTA, rng)
    while not policy.stopped(DELTA):
        counts = policy.next_batch(10**9)
        policy.observe(counts, env.pull(counts, rng))
    for record in policy.state.phases:
        assert record["width"] == pytest.approx(np.sqrt(2 * fiez_log(record["phase"], 3, DELTA)))
    assert policy.recommend() == env.best_item


@pytest.mark.parametrize("name", ["xy-oracle:variant=fiez", "xy-static:variant=fiez", "xy-adaptive:variant=fiez",
                                  "xy-adaptive:variant=fiez,rule=greedy"])
def test_fiez_variants_are_delta_correct_fast(name):
    algo = make_algorithm(name)
    results = [run(algo, soare(2, omega=0.3), DELTA, seed) for seed in range(20)]
    assert all(r.stopped_by == "stopping_rule" for r in results)
    assert np.mean([not r.correct for r in results]) <= DELTA


@pytest.mark.slow
@pytest.mark.parametrize("name", ["xy-oracle:variant=fiez", "xy-static:variant=fiez", "xy-adaptive:variant=fiez"])
@pytest.mark.parametrize("env", [soare(3, omega=0.1), transductive(d=3)], ids=["soare", "transductive"])
def test_fiez_variants_are_delta_correct(name, env):
    # delta = 0.2 makes errors likely enough to see: the observed rate must stay below it (99 % one-sided
    # binomial margin over 200 runs: 0.2 + 2.33 sqrt(0.16 / 200) = 0.266)
    algo = make_algorithm(name)
    results = [run(algo, env, 0.2, seed) for seed in range(200)]
    assert all(r.stopped_by == "stopping_rule" for r in results)
    assert np.mean([not r.correct for r in results]) <= 0.266


def test_fiez_oracle_matches_the_authors_order_on_soare():
    """On Soare's instance the Frank–Wolfe oracle stops near 2 rho* log(1/delta_k), far below eq. 11's 8 rho* log."""
    env = soare(3, omega=0.1)
    fiez = np.mean([run(make_algorithm("xy-oracle:variant=fiez"), env, DELTA, s).samples for s in range(5)])
    soare_rule = np.mean([run(make_algorithm("xy-oracle"), env, DELTA, s).samples for s in range(5)])
    assert fiez < soare_rule / 2


@pytest.mark.parametrize("text", [
    "xy-oracle:variant=paper", "g-static:variant=fiez", "xy-static:variant=fiez,threshold=practical",
    "xy-oracle:variant=fiez,rule=greedy", "xy-oracle:variant=fiez,growth=0.1", "xy-adaptive:variant=soare2",
])
def test_bad_variant_options_raise(text):
    with pytest.raises(od.InvalidInputError):
        make_algorithm(text)
