"""The pure-exploration interface against independent truths: GLR closed forms and numerical minimisation over
the alternatives, the envelope-theorem gradients against finite differences, the oracles against closed forms and
the design program, the certified bracket, and the GLR stopping rule's error rate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.core.statistics import LinearStatistics
from bandits.instances import parse_instance, soare
from bandits.pure_exploration import (
    Bernoulli,
    Gaussian,
    GLRStop,
    KArmedBandit,
    KArmedProblem,
    LinearProblem,
    PureExploration,
    certified_bracket,
)
from bandits.pure_exploration.samplers import FixedWeights, RoundRobin
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


def _random_counts(rng, K):
    return rng.integers(1, 50, size=K).astype(float)


@pytest.mark.parametrize("seed", range(5))
def test_gaussian_glr_is_the_weighted_midpoint_closed_form(seed):
    rng = np.random.default_rng(seed)
    K, sigma = 5, 0.7
    mu, N = rng.normal(size=K), _random_counts(rng, K)
    pieces = KArmedProblem(K, Gaussian(sigma)).pieces(mu, N)
    b = int(np.argmax(mu))
    closed = [(mu[b] - mu[a]) ** 2 / (2 * sigma**2 * (1 / N[b] + 1 / N[a])) for a in range(K) if a != b]
    assert pieces.values == pytest.approx(closed, rel=1e-12)
    assert pieces.value == pytest.approx(min(closed), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_bernoulli_glr_equals_a_numerical_minimisation_over_alternatives(seed):
    """min over lambda with lambda_a >= lambda_b of N_b kl(mu_b, lambda_b) + N_a kl(mu_a, lambda_a): the
    minimiser puts both at one point m, found here by a bounded scalar search."""
    rng = np.random.default_rng(seed)
    K = 4
    mu, N = rng.uniform(0.05, 0.95, size=K), _random_counts(rng, K)
    fam = Bernoulli()
    pieces = KArmedProblem(K, fam).pieces(mu, N)
    b = int(np.argmax(mu))
    for j, a in enumerate(pieces.answers):
        res = minimize_scalar(lambda m, a=a: N[b] * fam.kl(mu[b], m) + N[a] * fam.kl(mu[a], m),
                              bounds=(mu[a], mu[b]), method="bounded", options={"xatol": 1e-12})
        assert pieces.values[j] == pytest.approx(res.fun, rel=1e-7, abs=1e-12)


def _brute_force_alternative(X, N, theta, y, sigma):
    """min over lambda with y^T lambda <= 0 of sum_k N_k (x_k^T (theta - lambda))^2 / (2 sigma^2), by SLSQP."""
    res = minimize(lambda lam: N @ (X @ (theta - lam)) ** 2 / (2 * sigma**2), theta - y,
                   constraints=[{"type": "ineq", "fun": lambda lam: -y @ lam}], method="SLSQP",
                   options={"ftol": 1e-14, "maxiter": 500})
    return res.fun, res.x


@pytest.mark.parametrize("seed", range(4))
def test_linear_glr_of_the_problem_and_the_policies_equals_brute_force(seed):
    """At random counts (some arms unpulled) and noisy sums: every piece of the problem at (theta_hat, N), its
    closest alternative and gradients, and the GLR of a linear algorithm's policy (LinearStatistics) and of the
    pure-exploration policy (the problem's pieces) against SLSQP minimisations of sum_k N_k (x_k^T (theta_hat -
    lambda))^2 / (2 sigma^2) over {lambda : z_j^T lambda >= z_best^T lambda}, one per item j: same value, same best."""
    rng = np.random.default_rng(seed)
    K, M, d, sigma = 8, 6, 3, 1.3
    X, Z, theta = rng.normal(size=(K, d)), rng.normal(size=(M, d)), rng.normal(size=d)
    env = LinearBandit(X, theta, sigma=sigma, Z=Z)
    N = rng.integers(1, 50, size=K)
    N[rng.choice(K, size=2, replace=False)] = 0
    sums = env.pull(N, rng)
    theta_hat = np.linalg.solve(X.T @ (N[:, None] * X), X.T @ sums)
    best = int(np.argmax(Z @ theta_hat))
    problem = LinearProblem(X, Z, sigma)
    pieces = problem.pieces(problem.estimate(N, sums), N)
    alternatives = problem.alternatives(theta_hat, N)
    brute = {}
    for j, z in enumerate(pieces.answers):
        brute[int(z)], lam = _brute_force_alternative(X, N.astype(float), theta_hat, Z[best] - Z[z], sigma)
        assert pieces.values[j] == pytest.approx(brute[int(z)], rel=1e-5)
        assert theta_hat - alternatives.displacement(j) == pytest.approx(lam, rel=1e-4, abs=1e-6)
        assert pieces.gradients[j] == pytest.approx((X @ (theta_hat - lam)) ** 2 / (2 * sigma**2), rel=1e-4, abs=1e-9)
    assert pieces.best == best and pieces.value == pytest.approx(min(brute.values()), rel=1e-5)
    for name in ("lin-tas", "round-robin"):  # LinearStatistics.glr, and the GLR stop on the problem's pieces
        policy = make_algorithm(name).start(env, 0.1, np.random.default_rng(0))
        policy.observe(N, sums)
        statistic = policy.stop_statistic()
        assert statistic["best"] == best == policy.recommend()
        assert statistic["glr"] == pytest.approx(pieces.value, rel=1e-9)
    stats = LinearStatistics(X)
    stats.add(N, sums)
    subset = np.array([z for z in range(M) if z != best][:3])
    glr = stats.glr(Z, sigma, candidates=subset)
    b = int(subset[np.argmax(Z[subset] @ theta_hat)])
    restricted = [_brute_force_alternative(X, N.astype(float), theta_hat, Z[b] - Z[z], sigma)[0]
                  for z in subset if z != b]
    assert glr.best == b and glr.value == pytest.approx(min(restricted), rel=1e-5)


@pytest.mark.parametrize("in_range", [True, False])
def test_linear_pieces_at_weights_that_do_not_span_equal_brute_force(in_range):
    """w on two arms of R^3 (A(w) singular): items differing inside the range of A(w) cost gap^2 / (2 sigma^2
    y^T A^+ y); any other item is free (lambda moves along the unseen direction at no cost): both as SLSQP finds."""
    rng = np.random.default_rng(3)
    X, theta, sigma = rng.normal(size=(5, 3)), rng.normal(size=3), 0.8
    w = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    Z = rng.normal(size=(4, 2)) @ X[:2] if in_range else rng.normal(size=(4, 3))
    pieces = LinearProblem(X, Z, sigma).pieces(theta, w)
    for j, z in enumerate(pieces.answers):
        brute, _ = _brute_force_alternative(X, w, theta, Z[pieces.best] - Z[z], sigma)
        assert pieces.values[j] == pytest.approx(brute, rel=1e-5, abs=1e-9)
    assert (pieces.values > 0).all() == in_range
    assert pieces.values == pytest.approx(pieces.gradients @ w, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("problem, mu", [
    (KArmedProblem(4, Gaussian(1.0)), np.array([0.5, 0.45, 0.43, 0.4])),
    (KArmedProblem(5, Bernoulli()), np.array([0.3, 0.21, 0.2, 0.19, 0.18])),
    (LinearProblem(np.random.default_rng(0).normal(size=(6, 3))), np.array([1.0, -0.5, 0.2])),
])
def test_gradients_are_the_derivatives_of_the_pieces(problem, mu):
    """Envelope theorem: d f_j / d w_k at fixed closest alternatives equals the derivative of the minimum."""
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, size=problem.n_arms)
    pieces = problem.pieces(mu, w)
    h = 1e-6
    for k in range(problem.n_arms):
        e = np.zeros_like(w)
        e[k] = h
        numeric = (problem.pieces(mu, w + e, gradients=False).values
                   - problem.pieces(mu, w - e, gradients=False).values) / (2 * h)
        assert pieces.gradients[:, k] == pytest.approx(numeric, rel=1e-5, abs=1e-8)
    assert pieces.values == pytest.approx(pieces.gradients @ w, rel=1e-10)


@pytest.mark.parametrize("sigma, gap", [(1.0, 0.5), (2.0, 0.1)])
def test_two_gaussian_arms_have_t_star_8_sigma2_over_gap2(sigma, gap):
    oracle = KArmedProblem(2, Gaussian(sigma)).oracle(np.array([1.0, 1.0 - gap]))
    assert oracle.T == pytest.approx(8 * sigma**2 / gap**2, rel=1e-9)
    assert oracle.weights == pytest.approx([0.5, 0.5], abs=1e-9)


def test_gaussian_oracle_equals_the_transductive_design_and_is_certified():
    mu = np.array([0.5, 0.45, 0.43, 0.4])
    karmed = KArmedProblem(4, Gaussian(1.0)).oracle(mu)
    rho = od.transductive(np.eye(4), np.eye(4), mu, solver="CLARABEL")
    assert karmed.T == pytest.approx(2 * rho.value, rel=1e-4)  # T*_GK = 2 sigma^2 rho*
    assert karmed.lower_bound <= karmed.T <= karmed.lower_bound * (1 + 1e-8)
    assert karmed.weights == pytest.approx(rho.weights, abs=1e-3)


def test_bernoulli_oracle_equalises_the_pieces_and_is_certified():
    """GK16 Thm 5: at w* every piece carries the same information 1 / T*."""
    mu = np.array([0.3, 0.21, 0.2, 0.19, 0.18])
    problem = KArmedProblem(5, Bernoulli())
    oracle = problem.oracle(mu)
    values = problem.pieces(mu, oracle.weights).values
    assert values == pytest.approx(np.full(4, 1 / oracle.T), rel=1e-8)
    lower, upper = certified_bracket(problem, mu, oracle.weights)
    assert lower <= oracle.T <= upper * (1 + 1e-12) and upper / lower - 1 < 1e-7
    # a worse allocation gets a wider bracket that still contains T*
    lower, upper = certified_bracket(problem, mu, np.full(5, 0.2))
    assert lower <= oracle.T * (1 + 1e-9) and oracle.T <= upper


def test_linear_oracle_is_two_sigma2_rho_star():
    env = soare(d=4, omega=0.2, sigma=1.5)
    oracle = LinearProblem(env.X, env.Z, env.sigma).oracle(env.theta)
    rho = od.transductive(env.X, env.Z, env.theta, solver="CLARABEL")
    assert oracle.T == pytest.approx(2 * 1.5**2 * rho.value, rel=1e-9)
    assert oracle.lower_bound <= oracle.T


@pytest.mark.parametrize("family", [Gaussian(1.0), Bernoulli()])
def test_glr_stop_errs_at_most_delta_over_seeded_runs(family):
    """A two-arm instance with a small gap, the practical threshold at delta = 0.1: the one-sided 95 %
    Clopper–Pearson upper bound on the error rate over 200 seeded runs stays below delta, for each sampler."""
    from scipy.stats import beta as beta_dist

    env = KArmedBandit(np.array([0.55, 0.45]), family)
    delta, runs = 0.1, 200
    for sampler in (RoundRobin(), FixedWeights()):
        errors = sum(not run(PureExploration(sampler), env, delta, seed=s).correct for s in range(runs))
        upper = beta_dist.ppf(0.95, errors + 1, runs - errors)
        assert upper <= delta, (sampler.name, errors)


def test_one_trajectory_gives_every_delta_in_order():
    env = parse_instance("bernoulli")
    results = run(make_algorithm("round-robin"), env, [0.1, 0.01, 0.001], seed=3)
    samples = [r.samples for r in results]
    assert samples == sorted(samples) and all(r.stopped_by == "stopping_rule" for r in results)
    single = run(make_algorithm("round-robin"), env, 0.01, seed=3)
    assert single.samples == samples[1]


def test_registry_builds_samplers_under_the_glr_stop():
    algo = make_algorithm("oracle-weights:threshold=theory,growth=0")
    assert isinstance(algo, PureExploration) and algo.growth == 0 and algo.stop == GLRStop("theory")
    assert algo.describe()["threshold"] == "theory"
    r = run(algo, soare(d=3, omega=0.3), 0.1, seed=0)
    assert r.correct and r.stopped_by == "stopping_rule"


def test_linear_instance_of_the_identity_matches_the_karmed_instance():
    """The same Gaussian arms as a K-armed and as a linear problem stop at the same time with the same seed."""
    means = np.array([0.5, 0.45, 0.43, 0.4])
    karmed = KArmedBandit(means, Gaussian(1.0))
    linear = LinearBandit(np.eye(4), means)
    a = run(PureExploration(RoundRobin()), karmed, 0.1, seed=5)
    b = run(PureExploration(RoundRobin()), linear, 0.1, seed=5)
    assert a.samples == b.samples and a.recommendation == b.recommendation


@pytest.mark.parametrize("text, match", [
    ("round-robin:threshold=bogus", "unknown GLR threshold"),
    ("round-robin:growth=2", "growth"),
    ("round-robin:colour=red", "unknown option"),
    ("oracle-weights:weights=3", "weights"),
])
def test_bad_options_are_refused(text, match):
    with pytest.raises(InvalidInputError, match=match):
        algo = make_algorithm(text)
        run(algo, parse_instance("bernoulli"), 0.1, seed=0)


def test_bad_instances_are_refused():
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        parse_instance("bernoulli:means=0.5/1.5")
    with pytest.raises(InvalidInputError, match="tie"):  # an instance may tie; best-arm identification may not
        run(make_algorithm("round-robin"), parse_instance("gaussian:means=0.5/0.5/0.1"), 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="numbers"):
        parse_instance("gaussian:means=a/b")
    with pytest.raises(InvalidInputError, match="theory"):
        run(make_algorithm("round-robin:threshold=theory"), parse_instance("bernoulli"), 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="runs on"):
        from bandits.experiment import Experiment

        Experiment("round-robin", "ring:N=3,K=2", deltas=(0.1,)).check()


@pytest.mark.parametrize("call, match", [
    (lambda: KArmedProblem(True), "n_arms"),
    (lambda: KArmedProblem(2.5), "n_arms"),
    (lambda: KArmedProblem(3).oracle(np.array([1.0, np.nan, 0.0])), "NaN"),
    (lambda: KArmedProblem(3).oracle(np.array([1.0, 0.0])), "length 3"),
    (lambda: KArmedProblem(3, Bernoulli()).oracle(np.array([1.5, 0.2, 0.1])), r"\[0, 1\]"),
    (lambda: KArmedProblem(3).pieces(np.array([1.0, 0.5, 0.0]), np.ones(2)), "shape"),
    (lambda: LinearProblem(np.eye(2)).oracle(np.array([1.0, 2.0, 3.0])), "length 2"),
    (lambda: LinearProblem(np.eye(2)).pieces(np.array([1.0, 0.0]), np.ones(3)), "shape"),
    (lambda: certified_bracket(KArmedProblem(2), np.array([1.0, 0.0]), np.zeros(2)), "not all zero"),
    (lambda: certified_bracket(KArmedProblem(2), np.array([1.0, 0.0]), np.array([1.0, np.nan])), "finite"),
])
def test_bad_parameters_and_weights_are_refused(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_kl_delta_and_the_practical_bound_refuse_a_delta_outside_the_unit_interval():
    from bandits.studies.bounds import practical_bound

    for bad in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(InvalidInputError, match="delta"):
            od.kl_delta(bad)
        with pytest.raises(InvalidInputError, match="delta"):
            practical_bound(10.0, bad)
