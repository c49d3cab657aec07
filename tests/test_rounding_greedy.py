"""Efficient apportionment and Soare's greedy rules (checked against direct matrix inverses)."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od


def test_round_design_sums_to_n_and_respects_support():
    w = np.array([0.5, 0.0, 0.3, 0.2])
    for n in (1, 2, 3, 7, 10, 101):
        c = od.round_design(w, n)
        assert c.sum() == n and c[1] == 0 and np.all(c >= 0)


def test_round_design_exact_when_possible():
    np.testing.assert_array_equal(od.round_design([0.5, 0.25, 0.25], 8), [4, 2, 2])


def test_round_design_is_efficient_apportionment():
    """It maximises min_i n_i / w_i over allocations of n on the support (brute force, small n)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.dirichlet(np.ones(4))
        n = int(rng.integers(4, 12))
        c = od.round_design(w, n)
        best = max(
            min(a / w[0], b / w[1], e / w[2], (n - a - b - e) / w[3])
            for a in range(n + 1) for b in range(n + 1 - a) for e in range(n + 1 - a - b)
        )
        assert np.min(c / w) == pytest.approx(best)


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_round_design_rejects_bad_n(n):
    with pytest.raises(od.InvalidInputError, match="n must be a positive integer"):
        od.round_design([0.5, 0.5], n)


@pytest.mark.parametrize("w", [[0.5, -0.1], [0.0, 0.0], [np.nan, 1.0]])
def test_round_design_rejects_bad_weights(w):
    with pytest.raises(od.InvalidInputError):
        od.round_design(w, 5)


def test_greedy_scores_match_direct_inverse():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((15, 4))
    Y = od.pairwise_differences(X)
    A = np.eye(4) + X[:5].T @ X[:5]
    scores = od.greedy_scores(X, Y, A)
    direct = [np.max(np.einsum("ij,jk,ik->i", Y, np.linalg.inv(A + np.outer(x, x)), Y)) for x in X]
    np.testing.assert_allclose(scores, direct, rtol=1e-10)
    assert od.greedy_choice(X, Y, A) == int(np.argmin(direct))


def test_greedy_allocation_matches_direct_rule_step_by_step():
    """The Sherman–Morrison sequence equals the rule evaluated with fresh inverses each step."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((12, 3))
    Y = od.pairwise_differences(X)
    A0 = 1e-3 * np.eye(3)
    seq, A = od.greedy_allocation(X, Y, 60, A0=A0)
    np.testing.assert_allclose(A, A0 + X[seq].T @ X[seq], rtol=1e-9)
    A_direct = A0.copy()
    values = []
    for t in range(60):
        crit = [np.max(np.einsum("ij,jk,ik->i", Y, np.linalg.inv(A_direct + np.outer(x, x)), Y)) for x in X]
        assert seq[t] == int(np.argmin(crit))
        A_direct += np.outer(X[seq[t]], X[seq[t]])
        values.append(min(crit))
    assert np.all(np.diff(values) <= 1e-12)  # adding x x^T never increases any y^T A^{-1} y
    # A_n / n is (up to A0) a design, so n * F(A_n) cannot beat the continuous optimum
    opt = od.xy_allocation(X, method="cvxpy").value
    assert 60 * values[-1] >= opt * (1 - 1e-3)


def test_g_allocation_rule_respects_kiefer_wolfowitz():
    """Greedy G-allocation: n max_x x^T A_n^{-1} x >= d (no allocation beats the G-optimal design)."""
    X = np.random.default_rng(3).standard_normal((20, 4))
    _seq, A = od.greedy_allocation(X, X, 500, A0=1e-9 * np.eye(4))
    assert 500 * np.max(np.einsum("ij,jk,ik->i", X, np.linalg.inv(A), X)) >= 4 * (1 - 1e-6)


def test_greedy_needs_invertible_start():
    with pytest.raises(od.InvalidInputError, match="positive definite"):
        od.greedy_scores(np.eye(2), np.eye(2), np.zeros((2, 2)))


def test_greedy_breaks_exact_ties_instead_of_repeating_the_first_arm():
    # from A = I every single pull leaves some e_i - e_j at variance 2: all arms tie on the max
    from conftest import soare_arms

    X = soare_arms(4, 0.1)
    seq, A = od.greedy_allocation(X, od.pairwise_differences(X), 200)
    assert np.count_nonzero(np.bincount(seq, minlength=X.shape[0])) >= 4
    assert np.linalg.eigvalsh(A).min() > 40  # every canonical direction keeps being measured


def test_round_design_refuses_totals_float64_cannot_round_and_is_exact_up_to_them():
    from optdesign.errors import InstanceTooLargeError

    for n in (2**53 + 1, 2**60, 2**63 - 1):
        with pytest.raises(InstanceTooLargeError, match="2\\^53"):
            od.round_design([0.3, 0.7], n)
    counts = od.round_design([0.3, 0.7], 2**53)
    assert int(counts.sum()) == 2**53 and abs(int(counts[0]) - 0.3 * 2**53) <= 2


def test_greedy_allocation_refuses_a_sequence_above_the_array_limit():
    from optdesign.errors import InstanceTooLargeError

    with pytest.raises(InstanceTooLargeError, match="greedy sequence"):
        od.greedy_allocation(np.eye(3), np.eye(3), 10**12)
