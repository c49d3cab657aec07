"""Bilinear designs: the Kronecker identity (edge G-value d^2) and agreement with a direct design."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od


def test_edge_arms_encode_the_bilinear_reward():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 3))
    M = rng.standard_normal((3, 3))
    Z = od.edge_arms(X)
    assert Z.shape == (16, 9)
    for i in range(4):
        for j in range(4):
            assert Z[i * 4 + j] @ M.ravel() == pytest.approx(X[i] @ M @ X[j])


@pytest.mark.parametrize("K,d", [(4, 2), (6, 3), (30, 4)])
def test_edge_design_value_is_d_squared(K, d):
    X = np.random.default_rng(K).standard_normal((K, d))
    res = od.bilinear_design(X)
    assert res.value == pytest.approx(d**2, rel=2e-4)
    # evaluated directly on the K^2 edge arms in R^{d^2}, not through the identity
    direct = od.g_value(od.edge_arms(X), res.edge_weights.ravel())
    assert direct == pytest.approx(res.value, rel=1e-8)
    assert res.edge_weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("K,d", [(3, 2), (5, 2)])
def test_edge_design_equals_direct_g_optimal_over_edge_arms(K, d):
    X = np.random.default_rng(10 + K).standard_normal((K, d))
    direct = od.g_optimal(od.edge_arms(X), method="cvxpy")
    assert direct.value == pytest.approx(d**2, rel=1e-4)
    res = od.bilinear_design(X)
    assert abs(res.value / direct.value - 1) <= res.gap + 1e-4  # edge gap bounds the error


def test_bilinear_rejects_non_spanning_node_arms():
    with pytest.raises(od.InvalidInputError, match="rank 1"):
        od.bilinear_design(np.array([[1.0, 0.0], [2.0, 0.0]]))
