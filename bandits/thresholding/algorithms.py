"""Fixed-budget thresholding algorithms: GrAPL (LeJeune et al. 2020, Alg. 2), APT (Locatelli et al. 2016) and
the non-adaptive Laplacian baseline (LeJeune et al. 2020, Alg. 1).

A :class:`ThresholdingAlgorithm` is a frozen configuration; ``start(env, rng)`` returns a
:class:`ThresholdingPolicy` (the state of one run), which :func:`bandits.thresholding.run_thresholding`
drives: ``next_batch(budget)`` -> pull counts (one pull for the index rules, a whole batch for the
non-adaptive sampler), ``observe(counts, sums)``, ``estimate()`` -> mu_hat (the output is
S_hat = {i : mu_hat_i >= tau}). Index rules are anytime: they do not use the budget T.

Ties of an argmin index (exact equality, e.g. every arm at t = 0) are broken uniformly at random with the
algorithm's rng (``ties="random"``, default) or by the lowest index (``ties="first"``, the authors' code's
``np.argmin``). The rng is the algorithm's own (see :mod:`bandits.run`), never the environment's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass

import numpy as np

from optdesign.errors import InvalidInputError

from ..validation import check_choice, check_positive
from .estimator import SOLVERS, LaplacianEstimator, check_lambda
from .spectral import optimal_gamma

TIES = ("random", "first")
#: arms drawn at once by the non-adaptive sampler (its batches are counted chunk by chunk)
DRAW_CHUNK = 2**20
ORDERS = ("uniform", "permutation")


def argmin_index(z: np.ndarray, ties: str, rng: np.random.Generator) -> int:
    """argmin_i z_i, exact ties broken at random (``ties="random"``) or by the lowest index (``"first"``)."""
    best = int(np.argmin(z))
    if ties == "first":
        return best
    tied = np.flatnonzero(z == z[best])
    return best if tied.size == 1 else int(rng.choice(tied))


def one_pull(n_arms: int, arm: int) -> np.ndarray:
    counts = np.zeros(n_arms, dtype=np.int64)
    counts[arm] = 1
    return counts


class ThresholdingPolicy(ABC):
    """State of one fixed-budget run."""

    def warmup(self) -> np.ndarray | None:
        """Pull counts the rule starts with (APT: ``init_pulls`` per arm), or None. The runner either
        charges them to the budget (they are then the first pulls of ``next_batch``) or gives them
        for free before t = 0 (the paper's Fig. 1-2 axis for APT)."""
        return None

    @abstractmethod
    def next_batch(self, budget: int) -> np.ndarray:
        """Pull counts per arm for the next batch; their sum is in [1, budget]."""

    @abstractmethod
    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Record a batch: ``sums[k]`` is the sum of the ``counts[k]`` rewards of arm k."""

    @abstractmethod
    def estimate(self) -> np.ndarray:
        """The current mean estimate mu_hat (N,)."""

    def diagnostics(self) -> dict:
        return {}


@dataclass(frozen=True)
class ThresholdingAlgorithm(ABC):
    """A fixed-budget thresholding algorithm configuration (frozen dataclass of its options)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name used by the CLI and in result tables."""

    @abstractmethod
    def start(self, env, rng: np.random.Generator) -> ThresholdingPolicy:
        """A fresh policy for a :class:`GraphThresholdingBandit` (its public fields)."""

    def describe(self) -> dict:
        return {"algorithm": self.name, **asdict(self)}


def _check_estimator_options(alg) -> None:
    if not (isinstance(alg.gamma, str) and alg.gamma == "opt"):
        check_positive(alg.gamma, "gamma", " (or 'opt')" if hasattr(alg, "alpha") else "")
    check_lambda(alg.lam)
    check_choice(alg.solver, "solver", SOLVERS)
    if not (np.isfinite(alg.rtol) and 0 < alg.rtol < 1):
        raise InvalidInputError(f"rtol must be in (0, 1), got {alg.rtol!r}")


class _LaplacianPolicy(ThresholdingPolicy):
    """Shared state of the rules that use the Laplacian-regularised estimate."""

    def __init__(self, alg, env, rng: np.random.Generator, gamma: float):
        self.env, self.rng = env, rng
        self.est = LaplacianEstimator(env.laplacian, env.tau, gamma, alg.lam, solver=alg.solver, rtol=alg.rtol)

    def observe(self, counts, sums) -> None:
        arms = np.flatnonzero(counts)
        if arms.size == 1:
            self.est.add(int(arms[0]), float(sums[arms[0]]), int(counts[arms[0]]))
        else:
            self.est.add_batch(counts, sums)

    def estimate(self) -> np.ndarray:
        return self.est.mean()

    def diagnostics(self) -> dict:
        e = self.est
        return {"gamma": e.gamma, "solver": e.solver, "solves": e.solves, "cg_iterations": e.iterations,
                "cg_unconverged": e.unconverged, "estimator_time": e.solve_time}


@dataclass(frozen=True)
class GrAPL(ThresholdingAlgorithm):
    """GrAPL (LeJeune et al. 2020, Alg. 2): pull argmin_i (|mu_hat_i - tau| + eps) sqrt(n_i + alpha), with
    mu_hat the Laplacian-regularised estimate (:mod:`.estimator`). ``alpha=None`` uses eps (the authors'
    code default; the experiments use 1 for the SBM, 1e-8 for the small-world graph); ``gamma="opt"``
    uses :func:`optimal_gamma` at the true means (an oracle choice, as in the paper's gamma* runs)."""

    gamma: float | str = 10.0
    lam: float = 1e-3
    alpha: float | None = None
    ties: str = "random"
    solver: str = "auto"
    rtol: float = 1e-9

    def __post_init__(self):
        _check_estimator_options(self)
        if self.alpha is not None:
            check_positive(self.alpha, "alpha", " (pseudo-count of the index)")
        check_choice(self.ties, "ties", TIES)

    @property
    def name(self) -> str:
        return "grapl"

    def start(self, env, rng):
        alpha = env.eps if self.alpha is None else float(self.alpha)
        gamma = optimal_gamma(env, alpha, self.lam).gamma if self.gamma == "opt" else self.gamma
        return _GrAPLPolicy(self, env, rng, gamma, alpha)


class _GrAPLPolicy(_LaplacianPolicy):
    def __init__(self, alg: GrAPL, env, rng, gamma: float, alpha: float):
        super().__init__(alg, env, rng, gamma)
        self.alpha, self.ties = alpha, alg.ties

    def next_batch(self, budget: int) -> np.ndarray:
        env = self.env
        z = (np.abs(self.est.mean() - env.tau) + env.eps) * np.sqrt(self.est.counts + self.alpha)
        return one_pull(env.n_arms, argmin_index(z, self.ties, self.rng))


@dataclass(frozen=True)
class RandomLaplacian(ThresholdingAlgorithm):
    """Non-adaptive baseline (LeJeune et al. 2020, Alg. 1): arms uniformly at random (``order="uniform"``)
    or cycling through one random permutation (``"permutation"``), Laplacian-regularised estimate. The
    sampling ignores the data, so a whole batch is drawn at once and the estimate is solved only when asked."""

    gamma: float = 100.0
    lam: float = 1e-3
    order: str = "uniform"
    solver: str = "cg"
    rtol: float = 1e-9

    def __post_init__(self):
        _check_estimator_options(self)
        if isinstance(self.gamma, str):
            raise InvalidInputError(f"gamma must be a positive number, got {self.gamma!r}")
        check_choice(self.order, "order", ORDERS)

    @property
    def name(self) -> str:
        return "random-laplacian"

    def start(self, env, rng):
        return _RandomPolicy(self, env, rng)


class _RandomPolicy(_LaplacianPolicy):
    def __init__(self, alg: RandomLaplacian, env, rng):
        super().__init__(alg, env, rng, alg.gamma)
        self.perm = rng.permutation(env.n_arms) if alg.order == "permutation" else None
        self.pos = 0

    def next_batch(self, budget: int) -> np.ndarray:
        n = self.env.n_arms
        counts = np.zeros(n, dtype=np.int64)
        if self.perm is None:  # in chunks (the same draws as one call): a batch may hold billions of pulls
            for start in range(0, budget, DRAW_CHUNK):
                counts += np.bincount(self.rng.integers(n, size=min(DRAW_CHUNK, budget - start)), minlength=n)
            return counts
        cycles, rest = divmod(budget, n)  # whole passes over the permutation, then the next `rest` arms
        counts += cycles
        counts[self.perm[(self.pos + np.arange(rest)) % n]] += 1
        self.pos = (self.pos + budget) % n
        return counts


@dataclass(frozen=True)
class APT(ThresholdingAlgorithm):
    """APT (Locatelli et al. 2016): after ``init_pulls`` pulls of every arm (round robin; 1 in the original,
    2 in the GrAPL experiments' code), pull argmin_i sqrt(n_i) (|mu_hat_i - tau| + eps) with plain
    empirical means. Ignores the graph. Before an arm's first pull its estimate is tau."""

    init_pulls: int = 2
    ties: str = "random"

    def __post_init__(self):
        if isinstance(self.init_pulls, bool) or not isinstance(self.init_pulls, (int, np.integer)) \
                or self.init_pulls < 1:
            raise InvalidInputError(f"init_pulls must be a positive integer, got {self.init_pulls!r}")
        check_choice(self.ties, "ties", TIES)

    @property
    def name(self) -> str:
        return "apt"

    def start(self, env, rng):
        return _APTPolicy(self, env, rng)


class _APTPolicy(ThresholdingPolicy):
    def __init__(self, alg: APT, env, rng):
        self.env, self.rng, self.init, self.ties = env, rng, int(alg.init_pulls), alg.ties
        self.counts = np.zeros(env.n_arms, dtype=np.int64)
        self.sums = np.zeros(env.n_arms)

    def warmup(self) -> np.ndarray:
        return np.full(self.env.n_arms, self.init, dtype=np.int64)

    def next_batch(self, budget: int) -> np.ndarray:
        n = self.env.n_arms
        done = int(self.counts.sum())
        if done < self.init * n:  # round robin 0..N-1, init times: the next min(budget, left) of that sequence
            k = min(budget, self.init * n - done)
            return np.bincount(np.arange(done, done + k) % n, minlength=n)
        mu = self.sums / self.counts
        z = np.sqrt(self.counts) * (np.abs(mu - self.env.tau) + self.env.eps)
        return one_pull(n, argmin_index(z, self.ties, self.rng))

    def observe(self, counts, sums) -> None:
        self.counts += counts
        self.sums += sums

    def estimate(self) -> np.ndarray:
        return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), self.env.tau)
