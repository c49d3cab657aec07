"""Linear constraints A w <= b on the classical designs: the helpers, designs that meet them exactly, closed forms and
the full cvxpy model against the working set, certified over the constrained designs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

import optdesign as od
from optdesign.linear.classical.polytope import Polytope

x = np.array([-1.0, 0.0, 1.0])
QUAD = np.column_stack([np.ones(3), x, x**2])  # quadratic regression on {-1, 0, 1}: det A = det(QUAD)^2 w_1 w_2 w_3


def _meets(res, cons, tol=1e-12):
    A, b = cons
    assert np.all(A @ res.weights <= b + tol)
    assert res.weights.sum() == pytest.approx(1.0, abs=1e-12) and np.all(res.weights >= 0)


def test_helpers_build_the_rows():
    A, b = od.budget([1.0, 2.0, 3.0], 1.5)
    assert A.toarray().tolist() == [[1.0, 2.0, 3.0]] and b.tolist() == [1.5]
    A, b = od.caps([0.5, 0.2, 1.0])
    assert sparse.issparse(A) and A.toarray().tolist() == np.eye(3).tolist() and b.tolist() == [0.5, 0.2, 1.0]
    A, b = od.augment([0.1, 0.0, 0.2])
    assert (A.toarray() == -np.eye(3)).all() and b.tolist() == [-0.1, 0.0, -0.2]
    A, b = od.group_totals(["x", "y", "x"], lo=0.2, hi=[0.7, 0.5])
    assert A.toarray().tolist() == [[1, 0, 1], [0, 1, 0], [-1, 0, -1], [0, -1, 0]]
    assert b.tolist() == [0.7, 0.5, -0.2, -0.2]
    both = od.budget([1.0, 2.0, 3.0], 1.5) + od.caps([0.5, 0.5, 0.5])
    assert both.A.shape == (4, 3) and both.b.size == 4


def test_a_optimal_with_a_cap_on_the_centre_has_its_closed_form():
    """The centre wants 1/2 (tr A^{-1} = 1 / (a (1 - 2a)) for weights a, 1 - 2a, a); capped at 0.4 the best is
    a = 0.3, value 1 / (0.3 * 0.4)."""
    u = np.array([1.0, 0.4, 1.0])
    for method in ("auto", "cvxpy"):
        res = od.a_optimal(QUAD, constraints=od.caps(u), method=method)
        _meets(res, od.caps(u))
        assert res.value == pytest.approx(1 / (0.3 * 0.4), rel=1e-5)
        assert res.lower_bound <= res.value and res.gap <= 1e-4
        assert res.weights == pytest.approx([0.3, 0.4, 0.3], abs=1e-4)


def test_augmenting_existing_runs():
    """Half the runs already at x = 1: det A is proportional to w_1 w_2 w_3, so with w_3 >= 1/2 the D-optimal
    augmentation splits the other half equally: w = (1/4, 1/4, 1/2)."""
    w0 = np.array([0.0, 0.0, 0.5])
    res = od.phi_optimal(QUAD, 0, constraints=od.augment(w0))
    _meets(res, od.augment(w0))
    assert res.weights == pytest.approx([0.25, 0.25, 0.5], abs=1e-4)


@pytest.mark.parametrize("name", ["a", "i", "c", "e", "ds", "d", "phi2"])
def test_working_set_agrees_with_the_full_model_and_meets_the_constraints(name):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((150, 4))
    cons = od.budget(rng.uniform(0.5, 2.0, 150), 0.8) + od.caps(np.full(150, 0.05)) + od.group_totals(
        np.arange(150) % 3, lo=0.2)
    fn, args = {"a": (od.a_optimal, ()), "i": (od.i_optimal, ()), "c": (od.c_optimal, ([1.0, 0.0, -1.0, 2.0],)),
                "e": (od.e_optimal, ()), "ds": (od.ds_optimal, ([0, 3],)), "d": (od.phi_optimal, (0,)),
                "phi2": (od.phi_optimal, (2,))}[name]
    ws, full = fn(X, *args, constraints=cons), fn(X, *args, constraints=cons, method="cvxpy")
    assert ws.method == "generation" and full.method == "cvxpy" and ws.constraints == cons.b.size
    for res in (ws, full):
        _meets(res, cons)
        assert res.gap <= 1e-4
    assert ws.value == pytest.approx(full.value, rel=2e-4)
    assert ws.lower_bound <= full.value * (1 + 1e-9) and full.lower_bound <= ws.value * (1 + 1e-9)
    unconstrained = fn(X, *args)
    assert unconstrained.value <= ws.value * (1 + 1e-6)  # constraints never help


def test_constrained_bound_is_below_every_feasible_value():
    """The LP bound over the polytope is below the value of random feasible designs' optimum (and of each)."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 3))
    cons = od.budget(rng.uniform(0.5, 2.0, 60), 1.0) + od.caps(np.full(60, 0.1))
    res = od.a_optimal(X, constraints=cons)
    P = Polytope(cons)
    for seed in range(20):
        _, vertex = P.maximiser(np.random.default_rng(seed).standard_normal(60))
        feasible = 0.5 * vertex + 0.5 * res.weights
        assert res.lower_bound <= od.criterion_value(X, feasible, "a") * (1 + 1e-12)


def test_constraints_as_pairs_and_lists():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((30, 3))
    cost = rng.uniform(0.5, 2.0, 30)
    ref = od.a_optimal(X, constraints=od.budget(cost, 0.9) + od.caps(np.full(30, 0.2)))
    dense = (np.vstack([cost, np.eye(30)]), np.concatenate([[0.9], np.full(30, 0.2)]))
    assert od.a_optimal(X, constraints=dense).value == pytest.approx(ref.value, rel=1e-6)
    listed = [od.budget(cost, 0.9), (np.eye(30), np.full(30, 0.2))]
    assert od.a_optimal(X, constraints=listed).value == pytest.approx(ref.value, rel=1e-6)
