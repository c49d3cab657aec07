"""The compiled path of linear runs against the reference: round robin, Track-and-Stop, Top-Two, FWS, Lazy TaS,
LinGame and LinGame-C on Soare et al.'s instances, seed by seed (the matrix products may sum in another order than
the reference's BLAS, so the rules that amplify rounding are held to most seeds and, slow-marked, to the same
distribution), LinGame's gains against the reference's, and the runs the path does not take."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.instances import parse_instance
from bandits.pure_exploration import LinearProblem
from bandits.pure_exploration.compiled import compiled_run_of
from bandits.registry import make_algorithm
from bandits.run import run

SOARE = parse_instance("soare:d=3,omega=0.2")


def outcome(result) -> tuple:
    return result.samples, result.batches, result.recommendation, result.stopped_by, result.correct


def pairs(algorithm: str, seeds: range, env=SOARE, delta=0.05, **options) -> list[tuple]:
    algo = make_algorithm(algorithm)
    return [(outcome(run(algo, env, delta, seed=s, **options)),
             outcome(run(algo, env, delta, seed=s, compiled=False, **options))) for s in seeds]


@pytest.mark.parametrize("algorithm", ["round-robin", "round-robin:growth=0"])
def test_round_robin_runs_are_the_reference_runs(algorithm, seeds):
    assert all(a == b for a, b in pairs(algorithm, seeds(8)))


@pytest.mark.parametrize("algorithm", ["fws", "fws:growth=0,refresh=7", "fws:inverse_update=as-published",
                                       "lazy-tas", "lazy-tas:growth=0,fw_steps=30"])
def test_fws_and_lazy_runs_are_the_reference_runs_on_most_seeds(algorithm, seeds):
    same = [a == b for a, b in pairs(algorithm, seeds(10))]
    assert sum(same) >= 4 * len(same) // 5, same


@pytest.mark.parametrize("algorithm", ["top-two", "top-two:growth=0", "top-two:challenger=tci"])
@pytest.mark.parametrize("instance", ["soare:d=3,omega=0.2", "transductive:d=2,omega=0.3", "sphere:n=12,d=4,seed=1"])
def test_top_two_runs_are_the_reference_runs_on_most_seeds(algorithm, instance, seeds):
    """The EB leader with the TC or TCI challenger and the variance-greedy pull (H = A^{-1} by Sherman-Morrison in
    the loop, a fresh inverse per pull in the reference)."""
    same = [a == b for a, b in pairs(algorithm, seeds(8), env=parse_instance(instance))]
    assert sum(same) >= len(same) - 1, same


def test_track_and_stop_and_several_deltas_and_a_budget():
    assert all(a == b for a, b in pairs("track-and-stop:tracking=C", range(2)))
    algo = make_algorithm("fws")
    for seed in range(3):
        fast = run(algo, SOARE, [0.3, 0.01, 1e-9], seed=seed, max_samples=400)
        reference = run(algo, SOARE, [0.3, 0.01, 1e-9], seed=seed, max_samples=400, compiled=False)
        assert [outcome(r) for r in fast] == [outcome(r) for r in reference]
        assert reference[-1].stopped_by == "budget"


def test_linear_runs_the_loop_does_not_implement_take_the_reference_path():
    problem = LinearProblem.of_environment(SOARE)
    assert compiled_run_of(make_algorithm("fws"), SOARE, problem, [0.1], 10**9) is not None
    assert compiled_run_of(make_algorithm("top-two:challenger=tci"), SOARE, problem, [0.1], 10**9) is not None
    for name in ("fws:game=highs", "lingame:steps=batch", "fws:threshold=theory", "fws:problem=top-m:m=2",
                 "top-two:leader=ts", "top-two:problem=top-m:m=2", "fws:problem=epsilon-good:epsilon=0.1"):
        algo = make_algorithm(name)  # the runner passes the question the algorithm asks, else the instance's own
        assert compiled_run_of(algo, SOARE, algo.question(SOARE) or problem, [0.1], 10**9) is None, name


@pytest.mark.parametrize("algorithm", ["lingame", "lingame:growth=0,learners=per-answer", "lingame-c:growth=0"])
def test_lingame_runs_are_the_reference_runs_on_most_seeds(algorithm, seeds):
    same = [a == b for a, b in pairs(algorithm, seeds(8))]
    assert sum(same) >= 3 * len(same) // 4, same


def test_lingame_on_a_transductive_instance_and_the_learners_storage_cap(monkeypatch):
    env = parse_instance("transductive:d=2,omega=0.3")
    assert sum(a == b for a, b in pairs("lingame:growth=0", range(4), env=env)) >= 3
    problem = LinearProblem.of_environment(SOARE)
    import bandits.pure_exploration.compiled.plan as plan

    monkeypatch.setattr(plan, "MAX_PAIRS", problem.n_answers * problem.n_arms - 1)
    for name in ("lingame-c", "lingame:learners=per-answer"):  # the reference decides (LinGame-C refuses)
        assert compiled_run_of(make_algorithm(name), SOARE, problem, [0.1], 10**9) is None, name
    assert compiled_run_of(make_algorithm("lingame"), SOARE, problem, [0.1], 10**9) is not None


@pytest.mark.parametrize("support", [6, 2])
def test_lingame_gains_are_the_reference_gains_at_spanning_and_singular_plays(support):
    """The best response and its optimistic gains at a play w on K = 6 arms in R^4, compiled and reference (the
    Cholesky path when w spans R^4; the pseudo-inverse and the free pieces when it does not)."""
    from bandits.pure_exploration.compiled.lingame import optimistic_gains

    rng = np.random.default_rng(support)
    X, theta = rng.standard_normal((6, 4)), rng.standard_normal(4)
    problem = LinearProblem(X, X[:5], 1.3)
    counts = rng.integers(1, 9, 6)
    w = np.zeros(6)
    w[:support] = rng.dirichlet(np.ones(support))
    reference = problem.optimism(theta, counts, 2.5)
    values = X[:5] @ theta
    b = int(np.argmax(values))
    others = [j for j in range(5) if j != b]
    Yt = np.ascontiguousarray((X[b] - X[others]).T)
    fast = optimistic_gains(X, Yt, values[b] - values[others], 1.3, w, reference.widths, 2.5)
    np.testing.assert_allclose(fast, reference.gains(w), rtol=1e-12, atol=1e-12)
    assert (fast < 2.5).any()  # the level c does not cap every gain: the shifts are compared


def test_lingame_gains_stay_finite_when_the_play_nearly_vanishes():
    """A play of subnormal weights on two arms in R^4: A(w)^{-1} y_j overflows, yet a free piece or a zero gap moves
    nothing (lambda = theta_hat), so the gains are the widths' alone on both paths (no inf times 0)."""
    from bandits.pure_exploration.compiled.lingame import optimistic_gains

    X = np.vstack([np.eye(4), np.ones(4)])
    theta = np.array([1.0, 0.5, 0.2, 0.1])
    problem = LinearProblem(X, X[:4], 1.0)
    w = np.zeros(5)
    w[:2] = 1e-310
    reference = problem.optimism(theta, np.ones(5, dtype=np.int64), 2.0)
    with np.errstate(all="raise"):
        gains = reference.gains(w)
    Yt = np.ascontiguousarray((X[0] - X[1:4]).T)
    fast = optimistic_gains(X, Yt, theta[0] - theta[1:4], 1.0, w, reference.widths, 2.0)
    np.testing.assert_allclose(gains, np.minimum(reference.widths**2 / 2.0, 2.0), rtol=1e-12)
    np.testing.assert_allclose(fast, gains, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["lingame:growth=0", "lingame-c:growth=0", "fws:growth=0", "top-two:growth=0"])
def test_linear_runs_agree_with_the_reference_in_distribution(algorithm):
    """200 seeds per path on Soare et al.'s d = 2, omega = 0.1 at delta = 0.1: Welch's t and the two-sample
    Kolmogorov-Smirnov test at level 0.001."""
    from scipy import stats

    env = parse_instance("soare:d=2,omega=0.1")
    algo = make_algorithm(algorithm)
    a = np.array([run(algo, env, 0.1, seed=s).samples for s in range(200)])
    b = np.array([run(algo, env, 0.1, seed=s, compiled=False).samples for s in range(200)])
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3
    assert stats.ks_2samp(a, b).pvalue > 1e-3

