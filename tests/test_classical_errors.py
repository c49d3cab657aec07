"""Bad input to the classical designs: one clear InvalidInputError each, never a numpy or scipy traceback."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError

X = np.random.default_rng(0).standard_normal((12, 3))


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.c_optimal(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), [0.0, 0.0, 1.0]), "not estimable"),
    (lambda: od.c_optimal(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]), [[1, 0, 0], [0, 0, 1]]), "some row"),
    (lambda: od.c_optimal(X, [0.0, 0.0, 0.0]), "nonzero"),
    (lambda: od.c_optimal(X, [1.0, 2.0]), "length 3"),
    (lambda: od.a_optimal(X, constraints=od.caps(np.full(12, 0.05))), "leave no design"),
    (lambda: od.a_optimal(X, constraints=od.caps(np.full(12, 0.05)), method="cvxpy"), "leave no design"),
    (lambda: od.e_optimal(X, constraints=od.budget(np.ones(12), 0.5)), "leave no design"),
    (lambda: od.a_optimal(X, constraints=od.caps(np.r_[1.0, 1.0, np.zeros(10)])), "estimates"),
    (lambda: od.a_optimal(X, constraints=od.caps(np.r_[1.0, 1.0, np.zeros(10)]), method="cvxpy"), "estimates"),
    (lambda: od.ds_optimal(X, [3]), "0..2"),
    (lambda: od.ds_optimal(X, [0, 0]), "distinct"),
    (lambda: od.ds_optimal(X, []), "non-empty"),
    (lambda: od.ds_optimal(X, [0.5]), "column indices"),
    (lambda: od.a_optimal(np.r_[X[:-1], [[np.nan, 0.0, 0.0]]]), "NaN"),
    (lambda: od.e_optimal(np.r_[X[:-1], [[np.inf, 0.0, 0.0]]]), "NaN or infinite"),
    (lambda: od.a_optimal(X[:, 0]), "2-D"),
    (lambda: od.a_optimal(np.c_[X[:, :2], X[:, :1]]), "span"),
    (lambda: od.phi_optimal(X, -1.0), "p must be"),
    (lambda: od.phi_optimal(X, float("nan")), "p must be"),
    (lambda: od.phi_optimal(X, "2"), "p must be"),
    (lambda: od.phi_optimal(X, 3.0, method="cvxpy"), "no conic model"),
    (lambda: od.phi_optimal(X, 3.0, constraints=od.caps(np.full(12, 0.5))), "no conic model"),
    (lambda: od.i_optimal(X, region=np.ones((4, 2))), "3 columns"),
    (lambda: od.i_optimal(X, region=X[:4], region_weights=[1.0, 1.0]), "one weight per region point"),
    (lambda: od.i_optimal(X, moments=-np.eye(3)), "positive semidefinite"),
    (lambda: od.i_optimal(X, moments=np.triu(np.ones((3, 3)))), "symmetric"),
    (lambda: od.i_optimal(X, moments=np.eye(2)), "3 columns"),
    (lambda: od.i_optimal(X, region=X, moments=np.eye(3)), "not both"),
    (lambda: od.a_optimal(X, constraints=(np.ones((1, 5)), [1.0])), "one column per candidate"),
    (lambda: od.a_optimal(X, constraints=(np.ones((2, 12)), [1.0])), "one row per entry of b"),
    (lambda: od.a_optimal(X, constraints=(np.full((1, 12), np.nan), [1.0])), "NaN"),
    (lambda: od.a_optimal(X, constraints="budget"), "constraints must be"),
    (lambda: od.a_optimal(X, method="barrier"), "method must be one of"),
    (lambda: od.a_optimal(X, tol=0), "tol must be"),
    (lambda: od.augment(np.full(12, 0.1)), "at most 1"),
    (lambda: od.caps(-np.ones(12)), "nonnegative"),
    (lambda: od.group_totals([0, 1, 0]), "lo, hi"),
    (lambda: od.criterion_value(X, np.ones(12), "z"), "criterion must be one of"),
    (lambda: od.criterion_value(X, np.ones(12), "c"), "needs c"),
    (lambda: od.criterion_value(X, np.ones(12), "a", p=2), "takes no p"),
    (lambda: od.criterion_value(X, np.ones(5), "a"), "one weight per candidate"),
    (lambda: od.criterion_value(X, -np.ones(12), "a"), "nonnegative"),
])
def test_bad_input_raises_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match) as info:
        call()
    assert "\n" not in str(info.value)
