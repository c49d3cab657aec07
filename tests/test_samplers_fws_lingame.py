"""Frank–Wolfe sampling, LinGame and LinGame-C: the game solver against vertex enumeration (both players' strategies
against von Neumann's equality on degenerate games), the Frank–Wolfe iterate
and the tracked proportions against the oracle w*, the inverse design against numpy's inverse (and the published
update against it), the K-armed and linear forms of one instance against each other, LinGame-C's gains at the
estimate against their closed form and its pairs concentrating on the best answer, the error rate, bad options."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from bandits.instances import parse_instance, soare
from bandits.pure_exploration import (
    Bernoulli,
    Gaussian,
    KArmedBandit,
    KArmedProblem,
    LinearProblem,
    Observations,
    PureExploration,
    games,
)
from bandits.pure_exploration.adahedge import AdaHedge
from bandits.pure_exploration.games import game_strategies, solve_game
from bandits.pure_exploration.samplers import FrankWolfe, LinGame, LinGameC
from bandits.pure_exploration.samplers.lingame_c import MAX_PAIRS
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


def _vertex_value(M):
    """max_z min_j (M z)_j by enumerating the vertices of {(z, v): M z >= v, sum z = 1, z >= 0}: a support S and
    as many rows R tight at v."""
    J, K = M.shape
    best = -np.inf
    for s in range(1, min(J, K) + 1):
        for S in itertools.combinations(range(K), s):
            for R in itertools.combinations(range(J), s):
                A = np.zeros((s + 1, s + 1))
                A[:s, :s], A[:s, s], A[s, :s] = M[np.ix_(R, S)], -1.0, 1.0
                try:
                    sol = np.linalg.solve(A, np.r_[np.zeros(s), 1.0])
                except np.linalg.LinAlgError:
                    continue
                if np.all(sol[:s] >= -1e-12):
                    z = np.zeros(K)
                    z[list(S)] = np.clip(sol[:s], 0, None)
                    best = max(best, float((M @ (z / z.sum())).min()))
    return best


@pytest.mark.parametrize("method", ["simplex", "highs"])
def test_game_solution_equals_vertex_enumeration(method):
    rng = np.random.default_rng(0)
    for _ in range(150):
        J, K = rng.integers(1, 5), rng.integers(2, 7)
        M = rng.normal(size=(J, K)) * rng.choice([1e-6, 1.0, 1e3])
        z, value = solve_game(M, method=method)
        assert z.min() >= 0 and z.sum() == pytest.approx(1.0, abs=1e-12)
        assert (M @ z).min() == pytest.approx(value, rel=1e-9, abs=1e-15 * np.abs(M).max())
        assert value == pytest.approx(_vertex_value(M), rel=1e-9, abs=1e-12 * np.abs(M).max())


def test_both_strategies_of_degenerate_games_meet_at_the_value(monkeypatch):
    """min_j (M z)_j = max_k (M^T p)_k = value (von Neumann) on games of many near-equal columns (HiGHS: to its
    dual tolerance); a tableau answer off that equality is replaced by HiGHS's."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        J, K = int(rng.integers(2, 17)), int(rng.integers(2, 60))
        base = rng.uniform(1, 2, size=(J, 3)) @ rng.dirichlet(np.ones(3), size=K).T
        M = base + 1e-7 * rng.normal(size=(J, K))
        for method, rel in (("simplex", 1e-9), ("highs", 1e-6)):
            z, p, value = game_strategies(M, method=method)
            assert z.min() >= 0 and p.min() >= 0
            assert z.sum() == pytest.approx(1.0) and p.sum() == pytest.approx(1.0)
            assert (M @ z).min() == pytest.approx(value, rel=1e-12)
            assert (M.T @ p).max() == pytest.approx(value, rel=rel)
    M = rng.normal(size=(4, 7))
    _, _, value = game_strategies(M, method="highs")
    monkeypatch.setattr(games, "_packing_simplex", lambda P: (np.full(P.shape[1], 1 / P.shape[1]),
                                                              np.full(P.shape[0], 1 / P.shape[0])))
    z, p, fallback = game_strategies(M)
    assert fallback == pytest.approx(value, rel=1e-9) and (M.T @ p).max() == pytest.approx(value, rel=1e-6)


def test_adahedge_regret_is_of_order_sqrt_t_log_k():
    rng = np.random.default_rng(1)
    K, T = 10, 3000
    learner, hedge = AdaHedge(K), 0.0
    losses = rng.uniform(size=(T, K)) + np.linspace(0, 0.3, K)  # arm 0 best on average
    for loss in losses:
        hedge += learner.weights() @ loss
        learner.update(loss)
    regret = hedge - losses.sum(axis=0).min()
    assert regret <= 2 * np.sqrt(T * np.log(K)) + 4
    assert np.argmax(learner.weights()) == 0


def _drive(problem, mu, steps, sampler):
    """The sampler's state fed the exact parameter as its estimate (no noise), batches of 1 %."""
    state = sampler.start(problem, None, np.random.default_rng(0))
    counts = np.ones(problem.n_arms, dtype=np.int64)
    while counts.sum() < steps:
        obs = Observations(problem, counts.copy(), np.zeros(problem.n_arms), mu)
        counts = counts + state.plan(obs, max(1, int(0.01 * counts.sum())))
    return state, counts


GK2 = np.array([0.3, 0.21, 0.2, 0.19, 0.18])


@pytest.mark.parametrize("problem, mu, tol", [
    (KArmedProblem(5, Bernoulli()), GK2, 0.004),
    (LinearProblem(soare(3, 0.3).X), soare(3, 0.3).theta, 0.006),
])
def test_frank_wolfe_iterate_and_proportions_reach_the_oracle_weights(problem, mu, tol):
    """At the exact parameter, after 15,000 steps: max_k |x_k - w*_k| and max_k |N_k / t - w*_k| <= tol
    (measured: 0.0025 and 0.0042), and F(x) within 1 % of 1 / T*."""
    oracle = problem.oracle(mu)
    state, counts = _drive(problem, mu, 15_000, FrankWolfe())
    assert np.abs(state.x - oracle.weights).max() <= tol
    assert np.abs(counts / counts.sum() - oracle.weights).max() <= tol
    assert problem.pieces(mu, state.x).value * oracle.T >= 0.99


@pytest.mark.parametrize("text, tol", [("bernoulli:means=0.3/0.21/0.2/0.19/0.18", 0.03), ("soare:d=3,omega=0.3", 0.05)])
def test_proportions_of_a_long_noisy_run_approach_the_oracle_weights(text, tol):
    """A run of 30,000 samples that is not allowed to stop: the proportions are within ``tol`` of w*(mu_hat), the
    oracle weights at the run's estimate, which FWS tracks. (Not w*(mu): on the Bernoulli instance the estimate's
    error at this t moves w* by 0.02 to 0.09 over seeds 0-9, against 0.004 to 0.024 for w*(mu_hat).)"""
    env = parse_instance(text)
    rng = np.random.default_rng(3)
    policy = PureExploration(FrankWolfe()).start(env, 1e-300, rng)
    while policy.counts.sum() < 30_000:
        batch = policy.next_batch(10**9)
        policy.observe(batch, env.pull(batch, rng))
    w_star = policy.problem.oracle(policy.mu).weights
    assert np.abs(policy.counts / policy.counts.sum() - w_star).max() <= tol
    assert np.abs(policy.state.x - w_star).max() <= tol


def test_exact_inverse_is_the_inverse_design_and_the_published_one_is_not():
    env = soare(3, 0.3)
    problem = LinearProblem(env.X)
    exact, _ = _drive(problem, env.theta, 3000, FrankWolfe(refresh=10**6))  # rank-one updates only
    published, _ = _drive(problem, env.theta, 3000, FrankWolfe(inverse_update="as-published"))
    for state in (exact, published):
        V = problem.information_weights(state.x)
        inverse = np.linalg.inv(V)
        scale = np.abs(inverse).max()
        if state is exact:
            assert np.abs(state.inverse.H - inverse).max() <= 1e-9 * scale
            Y = state.inverse.Y
            assert np.allclose(state.inverse.P, Y @ inverse, rtol=0, atol=1e-9 * scale)
        else:
            assert np.abs(state.inverse.H - inverse).max() >= 0.1 * scale


def test_linear_fast_path_equals_the_problem_pieces():
    """FWS keeps H y_j and y_j^T H y_j by rank-one updates: its piece values and near-minimal gradients equal
    the problem's own (a fresh inversion) at the iterate."""
    rng = np.random.default_rng(2)
    problem = LinearProblem(rng.normal(size=(7, 3)), rng.normal(size=(5, 3)))
    mu = rng.normal(size=3)
    state, counts = _drive(problem, mu, 500, FrankWolfe(refresh=10**6))
    obs = Observations(problem, counts, np.zeros(7), mu)
    values, grads = state._pieces(obs, np.inf)
    reference = problem.pieces(mu, state.x)
    assert values == pytest.approx(reference.values, rel=1e-9)
    assert grads == pytest.approx(reference.gradients, rel=1e-8, abs=1e-14)


def test_lingame_gains_of_gaussian_arms_equal_those_of_the_identity_design():
    """The K-armed confidence bounds of Gaussian arms are the linear ones with X = I: same optimistic gains."""
    rng = np.random.default_rng(3)
    means, counts = np.array([0.6, 0.45, 0.4, 0.3]), np.array([30, 12, 9, 5])
    plays, gains = rng.dirichlet(np.ones(4), size=5), []
    for problem in (KArmedProblem(4, Gaussian(1.0)), LinearProblem(np.eye(4))):
        state = LinGame().start(problem, None, rng)
        obs = Observations(problem, counts, means * counts, means)
        state.plan(obs, 1)
        gains.append([state.gains(obs, w) for w in plays])
    assert np.array(gains[0]) == pytest.approx(np.array(gains[1]), rel=1e-9)


@pytest.mark.parametrize("problem, mu", [
    (KArmedProblem(3, Gaussian(1.0)), np.array([1.0, 0.6, 0.3])),
    (LinearProblem(soare(3, 0.3).X), soare(3, 0.3).theta),
])
def test_lingame_c_proportions_reach_the_oracle_and_its_pairs_the_best_answer(problem, mu):
    """At the exact parameter, after 30,000 steps: min_j f_j(N / t) within 2.5 % of 1 / T*, max_k |N_k / t - w*_k|
    <= 0.05 (measured 0.007 and 0.039) and under 1 % of the pulls credited to the rows of the other answers
    (the learner's gains there, c_t / N_k at most, vanish)."""
    oracle = problem.oracle(mu)
    state, counts = _drive(problem, mu, 30_000, LinGameC())
    w = counts / counts.sum()
    assert problem.pieces(mu, w).value * oracle.T >= 0.975
    assert np.abs(w - oracle.weights).max() <= 0.05
    assert state.pairs.sum() == counts.sum() - problem.n_arms  # the initial pull of each arm is no pair's
    assert 1 - state.pairs[problem.answer(mu)].sum() / state.pairs.sum() < 0.01


def test_lingame_c_gains_at_the_estimate_are_the_confidence_widths():
    """For the answers the estimate contradicts, lambda = theta_hat: U_k = min(c_t x_k^T A^{-1} x_k, c_t) on linear
    arms (A = sum_k N_k x_k x_k^T inverted by numpy) and min(c_t / N_k, c_t) on Gaussian arms of unit variance."""
    env = soare(3, 0.3)
    counts = np.array([40, 7, 3, 12])
    problem = LinearProblem(env.X)
    state = LinGameC().start(problem, None, np.random.default_rng(0))
    obs = Observations(problem, counts, np.zeros(4), env.theta)
    state.plan(obs, 1)
    c = np.log(counts.sum())
    A_inv = np.linalg.inv(env.X.T @ (env.X * counts[:, None]))
    expected = np.minimum(c * np.einsum("kd,de,ke->k", env.X, A_inv, env.X), c)
    assert state.gains_at_estimate(obs) == pytest.approx(expected, rel=1e-9)
    problem = KArmedProblem(4, Gaussian(1.0))
    state = LinGameC().start(problem, None, np.random.default_rng(0))
    obs = Observations(problem, counts, 0.5 * counts, np.full(4, 0.5))
    state.plan(obs, 1)
    assert state.gains_at_estimate(obs) == pytest.approx(np.minimum(c / counts, c), rel=1e-9)


def test_lingame_c_runs_under_the_glr_stop_and_refuses_too_many_pairs():
    for stop in ("glr:threshold=kk21", "glr:threshold=practical,growth=0"):
        r = run(make_algorithm("lingame-c", stop=stop), parse_instance("gaussian:means=1/0.6/0.3"), 0.05, seed=0)
        assert r.correct and r.stopped_by == "stopping_rule"
    r = run(make_algorithm("lingame-c"), parse_instance("soare:d=3,omega=0.3"), 0.05, seed=0)
    assert r.correct and r.stopped_by == "stopping_rule"
    K = int(np.sqrt(MAX_PAIRS)) + 1
    with pytest.raises(InvalidInputError, match="pairs, above its cap"):
        LinGameC().start(KArmedProblem(K), None, np.random.default_rng(0))


@pytest.mark.slow
@pytest.mark.parametrize("instance", ["gaussian:means=0.6/0.4/0.35", "soare:d=2,omega=0.3"])
def test_lingame_c_error_rate_is_at_most_delta(instance):
    """Practical threshold, delta = 0.1: the one-sided 95 % Clopper–Pearson upper bound on the error rate over 150
    seeded runs is <= delta, on three Gaussian arms and on a linear instance."""
    env = parse_instance(instance)
    delta, runs = 0.1, 150
    errors = sum(not run(make_algorithm("lingame-c"), env, delta, seed=s).correct for s in range(runs))
    assert beta_dist.ppf(0.95, errors + 1, runs - errors) <= delta


@pytest.mark.parametrize("sampler", ["fws", "lingame"])
def test_error_rate_is_at_most_delta(sampler):
    """Three Gaussian arms, practical threshold, delta = 0.1: the one-sided 95 % Clopper–Pearson upper bound on
    the error rate over 150 seeded runs is <= delta."""
    env = KArmedBandit(np.array([0.6, 0.4, 0.35]), Gaussian(1.0))
    delta, runs = 0.1, 150
    errors = sum(not run(make_algorithm(sampler), env, delta, seed=s).correct for s in range(runs))
    assert beta_dist.ppf(0.95, errors + 1, runs - errors) <= delta


def test_lingame_one_or_per_answer_learners_identify_the_best_arm():
    env = parse_instance("soare:d=3,omega=0.3")
    for text in ("lingame", "lingame:learners=per-answer"):
        r = run(make_algorithm(text), env, 0.05, seed=0)
        assert r.correct and r.stopped_by == "stopping_rule"


@pytest.mark.parametrize("text, match", [
    ("fws:inverse_update=sloppy", "inverse_update"),
    ("fws:refresh=0", "refresh"),
    ("fws:game=cplex", "game"),
    ("lingame:learners=many", "learners"),
    ("fws:inverse_update=as-published", "linear problems only"),
])
def test_bad_options_are_refused(text, match):
    with pytest.raises(InvalidInputError, match=match):
        run(make_algorithm(text), parse_instance("bernoulli"), 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="finite"):
        solve_game(np.array([[1.0, np.nan]]))


def test_objective_is_the_problems_value_at_the_iterate_and_the_published_one_is_larger():
    """With the exact inverse, the rule's own F(x) equals the problem's min_j f_j(x); with the published update it
    over-estimates it (Cauchy–Schwarz), which is how the published oracle under-reports T*."""
    env = soare(d=6, omega=0.1)
    problem = LinearProblem(env.X, env.Z, env.sigma)
    values = {}
    for update in ("exact", "as-published"):
        state = FrankWolfe(inverse_update=update).start(problem, env, np.random.default_rng(0))
        counts = np.ones(problem.n_arms, dtype=np.int64)
        for _ in range(2_000):
            obs = Observations(problem, counts, np.zeros(problem.n_arms), env.theta)
            counts = counts + state.plan(obs, 1)
        values[update] = (state.objective(obs), problem.pieces(env.theta, state.x).value)
    exact, truth = values["exact"]
    assert exact == pytest.approx(truth, rel=1e-8)
    published, truth = values["as-published"]
    assert published > truth * 1.02
