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

``variant="fiez"``: the configuration Fiez, Jain, Jamieson & Ratliff (2019, Sec. 5; files XY_STATIC.py
and XY_ORACLE.py of the authors' code) ran for their figures, in place of Soare's eq. 11. Batch m = 1, 2, ...
has phase index k = 2m - 1 (the authors' loop advances k twice per batch) and draws ceil(u^k) arms i.i.d. from
the continuous design (no A_0, no tracking), u = 1.35 for XY-Static and 1.1 for XY-Oracle. After the batch,
with OLS on all samples, the run stops when the empirical best z_hat passes, for every other item z,

    sqrt(2 sigma^2 ||z_hat - z||^2_{A^{-1}} log(1 / delta_k)) < (z_hat - z)^T theta_hat,

i.e. the GLR exceeds log(1 / delta_k), with delta_k = delta / (2 k^2 |Z|^2) for XY-Static and
delta / (2 k^2 |Z|) for XY-Oracle (no check while the pulls do not span R^d). The authors' XY-Oracle tests
the true best item instead of z_hat: the two tests agree whenever z_hat = z*, and when z_hat != z* this one
may stop (wrongly) where theirs goes on; the studies' error rates measure that risk. The design is the
authors' Frank–Wolfe solve (:func:`fiez_frank_wolfe`), not the certified optimum: on Soare's instance
(d = 5, omega = 0.01) it stops after 7 iterations with about 1/216 of the mass on each arm the optimum nearly
drops, and that slack matters. The optimal oracle design equalises all |Z| - 1 constraints, the GLR test then
waits for the slowest of them, and XY-Oracle needs about 1.6 times the samples (4.9e5 against 3.1e5, 40 runs).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.linear import top_pairs

from ..core.algorithm import Algorithm, Policy
from ..core.environments import LinearBandit
from ..core.statistics import GLR, LinearStatistics
from ..core.stopping import Threshold
from ..core.thresholds import check_threshold_option
from ..core.tracking import portion, track
from ..core.validation import check_choice
from ..pure_exploration.linear import LinearProblem
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import GLRStop, OwnTest
from .common import check_growth, linear_items

__all__ = ["StaticAllocation", "fiez_frank_wolfe", "static_design"]

DESIGNS = {"g": "g-static", "xy": "xy-static", "oracle": "xy-oracle"}
RULES = ("design", "greedy")
VARIANTS = ("soare", "fiez")
#: variant "fiez": batch growth u and the power of |Z| in delta_k = delta / (2 k^2 |Z|^power), per design
FIEZ_SCHEDULE = {"xy": (1.35, 2), "oracle": (1.1, 1)}


@dataclass(frozen=True)
class StaticAllocation(Algorithm[LinearBandit]):
    """Static G-/XY-/XY-oracle allocation with GLRT stopping (see module docstring); ``variant`` is
    ``"soare"`` (eq. 11 on a geometric grid) or ``"fiez"`` (Fiez et al.'s batches and per-batch delta_k).

    Parameters
    ----------
    design : str
        ``"g"`` (G-optimal on X; ``g-static``), ``"xy"`` (XY design on the items' differences; ``xy-static``) or
        ``"oracle"`` (XY-oracle at the true theta, H_LB of Soare eq. 6, rho* of Fiez et al.; ``xy-oracle``).
    threshold : str or Threshold
        beta(t, delta) of the GLRT: ``"soare"`` (eq. 11, default), ``"practical"``, ``"theory"`` or an instance.
    rule : str
        ``"design"`` (track the continuous design on the checkpoint grid, default) or ``"greedy"`` (Soare's
        incremental rule, one pull per step; small budgets only).
    growth : float
        Relative step in (0, 1] of the checkpoint grid where batches end and the GLRT is checked (default 1 %:
        the stopping time overshoots by at most that fraction).
    variant : str
        ``"soare"`` (default) or ``"fiez"`` (the configuration of Fiez et al.'s figures, for ``xy`` and
        ``oracle``; it fixes its own batches and stopping rule, so threshold, rule and growth stay default).

    Raises
    ------
    InvalidInputError
        An unknown option value, a growth outside (0, 1], or ``variant="fiez"`` with ``design="g"`` or another option.
    """

    design: str = "xy"
    threshold: str | Threshold = "soare"
    rule: str = "design"
    growth: float = 0.01
    variant: str = "soare"
    delta_independent = True

    def __post_init__(self) -> None:
        check_choice(self.design, "design", DESIGNS)
        check_choice(self.rule, "rule", RULES)
        check_threshold_option(self.threshold)
        check_growth(self.growth)
        check_choice(self.variant, "variant", VARIANTS)
        if self.variant == "fiez":
            if self.design not in FIEZ_SCHEDULE:
                raise InvalidInputError("variant=fiez exists for xy-static and xy-oracle only (Fiez et al. 2019 "
                                        f"ran no {DESIGNS[self.design]})")
            fixed = {"threshold": (self.threshold, "soare"), "rule": (self.rule, "design"),
                     "growth": (self.growth, 0.01)}
            changed = [key for key, (value, default) in fixed.items() if value != default]
            if changed:
                raise InvalidInputError(f"variant=fiez fixes its own batches and stopping rule: drop "
                                        f"{', '.join(changed)}")

    @property
    def name(self) -> str:
        """``g-static``, ``xy-static`` or ``xy-oracle``."""
        return DESIGNS[self.design]

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """A static-allocation policy; its sampling ignores ``delta`` (``rng`` drives the ``fiez`` draws)."""
        problem = LinearProblem.of_environment(env)
        if self.variant == "fiez":
            return PureExplorationPolicy(problem, _FiezStaticState(self, env, rng), OwnTest(), self.growth)
        state = _GreedyState(self, env) if self.rule == "greedy" else _DesignState(self, env)
        return PureExplorationPolicy(problem, state, GLRStop(self.threshold), self.growth)


def static_directions(design: str, env: LinearBandit) -> np.ndarray:
    """Directions Y whose worst variance the design minimises (the rows of X, the pairwise differences of the
    items, or the oracle's normalised differences z* - z)."""
    if design == "g":
        return env.X
    if design == "xy":
        return od.pairwise_differences(linear_items(env))
    Y, _ = od.oracle_directions(linear_items(env), env.theta)
    return np.asarray(Y)


DESIGN_CACHE_SIZE = 16
_design_cache: dict[tuple[str, str, str], np.ndarray] = {}
FW_MAX_ITER = 5000  # Frank–Wolfe of the authors' code: iteration cap, stopping ratio, pruning level
FW_STOP = 0.01
FW_PRUNE = 1e-5


def static_design(design: str, env: LinearBandit, variant: str = "soare") -> np.ndarray:
    """Weights of the continuous design: certified optimum (G: Kiefer–Wolfowitz; XY and oracle: min-max)
    for ``variant="soare"``, the authors' Frank–Wolfe (:func:`fiez_frank_wolfe`) for ``"fiez"``.

    It depends on the instance only (X, Z and, for the oracle, theta), so the last
    DESIGN_CACHE_SIZE designs are kept per process: replicates of a study on one instance solve it once.

    Parameters
    ----------
    design : str
        ``"g"``, ``"xy"`` or ``"oracle"`` (see :class:`StaticAllocation`).
    env : LinearBandit
        The instance (the oracle design reads its theta).
    variant : str
        ``"soare"`` (certified optimum, default) or ``"fiez"`` (the authors' Frank–Wolfe; ``xy`` and ``oracle``).

    Returns
    -------
    numpy.ndarray, shape (K,)
        Design weights on the arms (read-only: shared by every run on the instance).
    """
    digest = hashlib.sha256()
    items = linear_items(env)
    for array in (env.X, items, env.theta):
        digest.update(np.asarray(array.shape, dtype=np.int64).tobytes() + np.ascontiguousarray(array).tobytes())
    key = (design, variant, digest.hexdigest())
    if key not in _design_cache:
        if len(_design_cache) >= DESIGN_CACHE_SIZE:
            _design_cache.pop(next(iter(_design_cache)))
        if variant == "fiez":
            directions = None if design == "xy" else np.asarray(od.oracle_directions(items, env.theta)[0])
            weights = fiez_frank_wolfe(env.X, directions, items)
        else:
            weights = _solve_static_design(design, env).weights
        weights.flags.writeable = False  # shared by every run on this instance
        _design_cache[key] = weights
    return _design_cache[key]


def fiez_frank_wolfe(X: np.ndarray, Y: np.ndarray | None, Z: np.ndarray | None = None) -> np.ndarray:
    """The min-max design as Fiez et al.'s code solves it: Frank–Wolfe on max_y ||y||^2_{A(w)^{-1}} from the
    uniform w, vertex argmax_x (x^T A^{-1} y_max)^2, step gamma_t = 2 / (t + 2), stopped at the first step with
    ||w_{t+1} - w_t|| < 0.01 ||w_t||; weights below 1e-5 are then moved to the largest one.

    Directions: the rows of ``Y``, or (``Y`` None) all differences z_i - z_j of the rows of ``Z``, never listed:
    the largest is the farthest pair of the whitened items (:func:`optdesign.linear.top_pairs`).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    Y : numpy.ndarray, shape (P, d), or None
        The directions (the oracle's), or None for all differences of the items ``Z`` (then required).
    Z : numpy.ndarray, shape (M, d), optional
        The items.

    Returns
    -------
    numpy.ndarray, shape (K,)
        The pruned weights (summing to 1).

    Raises
    ------
    InvalidInputError
        ``Y`` and ``Z`` both None, or fewer than two items.
    """
    w = np.full(X.shape[0], 1.0 / X.shape[0])
    if Y is None:
        if Z is None or Z.shape[0] < 2:
            raise InvalidInputError("fiez_frank_wolfe needs at least two items Z when the directions Y are not given")
        items = Z
    for t in range(1, FW_MAX_ITER):
        eigval, eigvec = np.linalg.eigh(X.T @ (w[:, None] * X))
        keep = eigval > 1e-12 * eigval.max()
        root = eigvec[:, keep] / np.sqrt(eigval[keep])  # A^+ = root root^T
        if Y is None:
            i, j = top_pairs(root.T @ items.T, 1)[1][0]
            y = items[i] - items[j]
        else:
            y = Y[int(np.argmax(np.sum((Y @ root) ** 2, axis=1)))]
        vertex = int(np.argmax((X @ (root @ (root.T @ y))) ** 2))
        gamma = 2.0 / (t + 2.0)
        step = -gamma * w
        step[vertex] += gamma
        ratio = np.linalg.norm(step) / np.linalg.norm(w)
        w = w + step
        if ratio < FW_STOP:
            break
    small = w < FW_PRUNE
    w[int(np.argmax(w))] += w[small].sum()
    w[small] = 0.0
    return w / w.sum()


def _solve_static_design(design: str, env: LinearBandit) -> od.DesignResult:
    """The certified design of ``static_design`` (``variant="soare"``)."""
    if design == "g":
        return od.g_optimal(env.X)
    if design == "xy":
        return od.transductive(env.X, linear_items(env))
    return od.transductive(env.X, linear_items(env), env.theta)


class _SpanningFirst(SamplerState):
    """Rules that start with one pull of each of d spanning arms (A_0)."""

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """One pull of each of d spanning arms (A_0)."""
        counts = np.zeros(problem.n_arms, dtype=np.int64)
        counts[problem.exploration_arms()] = 1
        return counts


class _DesignState(_SpanningFirst):
    """The spanning pulls, then batches tracking the continuous design (the policy's grid and GLR stop)."""

    def __init__(self, algo: StaticAllocation, env: LinearBandit) -> None:
        start = time.perf_counter()
        self.weights = static_design(algo.design, env)
        self.solve_time = time.perf_counter() - start

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return track(obs.counts, self.weights, n)


class _GreedyState(_SpanningFirst):
    """Soare's incremental rule: one pull per step; the GLR stop waits for the geometric grid (each check is an
    O(|Z| d^2) GLR)."""

    grid_checks = True

    def __init__(self, algo: StaticAllocation, env: LinearBandit) -> None:
        self.X = env.X
        start = time.perf_counter()
        self.Y = static_directions(algo.design, env)
        self.solve_time = time.perf_counter() - start
        self.stats = LinearStatistics(self.X)

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.stats.add(counts, sums)

    def batch(self, obs: Observations, n: int) -> np.ndarray:
        return self.plan(obs, 1)

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        counts = np.zeros(self.X.shape[0], dtype=np.int64)
        counts[od.greedy_choice(self.X, self.Y, self.stats.A)] = 1
        return counts


class _FiezStaticState(SamplerState):
    """Batches of ceil(u^k) i.i.d. draws from the design, k = 1, 3, 5, ...; GLR > log(1 / delta_k) stops."""

    def __init__(self, algo: StaticAllocation, env: LinearBandit, rng: np.random.Generator) -> None:
        self.X, self.Z, self.sigma = env.X, linear_items(env), env.sigma
        self.rng = rng
        self.growth, self.power = FIEZ_SCHEDULE[algo.design]
        start = time.perf_counter()
        weights = np.clip(static_design(algo.design, env, "fiez"), 0.0, None)
        self.weights = weights / weights.sum()
        self.solve_time = time.perf_counter() - start
        self.stats = LinearStatistics(self.X)
        self.batches = 0  # completed batches
        self._owed: np.ndarray | None = None  # pulls of the batch under way not yet made
        self._spanning = False
        self._glr: GLR | None = None

    @property
    def k(self) -> int:
        """Phase index of the last completed batch (k = 2m - 1 for batch m)."""
        return 2 * self.batches - 1

    def delta_k(self, delta: float) -> float:
        """delta / (2 k^2 |Z|^power): power 2 for XY-Static, 1 for XY-Oracle."""
        return float(delta) / (2.0 * self.k**2 * self.Z.shape[0] ** self.power)

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        return self._rest_of_batch(budget)

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return self._rest_of_batch(obs.budget)

    def _rest_of_batch(self, budget: int) -> np.ndarray:
        if self._owed is None:
            size = int(np.ceil(self.growth ** (2 * self.batches + 1)))
            self._owed = self.rng.multinomial(size, self.weights).astype(np.int64)
        return portion(self._owed, budget)

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.stats.add(counts, sums)
        self._glr = None
        if self._owed is None:  # observe always follows a batch, which plans it
            raise RuntimeError("observe() before a batch")
        self._owed = self._owed - counts
        if self._owed.sum() == 0:
            self._owed = None
            self.batches += 1

    def glr(self) -> GLR | None:
        """The GLR over the items after each completed batch, once the pulls span R^d (None otherwise)."""
        if self.batches == 0 or self._owed is not None:
            return None
        if not self._spanning:
            pulled = self.X[np.flatnonzero(self.stats.counts)]
            self._spanning = bool(np.linalg.matrix_rank(pulled) == self.X.shape[1])
        if not self._spanning:
            return None
        if self._glr is None:
            self._glr = self.stats.glr(self.Z, self.sigma)
        return self._glr

    def own_test(self, delta: float) -> bool:
        glr = self.glr()
        return glr is not None and glr.value > np.log(1.0 / self.delta_k(delta))

    def recommendation(self) -> int:
        glr = self.glr()
        if glr is not None:
            return glr.best
        if self.stats.n == 0:
            return 0
        theta = np.linalg.pinv(self.stats.A) @ self.stats.b
        return int(np.argmax(self.Z @ theta))

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        glr = self.glr()
        return {"k": self.k} if glr is None else {"k": self.k, "glr": glr.value, "best": glr.best}
