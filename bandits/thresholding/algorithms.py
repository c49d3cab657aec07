"""Fixed-budget thresholding algorithms: their interface, GrAPL (LeJeune et al. 2020, Alg. 2) and the non-adaptive
Laplacian baseline (LeJeune et al. 2020, Alg. 1); APT (Locatelli et al. 2016) is :mod:`bandits.thresholding.apt`.

A :class:`ThresholdingAlgorithm` is a frozen configuration; ``start(env, rng)`` returns a
:class:`ThresholdingPolicy` (the state of one run), which :func:`bandits.thresholding.run_thresholding`
drives: ``next_batch(budget)`` -> pull counts (one pull for the index rules, a whole batch for the
non-adaptive sampler), ``observe(counts, sums)``, ``estimate()`` -> mu_hat (the output is
S_hat = {i : mu_hat_i >= tau}). Index rules are anytime: they do not use the budget T.

Ties of an argmin index (up to rounding, ``TIE_RTOL``: every arm at t = 0, symmetric nodes whose indices differ
in the last bits, differently between BLAS builds) are broken at random with the algorithm's own rng
(``ties="random"``, default; see :mod:`bandits.run`) or by the lowest index (``"first"``, the authors' np.argmin).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from optdesign.errors import InvalidInputError

from ..core.validation import check_choice, check_positive
from .environment import GraphThresholdingBandit
from .estimator import SOLVERS, LaplacianEstimator, check_lambda
from .spectral import optimal_gamma

__all__ = ["GrAPL", "RandomLaplacian", "ThresholdingAlgorithm", "ThresholdingPolicy"]

TIES = ("random", "first")
#: indices within this fraction of the largest |index| of the minimum are ties (rounding, not information)
TIE_RTOL = 1e-12
#: arms drawn at once by the non-adaptive sampler (its batches are counted chunk by chunk)
DRAW_CHUNK = 2**20
ORDERS = ("uniform", "permutation")


def argmin_index(z: npt.NDArray[np.float64], ties: str, rng: np.random.Generator) -> int:
    """argmin_i z_i, ties up to rounding (``TIE_RTOL``) broken at random (``ties="random"``) or by the lowest index
    (``"first"``)."""
    best = int(np.argmin(z))
    tied = np.flatnonzero(z <= z[best] + TIE_RTOL * float(np.max(np.abs(z))))
    if ties == "first":
        return int(tied[0])
    return best if tied.size == 1 else int(rng.choice(tied))


def one_pull(n_arms: int, arm: int) -> npt.NDArray[np.int64]:
    """The pull counts of a batch of one pull of ``arm``."""
    counts = np.zeros(n_arms, dtype=np.int64)
    counts[arm] = 1
    return counts


class ThresholdingPolicy(ABC):
    """State of one fixed-budget run, made by :meth:`~bandits.thresholding.algorithms.ThresholdingAlgorithm.start` and
    driven by :func:`bandits.thresholding.run_thresholding` (``next_batch``, ``observe``, ``estimate``)."""

    def warmup(self) -> npt.NDArray[np.int64] | None:
        """Pull counts the rule starts with (APT: ``init_pulls`` per arm), or None.

        The runner either charges them to the budget (they are then the first pulls of ``next_batch``) or
        gives them for free before t = 0 (the paper's Fig. 1-2 axis for APT).

        Returns
        -------
        numpy.ndarray of int64, shape (N,), or None
            Warm-up pulls per arm; None (the default) when the rule has no warm-up.
        """
        return None

    @abstractmethod
    def next_batch(self, budget: int) -> npt.NDArray[np.int64]:
        """Pull counts per arm for the next batch.

        Parameters
        ----------
        budget : int
            Pulls left until the next recorded time (at least 1); the batch may not exceed it.

        Returns
        -------
        numpy.ndarray of int64, shape (N,)
            Nonnegative pull counts whose sum is in [1, budget].
        """

    @abstractmethod
    def observe(self, counts: npt.NDArray[np.int64], sums: npt.NDArray[np.float64]) -> None:
        """Record a batch of pulls and their rewards.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (N,)
            Pulls of each arm in the batch.
        sums : numpy.ndarray of float, shape (N,)
            ``sums[k]`` is the sum of the ``counts[k]`` rewards of arm k (0 where ``counts[k] == 0``).
        """

    @abstractmethod
    def estimate(self) -> npt.NDArray[np.float64]:
        """The current mean estimate mu_hat, whose superlevel set {i : mu_hat_i >= tau} is the output.

        Returns
        -------
        numpy.ndarray of float, shape (N,)
            mu_hat, one entry per arm.
        """

    def diagnostics(self) -> dict[str, Any]:
        """Counters of the run for ``ThresholdingResult.diagnostics`` (solver, CG iterations, gamma used, ...).

        Returns
        -------
        dict
            Name to value; empty by default.
        """
        return {}


@dataclass(frozen=True)
class ThresholdingAlgorithm(ABC):
    """A fixed-budget thresholding algorithm configuration (frozen dataclass of its options)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name used by the CLI and in result tables."""

    @abstractmethod
    def start(self, env: GraphThresholdingBandit, rng: np.random.Generator) -> ThresholdingPolicy:
        """A fresh policy for one run on ``env``.

        Parameters
        ----------
        env : GraphThresholdingBandit
            The instance; the policy reads its public fields (graph Laplacian, tau, eps, N), never its means
            (except the oracle ``gamma="opt"`` of GrAPL).
        rng : numpy.random.Generator
            The algorithm's own randomness (ties, random arms), independent of the environment's noise.

        Returns
        -------
        ThresholdingPolicy
            The state of the run, before any pull.
        """

    def warmup_pulls(self, n_arms: int) -> int:
        """The pulls of the warm-up a policy starts with on ``n_arms`` arms (:meth:`ThresholdingPolicy.warmup`),
        known before any run: 0 by default.

        Parameters
        ----------
        n_arms : int
            The instance's number of arms N.

        Returns
        -------
        int
            The warm-up's pulls.
        """
        return 0

    def describe(self) -> dict[str, Any]:
        """The configuration for result records: ``{"algorithm": name, **options}``.

        Returns
        -------
        dict
            The algorithm's name and every option of the dataclass.
        """
        return {"algorithm": self.name, **asdict(self)}


def _check_estimator_options(alg: GrAPL | RandomLaplacian) -> None:
    if not (isinstance(alg.gamma, str) and alg.gamma == "opt"):
        check_positive(alg.gamma, "gamma", " (or 'opt')" if hasattr(alg, "alpha") else "")
    check_lambda(alg.lam)
    check_choice(alg.solver, "solver", SOLVERS)
    if not (np.isfinite(alg.rtol) and 0 < alg.rtol < 1):
        raise InvalidInputError(f"rtol must be in (0, 1), got {alg.rtol!r}")


class _LaplacianPolicy(ThresholdingPolicy):
    """Shared state of the rules that use the Laplacian-regularised estimate."""

    def __init__(self, alg: GrAPL | RandomLaplacian, env: GraphThresholdingBandit, rng: np.random.Generator,
                 gamma: float):
        self.env, self.rng = env, rng
        self.est = LaplacianEstimator(env.laplacian, env.tau, gamma, alg.lam, solver=alg.solver, rtol=alg.rtol)

    def observe(self, counts: npt.NDArray[np.int64], sums: npt.NDArray[np.float64]) -> None:
        arms = np.flatnonzero(counts)
        if arms.size == 1:
            self.est.add(int(arms[0]), float(sums[arms[0]]), int(counts[arms[0]]))
        else:
            self.est.add_batch(counts, sums)

    def estimate(self) -> npt.NDArray[np.float64]:
        return self.est.mean()

    def diagnostics(self) -> dict[str, Any]:
        e = self.est
        return {"gamma": e.gamma, "solver": e.solver, "solves": e.solves, "cg_iterations": e.iterations,
                "cg_unconverged": e.unconverged, "lu_factorizations": e.factorizations,
                "estimator_time": e.solve_time}


@dataclass(frozen=True)
class GrAPL(ThresholdingAlgorithm):
    """GrAPL (LeJeune et al. 2020, Alg. 2): pull argmin_i (|mu_hat_i - tau| + eps) sqrt(n_i + alpha), with
    mu_hat the Laplacian-regularised estimate (:mod:`.estimator`). ``alpha=None`` uses eps (the authors'
    code default; the experiments use 1 for the SBM, 1e-8 for the small-world graph); ``gamma="opt"``
    uses :func:`optimal_gamma` at the true means (an oracle choice, as in the paper's gamma* runs).

    The options are also the CLI's ``grapl:key=value`` keys.

    Parameters
    ----------
    gamma : float or "opt"
        Weight gamma > 0 of the Laplacian penalty gamma ||mu - tau 1||^2_{L_lambda} of the estimate (the
        paper's gamma; larger trusts the graph smoothness more), or ``"opt"`` for the oracle gamma*.
    lam : float
        Ridge lambda > 0 of L_lambda = L + lambda I (the paper's lambda; keeps V_t invertible).
    alpha : float, optional
        Pseudo-count alpha > 0 of the index sqrt(n_i + alpha) (the paper's alpha); None uses the
        instance's eps.
    ties : str
        ``"random"`` breaks ties of the index (up to rounding) uniformly at random, ``"first"`` by the lowest
        index.
    solver : str
        How the estimate is updated: ``"auto"``, ``"cg"``, ``"lu-update"``, ``"direct"`` or
        ``"sherman-morrison"`` (see :class:`LaplacianEstimator`).
    rtol : float
        Relative tolerance in (0, 1) of the CG solves.

    Raises
    ------
    InvalidInputError
        A gamma, lam or alpha that is not a positive number, an unknown ties or solver, rtol outside (0, 1).
    """

    gamma: float | str = 10.0
    lam: float = 1e-3
    alpha: float | None = None
    ties: str = "random"
    solver: str = "auto"
    rtol: float = 1e-9

    def __post_init__(self) -> None:
        _check_estimator_options(self)
        if self.alpha is not None:
            check_positive(self.alpha, "alpha", " (pseudo-count of the index)")
        check_choice(self.ties, "ties", TIES)

    @property
    def name(self) -> str:
        return "grapl"

    def start(self, env: GraphThresholdingBandit, rng: np.random.Generator) -> ThresholdingPolicy:
        """GrAPL's policy; with ``gamma="opt"`` it first computes gamma* from ``env``'s true means."""
        alpha = env.eps if self.alpha is None else float(self.alpha)
        gamma = optimal_gamma(env, alpha, self.lam).gamma if isinstance(self.gamma, str) else float(self.gamma)
        return _GrAPLPolicy(self, env, rng, gamma, alpha)


class _GrAPLPolicy(_LaplacianPolicy):
    def __init__(self, alg: GrAPL, env: GraphThresholdingBandit, rng: np.random.Generator, gamma: float,
                 alpha: float):
        super().__init__(alg, env, rng, gamma)
        self.alpha, self.ties = alpha, alg.ties

    def next_batch(self, budget: int) -> npt.NDArray[np.int64]:
        env = self.env
        z = (np.abs(self.est.mean() - env.tau) + env.eps) * np.sqrt(self.est.counts + self.alpha)
        return one_pull(env.n_arms, argmin_index(z, self.ties, self.rng))


@dataclass(frozen=True)
class RandomLaplacian(ThresholdingAlgorithm):
    """Non-adaptive baseline (LeJeune et al. 2020, Alg. 1): arms uniformly at random (``order="uniform"``)
    or cycling through one random permutation (``"permutation"``), Laplacian-regularised estimate. The
    sampling ignores the data, so a whole batch is drawn at once and the estimate is solved only when asked.

    The options are also the CLI's ``random-laplacian:key=value`` keys.

    Parameters
    ----------
    gamma : float
        Weight gamma > 0 of the Laplacian penalty of the estimate (the paper's gamma).
    lam : float
        Ridge lambda > 0 of L_lambda = L + lambda I.
    order : str
        ``"uniform"`` draws every pull uniformly at random; ``"permutation"`` cycles through one random
        permutation of the arms.
    solver : str
        How the estimate is solved: ``"auto"``, ``"cg"`` (default), ``"lu-update"``, ``"direct"`` or
        ``"sherman-morrison"``.
    rtol : float
        Relative tolerance in (0, 1) of the CG solves.

    Raises
    ------
    InvalidInputError
        A gamma or lam that is not a positive number (gamma cannot be ``"opt"`` here), an unknown order or
        solver, rtol outside (0, 1).
    """

    gamma: float = 100.0
    lam: float = 1e-3
    order: str = "uniform"
    solver: str = "cg"
    rtol: float = 1e-9

    def __post_init__(self) -> None:
        _check_estimator_options(self)
        if isinstance(self.gamma, str):
            raise InvalidInputError(f"gamma must be a positive number, got {self.gamma!r}")
        check_choice(self.order, "order", ORDERS)

    @property
    def name(self) -> str:
        return "random-laplacian"

    def start(self, env: GraphThresholdingBandit, rng: np.random.Generator) -> ThresholdingPolicy:
        """The non-adaptive sampler's policy (draws the permutation from ``rng`` when ``order="permutation"``)."""
        return _RandomPolicy(self, env, rng)


class _RandomPolicy(_LaplacianPolicy):
    def __init__(self, alg: RandomLaplacian, env: GraphThresholdingBandit, rng: np.random.Generator):
        super().__init__(alg, env, rng, alg.gamma)
        self.perm: npt.NDArray[np.int64] | None = rng.permutation(env.n_arms) if alg.order == "permutation" else None
        self.pos = 0

    def next_batch(self, budget: int) -> npt.NDArray[np.int64]:
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
