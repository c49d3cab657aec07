"""Shared fixtures. Tests marked ``slow`` run only with ``pytest --runslow`` (CI runs the fast subset).

Hypothesis profiles (the property-based tests of ``tests/test_fuzz.py``):

* ``dev`` (default): 50 examples per test, no deadline (solve times vary with the machine's load), derandomised
  so that a plain ``pytest`` is reproducible;
* ``ci``: 25 examples, no deadline, ``derandomize=True`` so that every CI run tries the same examples;
  loaded automatically when the environment variable ``CI`` is set;
* ``thorough``: 500 examples, no deadline; select it with ``HYPOTHESIS_PROFILE=thorough`` (a long local run
  before a release). ``HYPOTHESIS_PROFILE`` selects any of the three and takes precedence over ``CI``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]  # strategies build arrays and solve small programs
settings.register_profile("dev", max_examples=50, deadline=None, derandomize=True, suppress_health_check=_QUIET)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=_QUIET)
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with pytest --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


#: the generic sampling rules that run on every question of arms with more than a mean each (bounded, unequal variances)
ARM_RULES = ["round-robin", "oracle-weights", "track-and-stop", "fws", "lazy-tas", "top-two", "top-two:challenger=tci",
             "top-two:beta=ids"]


def clopper_pearson_upper(errors: int, runs: int, level: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper confidence bound on an error rate (errors out of runs)."""
    from scipy.stats import beta as beta_law

    return 1.0 if errors == runs else float(beta_law.ppf(level, errors + 1, runs - errors))


def soare_arms(d: int, omega: float) -> np.ndarray:
    """Soare et al. (2014) instance: e_1..e_d and (cos omega, sin omega, 0, ...)."""
    X = np.eye(d)
    extra = np.zeros(d)
    extra[0], extra[1] = np.cos(omega), np.sin(omega)
    return np.vstack([X, extra])


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
