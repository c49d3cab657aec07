"""The K-armed oracle (GK16, Thm 5) and the families' divergences against independent truths: the Bernoulli kl
against 50-digit decimal arithmetic, its derivative against finite differences, and the oracle against a slow
reference (Brent's method on every inner inverse and on the outer equation), closed forms, the published
proportions and a linear-programming certificate."""

from __future__ import annotations

import warnings
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

from bandits.pure_exploration import Bernoulli, Gaussian, KArmedProblem, certified_bracket
from optdesign.errors import InvalidInputError


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



@pytest.mark.parametrize("family", [Gaussian(1.3), Bernoulli()])
def test_envelope_derivative_of_the_inner_function(family):
    """g(x) = d(mu_b, m) + x d(mu_a, m) at m = (mu_b + x mu_a) / (1 + x) has g'(x) = d(mu_a, m) (m minimises the
    weighted divergence), the slope the oracle's Newton steps use, against central differences."""
    mb, ma, h = 0.7, np.array([0.6, 0.3, 0.05]), 1e-6

    def g(x):
        m = (mb + x * ma) / (1 + x)
        return family.kl(mb, m) + x * family.kl(ma, m)

    for x in (0.01, 0.5, 3.0, 40.0):
        m = (mb + x * ma) / (1 + x)
        assert family.kl(ma, m) == pytest.approx((g(x + h) - g(x - h)) / (2 * h), rel=1e-6)

def _reference_oracle(family, mu):
    """T* and w* by GK16's Theorem 5 with Brent's method on every inner inverse x_a(y) of
    g_a(x) = d(mu_b, m) + x d(mu_a, m), m = (mu_b + x mu_a) / (1 + x), and on the outer equation
    sum_a d(mu_b, m_a) / d(mu_a, m_a) = 1 (slow: a scalar root finding per arm and per outer step)."""
    b = int(np.argmax(mu))
    others = [a for a in range(mu.size) if a != b]
    mb = mu[b]

    def mean(a, x):
        return (mb + x * mu[a]) / (1.0 + x)

    def g(a, x):
        return float(family.kl(mb, mean(a, x)) + x * family.kl(mu[a], mean(a, x)))

    def inverse(a, y):
        hi = 1.0
        while g(a, hi) < y:
            hi *= 2.0
        return brentq(lambda x: g(a, x) - y, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=500)

    def balance(y):
        ms = [mean(a, inverse(a, y)) for a in others]
        return sum(float(family.kl(mb, m) / family.kl(mu[a], m)) for a, m in zip(others, ms, strict=True)) - 1.0

    top = min(float(family.kl(mb, mu[a])) for a in others)
    lo = hi = top / 2
    while balance(lo) > 0:
        lo /= 2
    while balance(hi) < 0:
        hi = 0.5 * (hi + top)
    y = brentq(balance, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500)
    x = np.array([inverse(a, y) for a in others])
    w = np.empty(mu.size)
    w[b] = 1.0 / (1.0 + x.sum())
    w[others] = x * w[b]
    return (1.0 + x.sum()) / y, w


def _random(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.choice([3, 5, 10]))
    if seed % 2:
        return Bernoulli(), rng.uniform(0.02, 0.98, size=K)
    return Gaussian(float(rng.uniform(0.3, 3.0))), rng.normal(size=K) * 10.0 ** rng.uniform(-2, 1)


EDGES = {
    "gap 1e-6 gaussian": (Gaussian(1.0), [0.5, 0.5 - 1e-6, 0.3, 0.1]),
    "gap 1e-6 bernoulli": (Bernoulli(), [0.5, 0.5 - 1e-6, 0.3, 0.1]),
    "far bernoulli": (Bernoulli(), [0.999, 0.001]),
    "far and near bernoulli": (Bernoulli(), [0.999, 0.001, 0.5, 0.998]),
    "two bernoulli": (Bernoulli(), [0.6, 0.4]),
    "best at 1": (Bernoulli(), [1.0, 0.9, 0.5]),
    "worst at 0": (Bernoulli(), [0.1, 0.0]),
    "both boundaries": (Bernoulli(), [1.0, 0.0, 0.5]),
    "K = 50 bernoulli": (Bernoulli(), np.random.default_rng(50).uniform(0.05, 0.95, size=50)),
    "K = 50 gaussian": (Gaussian(2.0), np.random.default_rng(51).normal(size=50)),
    "K = 50, 49 equal": (Gaussian(1.0), np.r_[1.0, np.zeros(49)]),
}


def _agrees_with_the_reference(family, mu):
    mu = np.asarray(mu, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero or overflow escapes
        oracle = KArmedProblem(mu.size, family).oracle(mu)
    T, w = _reference_oracle(family, mu)
    assert oracle.T == pytest.approx(T, rel=1e-8, abs=0)
    assert oracle.weights == pytest.approx(w, rel=0, abs=1e-6)
    assert oracle.lower_bound <= oracle.T <= oracle.lower_bound * (1 + 1e-8)


@pytest.mark.parametrize("seed", range(8))
def test_oracle_agrees_with_brents_method_on_random_instances(seed):
    _agrees_with_the_reference(*_random(seed))


@pytest.mark.parametrize("name", EDGES)
def test_oracle_agrees_with_brents_method_on_edge_cases(name):
    _agrees_with_the_reference(*EDGES[name])


@pytest.mark.parametrize("sigma, gap", [(1.0, 0.5), (0.3, 1e-6), (5.0, 3.0)])
def test_two_gaussian_arms_closed_form(sigma, gap):
    oracle = KArmedProblem(2, Gaussian(sigma)).oracle(np.array([0.2, 0.2 - gap]))
    assert oracle.T == pytest.approx(8 * sigma**2 / gap**2, rel=1e-9)
    assert oracle.weights == pytest.approx([0.5, 0.5], abs=1e-10)  # m_a 1e-6 apart is resolved to 2.8e-17 / 1e-6


@pytest.mark.parametrize("mu, w_star, samples", [
    ([0.5, 0.45, 0.43, 0.4], [0.417, 0.390, 0.136, 0.057], 1740),
    ([0.3, 0.21, 0.2, 0.19, 0.18], [0.336, 0.251, 0.177, 0.132, 0.104], 574),
])
def test_garivier_kaufmann_published_instances(mu, w_star, samples):
    """GK16, Sec. 6: w* to the three printed digits, and T* kl(0.1, 0.9) rounded as printed."""
    oracle = KArmedProblem(len(mu), Bernoulli()).oracle(np.array(mu))
    assert oracle.weights == pytest.approx(w_star, abs=5e-4)
    assert oracle.sample_complexity(0.1) == pytest.approx(samples, abs=0.5)


@pytest.mark.parametrize("family, mu", [
    (Bernoulli(), [0.5, 0.45, 0.43, 0.4]),
    (Bernoulli(), [0.3, 0.21, 0.2, 0.19, 0.18]),
    (Gaussian(0.5), [1.0, 0.2, 0.9, -0.4, 0.95]),
])
def test_oracle_is_the_maximum_of_the_characteristic_function(family, mu):
    """max_w min_a f_a(w) over the simplex by SLSQP on the epigraph form (max t, f_a(w) >= t), from uniform.

    The reference is judged by its answer, not by SLSQP's success flag (which, depending on the SciPy release and
    the BLAS thread count, can report "Positive directional derivative for linesearch" at the optimum): its point,
    made a distribution, is feasible, so no weights may beat the oracle's (weak duality), and the reference must
    reach the oracle's value and weights."""
    mu = np.array(mu)
    K = mu.size
    problem = KArmedProblem(K, family)
    oracle = problem.oracle(mu)
    scale = oracle.T  # t of order 1
    res = minimize(lambda z: -z[-1], np.r_[np.full(K, 1 / K), 0.0], method="SLSQP",
                   constraints=[{"type": "eq", "fun": lambda z: z[:K].sum() - 1},
                                {"type": "ineq", "fun": lambda z: scale * problem.pieces(mu, z[:K]).values - z[-1]}],
                   bounds=[(0, 1)] * K + [(None, None)], options={"ftol": 1e-12, "maxiter": 1000})
    reference = np.clip(res.x[:K], 0.0, None)
    reference /= reference.sum()
    best = problem.pieces(mu, oracle.weights).values.min()
    reached = problem.pieces(mu, reference).values.min()
    assert best == pytest.approx(1 / oracle.T, rel=1e-12)
    assert reached <= best * (1 + 1e-12)
    assert reached == pytest.approx(best, rel=1e-7)
    assert oracle.weights == pytest.approx(reference, abs=1e-4)


@pytest.mark.parametrize("name", ["gap 1e-6 bernoulli", "K = 50 bernoulli", "both boundaries"])
def test_the_linear_program_certifies_the_oracle(name):
    """The LP's best mixture (no multipliers given) brackets the oracle's T* as tightly as its own."""
    family, mu = EDGES[name]
    mu = np.asarray(mu, dtype=float)
    problem = KArmedProblem(mu.size, family)
    oracle = problem.oracle(mu)
    lower, upper = certified_bracket(problem, mu, oracle.weights)
    assert upper == oracle.T and lower <= oracle.T <= lower * (1 + 1e-8)
    lower_uniform, _ = certified_bracket(problem, mu, oracle.weights, np.ones(mu.size - 1))
    assert lower_uniform <= lower * (1 + 1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: KArmedProblem(2).oracle(np.array([1e-300, 0.0])), "underflow"),
    (lambda: KArmedProblem(2).oracle(np.array([1e200, -1e200])), "overflow"),
    (lambda: certified_bracket(KArmedProblem(3), np.array([1.0, 0.5, 0.0]), np.ones(3), np.ones(3)), "mixture"),
    (lambda: certified_bracket(KArmedProblem(3), np.array([1.0, 0.5, 0.0]), np.ones(3), -np.ones(2)), "mixture"),
])
def test_degenerate_parameters_and_mixtures_are_refused(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
