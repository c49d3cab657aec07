"""One vocabulary: the option Literals and their run-time checks agree, one count validator, one kl helper, and
the mean-field solve as a dataclass."""

from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np
import pytest

import optdesign as od
from optdesign import vocabulary
from optdesign.errors import InvalidInputError
from optdesign.factored import FactorGraph, MeanFieldModel
from optdesign.information import bernoulli_kl, kl_delta
from optdesign.linear import dispatch
from optdesign.result import MeanFieldSolution
from optdesign.validation import as_count, as_nonnegative


@pytest.mark.parametrize("value", [True, False, 2.5, "3", None, np.nan, np.inf, 2**63])
def test_as_count_refuses_bools_non_integers_and_huge_values(value):
    with pytest.raises(InvalidInputError, match="arms must be"):
        as_count(value, "arms", floats=True)


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3), np.int32(3)])
def test_as_count_accepts_python_and_numpy_integers(value):
    out = as_count(value, "arms")
    assert out == 3 and type(out) is int


@pytest.mark.parametrize("value", [True, -0.1, "0.1", None, np.nan, np.inf, -np.inf])
def test_as_nonnegative_refuses_bools_strings_negatives_and_non_finite_values(value):
    with pytest.raises(InvalidInputError, match="epsilon must be a finite number >= 0"):
        as_nonnegative(value, "epsilon")


@pytest.mark.parametrize("value", [0, 0.25, np.float32(0.5), np.int64(2)])
def test_as_nonnegative_accepts_python_and_numpy_numbers(value):
    out = as_nonnegative(value, "epsilon")
    assert type(out) is float and out == float(value)


def test_as_count_takes_integral_floats_only_when_asked():
    with pytest.raises(InvalidInputError, match=r"k must be a positive integer, got 2\.0"):
        as_count(2.0, "k")
    assert as_count(2.0, "k", floats=True) == 2 and as_count(1e9, "k", floats=True) == 10**9
    assert type(as_count(np.float64(4.0), "k", floats=True)) is int


def test_as_count_minimum_and_message():
    assert as_count(0, "n", minimum=0) == 0
    with pytest.raises(InvalidInputError, match="n must be an integer >= 2, got 1"):
        as_count(1, "n", minimum=2)
    with pytest.raises(InvalidInputError, match="n must be a positive integer, got 0"):
        as_count(0, "n")


def test_bandit_options_follow_the_same_rule():
    from bandits.instances import soare

    assert soare(d=3.0).X.shape == soare(d=3).X.shape  # an option read from text: 3.0 is the count 3
    for bad in (True, 2.5):
        with pytest.raises(InvalidInputError, match="d must be an integer >= 2"):
            soare(d=bad)


@pytest.mark.parametrize("alias, allowed", [
    (vocabulary.DesignMethod, vocabulary.DESIGN_METHODS), (vocabulary.MinMaxMethod, vocabulary.MINMAX_METHODS),
    (vocabulary.ExactMethod, vocabulary.EXACT_METHODS), (vocabulary.ExactFormulation, vocabulary.EXACT_FORMULATIONS),
    (vocabulary.RegretMethod, vocabulary.REGRET_METHODS), (vocabulary.RegretStrategy, vocabulary.REGRET_STRATEGIES),
    (vocabulary.Restriction, vocabulary.RESTRICTIONS), (vocabulary.Status, vocabulary.STATUSES),
])
def test_tuples_are_the_literals(alias, allowed):
    assert allowed == typing.get_args(alias) and len(set(allowed)) == len(allowed)


def test_public_tuples_come_from_the_vocabulary():
    from optdesign.factored.regret import lower_bound

    assert dispatch.METHODS == vocabulary.DESIGN_METHODS == od.linear.METHODS
    assert lower_bound.METHODS == vocabulary.REGRET_METHODS and lower_bound.STRATEGIES == vocabulary.REGRET_STRATEGIES
    assert set(vocabulary.MINMAX_METHODS) <= set(vocabulary.DESIGN_METHODS)


def _allowed_in(message: str, allowed: tuple[str, ...]) -> bool:
    return all(option in message for option in allowed)


def test_unknown_options_name_the_allowed_values():
    X = np.eye(3)
    fg = FactorGraph.line(3, 2, seed=0)
    cases = [
        (lambda: od.g_optimal(X, method="magic"), "method", vocabulary.DESIGN_METHODS),
        (lambda: od.characteristic_time(fg, method="magic"), "method", vocabulary.EXACT_METHODS),
        (lambda: od.characteristic_time(fg, formulation="sdp"), "formulation", vocabulary.EXACT_FORMULATIONS),
        (lambda: od.regret_lower_bound(fg, "magic"), "method", vocabulary.REGRET_METHODS),
        (lambda: od.regret_lower_bound(fg, restriction="magic"), "restriction", vocabulary.RESTRICTIONS),
        (lambda: od.regret_lower_bound(fg, strategy="magic"), "strategy", vocabulary.REGRET_STRATEGIES),
    ]
    for call, name, allowed in cases:
        with pytest.raises(InvalidInputError, match=f"{name} must be one of") as info:
            call()
        assert _allowed_in(str(info.value), allowed), str(info.value)
    with pytest.raises(InvalidInputError, match="method must be one of"):
        vocabulary.check_option(3, "method", vocabulary.DESIGN_METHODS)  # not a string at all


def test_result_statuses_are_in_the_vocabulary():
    fg = FactorGraph.line(3, 2, seed=0)
    for res in (od.g_optimal(np.eye(3)), od.characteristic_time(fg), od.mf_characteristic_time(fg),
                od.regret_lower_bound(fg)):
        assert res.status in vocabulary.STATUSES
    assert od.characteristic_time(fg).method in vocabulary.CHAR_TIME_KINDS


def test_mean_field_solve_is_a_frozen_dataclass():
    fg = FactorGraph.line(3, 2, seed=0)
    sol = MeanFieldModel(fg, symmetry=None).solve()  # the conic program, no orbit search
    assert isinstance(sol, MeanFieldSolution)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.t = 0.0  # type: ignore[misc]
    assert sol.lower <= sol.upper * (1 + 1e-9) and sol.gap == pytest.approx(sol.upper / sol.lower - 1, abs=1e-12)
    assert sol.t == pytest.approx(sol.upper, rel=1e-5) and sol.info.status in vocabulary.STATUSES
    assert sol.class_v.ndim == 1 and sol.compile_time >= 0
    assert sol.passes is None and sol.cuts is None and sol.orbit_point is None  # no orbit search here
    orbit = MeanFieldModel(fg).solve()  # a symmetric line: the orbit search fills its own fields
    assert orbit.info.solver == "orbit-kelley" and orbit.passes and orbit.cuts and orbit.orbit_point is not None
    assert orbit.upper == pytest.approx(sol.upper, rel=1e-5)


def test_kl_delta_is_bernoulli_kl_at_delta_and_one_minus_delta():
    for delta in (0.3, 0.05, 1e-3, 1e-9):
        assert kl_delta(delta) == pytest.approx(bernoulli_kl(delta, 1 - delta), rel=1e-8)  # 1 - delta rounds
    assert kl_delta(0.5) == 0.0 and kl_delta(1e-300) == pytest.approx(300 * math.log(10), rel=1e-12)
    res = od.characteristic_time(FactorGraph.line(3, 2, seed=0))
    assert res.sample_complexity(0.01) == pytest.approx(2 * res.value * kl_delta(0.01))
