"""Shared fixtures. Tests marked ``slow`` run only with ``pytest --runslow`` (CI runs the fast subset), and the
seed-by-seed comparisons of compiled and reference runs take half their seeds without it (the ``seeds`` fixture);
``--one-case-per-test`` keeps the first parametrised case of each test function (the lowest-dependency CI job: every
test function, so nearly every code path, on the oldest releases, without the repetitions).

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
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Numba compiles the kernels a run meets on first use; from a cold cache (a fresh install, as in CI) that is minutes of
# the suite at numba's default optimisation level 3. Tests check results, not speed, so unless NUMBA_OPT is set they
# compile at level 1 (the same arithmetic: no fast-math anywhere) into a cache of their own, which the package's own
# cache, read by benchmarks and users, never sees. Set before any kernel module imports numba; inherited by the
# workers and by the command-line subprocesses.
if "NUMBA_OPT" not in os.environ:
    os.environ["NUMBA_OPT"] = "1"
    os.environ["NUMBA_CACHE_DIR"] = str(Path(__file__).resolve().parent / ".numba-cache")

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]  # strategies build arrays and solve small programs
settings.register_profile("dev", max_examples=50, deadline=None, derandomize=True, suppress_health_check=_QUIET)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=_QUIET)
settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")
    parser.addoption("--one-case-per-test", action="store_true", default=False,
                     help="run only the first parametrised case of each test function (the lowest-dependency CI job)")


def pytest_collection_modifyitems(config, items):
    runslow = config.getoption("--runslow")
    if config.getoption("--one-case-per-test"):  # the first case that runs: a skipped slow case does not count
        kept, dropped, seen = [], [], set()
        for item in items:
            key = (item.nodeid.split("::")[0], getattr(item, "originalname", item.name))
            (dropped if key in seen else kept).append(item)
            if runslow or "slow" not in item.keywords:
                seen.add(key)
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    if runslow:
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
def seeds(request) -> Callable[[int], range]:
    """``seeds(n)``: the seeds of a seed-by-seed comparison, ``range(n)`` with ``--runslow`` and its first half in the
    fast subset (every case still runs, on fewer seeds)."""
    everything = request.config.getoption("--runslow")
    return lambda n: range(n if everything else max(1, n // 2))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
