"""The kk21 threshold on exponential-family arms: the calibration T of Kaufmann & Koolen (2021) against a direct
evaluation of its definition, its shape (increasing, continuous, x + 3 log x + O(1)), the threshold's formula, which
threshold the GLR stop makes for each family, and delta-correctness on Bernoulli arms (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.special import lambertw, zeta
from scipy.stats import beta as beta_dist

from bandits.core.stopping import Kk21ExpFamilyThreshold, Kk21Threshold, exponential_calibration
from bandits.experiment import Experiment
from bandits.pure_exploration import Bernoulli, Gaussian, GLRStop, KArmedBandit, KArmedProblem, PureExploration
from bandits.pure_exploration.samplers import RoundRobin, TopTwo
from bandits.run import run
from optdesign.errors import InvalidInputError

Z = 1.5  # the z of h~_z in T


def _h_inverse(x: float) -> float:
    """The inverse of u - log u on [1, inf) by the -1 branch of Lambert's W: u = -W_{-1}(-e^{-x})."""
    return 1.0 if x == 1.0 else float(-lambertw(-np.exp(-x), k=-1).real)


def _h_tilde(x: float) -> float:
    """min over s in (0, log z] of e^s (x - log s): a fine grid, then a bounded search around its best point."""
    s = np.linspace(1e-9, np.log(Z), 200_001)
    values = np.exp(s) * (x - np.log(s))
    i = int(np.argmin(values))
    lo, hi = s[max(i - 1, 0)], s[min(i + 1, s.size - 1)]
    res = minimize_scalar(lambda v: np.exp(v) * (x - np.log(v)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-14})
    return float(min(res.fun, values[i]))


def _calibration(x: float) -> float:
    return 2.0 * _h_tilde((_h_inverse(1.0 + x) + np.log(2.0 * zeta(2))) / 2.0)


@pytest.mark.parametrize("x", [0.0, 0.3, 1.0, 1.1513, 2.0, 3.0, 4.5, 10.0, 50.0])
def test_calibration_is_its_definition(x):
    assert exponential_calibration(x) == pytest.approx(_calibration(x), rel=1e-9, abs=1e-9)


def test_h_tilde_branches_are_the_printed_closed_form():
    """Away from [h(1/log z), h^{-1}(1/log z)) the minimum is the printed piecewise form; inside it the printed
    form (switching at h^{-1}(1/log z)) keeps the end value z (x - log log z), which is larger."""
    h_at = 1 / np.log(Z) - np.log(1 / np.log(Z))
    printed_switch = _h_inverse(1 / np.log(Z))

    def printed(x):
        u = _h_inverse(x)
        return np.exp(1 / u) * u if x >= printed_switch else Z * (x - np.log(np.log(Z)))

    for x in (1.0, 1.5, h_at - 1e-9, printed_switch + 1e-9, 5.0, 20.0):
        assert _h_tilde(x) == pytest.approx(printed(x), rel=1e-9)
    for x in (h_at + 0.1, 2.5, printed_switch - 0.1):
        assert _h_tilde(x) < printed(x) - 1e-3


def test_calibration_is_increasing_and_continuous():
    xs = np.linspace(0.0, 30.0, 601)
    values = np.array([exponential_calibration(float(x)) for x in xs])
    assert np.all(np.diff(values) > 0)
    # the x where the inner argument (h^{-1}(1 + x) + log 2 zeta(2)) / 2 reaches the switch h(1 / log z)
    switch = 1 / np.log(Z) - np.log(1 / np.log(Z))
    x0 = brentq(lambda x: (_h_inverse(1 + x) + np.log(2 * zeta(2))) / 2 - switch, 0.0, 10.0, xtol=1e-14)
    assert abs(exponential_calibration(x0 + 1e-9) - exponential_calibration(x0 - 1e-9)) < 1e-7
    with pytest.raises(InvalidInputError):
        exponential_calibration(-0.5)


def test_calibration_asymptotics():
    """T(x) = x + 3 log x + 3 + log(zeta(2) / 2) + o(1) (h^{-1}(v) = v + log v + o(1), e^{1/u} u = u + 1 + o(1))."""
    limit = 3 + np.log(zeta(2) / 2)
    errors = [exponential_calibration(x) - x - 3 * np.log(x) - limit for x in (1e2, 1e4, 1e6, 1e8)]
    assert all(e > 0 for e in errors) and errors == sorted(errors, reverse=True)
    assert errors[2] < 1e-3 and errors[3] < 1e-5
    # the approximation x + 4 log(1 + x + sqrt(2x)) quoted for it lies above only from x = 15.2 on
    approximation = [x + 4 * np.log(1 + x + np.sqrt(2 * x)) for x in (10.0, 20.0, 100.0, 1e4)]
    assert exponential_calibration(10.0) > approximation[0]
    for x, value in zip((20.0, 100.0, 1e4), approximation[1:], strict=True):
        assert x < exponential_calibration(x) < value


def test_threshold_formula_and_which_threshold_the_stop_makes():
    beta = Kk21ExpFamilyThreshold(4)
    x = 0.5 * np.log(3 / 0.05)
    assert beta(1000, 0.05) == pytest.approx(2 * _calibration(x) + 6 * np.log(1 + np.log(500)), rel=1e-9)
    assert beta(2, 0.05) == pytest.approx(2 * _calibration(x))
    assert beta(10**6, 0.05) > beta(1000, 0.05) > beta(1000, 0.1) > np.log(1 / 0.1)
    assert beta.describe() == {"threshold": "kk21", "n_arms": 4}
    counts = np.ones(4, dtype=np.int64)
    assert GLRStop("kk21").make(KArmedProblem(4, Bernoulli()), counts) == Kk21ExpFamilyThreshold(4)
    assert GLRStop("kk21").make(KArmedProblem(4, Gaussian(2.0)), counts) == Kk21Threshold(4)


def test_kk21_runs_on_bernoulli_arms():
    r = Experiment("round-robin", "bernoulli:means=0.7/0.4/0.3", deltas=(0.1,), stop="glr:threshold=kk21").execute()[0]
    assert r["correct"] and r["stopped_by"] == "stopping_rule" and r["config"]["threshold"] == "kk21"
    practical = Experiment("round-robin", "bernoulli:means=0.7/0.4/0.3", deltas=(0.1,)).execute()[0]
    assert r["samples"] > practical["samples"]


@pytest.mark.slow
def test_kk21_is_delta_correct_on_bernoulli_arms():
    """Bernoulli arms 0.6 / 0.4 / 0.3, delta = 0.3 and 0.2 from one trajectory, 200 seeded runs of round robin and of
    Top-Two: the one-sided 95 % Clopper–Pearson upper bound on the error rate is at most delta."""
    env = KArmedBandit(np.array([0.6, 0.4, 0.3]), Bernoulli())
    deltas, runs = [0.3, 0.2], 200
    for sampler in (RoundRobin(), TopTwo()):
        results = [run(PureExploration(sampler, GLRStop("kk21")), env, deltas, seed=s) for s in range(runs)]
        for i, delta in enumerate(deltas):
            errors = sum(not r[i].correct for r in results)
            assert all(r[i].stopped_by == "stopping_rule" for r in results)
            assert beta_dist.ppf(0.95, errors + 1, runs - errors) <= delta, (sampler.name, delta, errors)
