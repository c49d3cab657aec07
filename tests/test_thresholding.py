"""Fixed-budget thresholding on graphs (bandits.thresholding): GrAPL, APT, the Laplacian estimator, d_T, gamma*."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from bandits.thresholding import (
    APT,
    GraphThresholdingBandit,
    GrAPL,
    LaplacianEstimator,
    RandomLaplacian,
    effective_dimension,
    nws,
    optimal_gamma,
    run_thresholding,
    sbm,
    smoothness,
)
from bandits.thresholding.estimator import SOLVERS
from bandits.thresholding.spectral import DENSE_LIMIT
from optdesign.errors import InvalidInputError


def random_weighted_graph(n: int, seed: int) -> nx.Graph:
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, 0.15, seed=seed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = rng.uniform(0.2, 2.0)
    return G


def objective_gradient(mu, pulls, rewards, L, gamma, lam, tau):
    """Gradient of sum_s (x_s - mu_{pi_s})^2 + gamma ||mu - tau 1||^2_{L + lam I}, sample by sample."""
    grad = np.zeros_like(mu)
    np.add.at(grad, pulls, -2.0 * (rewards - mu[pulls]))
    v = mu - tau
    return grad + 2.0 * gamma * (L @ v + lam * v)


# ---------------------------------------------------------------- estimator


@pytest.mark.parametrize("solver", SOLVERS)
def test_estimator_is_the_dense_argmin_of_the_laplacian_objective(solver):
    G = random_weighted_graph(30, seed=1)
    L = nx.laplacian_matrix(G, weight="weight").toarray().astype(float)
    tau, gamma, lam = 0.3, 4.0, 1e-2
    rng = np.random.default_rng(7)
    pulls = rng.integers(0, 20, size=120)  # arms 20..29 never sampled: the graph must fill them in
    rewards = rng.normal(np.sin(pulls), 1.0)
    env = GraphThresholdingBandit(G, np.zeros(30), tau, 0.1)
    est = LaplacianEstimator(env.laplacian, tau, gamma, lam, solver=solver, rtol=1e-12)
    for s, (arm, x) in enumerate(zip(pulls, rewards, strict=True)):
        est.add(int(arm), float(x))
        if s % 7 == 0:
            est.mean()  # intermediate solves exercise the warm start
    mu_hat = est.mean()
    # closed form: (N_t + gamma L_lam)(mu - tau 1) = sum_s (x_s - tau) e_{pi_s}
    n = np.bincount(pulls, minlength=30)
    rhs = np.bincount(pulls, weights=rewards - tau, minlength=30)
    dense = tau + np.linalg.solve(np.diag(n) + gamma * (L + lam * np.eye(30)), rhs)
    np.testing.assert_allclose(mu_hat, dense, rtol=0, atol=1e-8)
    grad = objective_gradient(mu_hat, pulls, rewards, L, gamma, lam, tau)
    assert np.max(np.abs(grad)) < 1e-6
    V, xvec = est.system()
    np.testing.assert_allclose(V.toarray(), L + lam * np.eye(30) + np.diag(n) / gamma, atol=1e-12)
    np.testing.assert_allclose(xvec, rhs / gamma, atol=1e-12)
    # a batch of the same pulls (sufficient statistics) gives the same estimate
    batch = LaplacianEstimator(env.laplacian, tau, gamma, lam, solver=solver, rtol=1e-12)
    batch.add_batch(n, np.bincount(pulls, weights=rewards, minlength=30))
    np.testing.assert_allclose(batch.mean(), dense, rtol=0, atol=1e-8)


@pytest.mark.parametrize("solver", ["cg", "lu-update", "sherman-morrison"])
def test_incremental_solvers_match_dense_solve_along_a_grapl_run(solver):
    """CG at its default tolerance, and 300 rank-one updates without drift, against a fresh dense solve."""
    env = sbm(n=60, seed=3)
    policy = GrAPL(gamma=10, alpha=1, solver=solver).start(env, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(300):
        counts = policy.next_batch(1)
        policy.observe(counts, env.pull(counts, rng))
    V, xvec = policy.est.system()
    dense = env.tau + np.linalg.solve(V.toarray(), xvec)
    np.testing.assert_allclose(policy.estimate(), dense, rtol=0, atol=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_every_solver_equals_the_sparse_direct_solve_on_random_graphs(solver, seed, monkeypatch):
    """Pulls one at a time, repeated arms, batches and estimates every few pulls on a random weighted small
    world (N = 2100 for "auto", above its dense threshold): every estimate equals spsolve(V_t, xvec_t)
    built from scratch; "lu-update" refactorises at its rank cap (16 here) and CG runs at its default rtol."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    from bandits.thresholding import lowrank

    monkeypatch.setattr(lowrank, "RANK_MAX", 16)
    n = 2100 if solver == "auto" else 800
    rng = np.random.default_rng(seed)
    G = nx.newman_watts_strogatz_graph(n, 4, 0.02, seed=seed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = rng.uniform(0.2, 2.0)
    L = nx.laplacian_matrix(G, weight="weight").astype(float)
    tau, gamma, lam = 0.5, 10.0, 1e-3
    est = LaplacianEstimator(L, tau, gamma, lam, solver=solver)
    counts, sums = np.zeros(n, dtype=np.int64), np.zeros(n)
    hot = rng.integers(0, n, size=20)  # a few arms pulled again and again: repeated Woodbury columns
    steps = 150
    for step in range(steps):
        if step % 50 == 49:  # a batch of many arms
            c = rng.poisson(0.05, size=n)
            x = rng.normal(c * 0.6, np.sqrt(c))
            est.add_batch(c, x)
        else:
            arm = int(hot[step % 20] if step % 3 else rng.integers(n))
            c, x = np.zeros(n, dtype=np.int64), np.zeros(n)
            c[arm], x[arm] = 1 + step % 2, rng.normal(0.6, 1.0)
            est.add(arm, x[arm], int(c[arm]))
        counts += c
        sums += x
        if step % 4 == 0 or step == steps - 1:
            V = L + lam * sp.eye(n) + sp.diags(counts / gamma)
            exact = tau + spsolve(sp.csc_matrix(V), (sums - counts * tau) / gamma)
            np.testing.assert_allclose(est.mean(), exact, rtol=0, atol=1e-7)
    if solver == "lu-update":
        assert est.factorizations > 1 and est.solves > est.factorizations
    if solver == "direct":
        assert est.factorizations == est.solves


def test_woodbury_update_of_the_lu_is_the_solve_of_the_updated_matrix():
    """(V_f + diag(d)) y = b by Woodbury on the LU of V_f, d >= 0 on k <= max_rank arms (b may also move where d
    is 0), against a dense solve; one arm too many asks for a new factorisation (None)."""
    import scipy.sparse as sp

    from bandits.thresholding.lowrank import UpdatedLU

    rng = np.random.default_rng(4)
    n = 60
    L = nx.laplacian_matrix(random_weighted_graph(n, seed=2), weight="weight").astype(float)
    V = sp.csr_matrix(L + 0.05 * sp.eye(n))
    V.sort_indices()
    b_f = rng.normal(size=n)
    lu = UpdatedLU(V, b_f, max_rank=6)
    np.testing.assert_allclose(V @ lu.solve(V.diagonal(), b_f), b_f, atol=1e-12)  # k = 0: the LU alone
    d, b = np.zeros(n), b_f.copy()
    for step, arm in enumerate([3, 17, 3, 40, 41]):
        d[arm] += rng.uniform(0.1, 5.0)
        b[arm] += rng.normal()
        if step == 2:
            b[55] += 1.0  # a right-hand side moved where the diagonal did not
        y = lu.solve(V.diagonal() + d, b)
        np.testing.assert_allclose(y, np.linalg.solve(V.toarray() + np.diag(d), b), rtol=0, atol=1e-10)
    assert lu.rank == 5  # arms 3, 17, 55, 40, 41
    d[7] += 1.0
    assert lu.solve(V.diagonal() + d, b) is not None and lu.rank == 6
    d[8] += 1.0
    assert lu.solve(V.diagonal() + d, b) is None


def test_auto_switches_to_the_lu_when_cg_is_slow_and_stays_on_cg_on_expanders():
    from bandits.thresholding.estimator import AUTO_CG_ITERATIONS

    ring = nx.laplacian_matrix(nx.cycle_graph(3000)).astype(float)  # condition number ~ N^2 / lam
    est = LaplacianEstimator(ring, 0.0, 10.0, solver="auto")
    est.add(0, 1.0)
    mu = est.mean()
    assert est.solver == "lu-update" and est.factorizations == 1 and est.iterations == AUTO_CG_ITERATIONS
    V, xvec = est.system()
    np.testing.assert_allclose(mu, spsolve_dense(V, xvec), rtol=0, atol=1e-9)
    expander = sbm(n=1100, seed=0)
    est = LaplacianEstimator(expander.laplacian, 0.0, 10.0, solver="auto")
    for arm in range(0, 2200, 37):
        est.add(arm, 1.0)
        est.mean()
    assert est.solver == "cg" and est.factorizations == 0


def spsolve_dense(V, xvec):
    return np.linalg.solve(V.toarray(), xvec)


def test_auto_solver_keeps_a_dense_inverse_only_for_small_graphs():
    from bandits.thresholding.estimator import AUTO_DENSE_MAX_N

    small, large = sbm(n=50, seed=0), nx.path_graph(AUTO_DENSE_MAX_N + 1)
    assert LaplacianEstimator(small.laplacian, 0.0, 10.0, solver="auto").solver == "sherman-morrison"
    L = nx.laplacian_matrix(large).astype(float)
    assert LaplacianEstimator(L, 0.0, 10.0, solver="auto").solver == "cg"


def test_empty_graph_and_vanishing_lambda_give_empirical_means():
    means = np.array([0.2, 0.9, -1.0, 3.0, 0.5])
    env = GraphThresholdingBandit(None, means, tau=0.5, eps=0.1, sigma=1.0)
    counts = np.array([3, 1, 0, 7, 2])
    sums = env.pull(counts, np.random.default_rng(0))
    est = LaplacianEstimator(env.laplacian, env.tau, gamma=1.0, lam=1e-12)
    est.add_batch(counts, sums)
    mu_hat = est.mean()
    sampled = counts > 0
    np.testing.assert_allclose(mu_hat[sampled], sums[sampled] / counts[sampled], atol=1e-8)
    assert mu_hat[2] == env.tau  # no data, no neighbours: the prior mean tau
    # a huge ridge shrinks everything to tau
    big = LaplacianEstimator(env.laplacian, env.tau, gamma=1.0, lam=1e10)
    big.add_batch(counts, sums)
    np.testing.assert_allclose(big.mean(), env.tau, atol=1e-8)


def test_vanishing_gamma_fits_sampled_arms_and_interpolates_the_rest():
    G = nx.path_graph(5)
    env = GraphThresholdingBandit(G, np.zeros(5), tau=0.0, eps=0.1)
    est = LaplacianEstimator(env.laplacian, 0.0, gamma=1e-9, lam=1e-9)
    est.add(0, 2.0, 2)  # mean 1 at node 0
    est.add(4, 9.0, 3)  # mean 3 at node 4
    mu_hat = est.mean()
    np.testing.assert_allclose(mu_hat[[0, 4]], [1.0, 3.0], atol=1e-6)
    np.testing.assert_allclose(mu_hat[1:4], [1.5, 2.0, 2.5], atol=1e-6)  # harmonic on the path


def test_lambda_zero_is_refused_with_the_reason():
    G = nx.disjoint_union(nx.path_graph(3), nx.path_graph(4))
    env = GraphThresholdingBandit(G, np.zeros(7), tau=0.0, eps=0.1)
    with pytest.raises(InvalidInputError, match=r"lam must be > 0.*2 connected components"):
        LaplacianEstimator(env.laplacian, 0.0, gamma=1.0, lam=0.0)
    with pytest.raises(InvalidInputError, match="lam must be > 0"):
        GrAPL(lam=0.0)
    with pytest.raises(InvalidInputError, match="lam must be positive"):
        RandomLaplacian(lam=-1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"gamma": 0.0}, "gamma"), ({"gamma": -2.0}, "gamma"), ({"gamma": "best"}, "gamma"),
    ({"alpha": 0.0}, "alpha"), ({"alpha": -1e-3}, "alpha"), ({"ties": "last"}, "ties"),
    ({"solver": "lu"}, "solver"), ({"rtol": 0.0}, "rtol"), ({"lam": float("nan")}, "lam"),
])
def test_grapl_options_are_validated(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        GrAPL(**kwargs)


def test_other_options_are_validated():
    with pytest.raises(InvalidInputError, match="init_pulls"):
        APT(init_pulls=0)
    with pytest.raises(InvalidInputError, match="order"):
        RandomLaplacian(order="sorted")
    with pytest.raises(InvalidInputError, match="gamma"):
        RandomLaplacian(gamma="opt")
    with pytest.raises(InvalidInputError, match="sherman-morrison"):
        LaplacianEstimator(GraphThresholdingBandit(None, np.zeros(5001), 0.0, 0.1).laplacian, 0.0, 1.0,
                           solver="sherman-morrison")


# ---------------------------------------------------------------- environment


def test_environment_validation():
    G = nx.path_graph(4)
    with pytest.raises(InvalidInputError, match="one entry per node"):
        GraphThresholdingBandit(G, np.zeros(3), 0.0, 0.1)
    with pytest.raises(InvalidInputError, match="NaN"):
        GraphThresholdingBandit(G, [0, np.nan, 0, 0], 0.0, 0.1)
    for eps in (0.0, -0.1, np.inf):
        with pytest.raises(InvalidInputError, match="eps"):
            GraphThresholdingBandit(G, np.zeros(4), 0.0, eps)
    with pytest.raises(InvalidInputError, match="sigma"):
        GraphThresholdingBandit(G, np.zeros(4), 0.0, 0.1, sigma=0.0)
    with pytest.raises(InvalidInputError, match="noise"):
        GraphThresholdingBandit(G, np.zeros(4), 0.0, 0.1, noise="poisson")
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        GraphThresholdingBandit(G, [0.1, 0.2, 1.3, 0.0], 0.5, 0.1, noise="bernoulli")
    with pytest.raises(InvalidInputError, match="undirected"):
        GraphThresholdingBandit(nx.DiGraph(G), np.zeros(4), 0.0, 0.1)
    H = G.copy()
    H.edges[0, 1]["weight"] = -1.0
    with pytest.raises(InvalidInputError, match="nonnegative"):
        GraphThresholdingBandit(H, np.zeros(4), 0.0, 0.1)
    # a threshold outside the range of the means is allowed: S_tau is empty
    env = GraphThresholdingBandit(G, [0.1, 0.2, 0.3, 0.4], tau=5.0, eps=0.1)
    assert not env.above.any() and env.error(np.full(4, 6.0)) == 1.0 and env.error(np.zeros(4)) == 0.0


def test_weighted_laplacian_is_degree_minus_weights():
    G = random_weighted_graph(12, seed=4)
    env = GraphThresholdingBandit(G, np.zeros(12), 0.0, 0.1)
    W = nx.to_numpy_array(G, weight="weight")
    np.testing.assert_allclose(env.laplacian.toarray(), np.diag(W.sum(1)) - W, atol=1e-12)


def test_error_and_loss_only_judge_arms_outside_the_tolerance():
    means = np.array([0.9, 0.505, 0.2, 0.6, 0.1])
    env = GraphThresholdingBandit(None, means, tau=0.5, eps=0.01)
    mu_hat = np.array([0.4, 0.3, 0.2, 0.7, 0.5])  # arm 0 wrong; arm 1 unjudged; arm 4 at tau -> "above": wrong
    np.testing.assert_array_equal(env.misclassified(mu_hat), [True, False, False, False, True])
    assert env.error(mu_hat) == pytest.approx(2 / 5)
    assert env.loss(mu_hat)
    assert not env.loss(np.array([0.9, 0.0, 0.2, 0.6, 0.1]))
    # the notebook variant also counts the unjudged arm and the tie as errors
    assert env.error_notebook(mu_hat) == pytest.approx(3 / 5)


def test_bernoulli_pulls_are_binomial_sums():
    env = GraphThresholdingBandit(None, [0.0, 0.3, 1.0], tau=0.5, eps=0.1, noise="bernoulli")
    sums = env.pull([0, 100000, 7], np.random.default_rng(0))
    assert sums[0] == 0 and sums[2] == 7 and sums[1] == np.round(sums[1])
    assert abs(sums[1] / 100000 - 0.3) < 0.005


def test_instances_follow_the_paper_recipes():
    env = sbm(n=50, seed=2)
    assert env.n_arms == 100 and env.R == 2.0 and env.tau == 0.0 and env.eps == 0.01
    np.testing.assert_array_equal(env.means, np.r_[np.ones(50), -np.ones(50)])
    assert nx.utils.graphs_equal(env.graph, sbm(n=50, seed=2).graph)
    assert not nx.utils.graphs_equal(env.graph, sbm(n=50, seed=3).graph)
    small = nws(n=400, seed=1)
    assert small.noise == "bernoulli" and small.R == 0.5 and small.tau == 0.5
    assert small.means.min() >= 0 and small.means.max() <= 1
    assert np.median(small.means) == pytest.approx(0.5, abs=1e-12)
    assert 0.15 < np.std(small.means) <= 0.2 + 1e-12  # std 0.2 before clipping to [0, 1]
    np.testing.assert_array_equal(small.means, nws(n=400, seed=1).means)
    # smooth: ||mu - tau||_L is far below that of a random permutation of the same values
    rough = np.random.default_rng(0).permutation(small.means)
    assert smoothness(small.laplacian, small.means, 0.5, 0.0) < 0.3 * smoothness(small.laplacian, rough, 0.5, 0.0)


# ---------------------------------------------------------------- effective dimension and gamma*


def brute_force_d(eigenvalues, gamma, lam, T):
    N = len(eigenvalues)
    T = min(T, N)
    rhs = T / np.log(1 + T / (gamma * lam))
    lam_sorted = np.sort(eigenvalues) + lam
    return max(d for d in range(1, N + 1) if (d - 1) * gamma * lam_sorted[d - 1] <= rhs)


@pytest.mark.parametrize("name, graph, spectrum", [
    ("path", nx.path_graph(40), 2 - 2 * np.cos(np.pi * np.arange(40) / 40)),
    ("cycle", nx.cycle_graph(40), 2 - 2 * np.cos(2 * np.pi * np.arange(40) / 40)),
    ("complete", nx.complete_graph(40), np.r_[0.0, np.full(39, 40.0)]),
])
def test_effective_dimension_matches_the_definition(name, graph, spectrum):
    L = nx.laplacian_matrix(graph).astype(float)
    np.testing.assert_allclose(np.linalg.eigvalsh(L.toarray()), np.sort(spectrum), atol=1e-10)
    for gamma in (0.01, 1.0, 30.0):
        for lam in (1e-3, 0.5):
            for T in (1, 5, 17, 40, 500):
                assert effective_dimension(L, gamma, lam, T) == brute_force_d(spectrum, gamma, lam, T), (gamma, lam, T)


def test_effective_dimension_on_a_large_path_uses_the_small_eigenvalues():
    n = DENSE_LIMIT + 500  # sparse shift-invert branch
    L = nx.laplacian_matrix(nx.path_graph(n)).astype(float)
    spectrum = 2 - 2 * np.cos(np.pi * np.arange(n) / n)
    for gamma, T in ((1.0, 50), (20.0, 2000), (100.0, 5000)):  # d = 142, 176, 115
        assert effective_dimension(L, gamma, 1e-3, T) == brute_force_d(spectrum, gamma, 1e-3, T)


def test_optimal_gamma_reproduces_the_notebook_clique_example():
    # "Compute optimal gamma.ipynb": 20 cliques of 50, lambda = 1e-5, eps = 0.1, alpha = 1e-8, R = 1/2
    # -> d = 20, gamma = 130.731121549, M = 1.000000005, T = 17286.7600093 (independent of the signs)
    G = nx.disjoint_union_all([nx.complete_graph(50) for _ in range(20)])
    signs = np.repeat(np.random.default_rng(0).choice([-1.0, 1.0], 20), 50)
    env = GraphThresholdingBandit(G, signs, tau=0.0, eps=0.1, sigma=0.5)
    res = optimal_gamma(env, alpha=1e-8, lam=1e-5)
    assert res.converged and res.d == 20
    assert res.gamma == pytest.approx(130.731121549, rel=1e-9)
    assert res.M == pytest.approx(1.000000005, rel=1e-9)
    assert res.T0 == pytest.approx(17286.7600093, rel=1e-9)


def test_optimal_gamma_on_the_sbm_matches_the_reported_values():
    env = sbm(seed=0)  # code: 19.66 +- 0.79 over 100 graphs; paper's eq. (22): 28.72 +- 1.15
    code, paper = optimal_gamma(env, alpha=1.0), optimal_gamma(env, alpha=1.0, variant="paper")
    assert 17.3 < code.gamma < 22.1 and code.converged
    assert 25.2 < paper.gamma < 32.2 and paper.converged
    with pytest.raises(InvalidInputError, match="variant"):
        optimal_gamma(env, alpha=1.0, variant="derived")


# ---------------------------------------------------------------- algorithms and runner


def test_apt_allocation_is_proportional_to_inverse_squared_gaps():
    means = np.array([0.1, -0.2, 0.35, -0.6, 0.9])
    env = GraphThresholdingBandit(None, means, tau=0.0, eps=0.05, sigma=1.0)
    policy = APT(init_pulls=1).start(env, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(20000):
        counts = policy.next_batch(1)
        policy.observe(counts, env.pull(counts, rng))
    n = policy.counts
    gaps = np.abs(means) + env.eps
    assert n.sum() == 20000
    assert np.all(np.diff(n[np.argsort(gaps)]) < 0)  # more pulls for arms nearer the threshold
    ratio = n * gaps**2  # APT equalises sqrt(n_i) Delta_i, so n_i Delta_i^2 is about constant
    assert ratio.max() / ratio.min() < 1.5


def test_apt_warm_up_is_charged_or_free():
    env = sbm(n=20, seed=0)
    charged = run_thresholding(APT(), env, 100, seed=0, record=[40, 80])
    assert charged.samples == 100
    free = run_thresholding(APT(), env, 100, seed=0, count_warmup=False)
    assert free.samples == 100 + 2 * 40
    with pytest.raises(InvalidInputError, match="warm-up"):
        run_thresholding(APT(), env, 79, seed=0)
    # charged: the first 80 pulls are two round-robin passes
    policy = APT().start(env, np.random.default_rng(0))
    np.testing.assert_array_equal(policy.next_batch(50), np.r_[np.full(10, 2), np.ones(30)])


def test_runner_grid_reproducibility_and_budget():
    env = sbm(n=30, seed=1)
    a = run_thresholding(GrAPL(gamma=10, alpha=1), env, 200, seed=5, record=[0, 50, 100])
    b = run_thresholding(GrAPL(gamma=10, alpha=1), env, 200, seed=5, record=[0, 50, 100])
    np.testing.assert_array_equal(a.times, [0, 50, 100, 200])
    np.testing.assert_array_equal(a.errors, b.errors)
    np.testing.assert_array_equal(a.superlevel, b.superlevel)
    assert a.errors[0] == 0.5  # mu_hat = tau: every arm is called "above", the -1 block is wrong
    assert a.error == a.errors[-1] and a.loss == (a.error > 0) and a.samples == 200
    assert a.to_dict()["times"] == [0, 50, 100, 200]
    r = run_thresholding(RandomLaplacian(gamma=10, order="permutation"), env, 60, seed=0, record=[25])
    assert r.diagnostics["solves"] == 2  # the non-adaptive rule solves only at recorded times
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InvalidInputError, match="T must"):
            run_thresholding(APT(), env, bad)
    with pytest.raises(InvalidInputError, match="record"):
        run_thresholding(APT(), env, 200, record=[300])
    with pytest.raises(InvalidInputError, match="algorithm"):
        run_thresholding("grapl", env, 200)


def test_runner_reports_progress_after_every_batch():
    env = sbm(n=30, seed=1)
    calls: list[tuple[int, int]] = []
    run_thresholding(GrAPL(gamma=10, alpha=1), env, 50, seed=0, progress=lambda s, b: calls.append((s, b)))
    assert calls == [(t, t) for t in range(1, 51)]  # an index rule: one pull per batch
    calls.clear()
    run_thresholding(RandomLaplacian(), env, 100, seed=0, record=[40], progress=lambda s, b: calls.append((s, b)))
    assert calls == [(40, 1), (100, 2)]  # the non-adaptive rule: one batch per recorded interval
    calls.clear()
    run_thresholding(APT(), env, 3, seed=0, count_warmup=False, progress=lambda s, b: calls.append((s, b)))
    assert calls == [(121, 1), (122, 2), (123, 3)]  # the free warm-up (2 x 60 arms) counts in the samples


def test_a_budget_beyond_a_year_is_refused_once_the_rate_is_measured_without_progress_before():
    """The issue: grapl with T = 10^15 warned "about 5.2e+05 years" and ran on. The run refuses it with one error
    naming the estimate and the largest T that fits, and reports no progress first (so a caller's own estimate,
    e.g. the command line's, cannot come before the refusal)."""
    import re
    import time

    env = sbm(n=30, seed=1)
    start, calls = time.perf_counter(), []

    def watchdog(samples: int, batches: int) -> None:
        calls.append(samples)
        assert time.perf_counter() - start < 30, "still pulling a budget of 10^15"

    with pytest.raises(InvalidInputError, match=r"^T = 1,000,000,000,000,000 pulls would take about \S+ years at the "
                       r"[\d,]+ pulls per second grapl makes here, more than the 365 days a run may take; choose T <= "
                       r"[\d,]+$") as refused:
        run_thresholding(GrAPL(gamma=10, alpha=1), env, 10**15, seed=0, progress=watchdog)
    assert calls == []
    fits = int(re.search(r"T <= ([\d,]+)$", str(refused.value)).group(1).replace(",", ""))
    assert 10**4 < fits < 10**15


def test_the_run_time_rule_decides_once_from_the_rate_of_pulls():
    from bandits.core import run_time

    now, measured = [0.0], run_time.RATE_SECONDS
    rule = run_time.RunTime(10**12, "grapl", clock=lambda: now[0])  # timed from the first pull
    now[0] = 0.6 * measured
    rule.check(2400 * measured)  # not measured for RATE_SECONDS yet: no decision, no progress
    assert not rule.reports
    now[0] = measured
    with pytest.raises(InvalidInputError, match=r"about 7\.9 years at the 4,000 pulls per second grapl makes here.* "
                       r"choose T <= 126,230,400,000$"):
        rule.check(4000 * measured)  # 4,000 pulls per second: 10^12 pulls take 7.9 years, a year holds 1.26e11
    now[0] = 0.0
    accepted = run_time.RunTime(10**10, "apt", clock=lambda: now[0])  # 29 days at that rate
    now[0] = measured
    accepted.check(4000 * measured)
    assert accepted.reports
    now[0] = 1e9
    accepted.check(8000 * measured)  # decided once: a slower rate later does not refuse a run under way
    assert run_time.RunTime(1000, "apt").reports  # a budget even a slow algorithm ends in time: progress at once


def test_a_budget_no_algorithm_could_pull_in_a_year_is_refused_before_any_pull():
    from bandits.experiment import Experiment

    def never(samples: int, batches: int) -> None:
        raise AssertionError("a budget of 10^17 pulls was started")

    with pytest.raises(InvalidInputError, match=r"even at 1e\+09 pulls per second.*choose T <= 31,557,600,000,000,000"):
        run_thresholding(APT(), sbm(n=30, seed=1), 10**17, seed=0, progress=never)
    with pytest.raises(InvalidInputError, match="even at 1e\\+09 pulls per second"):  # a study refuses the cell
        Experiment("random-laplacian", "sbm:n=30", budget=10**17).check()


@pytest.mark.parametrize("T", ["x", float("nan"), 0, -1, 2.5])
def test_the_run_time_rule_refuses_what_is_not_a_budget(T):
    from bandits.core.run_time import check_run_time

    with pytest.raises(InvalidInputError, match="budget T"):
        check_run_time(T)


def test_cli_refuses_a_budget_beyond_a_year_in_one_line():
    import subprocess
    import sys

    code = "import sys; from bandits.cli import main; sys.argv = {!r}; main()".format(
        ["bandits", "run", "grapl", "-i", "sbm:n=30", "--budget", "1000000000000000"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert lines[0].startswith("error: T = 1,000,000,000,000,000 pulls would take about ") and out.stdout == ""


def test_permutation_order_pulls_every_arm_once_per_cycle():
    env = sbm(n=25, seed=0)
    policy = RandomLaplacian(order="permutation").start(env, np.random.default_rng(3))
    np.testing.assert_array_equal(policy.next_batch(30) + policy.next_batch(20), np.full(50, 1))


def test_ties_first_pulls_the_lowest_index_first():
    env = sbm(n=10, seed=0)
    first = GrAPL(ties="first").start(env, np.random.default_rng(0))
    assert np.flatnonzero(first.next_batch(1)).tolist() == [0]
    picks = {int(np.flatnonzero(GrAPL().start(env, np.random.default_rng(s)).next_batch(1))[0]) for s in range(20)}
    assert len(picks) > 5  # random tie-breaking at t = 0, where every index is equal


def test_indices_equal_up_to_rounding_are_ties():
    """Symmetric nodes tie to the last bits, which differ between BLAS builds: a difference of rounding size is a
    tie (the lowest index, or a random one of the tied), a real difference is not."""
    from bandits.thresholding.algorithms import argmin_index

    z = np.array([0.3, np.nextafter(0.1, 1.0), 0.1, 0.2])  # z[1] and z[2] differ in the last bit
    assert argmin_index(z, "first", np.random.default_rng(0)) == 1
    assert {argmin_index(z, "random", np.random.default_rng(s)) for s in range(20)} == {1, 2}
    z[1] = 0.1 + 1e-9  # a real difference: no tie
    assert argmin_index(z, "first", np.random.default_rng(0)) == 2
    assert {argmin_index(z, "random", np.random.default_rng(s)) for s in range(20)} == {2}


def test_grapl_beats_apt_on_a_small_sbm():
    grapl, apt = [], []
    for seed in range(4):
        env = sbm(n=100, seed=seed)
        grapl.append(run_thresholding(GrAPL(gamma=10, alpha=1), env, 1000, seed=seed).error)
        apt.append(run_thresholding(APT(), env, 1000, seed=seed, count_warmup=False).error)  # APT gets 2N free
    assert np.mean(grapl) < 0.015 and np.mean(apt) > 0.015
    assert np.mean(grapl) < 0.5 * np.mean(apt)


@pytest.mark.slow
def test_grapl_beats_apt_on_the_paper_sbm():
    # LeJeune et al. Fig. 1 at t = 5000: GrAPL gamma = 10 about 3e-3, APT about 4.5e-2
    grapl, apt = [], []
    for seed in range(5):
        env = sbm(n=500, seed=seed)
        grapl.append(run_thresholding(GrAPL(gamma=10, alpha=1), env, 5000, seed=seed).error)
        apt.append(run_thresholding(APT(), env, 5000, seed=seed, count_warmup=False).error)
    assert np.median(grapl) < 0.01 and np.median(apt) > 0.025
    assert max(grapl) < min(apt)


@pytest.mark.parametrize(("T", "t", "seconds"), [(10, 11, 1.0), (10, 5, float("nan")), (10, 5, -1.0), (0, 0, 1.0),
                                               (10, -1, 1.0), (10.5, 5, 1.0)])
def test_the_rate_check_refuses_what_is_not_a_measurement(T, t, seconds):
    from bandits.core.run_time import RunTime, check_rate

    with pytest.raises(InvalidInputError, match=r"budget T|pulls made t|t <= T"):
        check_rate(T, t, seconds, "apt")
    if T != 10:
        with pytest.raises(InvalidInputError, match="budget T"):
            RunTime(T, "apt")


def test_a_run_without_a_pull_after_the_measurement_is_refused():
    from bandits.core.run_time import check_rate

    with pytest.raises(InvalidInputError, match=r"choose T <= 0$"):
        check_rate(10, 0, 3.0, "apt")
    check_rate(10, 10, 0.0, "apt")  # the whole budget made at once: nothing left to refuse


def test_the_run_time_rule_is_still_importable_from_its_old_place():
    from bandits.core import run_time
    from bandits.thresholding import runner

    with pytest.warns(DeprecationWarning, match="moved to bandits.core.run_time.MAX_RUN_SECONDS"):
        assert runner.MAX_RUN_SECONDS == run_time.MAX_RUN_SECONDS
    assert runner.check_run_time is run_time.check_run_time
    with pytest.raises(AttributeError, match="RATE"):
        getattr(runner, "RATE")  # noqa: B009
