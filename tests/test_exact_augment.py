"""Augmented exact designs (exact_design(..., fixed=...)): fixed runs kept, new runs against enumeration, closed forms,
and the augmented bound against an independent cvxpy model."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.exact_designs.augment import augmented_bound
from optdesign.exact_designs.bounds import d_bound, linear_bound
from optdesign.exact_designs.criteria import ExactDCriterion, ExactLinearCriterion
from optdesign.exact_designs.exchange import Exchange
from optdesign.exact_designs.pair_moves import pair_gains


def line(points):
    t = np.asarray(points, dtype=float)
    return np.column_stack([np.ones(t.size), t])


def quadratic(points):
    t = np.asarray(points, dtype=float)
    return np.column_stack([np.ones(t.size), t, t**2])


def interaction_square():
    """1, a, b, ab on the 3 x 2 grid a in {-1, 0, 1}, b in {-1, 1} (K = 6, d = 4)."""
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], [-1.0, 1.0])))
    return np.column_stack([np.ones(6), g[:, 0], g[:, 1], g[:, 0] * g[:, 1]])


def surface():
    """1, a, b, c, ab, a^2 on the 3^3 grid (K = 27, d = 6)."""
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=3)))
    return np.column_stack([np.ones(27), g, g[:, 0] * g[:, 1], g[:, 0] ** 2])


def moments_of(X, criterion):
    return None if criterion == "D" else np.eye(X.shape[1]) if criterion == "A" else X.T @ X / X.shape[0]


def value_of(X, counts, criterion):
    """det(M)^(-1/d) or tr(B M^{-1}) at M = sum_k (counts_k / N) x_k x_k^T, computed directly (inf if singular)."""
    M = (X * (counts / counts.sum())[:, None]).T @ X
    if np.linalg.matrix_rank(M) < X.shape[1]:
        return np.inf
    if criterion == "D":
        return float(np.exp(-np.linalg.slogdet(M)[1] / X.shape[1]))
    return float(np.trace(moments_of(X, criterion) @ np.linalg.inv(M)))


def enumerated_augmentation(X, fixed, n, criterion, replicates):
    """The best value over every choice of n new runs added to ``fixed``."""
    K = X.shape[0]
    if replicates:
        choices = itertools.combinations_with_replacement(range(K), n)
    else:
        choices = itertools.combinations(np.flatnonzero(fixed == 0), n)
    return min(value_of(X, fixed + np.bincount(np.asarray(c, dtype=int), minlength=K), criterion) for c in choices)


def cvxpy_augmented_optimum(X, fixed, n, criterion, replicates):
    """The augmented approximate optimum, by an independent model: log_det or matrix_frac of
    (F + n X^T diag(w) X) / N over the simplex (w <= 1/n and 0 at fixed points without replicates)."""
    K, d = X.shape
    N = fixed.sum() + n
    w = cp.Variable(K, nonneg=True)
    F = (X * fixed[:, None]).T @ X / N
    A = F + (n / N) * sum(w[k] * np.outer(X[k], X[k]) for k in range(K))
    cons = [cp.sum(w) == 1]
    if not replicates:
        cons += [w <= 1 / n, w[fixed > 0] == 0]
    if criterion == "D":
        problem = cp.Problem(cp.Maximize(cp.log_det(A)), cons)
        problem.solve(solver="CLARABEL")
        return float(np.exp(-problem.value / d))
    eig, V = np.linalg.eigh(moments_of(X, criterion))
    C = V * np.sqrt(np.clip(eig, 0, None))
    problem = cp.Problem(cp.Minimize(cp.matrix_frac(C, (A + A.T) / 2)), cons)
    problem.solve(solver="CLARABEL")
    return float(problem.value)


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_no_fixed_runs_is_the_plain_design(criterion, replicates):
    X = interaction_square()
    for n in (4, 5, 6):
        plain = od.exact_design(X, n, criterion, replicates=replicates)
        augmented = od.exact_design(X, n, criterion, replicates=replicates, fixed=np.zeros(6, dtype=int))
        assert augmented.value == pytest.approx(plain.value, rel=1e-10)
        assert augmented.n == augmented.n_new == n and augmented.n_fixed == 0
        if replicates:  # the same approximate problem, certified to 1e-6 both ways
            assert augmented.lower_bound == pytest.approx(plain.lower_bound, rel=2e-6)
        else:  # without replicates the augmented bound also caps w_k <= 1/n: only tighter
            assert augmented.lower_bound >= plain.lower_bound * (1 - 2e-6)


@pytest.mark.parametrize("replicates", [True, False])
def test_fixed_runs_are_always_kept(replicates):
    X = surface()
    K = X.shape[0]
    rng = np.random.default_rng(4)
    for extra in (0, 3, 8):
        fixed = np.zeros(K, dtype=int)
        fixed[rng.choice(K, size=7, replace=False)] = 1 if not replicates else rng.integers(1, 3, size=7)
        n = X.shape[1] - np.linalg.matrix_rank(X[fixed > 0]) + extra
        res = od.exact_design(X, n, "D", replicates=replicates, fixed=fixed, restarts=4)
        assert np.all(res.counts >= fixed) and res.counts.sum() == fixed.sum() + n == res.n
        assert res.n_fixed == fixed.sum() and res.n_new == n
        assert replicates or res.counts.max() == 1
        assert res.value == pytest.approx(value_of(X, res.counts, "D"), rel=1e-9)
        assert res.lower_bound <= res.value and res.extras["free_lower_bound"] <= res.value
        out = res.to_dict()
        assert out["fixed"] == fixed.tolist() and out["n_new"] == n and out["n_fixed"] == fixed.sum()


def test_simple_linear_regression_puts_new_runs_opposite_the_fixed_ones():
    """x in {-1, 0, 1}, three runs made at -1: with a runs at -1, b at 0, c at +1 (N = a + b + c),
    det M = N (a + c) - (c - a)^2, so c = n new runs at +1 give det M = 12 n, better than any other choice while
    n <= 3 (a run at 0 instead: 13 n - 10; at -1: smaller still)."""
    X = line([-1, 0, 1])
    fixed = np.array([3, 0, 0])
    for n in (1, 2, 3):
        res = od.exact_design(X, n, fixed=fixed)
        assert res.counts.tolist() == [3, 0, n]
        assert res.value == pytest.approx((3 + n) / np.sqrt(12 * n), rel=1e-12)
        assert res.value == pytest.approx(enumerated_augmentation(X, fixed, n, "D", True), rel=1e-12)
    for n in (4, 5):  # beyond, a tie or the next run back at -1: enumeration decides
        res = od.exact_design(X, n, fixed=fixed)
        assert res.value == pytest.approx(enumerated_augmentation(X, fixed, n, "D", True), rel=1e-12)


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_equals_enumeration_of_every_augmentation(criterion, replicates):
    """Every choice of n <= 5 new runs on K <= 6 candidates enumerated; the exact value is never below the bound."""
    cases = [(quadratic([-1, -0.5, 0, 0.5, 1]), np.array([1, 0, 1, 0, 0])),
             (interaction_square(), np.array([1, 0, 0, 1, 1, 0]))]
    if replicates:
        cases.append((quadratic([-1, -0.3, 0.4, 1]), np.array([2, 0, 0, 1])))
    for X, fixed in cases:
        for n in range(X.shape[1] - np.linalg.matrix_rank(X[fixed > 0]), 6):
            if not replicates and n > np.count_nonzero(fixed == 0):
                continue
            res = od.exact_design(X, n, criterion, replicates=replicates, fixed=fixed, restarts=10)
            best = enumerated_augmentation(X, fixed, n, criterion, replicates)
            assert res.value == pytest.approx(best, rel=1e-9)
            assert res.lower_bound <= best * (1 + 1e-12)
            assert 0 < res.efficiency <= 1 + 1e-12


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_bound_is_the_augmented_optimum_of_an_independent_model(criterion, replicates):
    X = interaction_square()
    fixed = np.array([2, 0, 0, 1, 0, 0]) if replicates else np.array([1, 0, 0, 1, 0, 0])
    for n in (2, 3):
        res = od.exact_design(X, n, criterion, replicates=replicates, fixed=fixed, restarts=2)
        optimum = cvxpy_augmented_optimum(X, fixed, n, criterion, replicates)
        assert res.lower_bound == pytest.approx(optimum, rel=1e-6)
        assert res.lower_bound <= optimum * (1 + 1e-8) and optimum <= res.approximate_value * (1 + 1e-8)
        assert res.value >= res.lower_bound


def test_a_forced_solver_gives_the_same_bound():
    X = interaction_square()
    fixed = np.array([2, 0, 0, 1, 0, 0])
    for criterion in ("D", "I"):
        default = od.exact_design(X, 3, criterion, fixed=fixed, restarts=0)
        scs = od.exact_design(X, 3, criterion, fixed=fixed, restarts=0, solver="SCS")
        assert scs.lower_bound == pytest.approx(default.lower_bound, rel=1e-6)
        assert scs.value == default.value


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_the_first_order_bound_holds_at_any_weights(criterion, replicates):
    """At random (far from optimal) weights the bound stays below the optimum of the independent model; with no
    fixed run it is the bound of optdesign.exact_designs.bounds (Kiefer–Wolfowitz, the A/I duality bound)."""
    X = quadratic([-1, -0.5, 0, 0.5, 1])
    fixed = np.array([1, 0, 0, 0, 0])
    B = moments_of(X, criterion)
    rng = np.random.default_rng(7)
    for n in (2, 3):
        optimum = cvxpy_augmented_optimum(X, fixed, n, criterion, replicates)
        for _ in range(5):
            w = rng.dirichlet(np.ones(5))
            if not replicates:  # a feasible w: none on the fixed point, at most 1/n (mixed with the uniform 1/4)
                w[0] = 0.0
                w /= w.sum()
                mix = np.clip((w.max() - 1 / n) / (w.max() - 1 / 4), 0.0, 1.0)
                w = (1 - mix) * w + mix * (fixed == 0) / 4
            found = augmented_bound(X, fixed, n, w, B, replicates)
            assert found.lower_bound <= optimum * (1 + 1e-8) <= found.value * (1 + 2e-8)
    w = rng.dirichlet(np.ones(5))
    plain = d_bound(X, w) if B is None else linear_bound(X, w, B)
    found = augmented_bound(X, np.zeros(5, dtype=int), 4, w, B, True)
    assert found.value == pytest.approx(plain.value, rel=1e-12)
    assert found.lower_bound == pytest.approx(plain.lower_bound, rel=1e-12)


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_newton_polish_reaches_the_optimum(criterion, replicates):
    """From weights 1e-3 off the optimum on its support, the polish certifies a gap below 1e-9, at the optimum of
    the independent model."""
    from optdesign.exact_designs.augment import polish

    X = interaction_square()
    fixed = np.array([1, 0, 0, 1, 0, 0])
    B = moments_of(X, criterion)
    n = 2
    start = od.exact_design(X, n, criterion, replicates=replicates, fixed=fixed, restarts=0).approximate_weights
    w = start * (1 + 1e-3 * np.random.default_rng(0).standard_normal(6))
    rough = augmented_bound(X, fixed, n, w / w.sum(), B, replicates)
    polished = polish(X, fixed, n, rough, B, replicates, 1e-10)
    assert rough.value > rough.lower_bound * (1 + 1e-8)
    assert polished.value <= polished.lower_bound * (1 + 1e-9)
    assert polished.lower_bound == pytest.approx(cvxpy_augmented_optimum(X, fixed, n, criterion, replicates), rel=1e-7)


def test_no_new_run_evaluates_the_fixed_design():
    """n = 0: the fixed design, with its certified efficiency against every design of as many runs."""
    X = quadratic([-1, -0.5, 0, 0.5, 1])
    fixed = np.array([2, 0, 1, 1, 2])
    for criterion in ("D", "A", "I"):
        res = od.exact_design(X, 0, criterion, fixed=fixed)
        assert res.counts.tolist() == fixed.tolist() and res.n == 6 and res.n_new == 0
        assert res.value == pytest.approx(value_of(X, fixed, criterion), rel=1e-12)
        assert res.efficiency == pytest.approx(1.0, abs=1e-11)  # the only augmentation with no new run
        plain = od.exact_design(X, 6, criterion)
        assert res.extras["free_lower_bound"] == pytest.approx(plain.lower_bound, rel=1e-9)
        assert res.extras["free_efficiency"] == pytest.approx(plain.lower_bound / res.value, rel=1e-9)
        assert res.extras["free_efficiency"] < 1


@pytest.mark.parametrize("rule", [ExactDCriterion(), ExactLinearCriterion(np.eye(3), "A")])
def test_the_exchange_never_moves_a_fixed_run(rule):
    X = quadratic(np.linspace(-1, 1, 9))
    fixed = np.array([0, 0, 2, 0, 1, 0, 0, 0, 0])
    counts = fixed + np.array([0, 0, 1, 0, 0, 2, 0, 0, 0])
    search = Exchange(X, counts, rule, True, fixed=fixed)
    points, table = search.move_gains()
    assert points.tolist() == [2, 5]  # candidate 4 holds fixed runs only
    U, _ = pair_gains(search, points, table, moves=10**6)
    for j1, i1, j2, i2 in U:
        moved = counts.copy()
        np.add.at(moved, [j1, i1, j2, i2], [1, -1, 1, -1])
        assert np.all(moved >= fixed)
    final = search.run()
    assert np.all(final >= fixed) and final.sum() == counts.sum()
    free = Exchange(X, counts, rule, True).run()  # without fixed runs the search leaves candidate 2's runs
    assert final[2] >= 2 and free[2] < 2


@pytest.mark.parametrize("replicates", [True, False])
def test_every_start_holds_the_fixed_runs_and_spans(replicates):
    from optdesign.exact_designs.starts import extreme_start, perturbed_start, rounded_start, spanning

    X = surface()
    K, d = X.shape
    rng = np.random.default_rng(2)
    fixed = np.zeros(K, dtype=np.int64)
    fixed[[0, 1, 2]] = 1  # a = b = -1, c = -1, 0, 1: rank 2 of d = 6
    for n in (4, 6, 10):
        degenerate = fixed.copy()  # new runs on the fixed points' span (or nearly): spanning must move them
        if replicates:
            degenerate[1] += n
        else:
            degenerate[3:3 + n] = 1
        starts = [extreme_start(X, n, replicates, rng, fixed),
                  rounded_start(X, rng.dirichlet(np.ones(K)), n, replicates, rng, fixed),
                  spanning(X, degenerate, fixed)]
        starts.append(perturbed_start(X, starts[0], replicates, rng, fixed))
        for counts in starts:
            assert np.all(counts >= fixed) and counts.sum() == fixed.sum() + n
            assert np.linalg.matrix_rank(X[counts > 0]) == d
            assert replicates or counts.max() == 1


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n": 2, "fixed": [1, 0]}, r"K = 3 candidates .*np.bincount"),
    ({"n": 2, "fixed": [[1, 0, 0]]}, "shape"),
    ({"n": 2, "fixed": [1, -1, 0]}, "nonnegative"),
    ({"n": 2, "fixed": [1, 0.5, 0]}, "whole"),
    ({"n": 2, "fixed": [1, np.nan, 0]}, "NaN"),
    ({"n": 2, "fixed": ["a", "b", "c"]}, "numbers"),
    ({"n": 1, "fixed": [2, 0, 0], "replicates": False}, "at most one run per candidate"),
    ({"n": -1, "fixed": [1, 1, 1]}, "n must be an integer >= 0"),
    ({"n": 1.0, "fixed": [1, 1, 1]}, "n must be an integer >= 0"),
    ({"n": 1, "fixed": [4, 0, 0]}, "nonsingular: n >= 2"),
    ({"n": 0, "fixed": [0, 0, 0]}, "nonsingular: n >= 3"),
    ({"n": 2, "fixed": [1, 1, 0], "replicates": False}, "n <= 1"),
    ({"n": 1, "fixed": [1, 1, 1], "criterion": "E"}, "criterion must be one of"),
])
def test_bad_input_is_one_clear_error(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        od.exact_design(quadratic([-1, 0, 1]), **kwargs)
