"""The compiled path of linear runs against the reference: round robin, Track-and-Stop and FWS on Soare et al.'s
instances, seed by seed (the matrix products may sum in another order than the reference's BLAS, so FWS is held to
most seeds and, slow-marked, to the same distribution), and the runs it does not take."""

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
def test_round_robin_runs_are_the_reference_runs(algorithm):
    assert all(a == b for a, b in pairs(algorithm, range(8)))


@pytest.mark.parametrize("algorithm", ["fws", "fws:growth=0,refresh=7", "fws:inverse_update=as-published",
                                       "lazy-tas", "lazy-tas:growth=0,fw_steps=30"])
def test_fws_and_lazy_runs_are_the_reference_runs_on_most_seeds(algorithm):
    same = [a == b for a, b in pairs(algorithm, range(10))]
    assert sum(same) >= 8, same


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
    for name in ("fws:game=highs", "lingame", "lingame-c", "fws:threshold=theory",
                 "fws:problem=top-m:m=2"):
        assert compiled_run_of(make_algorithm(name), SOARE, problem, [0.1], 10**9) is None, name


@pytest.mark.slow
def test_fws_linear_runs_agree_with_the_reference_in_distribution():
    """200 seeds per path on Soare et al.'s d = 2, omega = 0.1 at delta = 0.1: Welch's t and the two-sample
    Kolmogorov-Smirnov test at level 0.001."""
    from scipy import stats

    env = parse_instance("soare:d=2,omega=0.1")
    algo = make_algorithm("fws:growth=0")
    a = np.array([run(algo, env, 0.1, seed=s).samples for s in range(200)])
    b = np.array([run(algo, env, 0.1, seed=s, compiled=False).samples for s in range(200)])
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3
    assert stats.ks_2samp(a, b).pvalue > 1e-3
