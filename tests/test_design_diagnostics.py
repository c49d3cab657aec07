"""Diagnostics of a design against mathematical truths: Kiefer–Wolfowitz at the D-optimum, closed-form efficiencies
of polynomial regression on [-1, 1], E-efficiency from eigenvalues, the variance function of singular designs and
the fraction-of-design-space curve (its endpoint is the largest variance, its area the I-criterion)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from numpy.polynomial import legendre

import optdesign as od
from optdesign.errors import InvalidInputError

matplotlib.use("Agg")


def poly(t: np.ndarray, k: int) -> np.ndarray:
    return np.vander(t, k + 1, increasing=True)


def lobatto(k: int) -> np.ndarray:
    """The roots of (1 - x^2) P'_k: the support of the D-optimal design of degree k on [-1, 1] (Guest 1958)."""
    inner = legendre.Legendre.basis(k).deriv().roots()
    return np.sort(np.concatenate([[-1.0, 1.0], inner]))


def random_arms(seed: int, K: int = 30, d: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((K, d))


@pytest.mark.parametrize("seed", [0, 1])
def test_kiefer_wolfowitz_at_the_d_optimum(seed):
    X = random_arms(seed)
    d = X.shape[1]
    res = od.d_optimal(X, tol=1e-9)
    diag = od.design_diagnostics(X, res)  # the optima certified to 1e-6
    assert diag.variance.max() == pytest.approx(d, rel=1e-8)  # max_x d(x, w*) = d
    assert diag.values["g"] == pytest.approx(res.g_value, rel=1e-12)  # the design's G-value
    assert diag.values["d"] == pytest.approx(res.value, rel=1e-12)  # d_optimal's value is det^(-1/d)
    assert diag.values["d"] == pytest.approx(od.criterion_value(X, res.weights, "d"), rel=1e-12)
    for name in ("d", "g"):
        e = diag.efficiencies[name]
        assert 1 - 2e-6 <= e.efficiency <= e.efficiency_upper <= 1.0
    assert diag.efficiencies["g"].exact


def test_a_efficiency_at_the_a_optimum_within_the_certified_gap():
    X = random_arms(2, K=40, d=5)
    res = od.a_optimal(X, tol=1e-7)
    e = od.design_diagnostics(X, res, tol=1e-7).efficiencies["a"]
    assert e.value == pytest.approx(res.value, rel=1e-12)
    assert 1 / (1 + res.gap) / (1 + 1e-7) - 1e-12 <= e.efficiency <= e.efficiency_upper <= 1.0
    assert e.efficiency_upper == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_polynomial_regression_closed_forms(k):
    """Degree k on a grid of [-1, 1] holding the roots of (1 - x^2) P'_k: the D-optimum puts 1/(k+1) on them, so
    det M* = prod_{i<j} (t_j - t_i)^2 / (k+1)^(k+1) and the uniform design's D-efficiency is (det M / det M*)^(1/d)."""
    nodes = lobatto(k)
    t = np.unique(np.round(np.concatenate([np.linspace(-1, 1, 41), nodes]), 14))
    X = poly(t, k)
    d = k + 1
    det_star = np.prod([(b - a) ** 2 for i, a in enumerate(nodes) for b in nodes[i + 1:]]) / d**d
    uniform = np.ones(t.size) / t.size
    closed = (np.linalg.det(X.T @ X / t.size) / det_star) ** (1 / d)
    e = od.design_diagnostics(X, uniform).efficiencies["d"]
    assert e.efficiency <= closed * (1 + 1e-9) and e.efficiency_upper >= closed * (1 - 1e-9)
    assert e.efficiency == pytest.approx(closed, rel=1e-5)
    # the closed-form D-optimal design: G- and D-efficiency 1
    optimum = np.isclose(t[:, None], nodes[None, :], rtol=0, atol=1e-12).any(axis=1) / d
    diag = od.design_diagnostics(X, optimum)
    assert diag.variance.max() == pytest.approx(d, rel=1e-10)
    assert diag.efficiencies["g"].efficiency == pytest.approx(1.0, rel=1e-10)
    assert diag.efficiencies["d"].efficiency_upper == pytest.approx(1.0, rel=1e-12)


def test_straight_line_on_three_points():
    """y = a + b x on {-1, 0, 1}, uniform design: M = diag(1, 2/3) against the optima on the ends (M = I)."""
    X = poly(np.array([-1.0, 0.0, 1.0]), 1)
    diag = od.design_diagnostics(X, [1, 1, 1], c=[0.0, 1.0])
    expected = {"d": np.sqrt(2 / 3), "g": 2 / 2.5, "a": 2 / 2.5, "e": 2 / 3, "c": 2 / 3,
                "i": (5 / 3) / 2}  # I: tr(M^-1 B), B = M(uniform): 2 at the design, 1 + 2/3 at the ends
    for name, value in expected.items():
        e = diag.efficiencies[name]
        assert e.efficiency <= value * (1 + 1e-9) and e.efficiency_upper >= value * (1 - 1e-9), name
        assert e.efficiency == pytest.approx(value, rel=1e-5), name
    np.testing.assert_allclose(diag.eigenvalues, [1.0, 2 / 3])
    np.testing.assert_allclose(diag.variance, [2.5, 1.0, 2.5])


def test_e_efficiency_is_the_ratio_of_smallest_eigenvalues():
    X = random_arms(3, K=25, d=3)
    w = np.random.default_rng(4).random(25)
    diag = od.design_diagnostics(X, w)
    M = X.T @ (w[:, None] / w.sum() * X)
    np.testing.assert_allclose(diag.eigenvalues, np.linalg.eigvalsh(M)[::-1], rtol=1e-10)
    w_e = od.e_optimal(X, tol=1e-7).weights
    ratio = np.linalg.eigvalsh(M)[0] / np.linalg.eigvalsh(X.T @ (w_e[:, None] * X))[0]
    e = diag.efficiencies["e"]
    assert e.efficiency <= ratio * (1 + 1e-7) and e.efficiency == pytest.approx(ratio, rel=2e-6)
    assert diag.values["e"] == pytest.approx(1 / np.linalg.eigvalsh(M)[0], rel=1e-10)


def test_variance_function_of_a_singular_design():
    """M(w) singular: x^T M^+ x on its range, inf off it; a singular design has efficiency 0 (exactly)."""
    x = np.array([-1.0, 0.0, 1.0])
    X = poly(x, 2)
    w = np.array([0.5, 0.0, 0.5])
    M = X.T @ (w[:, None] * X)
    points = np.array([[1.0, 0.5, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    v = od.variance_function(X, w, points)
    pinv = np.linalg.pinv(M)
    assert v[0] == pytest.approx(points[0] @ pinv @ points[0]) and v[2] == pytest.approx(1.0)
    assert v[1] == np.inf
    diag = od.design_diagnostics(X, w, c=[0.0, 1.0, 0.0])
    assert diag.efficiencies["a"].efficiency == 0.0 and diag.efficiencies["a"].exact
    assert diag.efficiencies["c"].efficiency == pytest.approx(1.0, rel=1e-6)  # the ends are c-optimal for the slope
    assert diag.eigenvalues[-1] == 0.0


def test_fds_curve_is_monotone_ends_at_the_max_and_integrates_to_i():
    rng = np.random.default_rng(5)
    X = poly(np.linspace(-1, 1, 15), 2)
    w = rng.random(15)
    region = poly(rng.uniform(-1, 1, 50), 2)
    rho = rng.random(50)
    f, v = od.fds_curve(X, w, region, rho)
    assert f[0] == 0.0 and f[-1] == 1.0 and np.all(np.diff(f) >= 0) and np.all(np.diff(v) >= 0)
    assert v[-1] == pytest.approx(od.variance_function(X, w, region).max())
    area = np.sum(np.diff(f) * v[1:])  # the region's average variance: tr(M^-1 B), the I-criterion
    assert area == pytest.approx(od.criterion_value(X, w, "i", region=region, region_weights=rho), rel=1e-10)
    f, v = od.fds_curve(X, w)
    assert v[-1] == pytest.approx(od.g_value(X, w / w.sum()))


def test_fds_plot_writes_a_png(tmp_path):
    X = poly(np.linspace(-1, 1, 21), 2)
    designs = {"D-optimal": od.d_optimal(X), "uniform": np.ones(21), "exact": od.exact_design(X, 6)}
    fig = od.fds_plot(X, designs, path=tmp_path / "fds.png", title="quadratic")
    assert (tmp_path / "fds.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(fig.axes[0].lines) == 3


@pytest.mark.parametrize("call, message", [
    (lambda X: od.design_diagnostics(X, [1.0, 1.0]), "2 weights for 3 candidates"),
    (lambda X: od.variance_function(X, [1.0, -1.0, 1.0]), "nonnegative"),
    (lambda X: od.fds_plot(X, np.ones(3), path="fds.txt"), "suffix"),
    (lambda X: od.fds_plot(X, {}), "at least one design"),
    (lambda X: od.design_diagnostics(X[:, :1] @ np.ones((1, 2)), np.ones(3)), "do not span"),
])
def test_bad_input(call, message):
    X = poly(np.array([-1.0, 0.0, 1.0]), 1)
    with pytest.raises(InvalidInputError, match=message):
        call(X)
