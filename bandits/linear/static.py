"""Static allocations of Soare et al. (2014, Sec. 4, Fig. 2): G-, XY- and XY-oracle allocation.

The design ignores the observations: G-allocation targets the G-optimal design on X, XY-allocation
the XY design on the pairwise differences of the items (transductive: of Z), the oracle the
XY-oracle design at the true theta (H_LB, Soare eq. 6; rho* of Fiez et al. when Z != X). The
stopping rule is the linear GLRT (default threshold: Soare's eq. 11), checked after each batch.

Two ways to produce the pulls:

* ``rule="design"`` (default): the continuous optimal design from :mod:`optdesign`, tracked in
  batches up to checkpoints on a geometric grid (``growth``, default 1 %, so the stopping time
  overshoots by at most that fraction). Fast enough for the 10^7-10^9 samples of omega = 0.01.
* ``rule="greedy"``: Soare's incremental rule x_t = argmin_x max_y y^T (A + x x^T)^{-1} y, one
  pull per step (with the stopping rule checked on the same grid); for small budgets.

Both start from one pull of each of d spanning arms (A_0).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np

import optdesign as od

from ..algorithm import Algorithm
from ..stopping import Threshold, check_threshold_option
from ..tracking import next_checkpoint, track
from ..validation import check_choice
from .common import LinearGLRPolicy, check_growth

DESIGNS = {"g": "g-static", "xy": "xy-static", "oracle": "xy-oracle"}
RULES = ("design", "greedy")


@dataclass(frozen=True)
class StaticAllocation(Algorithm):
    """Static G-/XY-/XY-oracle allocation with GLRT stopping (see module docstring)."""

    design: str = "xy"
    threshold: str | Threshold = "soare"
    rule: str = "design"
    growth: float = 0.01
    delta_independent = True

    def __post_init__(self):
        check_choice(self.design, "design", DESIGNS)
        check_choice(self.rule, "rule", RULES)
        check_threshold_option(self.threshold)
        check_growth(self.growth)

    @property
    def name(self) -> str:
        return DESIGNS[self.design]

    def start(self, env, delta, rng):
        return _StaticPolicy(self, env)


def static_directions(design: str, env) -> np.ndarray:
    """Directions Y whose worst variance the design minimises."""
    if design == "g":
        return env.X
    if design == "xy":
        return od.pairwise_differences(env.Z)
    Y, _ = od.oracle_directions(env.Z, env.theta)
    return Y


DESIGN_CACHE_SIZE = 16
_design_cache: dict[tuple[str, str], od.DesignResult] = {}


def static_design(design: str, env) -> od.DesignResult:
    """The continuous optimal design (G: Kiefer–Wolfowitz; XY and oracle: min-max, certified).

    It depends on the instance only (X, Z and, for the oracle, theta), so the last
    DESIGN_CACHE_SIZE designs are kept per process: replicates of a study on one instance solve it once.
    """
    digest = hashlib.sha256()
    for array in (env.X, env.Z, env.theta):
        digest.update(np.asarray(array.shape, dtype=np.int64).tobytes() + np.ascontiguousarray(array).tobytes())
    key = (design, digest.hexdigest())
    if key not in _design_cache:
        if len(_design_cache) >= DESIGN_CACHE_SIZE:
            _design_cache.pop(next(iter(_design_cache)))
        result = _solve_static_design(design, env)
        result.weights.flags.writeable = False  # shared by every run on this instance
        _design_cache[key] = result
    return _design_cache[key]


def _solve_static_design(design: str, env) -> od.DesignResult:
    if design == "g":
        return od.g_optimal(env.X)
    if design == "xy":
        return od.transductive(env.X, env.Z)
    return od.transductive(env.X, env.Z, env.theta)


class _StaticPolicy(LinearGLRPolicy):
    def __init__(self, algo: StaticAllocation, env):
        super().__init__(env, algo.threshold)
        self.algo = algo
        start = time.perf_counter()
        if algo.rule == "design":
            self.weights = static_design(algo.design, env).weights
        else:
            self.Y = static_directions(algo.design, env)
        self.solve_time = time.perf_counter() - start
        self._next_check = 0
        self._check_now = True

    def next_batch(self, budget: int) -> np.ndarray:
        if self.n == 0:
            return self.initial_batch()
        if self.algo.rule == "greedy":
            counts = np.zeros(self.X.shape[0], dtype=np.int64)
            counts[od.greedy_choice(self.X, self.Y, self.stats.A)] = 1
            return counts
        target = next_checkpoint(self.n, self.algo.growth)
        return track(self.stats.counts, self.weights, min(target - self.n, budget))

    def observe(self, counts, sums) -> None:
        super().observe(counts, sums)
        # the greedy rule pulls one arm per step: check the stopping rule on the same geometric
        # grid as the batched rule (every check is an O(|Z| d^2) GLR evaluation)
        self._check_now = self.n >= self._next_check
        if self._check_now:
            self._next_check = next_checkpoint(self.n, self.algo.growth)

    def stopped(self, delta: float) -> bool:
        return self._check_now and super().stopped(delta)
