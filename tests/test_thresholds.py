"""The one threshold table (bandits.core.thresholds), the one growth check and the one spanning-subset function."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.bilinear import BILINEAR_THRESHOLDS, RandomizedGAllocation, gbb
from bandits.core import stopping as st
from bandits.core.statistics import spanning_subset
from bandits.core.thresholds import (
    FAMILY_THRESHOLDS,
    THRESHOLD_TABLE,
    ThresholdContext,
    check_threshold_option,
    make_threshold,
)
from bandits.core.validation import check_growth
from bandits.instances import soare
from bandits.linear import FullyAdaptiveXY, LinearTrackAndStop, LinGapE, StaticAllocation
from bandits.multiagent.thresholds import FactoredTheoryThreshold
from bandits.pure_exploration import GLRStop, KArmedProblem, LinearProblem
from bandits.pure_exploration.betting_bounds import BettingThreshold
from bandits.pure_exploration.families import Bernoulli, Gaussian
from bandits.pure_exploration.stop import STOP_THRESHOLDS
from bandits.pure_exploration.with_stop import WithStopPolicy
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
STRUCTURE = FactorGraph.line(3, 2, seed=0)


def _contexts() -> dict[str, ThresholdContext]:
    """What a problem of every kind offers the factories, as the code that resolves names builds it."""
    ones = np.ones(3, dtype=np.int64)
    factored = ThresholdContext(theory=lambda: FactoredTheoryThreshold.for_structure(STRUCTURE))
    return {"karmed": KArmedProblem(3, Gaussian()).threshold_context(ones),
            "karmed-bernoulli": KArmedProblem(3, Bernoulli()).threshold_context(ones),
            "linear": LinearProblem(X).threshold_context(ones),
            "factored": factored,
            "bilinear": ThresholdContext(graph=(6, 2), information=X.T @ X)}


#: the kind of each context, and the families (algorithms) that run on it
KIND = {"karmed": "karmed", "karmed-bernoulli": "karmed", "linear": "linear", "factored": "factored",
        "bilinear": "bilinear"}
FAMILIES_OF = {"karmed": ("glr",), "linear": ("glr", "linear"), "factored": ("factored",), "bilinear": ("bilinear",)}
EXPECTED = {("karmed", "kk21"): st.Kk21Threshold, ("karmed-bernoulli", "kk21"): st.Kk21ExpFamilyThreshold,
            ("linear", "theory"): st.LinearTheoryThreshold, ("bilinear", "theory"): st.LinearTheoryThreshold,
            ("factored", "theory"): FactoredTheoryThreshold, ("linear", "soare"): st.SoareThreshold,
            ("bilinear", "s1"): st.BilinearThreshold}


def test_the_names_users_write_are_unchanged():
    assert STOP_THRESHOLDS == ("practical", "theory", "kk21", "soare")
    assert BILINEAR_THRESHOLDS == ("s1", "practical", "theory")
    assert FAMILY_THRESHOLDS["factored"] == ("practical", "theory")
    assert FAMILY_THRESHOLDS["linear"] == ("practical", "soare", "theory")
    assert set(THRESHOLD_TABLE) == {name for names in FAMILY_THRESHOLDS.values() for name in names}
    assert StaticAllocation().threshold == "soare" and LinearTrackAndStop().threshold == "practical"
    assert RandomizedGAllocation().threshold == "s1" and GLRStop().threshold == "practical"


@pytest.mark.parametrize("context_name", sorted(KIND))
def test_every_name_resolves_on_every_kind_that_supports_it(context_name):
    context, kind = _contexts()[context_name], KIND[context_name]
    resolved = 0
    for family in FAMILIES_OF[kind]:
        for name in FAMILY_THRESHOLDS[family]:
            row = THRESHOLD_TABLE[name]
            if row.kinds and kind not in row.kinds:
                with pytest.raises(InvalidInputError, match=f"is for {row.meant_for}"):
                    make_threshold(name, context, family)
                continue
            beta = make_threshold(name, context, family)
            assert isinstance(beta, EXPECTED.get((context_name, name), st.PracticalThreshold))
            A = np.ones(STRUCTURE.abar) if kind == "factored" else 2 * X.T @ X
            assert np.isfinite(beta(100, 0.1, A)) and beta(100, 0.01, A) > beta(100, 0.1, A)
            resolved += 1
    assert resolved >= 2


def test_the_glr_stop_and_the_algorithms_resolve_through_the_table():
    ones = np.ones(3, dtype=np.int64)
    four = np.ones(4, dtype=np.int64)
    assert GLRStop("kk21").make(KArmedProblem(4, Bernoulli()), four) == st.Kk21ExpFamilyThreshold(4)
    assert GLRStop("kk21").make(KArmedProblem(4), four) == st.Kk21Threshold(4)
    theory = GLRStop("theory").make(LinearProblem(X), ones)
    assert theory == st.LinearTheoryThreshold.from_matrix(X.T @ X)
    assert isinstance(make_threshold("theory", _contexts()["factored"], "factored"), FactoredTheoryThreshold)
    for name in ("s1", "practical", "theory"):  # the bilinear algorithm's names, one short run each
        result = run(RandomizedGAllocation(threshold=name), gbb(d=2, omega=0.5, graph="star", m=4), 0.1, seed=0,
                     max_samples=3_000)
        assert result.samples > 0


@pytest.mark.parametrize("family", sorted(FAMILY_THRESHOLDS))
def test_an_unknown_name_is_one_error_listing_the_valid_names(family):
    with pytest.raises(InvalidInputError) as error:
        check_threshold_option("nope", family)
    message = str(error.value)
    assert "'nope'" in message and "threshold must be one of " + ", ".join(FAMILY_THRESHOLDS[family]) in message
    with pytest.raises(InvalidInputError, match="threshold must be one of"):
        make_threshold("nope", ThresholdContext(), family)
    assert check_threshold_option(st.PracticalThreshold(), family) == st.PracticalThreshold()


def test_an_unknown_family_is_refused_in_one_line():
    with pytest.raises(InvalidInputError, match="unknown algorithm family 'nope'"):
        check_threshold_option("practical", "nope")
    with pytest.raises(InvalidInputError, match="unknown algorithm family 'nope'"):
        make_threshold("practical", ThresholdContext(), "nope")


def test_unknown_names_in_every_place_that_takes_one():
    for make in (lambda: GLRStop("nope"), lambda: StaticAllocation(threshold="nope"),
                 lambda: LinearTrackAndStop(threshold="kk21"), lambda: RandomizedGAllocation(threshold="soare"),
                 lambda: make_threshold("soare", _contexts()["factored"], "factored")):
        with pytest.raises(InvalidInputError, match="threshold must be one of"):
            make()
    assert isinstance(make_threshold(st.Kk21Threshold(3), ThresholdContext()), st.Threshold)


def test_growth_means_one_thing():
    assert check_growth(0) == 0.0 and check_growth(1) == 1.0 and check_growth(0.01) == 0.01
    for bad in (-0.1, 1.5, float("nan"), True, "0.1"):
        with pytest.raises(InvalidInputError, match="growth"):
            check_growth(bad)
    with pytest.raises(InvalidInputError, match="after every pull"):
        check_growth(0, refuse_zero="a reason")


def test_growth_zero_is_honoured_by_lingape_and_the_glr_stop_and_refused_by_the_grid_algorithms():
    env = soare(2, omega=0.5)
    exact = run(LinGapE(growth=0.0), env, 0.1, seed=0)
    assert exact.correct and exact.stopped_by == "stopping_rule"
    policy = make_algorithm("lin-tas", stop="glr:growth=0").start(env, 0.1, np.random.default_rng(0))
    assert isinstance(policy, WithStopPolicy)
    for _ in range(30):  # after the first batch every batch is one pull: the GLR is checked after each
        counts = policy.next_batch(10**6)
        assert policy.counts.sum() == 0 or counts.sum() == 1
        policy.observe(counts, counts * 0.5)
        policy.stopped(0.1)
    for make in (lambda: LinearTrackAndStop(growth=0.0), lambda: FullyAdaptiveXY(growth=0.0),
                 lambda: StaticAllocation(growth=0.0), lambda: RandomizedGAllocation(growth=0.0),
                 lambda: LinearTrackAndStop(replan_growth=0.0)):
        with pytest.raises(InvalidInputError, match=r"growth = 0 \(a check after every pull\) is not offered here"):
            make()


def test_spanning_subset_spans():
    arms = spanning_subset(np.vstack([X, X]))
    assert arms.shape == (2,) and np.linalg.matrix_rank(np.vstack([X, X])[arms]) == 2
    assert list(spanning_subset(np.eye(3))) == [0, 1, 2]


@pytest.mark.parametrize("arms, match", [
    (np.array([[1.0, 0.0], [2.0, 0.0]]), "span"),
    (np.array([[np.nan, 1.0], [0.0, 1.0]]), "NaN|finite"),
    (np.ones(3), "2-D|shape|rows"),
])
def test_spanning_subset_refuses_what_cannot_be_spanned(arms, match):
    with pytest.raises(InvalidInputError, match=match):
        spanning_subset(arms)


@pytest.mark.parametrize("make", [lambda: st.Kk21Threshold(1), lambda: st.Kk21Threshold(4, 0),
                                  lambda: st.Kk21ExpFamilyThreshold(4, 2.5), lambda: st.Kk21Threshold(True),
                                  lambda: BettingThreshold(1), lambda: BettingThreshold(4, pairs=-3)])
def test_the_unions_refuse_a_count_that_is_not_one(make):
    """The arms and the pairs a union runs over are counts (K >= 2, pairs >= 1): one clear error each."""
    with pytest.raises(InvalidInputError, match=r"n_arms|pairs"):
        make()
