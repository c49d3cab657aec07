"""Fixed-budget runs against truths: the phase lengths of Successive Rejects and Sequential Halving against the papers'
formulas, error 0 with a huge gap, error (K - 1)/K with identical arms, Audibert et al.'s Theorem 2 bound, one anytime
trajectory read at a budget against a run stopped there, questions beyond the best arm, the simple regret."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
from scipy.stats import binomtest

from bandits.core.stopping import Threshold
from bandits.fixed_budget import (
    SequentialHalving,
    SuccessiveRejects,
    halving_rounds,
    log_bar,
    run_fixed_budget,
    successive_rejects_lengths,
)
from bandits.instances import parse_instance
from bandits.pure_exploration import GLRStop, KArmedBandit, PureExploration
from bandits.pure_exploration.families import Bernoulli, Gaussian
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

#: anytime rules as a fixed-budget run builds them (re-planning after every pull)
ANYTIME = ["round-robin", "top-two", "track-and-stop", "fws"]
BUDGET_RULES = [SuccessiveRejects(), SequentialHalving(), SequentialHalving(reuse=True)]


def anytime(text: str, growth: float = 0.0) -> PureExploration:
    return replace(make_algorithm(text), growth=growth)


def rule(name: str):
    return anytime(name) if name in ANYTIME else {"sr": SuccessiveRejects(), "sh": SequentialHalving()}[name]


# --- the schedules against the papers' formulas --------------------------------------------------------------------


@pytest.mark.parametrize("K", [2, 3, 4, 5, 7, 10, 16, 33])
@pytest.mark.parametrize("T", [40, 99, 100, 257, 1000, 2000, 12345])
def test_successive_rejects_phases_are_the_papers(T, K):
    """Audibert et al. (2010), Sec. 3: n_k = ceil((T - K) / (log-bar(K) (K + 1 - k))), log-bar(K) = 1/2 + sum 1/i;
    a phase pulls K + 1 - k arms, so the run makes sum_k n_k + n_{K-1} <= T pulls; the run's counts are those."""
    if T <= K:
        return
    bar = 0.5 + sum(1.0 / i for i in range(2, K + 1))
    assert float(log_bar(K)) == pytest.approx(bar, rel=1e-15)
    lengths = successive_rejects_lengths(T, K)
    expected = [math.ceil((T - K) / (bar * (K + 1 - k)) - 1e-9) for k in range(1, K)]
    assert list(lengths) == expected
    assert lengths.sum() + lengths[-1] <= T
    env = KArmedBandit(np.linspace(1.0, 0.0, K), family=Gaussian())
    outcome = SuccessiveRejects().allocate(SuccessiveRejects().question(env), env, T, np.random.default_rng(0))
    assert outcome.samples == lengths.sum() + lengths[-1] <= T
    # the arm rejected after phase k has n_k pulls; the two arms of the last phase n_{K-1}
    assert sorted(outcome.counts) == sorted([*lengths, lengths[-1]])


@pytest.mark.parametrize("K", [2, 3, 4, 5, 8, 9, 17])
@pytest.mark.parametrize("T", [100, 257, 1000, 4096])
def test_sequential_halving_rounds_are_the_papers(T, K):
    """Karnin et al. (2013), Alg. 1: ceil(log2 K) rounds, t_r = floor(T / (|S_r| ceil(log2 K))) pulls per survivor,
    |S_{r+1}| = ceil(|S_r| / 2); at most T pulls; the run's counts are those."""
    R = math.ceil(math.log2(K))
    rounds = halving_rounds(T, K)
    assert len(rounds) == R
    alive = K
    for survivors, pulls in rounds:
        assert survivors == alive and pulls == T // (alive * R)
        alive = math.ceil(alive / 2)
    assert alive == 1
    total = sum(s * t for s, t in rounds)
    assert total <= T
    if T >= K * R:
        env = KArmedBandit(np.linspace(1.0, 0.0, K), family=Gaussian())
        outcome = SequentialHalving().allocate(SequentialHalving().question(env), env, T, np.random.default_rng(0))
        assert outcome.samples == total
        # an arm dropped after round r has the pulls of rounds 0..r
        steps = np.cumsum([t for _, t in rounds])
        dropped = [s - math.ceil(s / 2) for s, _ in rounds]
        assert sorted(outcome.counts) == sorted([int(steps[r]) for r, n in enumerate(dropped) for _ in range(n)]
                                                + [int(steps[-1])])


# --- error rates that are known ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["round-robin", "top-two", "track-and-stop", "fws", "sr", "sh"])
def test_a_huge_gap_is_never_missed(name):
    """Two Gaussian arms 12 standard deviations apart: a wrong recommendation has probability below 1e-16."""
    env = parse_instance("gaussian:means=12/0")
    for seed in range(100):
        results = run_fixed_budget(rule(name), env, [4, 10, 30], seed=seed)
        assert all(r.correct and r.recommendation == 0 and r.simple_regret == 0 for r in results), seed


@pytest.mark.parametrize("name", ["sr", "sh"])
@pytest.mark.parametrize("instance", ["bounded:means=1/0/0,levels=3", "heteroscedastic:means=30/0/-1,sigmas=1/2/1"])
def test_the_elimination_rules_run_on_bounded_and_heteroscedastic_arms(name, instance):
    """Arms whose parameter holds more than the means (distributions on a grid; means and variances) are ranked by
    their means: the point mass at 1 against arms that never pay, or a gap of 15 standard deviations, is never
    missed; the simple regret is the gap of the recommendation."""
    env = parse_instance(instance)
    for seed in range(50):
        results = run_fixed_budget(rule(name), env, [12, 60], seed=seed)
        assert all(r.correct and r.recommendation == 0 and r.simple_regret == 0 for r in results), seed


def test_successive_rejects_on_bounded_arms_errs_less_with_more_budget():
    """Binomial arms on five levels with close means: P(error) falls with T (200 runs each, disjoint 95 % intervals
    between the smallest and the largest budget)."""
    env = parse_instance("bounded:means=0.6/0.5/0.45/0.3,levels=5")
    wrong = np.zeros(3, dtype=int)
    for seed in range(200):
        wrong += [not r.correct for r in run_fixed_budget(rule("sr"), env, [20, 200, 2000], seed=seed)]
    small, large = (binomtest(int(e), 200).proportion_ci(0.95, method="exact") for e in (wrong[0], wrong[2]))
    assert wrong[0] > wrong[1] > wrong[2] and large.high < small.low, wrong


@pytest.mark.parametrize("name", ["round-robin", "top-two", "sr", "sh"])
def test_identical_arms_are_recommended_uniformly(name):
    """Four Gaussian arms of (nearly) equal means: by symmetry each is recommended with probability 1/4, so the error
    rate is 3/4; 400 runs stay inside the 99.9 % Clopper-Pearson interval of the observed rate."""
    env = KArmedBandit(np.array([1e-12, 0.0, 0.0, 0.0]), family=Gaussian(), name="equal")
    wrong = np.zeros(2, dtype=int)
    for seed in range(400):
        wrong += [not r.correct for r in run_fixed_budget(rule(name), env, [40, 200], seed=seed)]
    for errors in wrong:
        interval = binomtest(int(errors), 400).proportion_ci(0.999, method="exact")
        assert interval.low <= 0.75 <= interval.high, errors


def test_successive_rejects_keeps_audibert_et_al_theorem_2():
    """P(error) <= K(K - 1)/2 exp(-(T - K) / (log-bar(K) H_2)), H_2 = max_i i / Delta_(i)^2 (gaps sorted increasing,
    the best arm's gap the smallest other one), on Bernoulli arms (0.9, 0.5, 0.3, 0.1): H_2 = 2 / 0.4^2 = 12.5, a bound
    of 0.35, 0.047 and 0.0038 at T = 60, 100, 150; the observed rate over 3,000 runs is below it at every budget, as
    is its 99 % lower confidence limit."""
    means = np.array([0.9, 0.5, 0.3, 0.1])
    env = KArmedBandit(means, family=Bernoulli(), name="b4")
    K, gaps = means.size, np.sort(means.max() - means)
    gaps[0] = gaps[1]
    H2 = max((i + 1) / gaps[i] ** 2 for i in range(K))
    assert H2 == pytest.approx(12.5)
    budgets = [60, 100, 150]
    wrong = np.zeros(len(budgets), dtype=int)
    runs = 3000
    for seed in range(runs):
        wrong += [not r.correct for r in run_fixed_budget(SuccessiveRejects(), env, budgets, seed=seed)]
    for T, errors in zip(budgets, wrong, strict=True):
        bound = K * (K - 1) / 2 * math.exp(-(T - K) / (float(log_bar(K)) * H2))
        low = binomtest(int(errors), runs).proportion_ci(0.98, method="exact").low
        assert errors / runs <= bound and low <= bound, (T, errors, bound)
    assert wrong[0] > wrong[-1]  # the error falls with the budget


def test_sequential_halving_keeps_karnin_et_al_theorem_4_1():
    """P(error) <= 3 log2 K exp(-T / (8 H_2 log2 K)) (Karnin et al., Thm 4.1) on Bernoulli arms (0.7, 0.4, 0.3, 0.2):
    H_2 = 2 / 0.3^2 = 22.2, a bound of 0.36 and 0.022 at T = 1000, 2000; 3,000 runs."""
    means = np.array([0.7, 0.4, 0.3, 0.2])
    env = KArmedBandit(means, family=Bernoulli(), name="b4")
    gaps = np.sort(means.max() - means)
    gaps[0] = gaps[1]
    H2 = max((i + 1) / gaps[i] ** 2 for i in range(means.size))
    budgets, runs = [1000, 2000], 3000
    wrong = np.zeros(2, dtype=int)
    for seed in range(runs):
        wrong += [not r.correct for r in run_fixed_budget(SequentialHalving(), env, budgets, seed=seed)]
    for T, errors in zip(budgets, wrong, strict=True):
        bound = 3 * math.log2(4) * math.exp(-T / (8 * H2 * math.log2(4)))
        assert bound < 0.4 and errors / runs <= bound, (T, errors, bound)


# --- one trajectory, many budgets --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NeverThreshold(Threshold):
    """beta = inf: the GLR stop never fires (a fixed-confidence run cut at max_samples is then a fixed-budget run)."""

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        return math.inf


GAUSSIAN = KArmedBandit(np.array([1.0, 0.8, 0.7, 0.4]), family=Gaussian(0.9), name="g4")
BERNOULLI = KArmedBandit(np.array([0.5, 0.45, 0.3]), family=Bernoulli(), name="b3")
BUDGETS = [8, 37, 150, 400]


#: compiled for Bernoulli arms too, but their kl differs from the reference's in the last bits, which FWS's game and
#: Lazy TaS's Frank-Wolfe vertices can amplify (as in fixed confidence: tests/test_compiled_runs.py)
LAST_BITS = ("fws", "lazy-tas")


@pytest.mark.parametrize("text", ["round-robin", "top-two", "top-two:leader=ts,selection=sampling",
                                  "track-and-stop", "fws", "lazy-tas", "lingame"])
@pytest.mark.parametrize("env", [GAUSSIAN, BERNOULLI], ids=["gaussian", "bernoulli"])
def test_the_trajectory_read_at_T_is_the_run_stopped_at_T(text, env, seeds):
    """An anytime run read at every budget recommends at T what a fixed-budget run to T alone does (on the compiled
    loop and on the reference path), and on the reference path what the fixed-confidence runner, never stopping and cut
    at max_samples = T, recommends on the same seed; the compiled loop reads the reference's answers."""
    algo = anytime(text)
    never = replace(algo, stop=GLRStop(NeverThreshold()))
    for seed in seeds(4):
        paths = {}
        for compiled in (True, False):
            paths[compiled] = [r.recommendation for r in run_fixed_budget(algo, env, BUDGETS, seed=seed,
                                                                          compiled=compiled)]
            alone = [run_fixed_budget(algo, env, [T], seed=seed, compiled=compiled)[0].recommendation for T in BUDGETS]
            assert paths[compiled] == alone, (seed, compiled)
        for T, got in zip(BUDGETS, paths[False], strict=True):
            cut = run(never, env, 0.1, seed=seed, max_samples=T, compiled=False)
            assert cut.stopped_by == "budget" and cut.samples == T and cut.recommendation == got, (seed, T)
        if not (env is BERNOULLI and text in LAST_BITS):
            assert paths[True] == paths[False], seed


@pytest.mark.parametrize("text", ["round-robin", "top-two", "track-and-stop", "fws", "lazy-tas"])
def test_the_compiled_epsilon_good_trajectory_is_the_reference_one(text, seeds):
    """EB-TC-epsilon and the other rules compiled on the additive epsilon-good question of Gaussian arms: the same
    answers at every budget on both paths, and 0.25-good answers (arms 0 and 1) scored correct."""
    from bandits.pure_exploration.compiled import compiled_budget_run_of

    algo = anytime(f"{text}:problem=epsilon-good:epsilon=0.25")
    assert compiled_budget_run_of(algo, GAUSSIAN, algo.question(GAUSSIAN), np.array(BUDGETS)) is not None
    for seed in seeds(4):
        paths = [run_fixed_budget(algo, GAUSSIAN, BUDGETS, seed=seed, compiled=c) for c in (True, False)]
        assert [(r.recommendation, r.correct) for r in paths[0]] == [(r.recommendation, r.correct) for r in paths[1]]
        assert all(r.correct == (r.recommendation in (0, 1)) for r in paths[0])


def test_with_batches_the_budgets_end_batches():
    """growth > 0: the batches follow the policy's grid cut at the budgets, so the trajectory to T is that of a run
    with the same budgets up to T (what comes after T changes nothing before it)."""
    algo = anytime("top-two", growth=0.2)
    for seed in range(5):
        whole = run_fixed_budget(algo, GAUSSIAN, BUDGETS, seed=seed, compiled=False)
        for i in range(1, len(BUDGETS)):
            head = run_fixed_budget(algo, GAUSSIAN, BUDGETS[: i + 1], seed=seed, compiled=False)
            assert [r.recommendation for r in head] == [r.recommendation for r in whole[: i + 1]]
        compiled = run_fixed_budget(algo, GAUSSIAN, BUDGETS, seed=seed)
        assert [r.recommendation for r in compiled] == [r.recommendation for r in whole]


def test_a_budget_rule_runs_each_budget_on_the_runs_own_noise():
    """Successive Rejects at T is the same run whether T comes alone or in a grid, for an int seed and a SeedSequence
    (spawning does not advance the sequence given)."""
    seq = np.random.SeedSequence(7, spawn_key=(3, 1))
    grid = run_fixed_budget(SuccessiveRejects(), BERNOULLI, [20, 60, 200], seed=seq)
    for r in grid:
        same = np.random.SeedSequence(7, spawn_key=(3, 1))
        alone = run_fixed_budget(SuccessiveRejects(), BERNOULLI, [r.T], seed=same)
        assert (alone[0].recommendation, alone[0].samples) == (r.recommendation, r.samples)
    assert grid[0].seed is None and run_fixed_budget(SuccessiveRejects(), BERNOULLI, [20], seed=5)[0].seed == 5


# --- the question owns the answer --------------------------------------------------------------------------------


def test_simple_regret_is_the_gap_of_the_recommendation():
    env = KArmedBandit(np.array([0.5, 0.45, 0.3]), family=Bernoulli(), name="b3")
    for seed in range(60):
        for r in run_fixed_budget(anytime("round-robin"), env, [3, 12], seed=seed):
            assert r.simple_regret == pytest.approx(0.5 - env.means[r.recommendation])
            assert r.correct == (r.recommendation == 0)


@pytest.mark.parametrize(("text", "problem"), [
    ("round-robin", "top-m:m=2"), ("fws", "top-m:m=2"), ("track-and-stop", "threshold:level=0.5"),
    ("round-robin", "threshold:level=0.5"), ("fws", "epsilon-good:epsilon=0.3"),
    ("round-robin", "epsilon-good:epsilon=0.3"),
])
def test_questions_beyond_the_best_arm_are_scored_by_their_own_correct(text, problem):
    """Anytime rules on top-m, thresholding and epsilon-good questions of a well-separated instance: the answer at the
    estimate is the question's correct answer once every arm is known (sets of arms have no simple regret)."""
    env = parse_instance("gaussian:means=3/2/-2/-3,sigma=0.1")
    results = run_fixed_budget(anytime(f"{text}:problem={problem}"), env, [20, 80], seed=1)
    assert all(r.correct for r in results)
    assert all((r.simple_regret is None) == (not problem.startswith("epsilon")) for r in results)


def test_epsilon_good_accepts_every_arm_within_epsilon():
    """Two Gaussian arms 0.1 apart and a budget far too small to tell them: as best-arm identification half the
    answers are wrong, as 0.2-good identification none is."""
    env = parse_instance("gaussian:means=0.1/0")
    plain = [r.correct for s in range(200) for r in run_fixed_budget(SuccessiveRejects(), env, [4], seed=s)]
    good = [r.correct for s in range(200)
            for r in run_fixed_budget(SuccessiveRejects(problem="epsilon-good:epsilon=0.2"), env, [4], seed=s)]
    assert 40 < plain.count(False) < 160 and all(good)


# --- the run-time rule -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("compiled", "T"), [(True, 10**16), (False, 10**12)])
def test_a_budget_an_anytime_run_cannot_reach_in_a_year_is_refused_once_measured(compiled, T):
    """Top-Two re-planning after every pull (about a million pulls a second compiled, thousands on the reference path)
    would take centuries to reach these budgets: the run is refused after the rule's RATE_SECONDS of pulls, naming the
    rate and the largest budget a year holds."""
    with pytest.raises(InvalidInputError, match=r"pulls per second top-two makes here, more than the 365 days a run "
                                                r"may take; choose T <= [\d,]+$"):
        run_fixed_budget(anytime("top-two"), parse_instance("gaussian:means=1/0.5/0"), [100, T], seed=0,
                         compiled=compiled)

