"""Environments, sufficient statistics, thresholds and the runner: known truths."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.core.statistics import LinearStatistics
from bandits.core.stopping import LinearTheoryThreshold, PracticalThreshold, SoareThreshold, check_delta
from bandits.core.tracking import next_checkpoint, track
from bandits.instances import factorial, many_arms, parse_instance, soare, sphere, transductive
from bandits.linear import StaticAllocation
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


def test_batched_pulls_are_exact_in_law():
    # one Gaussian per arm for a batch of n pulls: mean n mu, variance n sigma^2
    env = LinearBandit(np.eye(3), np.array([1.0, 0.5, -0.2]), sigma=2.0)
    rng = np.random.default_rng(0)
    counts = np.array([10, 1000, 0])
    sums = np.array([env.pull(counts, rng) for _ in range(4000)])
    assert np.allclose(sums.mean(axis=0), counts * env.means, atol=4 * 2.0 * np.sqrt(counts / 4000) + 1e-12)
    assert np.allclose(sums.var(axis=0)[:2], 4.0 * counts[:2], rtol=0.1)
    assert np.all(sums[:, 2] == 0)


def test_ols_from_sufficient_statistics_equals_lstsq(rng):
    X = rng.standard_normal((6, 3))
    counts = rng.integers(1, 5, 6)
    rewards = [rng.standard_normal(c) for c in counts]
    stats = LinearStatistics(X)
    stats.add(counts, np.array([r.sum() for r in rewards]))
    design = np.repeat(X, counts, axis=0)
    y = np.concatenate(rewards)
    assert np.allclose(stats.theta_hat(), np.linalg.lstsq(design, y, rcond=None)[0])


def test_information_matrix_is_the_sum_of_outer_products_of_the_pulls(rng):
    X = rng.standard_normal((7, 4))
    counts = np.array([0, 3, 0, 1, 5, 0, 2])  # unpulled arms contribute nothing
    stats = LinearStatistics(X)
    stats.add(counts, np.zeros(7))
    assert np.allclose(stats.A, sum(c * np.outer(x, x) for c, x in zip(counts, X, strict=True)))
    big = LinearStatistics(np.eye(3000)[:, :2000])  # K x d x d outer products would need 96 GB
    big.add(np.ones(3000, dtype=np.int64), np.zeros(3000))
    assert np.allclose(np.diag(big.A), 1.0)


def test_glr_equals_pairwise_formula(rng):
    X = rng.standard_normal((5, 3))
    stats = LinearStatistics(X)
    stats.add(np.full(5, 7), rng.standard_normal(5))
    glr = stats.glr(X, sigma=1.5)
    theta = stats.theta_hat()
    Ainv = np.linalg.inv(stats.A)
    best = int(np.argmax(X @ theta))
    vals = [((X[best] - X[k]) @ theta) ** 2 / (2 * 1.5**2 * (X[best] - X[k]) @ Ainv @ (X[best] - X[k]))
            for k in range(5) if k != best]
    assert glr.best == best and np.isclose(glr.value, min(vals))


def test_thresholds_in_glr_units():
    assert np.isclose(PracticalThreshold()(np.e, 0.1), np.log(2 / 0.1))
    # Soare eq. 11: c ||y|| sqrt(log(c' n^2 K^2 / delta)) <= gap with c = 2 sqrt(2): Lambda >= 4 log(...)
    assert np.isclose(SoareThreshold(n_items=4)(10, 0.05), 4 * np.log(6 / np.pi**2 * 100 * 16 / 0.05))
    A0 = np.eye(2)
    th = LinearTheoryThreshold.from_matrix(A0, eta=1.0)
    assert np.isclose(th(5, 0.1, A0), 2 * (np.log(10) + 0.5 * np.log(4)))


def test_theory_threshold_covers_the_self_normalised_deviation():
    # P(exists t: ||theta_hat - theta||_A^2 / 2 > beta(t, delta)) <= delta (here on a doubling design)
    delta, runs, violations = 0.2, 400, 0
    X = np.eye(2)
    beta = LinearTheoryThreshold.from_matrix(X.T @ X)
    rng = np.random.default_rng(1)
    for _ in range(runs):
        stats = LinearStatistics(X)
        theta = np.zeros(2)
        for n in (1, 2, 4, 8, 16, 64, 256, 1024):
            counts = np.full(2, n) - stats.counts
            stats.add(counts, np.sqrt(counts) * rng.standard_normal(2))
            dev = stats.theta_hat() - theta
            if dev @ stats.A @ dev / 2 > beta(stats.n, delta, stats.A):
                violations += 1
                break
    assert violations / runs <= delta


def test_tracking_stays_close_to_target():
    w = np.array([0.5, 0.3, 0.2, 0.0])
    counts = np.zeros(4, dtype=np.int64)
    n = 0
    for _ in range(200):
        nxt = next_checkpoint(n, 0.05)
        counts += track(counts, w, nxt - n)
        n = nxt
        assert counts.sum() == n and counts[3] == 0
        assert np.max(np.abs(counts - n * w)) <= 4  # bounded by the support size
    assert next_checkpoint(0, 0.01) == 1 and next_checkpoint(1000, 0.01) == 1010


def test_named_instances_match_their_papers():
    env = soare(d=4, omega=0.1)
    assert env.best_item == 0 and np.isclose(env.gap_min, 2 * (1 - np.cos(0.1)))
    assert many_arms(n=50).best_item == 0
    s = sphere(n=30, d=4)
    assert np.isclose(np.linalg.norm(s.X, axis=1), 1).all()
    f = factorial(D=3)
    assert f.X.shape == (8, 1 + 3 + 3)
    t = transductive(d=3, omega=0.1)
    assert t.X.shape == (6, 6) and t.Z.shape == (6, 6) and t.best_item == 0
    assert parse_instance("soare:d=3,omega=0.2").name == "soare(d=3,omega=0.2)"


def test_static_allocations_identify_the_best_arm():
    env = soare(d=3, omega=0.1)
    for design in ("g", "xy", "oracle"):
        results = [run(StaticAllocation(design), env, 0.05, seed=s) for s in range(10)]
        assert all(r.correct and r.stopped_by == "stopping_rule" for r in results)


def test_oracle_allocation_is_near_its_lower_bound_rate():
    # the XY-oracle design tracked with GLRT stopping needs about 2 H_LB log(1/delta) samples
    # (Gaussian GLR units: Lambda_n ~ n / (2 H_LB)); with the practical threshold the ratio tends to 1
    env = soare(d=2, omega=0.3)
    h_lb = od.xy_oracle(env.X, env.theta).value
    deltas = [1e-4, 1e-8, 1e-12]
    res = [run(StaticAllocation("oracle", threshold="practical"), env, deltas, seed=s) for s in range(8)]
    for i, d in enumerate(deltas):
        ratio = np.mean([r[i].samples for r in res]) / (2 * h_lb * np.log(1 / d))
        assert 0.7 < ratio < 1.6


def test_greedy_rule_matches_design_rule_in_order_of_magnitude():
    env = soare(d=2, omega=0.3)
    greedy = np.mean([run(StaticAllocation("xy", rule="greedy"), env, 0.05, seed=s).samples for s in range(4)])
    design = np.mean([run(StaticAllocation("xy"), env, 0.05, seed=s).samples for s in range(4)])
    assert 0.7 < greedy / design < 1.4


def test_budget_and_multi_delta_runs():
    env = soare(d=3, omega=0.01)
    r = run(StaticAllocation("xy"), env, 0.05, seed=0, max_samples=5000)
    assert r.stopped_by == "budget" and r.samples == 5000
    many = run(StaticAllocation("g"), soare(d=2, omega=0.3), [0.1, 0.01, 0.001], seed=3)
    assert [m.samples for m in many] == sorted(m.samples for m in many)
    single = run(StaticAllocation("g"), soare(d=2, omega=0.3), 0.01, seed=3)
    assert single.samples == many[1].samples  # same trajectory, same stopping time


def test_runs_are_reproducible():
    env = soare(d=3, omega=0.1)
    a = run(StaticAllocation("oracle"), env, 0.05, seed=42)
    b = run(StaticAllocation("oracle"), env, 0.05, seed=42)
    assert a.samples == b.samples and a.recommendation == b.recommendation


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan"), "x"])
def test_bad_delta(bad):
    with pytest.raises(InvalidInputError, match="delta"):
        check_delta(bad)


def test_bad_inputs():
    with pytest.raises(InvalidInputError, match="theta must have length"):
        LinearBandit(np.eye(3), np.ones(2))
    tied = LinearBandit(np.eye(2), np.ones(2))  # an instance may tie; best-item identification refuses the tie
    with pytest.raises(InvalidInputError, match="not unique"):
        run(make_algorithm("track-and-stop"), tied, 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="span"):
        LinearBandit(np.array([[1.0, 0.0], [2.0, 0.0]]), np.ones(2))
    with pytest.raises(InvalidInputError, match="sigma"):
        LinearBandit(np.eye(2), np.array([1.0, 0.0]), sigma=0)
    with pytest.raises(InvalidInputError, match="unknown instance"):
        parse_instance("nope:d=2")
    with pytest.raises(InvalidInputError, match="key=value"):
        parse_instance("soare:d")
    with pytest.raises(InvalidInputError, match="design"):
        StaticAllocation("h")
    with pytest.raises(InvalidInputError, match="samples differently"):
        run(_DeltaDependent(), soare(2, 0.3), [0.1, 0.01])
    with pytest.raises(InvalidInputError, match="max_samples"):
        run(StaticAllocation(), soare(2, 0.3), 0.1, max_samples=0)


class _DeltaDependent(StaticAllocation):
    delta_independent = False


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3, 4, 5])
@pytest.mark.parametrize("design", ["g", "xy", "oracle"])
def test_static_acceptance_on_soare(design, d):
    # issue acceptance: stops and recommends the best arm in >= 95 % of 40 seeded runs
    env = soare(d=d, omega=0.1)
    results = [run(StaticAllocation(design), env, 0.05, seed=s) for s in range(40)]
    assert sum(r.correct and r.stopped_by == "stopping_rule" for r in results) >= 38


def test_ctrl_c_ends_an_interruptible_run_with_what_it_has():
    """A KeyboardInterrupt during the loop (here raised by the progress callback after five batches) ends an
    interruptible run as 'interrupted' with the samples so far; without interruptible it propagates."""
    seen = []

    def progress(samples, batches):
        seen.append((samples, batches))
        if batches == 5:
            raise KeyboardInterrupt

    env = soare(d=3, omega=0.1)
    res = run(StaticAllocation("xy"), env, 0.05, seed=1, progress=progress, interruptible=True)
    assert res.stopped_by == "interrupted" and res.batches == 5 and res.samples == seen[-1][0]
    assert [b for _, b in seen] == [1, 2, 3, 4, 5] and np.all(np.diff([s for s, _ in seen]) > 0)
    seen.clear()
    with pytest.raises(KeyboardInterrupt):
        run(StaticAllocation("xy"), env, 0.05, seed=1, progress=progress)


def test_glr_equals_its_formula_and_pulls_draw_only_for_pulled_arms():
    from bandits.core.environments import gaussian_sums

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    stats = LinearStatistics(X)
    counts = rng.integers(0, 4, size=40)
    counts[:3] = 5
    stats.add(counts, gaussian_sums(X @ np.array([1.0, 0.5, -0.2]), counts, 1.0, rng))
    A = X.T @ (X * counts[:, None])
    assert np.allclose(stats.b, X.T @ stats.sums) and np.allclose(stats.A, A)
    theta = np.linalg.solve(A, X.T @ stats.sums)
    best = int(np.argmax(X @ theta))
    D = X[best] - np.delete(X, best, axis=0)
    expected = np.min((D @ theta) ** 2 / (2 * 0.7**2 * np.einsum("ij,ji->i", D, np.linalg.solve(A, D.T))))
    glr = stats.glr(X, 0.7)
    assert glr.best == best and glr.value == pytest.approx(expected, rel=1e-10)
    zero = np.zeros(40, dtype=np.int64)
    zero[7] = 3
    sums = gaussian_sums(np.arange(40.0), zero, 1.0, np.random.default_rng(0))
    assert np.count_nonzero(sums) == 1 and sums[7] != 0


@pytest.mark.parametrize("spec", ["sphere:n=100000000,d=9", "factorial:D=40", "transductive:d=100000",
                                  "many-arms:n=1000000000", "soare:d=100000"])
def test_instances_too_large_are_refused_before_allocating(spec):
    from optdesign.errors import InstanceTooLargeError

    with pytest.raises(InstanceTooLargeError, match="GiB"):
        parse_instance(spec)


def test_closest_pair_in_blocks_equals_the_gram_matrix():
    from bandits.linear.instances import closest_pair_row

    rng = np.random.default_rng(2)
    for n in (2, 7, 400):
        X = rng.standard_normal((n, 3))
        G = X @ X.T
        np.fill_diagonal(G, -np.inf)
        assert closest_pair_row(X, chunk_entries=50) == np.unravel_index(np.argmax(G), G.shape)[0]


def test_a_first_batch_larger_than_the_budget_is_cut_and_the_run_ends_at_the_budget():
    """g-static's first pass pulls every arm once (d + 1 = 41 here): with max_samples = 10 the runner cuts that
    batch to the budget and reports a budget stop instead of failing."""
    from bandits.instances import soare
    from bandits.registry import make_algorithm
    from bandits.run import run

    res = run(make_algorithm("g-static"), soare(d=40, omega=0.1), 0.05, seed=0, max_samples=10)
    assert res.stopped_by == "budget" and res.samples == 10
