"""The K-armed oracle (GK16, Thm 5) and the families' divergences against independent truths: the Bernoulli kl
against 50-digit decimal arithmetic, its derivative against finite differences, and the oracle against a slow
reference (Brent's method on every inner inverse and on the outer equation), closed forms, the published
proportions and a linear-programming certificate."""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest

from bandits.pure_exploration import Bernoulli, Gaussian


def _decimal_kl(x: float, y: float) -> float:
    """x log(x / y) + (1 - x) log((1 - x) / (1 - y)) in 50-digit decimal arithmetic (0 < y < 1)."""
    getcontext().prec = 50
    X, Y = Decimal(x), Decimal(y)
    out = Decimal(0)
    if X > 0:
        out += X * (X / Y).ln()
    if X < 1:
        out += (1 - X) * ((1 - X) / (1 - Y)).ln()
    return float(out)


@pytest.mark.parametrize("x", [0.5, 0.03, 0.97])
@pytest.mark.parametrize("gap", [1e-2, 1e-3, 1e-6, 1e-9])
def test_bernoulli_kl_keeps_its_relative_accuracy_for_close_means(x, gap):
    """The log1p form loses about 1e-16 / gap relatively (the logarithms of ratios lost 1e-16 / gap^2: a
    negative kl at gap 1e-9)."""
    for y in (x - gap, x + gap):
        assert float(Bernoulli().kl(x, y)) == pytest.approx(_decimal_kl(x, y), rel=max(1e-14, 1e-15 / gap), abs=0)


def test_bernoulli_kl_at_random_and_boundary_means():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(size=50), rng.uniform(0.001, 0.999, size=50)
    exact = [_decimal_kl(a, b) for a, b in zip(x, y, strict=True)]
    assert Bernoulli().kl(x, y) == pytest.approx(exact, rel=1e-13, abs=0)
    assert Bernoulli().kl(0.0, y) == pytest.approx(-np.log1p(-y), rel=1e-14, abs=0)
    assert Bernoulli().kl(1.0, y) == pytest.approx(-np.log(y), rel=1e-14, abs=0)
    assert Bernoulli().kl(y, y) == pytest.approx(np.zeros(50), abs=0)


@pytest.mark.parametrize("family", [Gaussian(0.7), Bernoulli()])
def test_kl_derivative_is_the_derivative_in_the_second_mean(family):
    """d/dy d(x, y) = (y - x) / v(y) against central differences (v = sigma^2, or y (1 - y))."""
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.05, 0.95, size=40), rng.uniform(0.05, 0.95, size=40)
    h = 1e-6
    numeric = (family.kl(x, y + h) - family.kl(x, y - h)) / (2 * h)
    assert family.kl_derivative(x, y) == pytest.approx(numeric, rel=1e-6, abs=1e-9)
    assert family.kl_derivative(x, x) == pytest.approx(np.zeros(40), abs=0)
