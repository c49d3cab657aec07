"""The compiled path of K-armed runs against the reference: its arithmetic to the last bit, and whole runs seed by
seed (samples, batches, recommendation, why it stopped), for every rule and option it implements, both families,
several deltas and a budget; runs it does not implement take the reference path."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.core.stopping import Kk21ExpFamilyThreshold, Kk21Threshold, PracticalThreshold
from bandits.core.tracking import project_floor, track
from bandits.pure_exploration import KArmedBandit, KArmedProblem
from bandits.pure_exploration.compiled import arithmetic as fast
from bandits.pure_exploration.compiled import compiled_run_of
from bandits.pure_exploration.families import Bernoulli, Gaussian
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.linear.rounding import round_design

GAUSSIAN5 = KArmedBandit(np.array([1.0, 0.8, 0.5, 0.3, 0.2]), family=Gaussian(0.8), name="g5")
BERNOULLI4 = KArmedBandit(np.array([0.5, 0.45, 0.3, 0.1]), family=Bernoulli(), name="b4")
RULES = ["round-robin", "track-and-stop", "track-and-stop:tracking=C,resolve_growth=0", "top-two",
         "top-two:challenger=tci,beta=ids", "top-two:beta=0.3,selection=sampling", "round-robin:growth=0",
         "top-two:growth=0,threshold=kk21", "top-two:leader=ts,selection=sampling", "top-two:leader=ucb,challenger=tci",
         "top-two:leader=ts,challenger=ts"]
#: compiled for both families; seed by seed on Gaussian arms only (a Bernoulli kl differs from the reference in the
#: last bits, which FWS's game and Lazy TaS's Frank-Wolfe vertices can amplify: those runs agree in distribution,
#: test below)
FWS = ["fws", "fws:growth=0", "lazy-tas", "lazy-tas:growth=0,fw_steps=50"]
#: the longest reference runs (a check at every pull under the larger threshold), run with --runslow only: the same
#: rule on Gaussian arms and the threshold's arithmetic (below) stay in the fast subset
SLOW = {("bernoulli", "top-two:growth=0,threshold=kk21"),
        ("epsilon-good", "track-and-stop:tracking=C,resolve_growth=0")}


def slow_if(*case: str) -> tuple:
    return (pytest.mark.slow,) if case in SLOW else ()


def outcome(result) -> tuple:
    return result.samples, result.batches, result.recommendation, result.stopped_by, result.correct


def both(algorithm: str, env: KArmedBandit, delta, seed: int, **options):
    algo = make_algorithm(algorithm)
    return (run(algo, env, delta, seed=seed, **options),
            run(algo, env, delta, seed=seed, compiled=False, **options))


@pytest.mark.parametrize(("env", "algorithm"), [
    pytest.param(env, algorithm, id=f"{name}-{algorithm}", marks=slow_if(name, algorithm))
    for name, env in (("gaussian", GAUSSIAN5), ("bernoulli", BERNOULLI4)) for algorithm in RULES + FWS])
def test_compiled_runs_are_the_reference_runs_seed_by_seed(env, algorithm, seeds):
    algo = make_algorithm(algorithm)
    problem = KArmedProblem.of_environment(env)
    assert compiled_run_of(algo, env, problem, [0.05], 10**9) is not None
    if env is BERNOULLI4 and algorithm in FWS:
        return
    for seed in seeds(6):
        fast_run, reference = both(algorithm, env, 0.05, seed)
        assert outcome(fast_run) == outcome(reference), seed


@pytest.mark.parametrize("algorithm", ["lingame", "lingame:growth=0,learners=per-answer", "lingame-c:growth=0"])
def test_lingame_runs_are_the_reference_runs(algorithm, seeds):
    """Seed by seed on Gaussian arms; on Bernoulli arms (whose kl differs in the last bits) on all seeds but one."""
    for env, misses in ((GAUSSIAN5, 0), (BERNOULLI4, 1)):
        assert compiled_run_of(make_algorithm(algorithm), env, KArmedProblem.of_environment(env), [0.05], 10**9)
        same = [outcome(a) == outcome(b) for a, b in (both(algorithm, env, 0.05, seed) for seed in seeds(6))]
        assert sum(same) >= len(same) - misses, (env.name, same)


@pytest.mark.parametrize("family", [Gaussian(0.7), Bernoulli()], ids=["gaussian", "bernoulli"])
def test_lingame_gains_and_intervals_are_the_reference_numbers(family):
    """The KL confidence intervals and the optimistic gains at the best response to random plays, compiled and
    reference (:class:`bandits.pure_exploration.karmed.KArmedOptimism`)."""
    from bandits.pure_exploration.compiled.lingame import confidence_intervals, karmed_gains

    rng = np.random.default_rng(3)
    mu = np.array([0.62, 0.55, 0.4, 0.31, 0.12])
    counts = rng.integers(1, 40, mu.size)
    code = 0 if isinstance(family, Gaussian) else 1
    sigma = family.sigma if isinstance(family, Gaussian) else 1.0
    reference = KArmedProblem(5, family).optimism(mu, counts, 3.2)
    lower, upper = confidence_intervals(code, sigma, mu, counts, 3.2)
    np.testing.assert_allclose(lower, reference.lower, rtol=0, atol=1e-12)
    np.testing.assert_allclose(upper, reference.upper, rtol=0, atol=1e-12)
    for _ in range(20):
        w = rng.dirichlet(np.ones(mu.size))
        fast_gains = karmed_gains(code, sigma, mu, 0, w, reference.lower, reference.upper, 3.2)
        np.testing.assert_allclose(fast_gains, reference.gains(w), rtol=1e-12, atol=1e-15)
    assert (fast_gains < 3.2).any()  # the level c does not cap every gain


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["fws:growth=0", "lazy-tas:growth=0", "top-two:growth=0"])
def test_bernoulli_runs_agree_with_the_reference_in_distribution(algorithm):
    """300 seeds per path on GK16's first Bernoulli instance at delta = 0.1: the stopping times pass Welch's t test and
    the two-sample Kolmogorov-Smirnov test at level 0.001, and every run is correct on both paths but a few."""
    from scipy import stats

    env = KArmedBandit(np.array([0.5, 0.45, 0.43, 0.4]), family=Bernoulli())
    algo = make_algorithm(algorithm)
    fast_runs = [run(algo, env, 0.1, seed=s) for s in range(300)]
    reference = [run(algo, env, 0.1, seed=s, compiled=False) for s in range(300)]
    a, b = (np.array([r.samples for r in runs]) for runs in (fast_runs, reference))
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert sum(not r.correct for r in fast_runs + reference) <= 0.1 * 600


#: the rules compiled on the additive epsilon-good question of Gaussian arms (those that read the empirical best's
#: pieces only); Track-and-Stop's oracle there is GK16's equalisation in the loop and a cvxpy model in the reference,
#: whose weights agree to the model's tolerance, so its tracking may part from the reference's (test below)
EPSILON_RULES = [rule for rule in RULES + FWS if "leader=ts" not in rule and "leader=ucb" not in rule]


def epsilon_good(algorithm: str, epsilon: float = 0.25) -> str:
    return f"{algorithm}{',' if ':' in algorithm else ':'}problem=epsilon-good:epsilon={epsilon}"


@pytest.mark.parametrize("algorithm", [pytest.param(rule, marks=slow_if("epsilon-good", rule))
                                       for rule in EPSILON_RULES])
def test_compiled_epsilon_good_runs_are_the_reference_runs_seed_by_seed(algorithm, seeds):
    """epsilon = 0.25 on GAUSSIAN5 makes the arms 1.0 and 0.8 correct; the loop reads best-arm pieces at shifted
    means, the reference the shifted pieces: the same runs (Track-and-Stop: on two seeds in three)."""
    algo = make_algorithm(epsilon_good(algorithm))
    assert compiled_run_of(algo, GAUSSIAN5, algo.question(GAUSSIAN5), [0.05], 10**9) is not None
    same = [outcome(a) == outcome(b) for a, b in (both(epsilon_good(algorithm), GAUSSIAN5, 0.05, s) for s in seeds(6))]
    assert sum(same) >= (2 * len(same) // 3 if algorithm.startswith("track-and-stop") else len(same)), same


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["track-and-stop", "track-and-stop:tracking=C"])
def test_compiled_epsilon_good_track_and_stop_agrees_in_distribution(algorithm):
    """200 seeds per path on five Gaussian arms at delta = 0.1, epsilon = 0.1 (arms 1 and 0.95 correct): the stopping
    times pass Welch's t test and the two-sample Kolmogorov-Smirnov test at level 0.001, and at most a few runs err
    (the reference re-solves a cvxpy model: about 1.3 s per run)."""
    from scipy import stats

    env = KArmedBandit(np.array([1.0, 0.95, 0.7, 0.5, 0.3]), family=Gaussian(1.0))
    algo = make_algorithm(epsilon_good(algorithm, 0.1))
    fast_runs = [run(algo, env, 0.1, seed=s) for s in range(200)]
    reference = [run(algo, env, 0.1, seed=s, compiled=False) for s in range(200)]
    a, b = (np.array([r.samples for r in runs]) for runs in (fast_runs, reference))
    print(f"{algorithm}: means {a.mean():.0f} / {b.mean():.0f}, same runs {int((a == b).sum())} of 200")
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert sum(not r.correct for r in fast_runs + reference) <= 0.1 * 400


def test_shifted_means_give_the_epsilon_good_pieces():
    from bandits.pure_exploration.compiled.loop import shifted
    from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem

    rng = np.random.default_rng(5)
    problem = EpsilonGoodProblem(5, 0.3, Gaussian(0.8))
    for _ in range(10):
        mu, w = rng.normal(size=5), rng.integers(1, 50, size=5).astype(float)
        best, value = fast.glr(0, 0.8, shifted(mu, 0.3), w)
        reference = problem.pieces(mu, w)
        assert best == reference.best and value == pytest.approx(reference.values.min(), rel=1e-12)
    mu = np.array([0.2, 0.7, 0.7])
    assert shifted(mu, 0.0) is mu and shifted(mu, 0.1).tolist() == pytest.approx([0.1, 0.7, 0.6])


def test_epsilon_good_runs_the_loop_does_not_implement_take_the_reference_path():
    bernoulli = make_algorithm("fws:problem=epsilon-good:epsilon=0.05")
    assert compiled_run_of(bernoulli, BERNOULLI4, bernoulli.question(BERNOULLI4), [0.1], 10**9) is None
    for name in ("top-two:leader=ts,problem=epsilon-good:epsilon=0.1", "top-two:challenger=ts,problem=epsilon-good:"
                 "epsilon=0.1", "fws:problem=multiplicative-epsilon-good:epsilon=0.1", "fws:problem=top-m:m=2"):
        algo = make_algorithm(name)
        assert compiled_run_of(algo, GAUSSIAN5, algo.question(GAUSSIAN5), [0.1], 10**9) is None, name


def test_several_deltas_and_a_budget_settle_as_in_the_reference(seeds):
    for seed in seeds(4):
        fast_runs, reference = both("top-two", BERNOULLI4, [0.2, 0.01, 1e-6], seed, max_samples=3000)
        assert [outcome(r) for r in fast_runs] == [outcome(r) for r in reference]
        assert reference[-1].stopped_by == "budget"
        fast_run, reference_run = both("round-robin", GAUSSIAN5, 0.01, seed, max_samples=7)
        assert outcome(fast_run) == outcome(reference_run) and reference_run.stopped_by == "budget"


def test_track_and_stop_reports_its_oracle_time():
    fast_run, _ = both("track-and-stop", GAUSSIAN5, 0.01, 0)
    assert 0 < fast_run.solve_time <= fast_run.solve_time + fast_run.other_time


def test_runs_the_compiled_loop_does_not_implement_take_the_reference_path():
    problem = KArmedProblem.of_environment(GAUSSIAN5)
    for name in ("fws:game=highs", "lingame:steps=batch", "track-and-stop:problem=top-m:m=2"):
        algo = make_algorithm(name)  # the runner passes the question the algorithm asks, else the instance's own
        assert compiled_run_of(algo, GAUSSIAN5, algo.question(GAUSSIAN5) or problem, [0.1], 10**9) is None, name
    assert compiled_run_of(make_algorithm("top-two"), GAUSSIAN5, problem, [0.1], 4) is None  # first pass cut
    traced = run(make_algorithm("top-two"), GAUSSIAN5, 0.1, seed=0, trace=True)
    assert traced.trace and outcome(traced) == outcome(run(make_algorithm("top-two"), GAUSSIAN5, 0.1, seed=0))


@pytest.mark.parametrize("family", [Gaussian(0.7), Bernoulli()], ids=["gaussian", "bernoulli"])
def test_divergence_pieces_and_glr_are_the_reference_numbers(family):
    """Gaussian arithmetic to the last bit; the Bernoulli divergence calls the C library's log1p where the reference
    calls scipy's (cephes), which differ in the last bits: within 1e-13 relative."""
    rng = np.random.default_rng(0)
    gaussian = isinstance(family, Gaussian)
    code = fast.GAUSSIAN if gaussian else fast.BERNOULLI
    sigma = getattr(family, "sigma", 1.0)
    problem = KArmedProblem(7, family)

    def same(mine, reference):
        assert mine == reference if gaussian else mine == pytest.approx(reference, rel=1e-13, abs=1e-300)

    for _ in range(200):
        mu = rng.uniform(0.01, 0.99, size=7)
        counts = rng.integers(1, 1000, size=7)
        x, y = rng.uniform(0, 1, size=2)
        same(fast.divergence(code, sigma, x, y), float(family.kl(x, y)))
        answer, value = fast.glr(code, sigma, mu, counts)
        statistic = problem.glr(mu, counts)
        assert answer == statistic.answer
        same(value, statistic.value)
        leader = int(rng.integers(7))
        costs = problem.pair_costs(mu, counts, leader)
        mine = [fast.pair_cost(code, sigma, mu, counts, leader, j, leader != answer) for j in range(7) if j != leader]
        same(mine, list(np.delete(costs, leader)))


def test_sums_rounding_tracking_and_the_floor_are_the_reference_bits():
    rng = np.random.default_rng(1)
    for n in (1, 3, 7, 8, 9, 16, 100, 128, 129, 300, 1000):
        a = rng.exponential(size=n)
        assert fast.pairwise_sum(a) == a.sum()
    for _ in range(200):
        K = int(rng.integers(2, 12))
        w = rng.dirichlet(np.full(K, 0.5))
        counts = rng.integers(0, 50, size=K)
        n = int(rng.integers(1, 40))
        assert np.array_equal(fast.round_design(w, n), round_design(w, n))
        assert np.array_equal(fast.track(counts, w, n), track(counts, w, n))
        eps = float(rng.uniform(0, 1.0 / K))
        assert np.array_equal(fast.project_floor(w, eps), project_floor(w, eps))


@pytest.mark.parametrize("threshold", [PracticalThreshold(), Kk21Threshold(5), Kk21ExpFamilyThreshold(5)],
                         ids=["practical", "kk21", "kk21-exp"])
def test_the_thresholds_log_log_form_is_the_threshold(threshold):
    for delta in (0.5, 0.01, 1e-9):
        a, c, b, floor, s = threshold.log_log_form(delta)
        for t in (1, 2, 3, 10, 1e3, 1e7):
            assert a + c * np.log(b + np.log(max(t, floor) / s)) == pytest.approx(threshold(t, delta), rel=1e-14)


@pytest.mark.parametrize("family", [Gaussian(1.3), Bernoulli()], ids=["gaussian", "bernoulli"])
def test_the_compiled_oracle_gives_the_reference_weights(family):
    """GK16's Theorem 5 solved by the compiled twin: Track-and-Stop's target (w*(mu) normalised) to 1e-12 of the
    reference oracle's, and no target where the reference refuses (a tie for the best arm)."""
    from bandits.pure_exploration.compiled.oracle import oracle_target

    rng = np.random.default_rng(3)
    code = fast.GAUSSIAN if isinstance(family, Gaussian) else fast.BERNOULLI
    sigma = getattr(family, "sigma", 1.0)
    for _ in range(100):
        K = int(rng.integers(2, 9))
        mu = rng.uniform(0.05, 0.95, size=K)
        reference = KArmedProblem(K, family).oracle(mu).weights
        np.testing.assert_allclose(oracle_target(mu, code, sigma), reference / reference.sum(), rtol=1e-12, atol=0)
    assert oracle_target(np.array([0.5, 0.5, 0.2]), code, sigma).size == 0
