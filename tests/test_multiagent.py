"""Multi-agent best-arm identification: factored environment, covers, GLRT, MF-TaS and baselines, GK-TaS.

Known truths checked here: the batched environment against its law; covers against the literal scan of
the paper's Alg. 4; the exact GLRT against brute-force enumeration; GK's optimal weights against an
independent numeric implementation of their 1-D root-finding scheme and against optdesign's T*.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from scipy.optimize import brentq

import optdesign as od
from bandits.core.tracking import project_floor
from bandits.instances import soare
from bandits.multiagent import (
    ExactTaS,
    FactoredBandit,
    FactoredGLRT,
    FactoredTheoryThreshold,
    GKTrackAndStop,
    GroupIndexer,
    MFTaS,
    UniformSampling,
    build_a0,
    gk_optimal_weights,
    greedy_cover,
)
from bandits.multiagent import instances as inst
from bandits.multiagent.antenna import antenna_tilt, received_power_mw, site_positions, tilt_values
from bandits.multiagent.exploration import forced_plays
from bandits.multiagent.glrt import GLRState
from bandits.multiagent.tracking import sample_product
from bandits.pure_exploration import Gaussian, KArmedProblem
from bandits.pure_exploration.algorithm import as_algorithm
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.factored import MeanFieldModel
from optdesign.factored.inference.max_sum import MaxSum

GRAPHS = (FactorGraph.line, FactorGraph.ring, FactorGraph.star)


def random_graphs(n: int, seed: int = 0):
    """Small line/ring/star instances with heterogeneous action counts."""
    rng = np.random.default_rng(seed)
    for trial in range(n):
        N = int(rng.integers(3, 6))
        K = [int(k) for k in rng.integers(2, 5, size=N)]
        yield GRAPHS[trial % 3](N, K, seed=trial)


def brute_glr(fg: FactorGraph, theta: np.ndarray, counts: np.ndarray, sigma: float = 1.0):
    """(a_hat, Lambda) by enumerating every joint action."""
    A = fg.joint_actions()
    flat = fg.group_indices(A)
    values = theta[flat].sum(axis=1)
    b = int(np.argmax(values))
    star = flat[b]
    inv = 1.0 / counts
    D = values[b] - values
    H = ((flat != star) * (inv[flat] + inv[star][None, :])).sum(axis=1)
    others = np.arange(A.shape[0]) != b
    return A[b], float(np.min(D[others] ** 2 / (2 * sigma**2 * H[others])))


# --------------------------------------------------------------------------------- environment


def test_indexer_matches_factorgraph_and_counts_are_bincounts():
    for fg in random_graphs(6):
        ix = GroupIndexer(fg)
        A = fg.joint_actions()
        np.testing.assert_array_equal(ix.flat(A), fg.group_indices(A))
        reps = np.arange(A.shape[0]) % 4
        expected = np.zeros(fg.abar, dtype=np.int64)
        np.add.at(expected, fg.group_indices(A).ravel(), np.repeat(reps, fg.n_factors))
        np.testing.assert_array_equal(ix.counts(A, reps), expected)
        assert ix.rounds_in(expected) == reps.sum()


def test_batch_of_one_joint_action_adds_n_to_each_group_and_sums_have_the_right_law():
    env = inst.line(4, 3, seed=3, sigma=2.0)
    a = np.array([[0, 2, 1, 1]])
    counts = env.group_counts(a, [7])
    assert counts.sum() == 7 * env.n_factors
    np.testing.assert_array_equal(np.flatnonzero(counts), np.sort(env.indexer.flat(a)[0]))
    rng = np.random.default_rng(0)
    draws = np.stack([env.pull(counts, rng) for _ in range(4000)])
    hit = counts > 0
    z = (draws[:, hit] - 7 * env.means[hit]) / (2.0 * np.sqrt(7))  # standardised sums: N(0, 1)
    assert abs(z.mean()) < 0.05 and abs(z.var() - 1) < 0.08
    assert np.all(draws[:, ~hit] == 0)
    # the per-observation simulator has the same means
    obs = env.play(np.repeat(a, 3000, axis=0), rng)
    np.testing.assert_allclose(obs.mean(axis=0), env.means[env.indexer.flat(a)[0]], atol=0.15)


def test_best_item_is_the_mixed_radix_code_of_a_star_and_ties_are_refused():
    env = inst.line(50, 3, seed=0, means="planted", gap=0.5)
    assert env.best_item > np.iinfo(np.int64).max  # 3^50 joint actions: an exact Python int
    np.testing.assert_array_equal(env.decode(env.best_item), env.fg.best_action())
    np.testing.assert_array_equal(env.best_action, env.fg.metadata["planted_best"])
    small = inst.line(3, [2, 3, 2], seed=1)
    A = small.fg.joint_actions()
    assert [small.encode(a) for a in A] == list(range(A.shape[0]))  # C order, like ravel_multi_index
    tied = FactorGraph([2, 2], [((0, 1), np.array([[1.0, 0.0], [0.0, 1.0]]))])
    with pytest.raises(InvalidInputError, match="not unique"):
        FactoredBandit(tied)
    with pytest.raises(InvalidInputError):
        small.group_counts([[0, 3, 0]])
    with pytest.raises(InvalidInputError):
        small.pull(np.ones(small.n_arms + 1), np.random.default_rng(0))


# -------------------------------------------------------------------------------- covering sets


def literal_build_a0(fg: FactorGraph) -> list[tuple]:
    """The paper's Alg. 4 as printed: scan A in lexicographic order, counters I over A0."""
    A0, counted = [], set()
    for e, scope in enumerate(fg.scopes):
        need = set(itertools.product(*(range(fg.n_actions[i]) for i in scope)))
        for a in itertools.product(*(range(k) for k in fg.n_actions)):
            if need <= {b for (f, b) in counted if f == e}:
                break
            if (e, tuple(a[i] for i in scope)) not in counted:
                A0.append(a)
                counted |= {(f, tuple(a[i] for i in s)) for f, s in enumerate(fg.scopes)}
    return A0


def test_build_a0_is_the_literal_scan_and_both_covers_cover_everything():
    for fg in random_graphs(6, seed=1):
        built = build_a0(fg)
        assert [tuple(a) for a in built.actions.tolist()] == literal_build_a0(fg)
        for cover in (built, greedy_cover(fg)):
            covered = np.zeros(fg.abar, dtype=bool)
            covered[fg.group_indices(cover.actions).ravel()] = True
            assert covered.all()
            assert np.all(np.any(cover.flat[cover.cover_of] == np.arange(fg.abar)[:, None], axis=1))


def test_cover_sizes_greedy_reaches_the_lower_bound_on_lines_and_rings():
    sizes = {}
    for name, fg in (("line N=50", FactorGraph.line(50, 3, seed=0)), ("ring N=5", FactorGraph.ring(5, 3, seed=0)),
                     ("4-cycle K=2", FactorGraph.ring(4, 2, seed=0)), ("grid 3x3", FactorGraph.grid(3, 3, 3, seed=0))):
        sizes[name] = (build_a0(fg).size, greedy_cover(fg).size)
        assert greedy_cover(fg).size >= max(t.size for t in fg.tables)
    print("\n|A0| (build-a0, greedy):", sizes)
    assert sizes["line N=50"][1] == 9 and sizes["ring N=5"][1] == 9 and sizes["4-cycle K=2"][1] == 4
    assert sizes["line N=50"][0] > 100  # the lexicographic scan embeds group actions one by one


def test_forced_plays_lift_every_underexplored_group_action():
    fg = FactorGraph.ring(5, 3, seed=0)
    cover = greedy_cover(fg)
    counts = np.random.default_rng(0).integers(0, 12, fg.abar)
    reps = forced_plays(cover, counts, 10.5)
    after = counts + GroupIndexer(fg).counts(cover.actions, reps)
    assert after.min() >= 11
    assert forced_plays(cover, np.full(fg.abar, 11), 10.5) is None


# ------------------------------------------------------------------------------------------ GLRT


@pytest.mark.parametrize("max_cuts,read_whole", [(8, False), (0, False), (8, True)],
                         ids=["search", "search-no-cuts", "vectorised"])
def test_exact_glrt_equals_brute_force_and_conservative_is_never_larger(max_cuts, read_whole, monkeypatch):
    from bandits.multiagent import glrt as glrt_module

    monkeypatch.setattr(glrt_module, "ENUMERATE_ALL", 10**9 if read_whole else 0)
    rng = np.random.default_rng(7)
    for fg in random_graphs(18, seed=2):
        sigma = float(rng.uniform(0.5, 2.0))
        glrt = FactoredGLRT(fg, sigma=sigma, max_cuts=max_cuts, max_enumerated=10**6)
        theta = 0.3 * rng.standard_normal(fg.abar)
        counts = rng.integers(1, 60, fg.abar)
        best, value = brute_glr(fg, theta, counts, sigma)
        state = glrt(theta, counts)
        np.testing.assert_array_equal(state.best, best)
        exact = state.exact()
        assert exact.exact and exact.value == pytest.approx(value, rel=1e-10)
        assert glrt(theta, counts).conservative() <= value * (1 + 1e-12)
        for beta in (0.99 * value, 1.01 * value):
            assert glrt(theta, counts).exceeds(beta) == (value > beta)
        other = rng.integers(1, 60, fg.abar)  # reweighted at the same theta_hat: the brute force at the new counts
        reweighted = GLRState(glrt, state.theta, other, same_theta=state)
        np.testing.assert_array_equal(reweighted.best, best)
        exact = reweighted.exact()
        assert exact.exact and exact.value == pytest.approx(brute_glr(fg, theta, other, sigma)[1], rel=1e-10)
        assert state.exact().value == pytest.approx(value, rel=1e-10)  # the first state is unchanged


def test_glrt_edge_cases_single_factor_unobserved_and_truncation(monkeypatch):
    from bandits.multiagent import glrt as glrt_module

    mu = np.array([0.5, 0.45, 0.43, 0.4])
    counts = np.array([40, 30, 9, 4])
    fg = FactorGraph.single_agent(mu)
    _, value = brute_glr(fg, mu, counts)
    assert FactoredGLRT(fg)(mu, counts).exact().value == pytest.approx(value, rel=1e-12)
    line = FactorGraph.line(5, 3, seed=0)
    theta = np.random.default_rng(1).standard_normal(line.abar)
    zero = np.full(line.abar, 5)
    zero[3] = 0
    assert FactoredGLRT(line)(theta, zero).exact().value == 0.0
    counts = np.random.default_rng(2).integers(1, 30, line.abar)
    _, value = brute_glr(line, theta, counts)
    monkeypatch.setattr(glrt_module, "ENUMERATE_ALL", 0)  # the search, not the vectorised path of small structures
    capped = FactoredGLRT(line, max_cuts=0, max_enumerated=1)(theta, counts).exact()
    assert capped.value <= value * (1 + 1e-12)  # a certified lower bound when the search is capped
    glrt = FactoredGLRT(line)
    state = glrt(theta, counts)
    for wrong in (FactoredGLRT(line)(theta, counts), glrt(theta + 0.1, counts)):  # another test, another theta_hat
        with pytest.raises(InvalidInputError, match="same_theta"):
            GLRState(glrt, theta, counts, same_theta=wrong)
    assert GLRState(glrt, theta.copy(), 2 * counts, same_theta=state).exact().value == pytest.approx(2 * value)


def test_theory_threshold_formula_and_growth():
    env = inst.ring(4, 2, seed=0)
    thr = FactoredTheoryThreshold(np.log(2**4 - 1), env.indexer.offsets, eta=0.5)
    counts = np.full(env.n_arms, 10)
    counts[0] = 30  # factor 0's largest count enters
    expected = 1.5 * (np.log(1 / 0.05) + np.log(15) + np.log1p(30 / 0.5) + 3 * np.log1p(10 / 0.5))
    assert thr(100, 0.05, counts) == pytest.approx(expected)
    assert thr(100, 0.01, counts) > thr(100, 0.05, counts)
    assert thr(100, 0.05, counts * 10) > thr(100, 0.05, counts)
    with pytest.raises(InvalidInputError):
        thr(100, 0.05)
    with pytest.raises(InvalidInputError, match="eta"):
        FactoredTheoryThreshold(1.0, env.indexer.offsets, eta=0.0)


# ------------------------------------------------------------------------------- GK weights


def gk_weights_by_the_book(mu, sigma=1.0):
    """GK16 Thm 5 with a generic divergence, every inverse found numerically (independent of the module)."""
    mu = np.asarray(mu, dtype=float)
    d = lambda x, y: (x - y) ** 2 / (2 * sigma**2)  # noqa: E731
    best = int(np.argmax(mu))
    others = [a for a in range(mu.size) if a != best]

    def g(a, x):
        alpha = 1.0 / (1.0 + x)
        m = alpha * mu[best] + (1 - alpha) * mu[a]
        return (1 + x) * (alpha * d(mu[best], m) + (1 - alpha) * d(mu[a], m))

    def x_of(a, y):
        hi = 1.0
        while g(a, hi) < y:
            hi *= 2
        return brentq(lambda x: g(a, x) - y, 0.0, hi, xtol=1e-14, rtol=1e-14)

    def F(y):
        total = 0.0
        for a in others:
            x = x_of(a, y)
            m = (mu[best] + x * mu[a]) / (1 + x)
            total += d(mu[best], m) / d(mu[a], m)
        return total - 1.0

    top = min(d(mu[best], mu[a]) for a in others)
    y = brentq(F, 1e-12 * top, top * (1 - 1e-9), xtol=1e-16, rtol=1e-13)
    x = np.array([x_of(a, y) for a in others])
    w = np.empty(mu.size)
    w[best] = 1 / (1 + x.sum())
    w[others] = x * w[best]
    return w, (1 + x.sum()) / y


@pytest.mark.parametrize("mu", [[0.5, 0.45, 0.43, 0.4], [0.3, 0.21, 0.2, 0.19, 0.18], [1.0, 0.2], [0.0, 2.0, 1.5, -1.0],
                                [3.0, 2.9, 2.9, 1.0, 0.5]])
def test_gk_weights_match_the_root_finding_scheme_and_optdesign(mu):
    w, T = gk_optimal_weights(mu, sigma=1.0)
    w_book, T_book = gk_weights_by_the_book(mu)
    np.testing.assert_allclose(w, w_book, rtol=1e-7)
    assert T == pytest.approx(T_book, rel=1e-7)
    fg = FactorGraph.single_agent(mu)
    assert 2 * od.characteristic_time(fg).value == pytest.approx(T, rel=1e-5)  # MF-TaS convention: T_GK = 2 T*
    assert od.mf_characteristic_time(fg).value >= od.characteristic_time(fg).value * (1 - 1e-6)
    w2, T2 = gk_optimal_weights(mu, sigma=3.0)
    np.testing.assert_allclose(w2, w, rtol=1e-9)
    assert T2 == pytest.approx(9 * T, rel=1e-9)


def test_gk_weights_for_equal_gaps_and_projection():
    w, T = gk_optimal_weights([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(w, [np.sqrt(3) / (np.sqrt(3) + 3)] + [1 / (np.sqrt(3) + 3)] * 3)
    fg = FactorGraph.single_agent([1.0, 0.0, 0.0, 0.0])
    assert 2 * od.mf_characteristic_time(fg).value == pytest.approx(T, rel=1e-5)  # one gap: MF is exact
    p = project_floor(np.array([0.9, 0.1, 0.0]), 0.05)
    assert p.sum() == pytest.approx(1) and p.min() >= 0.05 - 1e-12
    np.testing.assert_allclose(p, [0.875, 0.075, 0.05], atol=1e-9)  # lowered evenly, the minimal L-inf move 0.05
    with pytest.raises(InvalidInputError):
        gk_optimal_weights([1.0, 1.0, 0.0])


@pytest.mark.parametrize("mu, sigma", [([1.0, 0.0], 0.3), ([1.0, 0.0], 1.2), ([0.7, 0.2], 0.7), ([0.3, 2.5], 1.0),
                                       ([-1.0, -1.4], 3.0)])
def test_gk_weights_of_two_gaussian_arms(mu, sigma):
    """Two Gaussian arms: w* = (1/2, 1/2) and T*_GK = 8 sigma^2 / gap^2 (GK16 Sec. 2), including the sigmas where
    a root bracket [0, y_max / 2] with F(y_max / 2) = 1 in exact arithmetic lost its sign change to round-off."""
    w, T = gk_optimal_weights(mu, sigma=sigma)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-12)
    assert T == pytest.approx(8 * sigma**2 / (mu[0] - mu[1]) ** 2, rel=1e-12)


@pytest.mark.parametrize("mu", [[0.5, 0.45, 0.43, 0.4], [3.0, 2.9, 2.9, 1.0, 0.5], [0.0, 2.0, 1.5, -1.0]])
def test_gk_weights_are_the_karmed_oracle(mu):
    """One K-armed oracle: gk_optimal_weights is KArmedProblem.oracle for the Gaussian family."""
    for sigma in (1.0, 2.5):
        w, T = gk_optimal_weights(mu, sigma=sigma)
        oracle = KArmedProblem(len(mu), Gaussian(sigma)).oracle(np.asarray(mu))
        np.testing.assert_array_equal(w, oracle.weights)
        assert T == oracle.T
    for bad in ([1.0], [1.0, np.nan, 0.0]):
        with pytest.raises(InvalidInputError):
            gk_optimal_weights(bad)
    with pytest.raises(InvalidInputError):
        gk_optimal_weights(mu, sigma=0.0)


# ---------------------------------------------------------------------------------- tracking


def test_independent_draws_have_product_group_frequencies():
    local = [np.array([0.6, 0.3, 0.1]), np.array([0.25, 0.75]), np.array([0.2, 0.2, 0.6])]
    a = sample_product(local, 200_000, np.random.default_rng(0))
    joint = np.zeros((3, 2, 3))
    np.add.at(joint, tuple(a.T), 1)
    expected = local[0][:, None, None] * local[1][None, :, None] * local[2][None, None, :]
    np.testing.assert_allclose(joint / a.shape[0], expected, atol=4e-3)


def test_relabelled_mean_field_solution_is_the_mean_field_optimum_at_every_best_action():
    for fg in (FactorGraph.line(6, 3, seed=1), FactorGraph.ring(5, 3, seed=4)):
        env = FactoredBandit(fg)
        model = MeanFieldModel.for_structure(env.structure)
        assert MeanFieldModel.for_structure(env.structure) is model  # built and solved once per structure
        direct = od.mf_characteristic_time(fg)
        local = model.local_allocations(fg.best_action())
        value = MaxSum(model.plan, model.terms_at(local, fg.best_action())).value / fg.gap_min() ** 2
        assert value == pytest.approx(direct.value, rel=1e-5)
        assert model.solve().t / fg.gap_min() ** 2 == pytest.approx(direct.value, rel=1e-5)


# -------------------------------------------------------------------------------------- runs


def test_mf_tas_uniform_and_exact_tas_identify_the_best_action():
    env = inst.line(4, 3, seed=2, means="planted", gap=0.5)
    for algo in (MFTaS(), UniformSampling(), ExactTaS(), MFTaS(glrt="conservative", cover="build-a0"),
                 MFTaS(threshold="theory", exploration="dtracking")):
        r = run(algo, env, 0.05, seed=1)
        assert r.correct and r.stopped_by == "stopping_rule", algo
        assert r.samples == r.rounds * env.n_factors
    many = run(MFTaS(), env, [0.2, 0.05, 0.001], seed=3)
    assert [r.rounds for r in many] == sorted(r.rounds for r in many)


def test_exact_tas_beyond_enumeration_follows_the_exact_allocation():
    env = inst.ring(8, 4, seed=0, means="planted", gap=0.5)  # 65,536 joint actions: T* by constraint generation
    r = run(ExactTaS(), env, 0.05, seed=0)
    assert r.correct and r.stopped_by == "stopping_rule"
    t_star = od.characteristic_time(env.fg)
    assert t_star.extras["formulation"] == "constraint-generation"
    # within a constant factor of the asymptotic lower bound 2 T* log(1/delta) (the threshold's lower-order terms)
    assert 0.5 < r.rounds / (2 * t_star.value * np.log(1 / 0.05)) < 20


def test_gk_track_and_stop_d_and_c_tracking():
    env = inst.mab("1.0/0.6/0.5/0.2")
    for tracking in ("D", "C"):
        results = [run(GKTrackAndStop(tracking=tracking), env, 0.05, seed=s) for s in range(5)]
        assert all(r.correct and r.stopped_by == "stopping_rule" for r in results)
        _, T = gk_optimal_weights([1.0, 0.6, 0.5, 0.2])
        mean = np.mean([r.rounds for r in results])
        assert 0.5 * T * np.log(1 / 0.05) < mean < 6 * T * np.log(1 / 0.05)


def test_mf_tas_on_a_line_of_50_agents():
    env = inst.line(50, 3, seed=0, means="planted", gap=0.5)
    start = time.perf_counter()
    r = run(MFTaS(), env, 0.05, seed=0)
    wall = time.perf_counter() - start
    t_mf = od.mf_characteristic_time(env.fg).value
    ratio = r.rounds / (2 * t_mf * np.log(1 / 0.05))
    print(f"\nline N=50 K=3 (3^50 joint actions): {r.rounds} rounds, {r.samples} observations, {wall:.2f} s, "
          f"rounds / (2 T^MF log(1/delta)) = {ratio:.3f}")
    assert r.correct and r.stopped_by == "stopping_rule"
    np.testing.assert_array_equal(env.decode(r.recommendation), env.fg.metadata["planted_best"])
    assert wall < 20


def test_budget_and_partial_rounds():
    env = inst.line(6, 3, seed=0)  # Delta_min ~ 0.04: far from stopping after 1000 observations
    r = run(MFTaS(), env, 0.05, seed=0, max_samples=1003)
    assert r.stopped_by == "budget" and r.samples == 1003 and r.rounds == 1003 // 5 + 1


# ------------------------------------------------------------------------------------ antenna


def test_antenna_instance_follows_the_sinr_model():
    fg = antenna_tilt(6, 3, seed=0, layout="line", interferers=2)
    np.testing.assert_allclose(tilt_values(3), [3, 6, 12])
    assert fg.n_factors == 6 and all(i in s and len(s) == 3 for i, s in enumerate(fg.scopes))
    assert max(t.max() for t in fg.tables) == pytest.approx(1.0) and min(t.min() for t in fg.tables) > 0
    # recompute one entry of cell 2's table from the stated model
    rng = np.random.default_rng(0)
    sites = site_positions(6, "line", 500.0)
    lo, hi = sites.min(axis=0) - 250.0, sites.max(axis=0) + 250.0
    users = lo + (hi - lo) * rng.random((1000, 2))
    rx = received_power_mw(sites, users, tilt_values(3))
    mine = np.flatnonzero(np.argmax(rx[1], axis=0) == 2)
    scope, b = fg.scopes[2], (0, 2, 1)
    noise = 10 ** ((-174 + 10 * np.log10(9e6) + 7) / 10)
    signal = rx[b[scope.index(2)], 2, mine]
    interference = sum(rx[b[p], k, mine] for p, k in enumerate(scope) if k != 2)
    rate = 9.0 * np.log2(1 + signal / (interference + noise)).mean()
    assert fg.tables[2][b] == pytest.approx(rate / fg.metadata["throughput_scale_mbps"], rel=1e-12)
    env = inst.antenna(N=6, K=3, seed=0, layout="hex")
    assert run(MFTaS(), env, 0.05, seed=0).correct


def test_growth_zero_checks_the_stop_after_every_round():
    """growth = 0 means one thing for every rule: the next checkpoint is one round away (uniform sampling has no
    forced exploration, so every batch after the pass over A0 is one round)."""
    env = inst.line(3, 2, seed=0, means="planted", gap=0.5)
    algo = UniformSampling(growth=0)
    result = run(algo, env, 0.1, seed=0)
    cover = as_algorithm(algo).start(env, 0.1, np.random.default_rng(0)).state.cover.size
    assert result.correct and result.stopped_by == "stopping_rule"
    assert result.batches == 1 + result.rounds - cover


def test_solve_time_counts_the_rules_solves_not_their_draws(monkeypatch):
    """On a clock that only draws and best responses move: uniform sampling solves nothing (its draws are not solves),
    joint Top-Two reports the seconds of its challengers and joint LinGame those of its optimistic gains."""
    from bandits.multiagent import problem as factored_problem
    from bandits.multiagent import tracking
    from bandits.multiagent.optimism import FactoredOptimism

    now, calls = [0.0], {"draws": 0, "challenger": 0, "gains": 0}

    def ticking(name, seconds, real):
        def call(*args, **kwargs):
            now[0] += seconds
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(tracking, "sample_product", ticking("draws", 1.0, tracking.sample_product))
    monkeypatch.setattr(factored_problem.FactoredProblem, "challenger",
                        ticking("challenger", 10.0, factored_problem.FactoredProblem.challenger))
    monkeypatch.setattr(FactoredOptimism, "gains", ticking("gains", 100.0, FactoredOptimism.gains))
    env = inst.line(3, 2, seed=0, means="planted", gap=0.5)
    uniform = run(UniformSampling(), env, 0.1, seed=0)
    assert calls["draws"] > 0 and uniform.solve_time == 0.0
    top_two = run(make_algorithm("joint-top-two"), env, 0.1, seed=0)
    assert calls["challenger"] > 0 and top_two.solve_time == 10.0 * calls["challenger"]
    lingame = run(make_algorithm("joint-lingame"), env, 0.1, seed=0)
    assert calls["gains"] > 0 and lingame.solve_time == 100.0 * calls["gains"]


# ---------------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_with_a_named_argument():
    env = inst.line(4, 2, seed=0)
    for bad in (0, 1, -0.1, 1.5, "x"):
        with pytest.raises(InvalidInputError, match="delta"):
            run(MFTaS(), env, bad, seed=0)
    for kwargs, word in (({"glrt": "approx"}, "glrt"), ({"cover": "random"}, "cover"),
                         ({"exploration": "never"}, "exploration"), ({"threshold": "soare"}, "threshold"),
                         ({"growth": 1.5}, "growth")):
        with pytest.raises(InvalidInputError, match=word):
            MFTaS(**kwargs)
    with pytest.raises(InvalidInputError, match="tracking"):
        GKTrackAndStop(tracking="E")
    with pytest.raises(InvalidInputError, match="means"):
        inst.line(4, 3, means="gaussian")
    with pytest.raises(InvalidInputError, match="gap"):
        inst.ring(4, 3, means="uniform", gap=0.2)
    with pytest.raises(InvalidInputError, match="path"):
        inst.factor_graph()
    with pytest.raises(InvalidInputError, match="layout"):
        inst.antenna(layout="square")
    for tol in (0, 1.5, True, "0.1"):
        with pytest.raises(InvalidInputError, match="tol"):
            ExactTaS(tol=tol)
    with pytest.raises(InvalidInputError, match="single-agent"):
        run(GKTrackAndStop(), env, 0.05, seed=0)
    with pytest.raises(InvalidInputError, match="factored"):
        run(MFTaS(), soare(), 0.05, seed=0)  # a linear bandit is not a factored instance


def test_factor_graph_file_instance(tmp_path):
    fg = FactorGraph.star(4, 3, seed=5, means="planted", gap=0.3)
    path = tmp_path / "star.json"
    fg.save(path)
    env = inst.factor_graph(str(path))
    np.testing.assert_allclose(env.means, fg.means)
    assert run(MFTaS(), env, 0.05, seed=0).correct


# ------------------------------------------------------------------------- slow statistical test


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: inst.line(6, 3, seed=0), lambda: inst.ring(5, 3, seed=0)],
                         ids=["line6", "ring5"])
def test_mf_tas_is_delta_correct_and_beats_uniform_sampling(make):
    env, delta, runs = make(), 0.01, 200
    mf = [run(MFTaS(), env, delta, seed=s) for s in range(runs)]
    uni = [run(UniformSampling(), env, delta, seed=s) for s in range(runs)]
    errors = sum(not r.correct for r in mf)
    assert all(r.stopped_by == "stopping_rule" for r in mf + uni)
    t_mf = od.mf_characteristic_time(env.fg).value
    t_star = od.characteristic_time(env.fg).value
    m_mf, m_uni = np.mean([r.rounds for r in mf]), np.mean([r.rounds for r in uni])
    se = np.std([r.rounds for r in mf]) / np.sqrt(runs)
    scale = 2 * np.log(1 / delta)
    print(f"\n{env.name}: MF-TaS {m_mf:.0f} +- {se:.0f} rounds, uniform {m_uni:.0f}, errors {errors}/{runs}; "
          f"MF-TaS / (2 T^MF log 1/delta) = {m_mf / (scale * t_mf):.3f}, / (2 T* log 1/delta) = "
          f"{m_mf / (scale * t_star):.2f}")
    assert errors <= delta * runs
    assert m_mf < m_uni
