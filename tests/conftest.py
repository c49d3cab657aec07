"""Shared fixtures. Tests marked ``slow`` run only with ``pytest --runslow`` (CI runs the fast subset)."""

from __future__ import annotations

import numpy as np
import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with pytest --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def soare_arms(d: int, omega: float) -> np.ndarray:
    """Soare et al. (2014) instance: e_1..e_d and (cos omega, sin omega, 0, ...)."""
    X = np.eye(d)
    extra = np.zeros(d)
    extra[0], extra[1] = np.cos(omega), np.sin(omega)
    return np.vstack([X, extra])


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
