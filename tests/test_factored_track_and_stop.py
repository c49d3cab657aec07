"""Track-and-Stop on the factored problem: the core rule (``track-and-stop:tracking=C``) follows the exact T*
allocation, or the mean-field one (``allocation=mean-field``), through the problem's ``allocation_tracker``
capability; ``tas`` and ``mf-tas`` are that rule inside the factored batches."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from bandits.core.tracking import project_floor, track
from bandits.instances import parse_instance
from bandits.multiagent import instances as inst
from bandits.multiagent.batches import RuleState
from bandits.multiagent.problem import FactoredProblem
from bandits.multiagent.tracking import JointTracker, MeanFieldTracker
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.allocation_tracker import ArmTracker
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.families import Gaussian
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.pure_exploration.sampler import Observations
from bandits.pure_exploration.samplers.track_and_stop import TrackAndStop
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

MEAN_FIELD = "track-and-stop:tracking=C,allocation=mean-field,resolve_growth=0"


@pytest.mark.parametrize("instance", ["line:N=4,K=3", "ring:N=4,K=3", "line:N=15,K=2,means=planted,gap=0.5"])
@pytest.mark.parametrize(("rule", "core"), [("tas", "track-and-stop:tracking=C"), ("mf-tas", MEAN_FIELD)])
@pytest.mark.parametrize("seed", range(2))
def test_the_factored_rules_are_the_core_rule_run_for_run(instance, rule, core, seed):
    """The core rule runs in the factored problem's batches (the greedy cover, the paper's forced exploration), which
    are the factored rules' defaults, around the same tracker: the same draws give the same run (on the last instance,
    2^15 joint actions, exact TaS draws them down the clique tree)."""
    env = parse_instance(instance)
    factored = run(make_algorithm(rule), env, 0.05, seed=seed, trace=True)
    generic = run(make_algorithm(core), env, 0.05, seed=seed, trace=True)
    assert factored.correct and factored.stopped_by == "stopping_rule"
    assert (factored.samples, factored.rounds, factored.recommendation) == (
        generic.samples, generic.rounds, generic.recommendation)
    assert factored.trace[-1]["forced_rounds"] == generic.trace[-1]["forced_rounds"]


def test_the_core_rule_explores_the_group_actions_its_target_leaves_out():
    """A law over joint actions has no C-tracking floor: given a target on the best joint action alone, the tracker
    leaves every other group action at its count after the first pass, while the core rule's batches lift every group
    action to the paper's level sqrt(t / abs(A0)) at the batch's end."""
    env = parse_instance("ring:N=4,K=3")
    problem = FactoredProblem.of_environment(env)
    mu = problem.true_parameter(env)
    state = TrackAndStop(tracking="C").start(problem, env, np.random.default_rng(0))
    assert isinstance(state, RuleState) and state.exploration == "paper"
    alone = problem.allocation_tracker(tracking="C", tol=None, rng=np.random.default_rng(1))
    for tracker in (state.rule.tracker, alone):
        assert isinstance(tracker, JointTracker)
        tracker.resolve(mu)
        tracker.law = np.zeros_like(tracker.law)
        tracker.law[np.ravel_multi_index(env.best_action, env.fg.n_actions)] = 1.0
    state.rule.next_solve = np.inf  # keep that target
    first = state.initial(problem, 10**9)
    left_out = np.ones(problem.n_arms, dtype=bool)
    left_out[problem.indexer.flat(env.best_action[None, :])[0]] = False
    tracked, counts = first.copy(), first.copy()
    for _ in range(150):
        n = max(1, problem.rounds(counts) // 10)
        counts += state.batch(Observations(problem, counts, np.zeros(problem.n_arms), mu), n)
        tracked += alone.plan(tracked, n)
    assert problem.rounds(tracked) > 10**5 and np.array_equal(tracked[left_out], first[left_out])
    level = np.sqrt(problem.rounds(counts) / state.cover.size)
    assert counts.min() >= 0.9 * level and state.describe(None)["forced_rounds"] > 0


def test_the_joint_tracker_follows_the_exact_allocation():
    """Fed the true means once, the tracked rounds' group frequencies reach the optimal marginals of T* (within the
    rounding of C-tracking over the joint actions), and the played proportions attain T* to that accuracy."""
    env = inst.ring(4, 3, seed=0)
    problem = FactoredProblem.of_environment(env)
    tracker = problem.allocation_tracker(tracking="C", tol=1e-6, rng=np.random.default_rng(0))
    mu = problem.true_parameter(env)
    tracker.resolve(mu)
    counts = np.zeros(problem.n_arms, dtype=np.int64)
    for batch in (1, 5, 50, 500, 5_000, 50_000):
        counts += tracker.plan(counts, batch)
    rounds = problem.rounds(counts)
    assert rounds == 55_556 and tracker.solves == 1 and tracker.failures == 0
    exact = od.characteristic_time(env.fg, solver="CLARABEL", tol=1e-6)
    marginals = np.concatenate([np.ravel(m) for m in exact.marginals])
    joint_actions = 3**4
    assert np.abs(counts / rounds - marginals).max() <= joint_actions / rounds
    glr = problem.best_response(mu, counts / rounds).value  # 1 / T(w) in the MF-TaS convention, times 1/(2 sigma^2)
    assert 1.0 / (2 * glr) == pytest.approx(exact.value, rel=1e-2)


def test_the_mean_field_tracker_relabels_to_the_estimates_best_joint_action():
    """T^MF depends on theta only through a* and Delta_min: the tracked per-agent allocations are the MF program's at
    the estimate, relabelled only when a_hat changes, and t_mf_hat = T^MF(theta_hat)."""
    env = inst.ring(4, 3, seed=1)
    problem = FactoredProblem.of_environment(env)
    tracker = problem.allocation_tracker(tracking="C", tol=None, rng=np.random.default_rng(0), allocation="mean-field")
    assert isinstance(tracker, MeanFieldTracker)
    mu = problem.true_parameter(env)
    for _ in range(3):
        tracker.resolve(mu)
    assert tracker.solves == 1 and np.array_equal(tracker.local_for, env.best_action)
    exact = od.mf_characteristic_time(env.fg, solver="CLARABEL")
    for mine, theirs in zip(tracker.local, exact.local_allocations, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-5)
    statistic = problem.glr(mu, np.full(problem.n_arms, 100))
    assert tracker.describe(statistic)["t_mf_hat"] == pytest.approx(exact.value, rel=1e-5)
    other = mu.copy()
    other[problem.indexer.flat(env.best_action[None, :])[0]] -= 10.0  # a* is no longer the best
    tracker.resolve(other)
    assert tracker.solves == 2 and not np.array_equal(tracker.local_for, env.best_action)


def test_the_tracker_and_its_tolerance_are_the_problems():
    env = parse_instance("ring:N=4,K=3")
    state = PureExploration(TrackAndStop(tracking="C", tol=0.05)).start(env, 0.05, np.random.default_rng(0)).state
    assert isinstance(state, RuleState) and isinstance(state.rule.tracker, JointTracker)
    assert state.rule.tracker.tol == 0.05
    tas = PureExploration(make_algorithm("tas").sampler).start(env, 0.05, np.random.default_rng(0)).state
    assert isinstance(tas, RuleState) and tas.rule.tracker.tol == 1e-2
    assert isinstance(KArmedProblem(3).allocation_tracker(tracking="D", tol=None, rng=np.random.default_rng(0)),
                      ArmTracker)


def test_d_tracking_and_a_needless_tolerance_are_refused():
    ring = parse_instance("ring:N=4,K=3")
    with pytest.raises(MissingCapability, match=r"track-and-stop needs arm_pull .* which FactoredProblem does not"):
        run(make_algorithm("track-and-stop"), ring, 0.05, seed=0)
    with pytest.raises(InvalidInputError, match="tracking=C"):
        FactoredProblem.of_environment(ring).allocation_tracker(tracking="D", tol=None, rng=np.random.default_rng(0))
    gaussian = parse_instance("gaussian:means=1/0.5/0.2")
    for compiled in (True, False):  # the compiled loop does not ignore it either
        with pytest.raises(InvalidInputError, match=r"tol=0\.1: this problem's oracle"):
            run(make_algorithm("track-and-stop:tol=0.1"), gaussian, 0.05, seed=0, compiled=compiled)
    for text in ("track-and-stop:tol=0", "track-and-stop:tol=1.5", "tas:tol=0", "tas:tol=nan"):
        with pytest.raises(InvalidInputError, match="tol"):
            make_algorithm(text)
    with pytest.raises(InvalidInputError, match="allocation"):
        make_algorithm("track-and-stop:allocation=mf")
    with pytest.raises(MissingCapability, match="track-and-stop needs factor_graph"):
        run(make_algorithm("track-and-stop:tracking=C,allocation=mean-field"), gaussian, 0.05, seed=0)
    with pytest.raises(InvalidInputError, match="mean-field allocation is a factored problem's"):
        KArmedProblem(3).allocation_tracker(tracking="C", tol=None, rng=np.random.default_rng(0),
                                            allocation="mean-field")
    with pytest.raises(InvalidInputError, match="takes no tolerance"):
        run(make_algorithm("track-and-stop:tracking=C,allocation=mean-field,tol=0.1"), ring, 0.05, seed=0)
    assert make_algorithm("track-and-stop:tracking=C,allocation=mean-field").sampler.requires() == (
        "allocation_tracker", "factor_graph")


def test_the_factored_trackers_refuse_bad_input():
    problem = FactoredProblem.of_environment(parse_instance("ring:N=4,K=3"))
    rng = np.random.default_rng(0)
    for options, match in ((dict(tracking="E"), "tracking"), (dict(tracking="C", tol=5.0), "tol"),
                           (dict(tracking="C", tol=float("nan")), "tol"), (dict(tracking="C", allocation="mf"),
                                                                           "allocation")):
        with pytest.raises(InvalidInputError, match=match):
            problem.allocation_tracker(rng=rng, **{"tol": None, **options})
    tracker = problem.allocation_tracker(tracking="C", tol=None, rng=rng, allocation="mean-field")
    for best, match in ((np.array([0]), "shape"), (np.array([0, 0, 0, 9]), "range"), (np.array([0.5, 0, 0, 0]),
                        "integers"), (np.zeros((2, 4), dtype=int), "one joint action")):
        with pytest.raises(InvalidInputError, match=match):
            tracker.relabel(best)
    with pytest.raises(InvalidInputError, match="length"):
        tracker.resolve(np.zeros(3))
    with pytest.raises(InvalidInputError, match="run a sampler state"):
        problem.tracking_batches(None)
    state = TrackAndStop(tracking="C").tracked(problem, rng)
    for options, match in ((dict(exploration="always"), "exploration"), (dict(cover="random"), "cover")):
        with pytest.raises(InvalidInputError, match=match):
            RuleState(problem, state, **options)


@pytest.mark.parametrize("tracking", ["D", "C"])
def test_gk_tas_is_the_core_rule_on_one_agent_and_its_proportions_reach_gk16_weights(tracking):
    """On one agent the joint actions are the arms: ``gk-tas`` is the core Track-and-Stop's schedule on the K-armed
    Gaussian problem's tracker in GK16's batch form (:class:`ArmTracker`, ``steps="batch"``) inside the factored
    batches, so N / t approaches w*(mu) of GK16's Theorem 5 (20,000 rounds, no stop; well-separated means, so that
    w*(mu_hat) is close to w*(mu))."""
    env = inst.mab("1.0/0.5/0.2/0")
    policy = make_algorithm(f"gk-tas:tracking={tracking}").start(env, 0.1, np.random.default_rng(0))
    assert isinstance(policy.state, RuleState) and isinstance(policy.state.rule.tracker, ArmTracker)
    env_rng = np.random.default_rng(1)
    while policy.counts.sum() < 20_000:
        batch = policy.next_batch(20_000 - int(policy.counts.sum()))
        policy.observe(batch, env.pull(batch, env_rng))
    weights = KArmedProblem(4, Gaussian(1.0)).oracle(np.array([1.0, 0.5, 0.2, 0.0])).weights
    assert np.abs(policy.counts / policy.counts.sum() - weights).max() < 0.03


def test_the_arm_tracker_in_batch_form():
    """``steps="batch"``: a batch of n pulls is one step. D lifts every arm below sqrt(t + n) - K/2 to that level
    first (within the batch) and tracks (t + n) w with the rest; C's cumulative target grows by n projections at the
    batch's middle; an unknown steps is refused, and so is following anything but a tracker."""
    problem = KArmedProblem(4, Gaussian(1.0))
    mu = np.array([1.0, 0.5, 0.2, 0.0])
    weights = problem.oracle(mu).weights
    d_tracker = ArmTracker(problem, "D", steps="batch")
    d_tracker.resolve(mu)
    counts = np.array([90, 60, 30, 1])  # sqrt(181 + 19) - 2 = 12.1: arm 3 owes 12 pulls
    batch = d_tracker.plan(counts, 19)
    assert batch.sum() == 19 and batch[3] >= 12
    np.testing.assert_array_equal(d_tracker.plan(counts, 5), [0, 0, 0, 5])  # the deficit exceeds the batch
    even = np.array([400, 400, 100, 100])
    np.testing.assert_array_equal(d_tracker.plan(even, 1000), track(even, weights, 1000))
    c_tracker = ArmTracker(problem, "C", steps="batch")
    c_tracker.resolve(mu)
    start = np.ones(4, dtype=np.int64)
    first = c_tracker.plan(start, 40)
    eps = 0.5 / np.sqrt(16 + 4 + 20)
    np.testing.assert_allclose(c_tracker.cumulative, start + 40 * project_floor(weights, eps), rtol=1e-15)
    np.testing.assert_array_equal(first, track(start, c_tracker.cumulative, 40))
    with pytest.raises(InvalidInputError, match="steps"):
        ArmTracker(problem, "C", steps="round")
    with pytest.raises(InvalidInputError, match="follows a Tracker"):
        TrackAndStop().follow(weights)
