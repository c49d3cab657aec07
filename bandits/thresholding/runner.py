"""One fixed-budget thresholding run: (algorithm, environment, T, seed) -> ThresholdingResult.

Unlike :func:`bandits.run.run` (fixed confidence, runs until a stopping rule fires) the run lasts exactly
T pulls and is judged at the end, and along the way on a grid of times: the error curve
E(t) = #{judged arms misclassified by S_hat_t} / N (the metric of the paper's Figs. 1-3), the loss
L_t = 1{some arm with |mu_i - tau| > eps is misclassified} and |S_hat_t|, S_hat = {i : mu_hat_i >= tau} (S_hat itself
at T). The rules are anytime, so the grid is also the budgets of a fixed-budget run read from one trajectory
(:class:`bandits.experiment.Experiment` with ``budgets``).

The seed feeds ``numpy.random.SeedSequence`` exactly as in :mod:`bandits.run`: one child drives the
environment's noise, the other the algorithm's own randomness (ties, random arms).

Warm-up pulls (APT's ``init_pulls`` per arm): with ``count_warmup=True`` (default) they are the first
pulls of the budget and T must cover them; with ``count_warmup=False`` they are given before t = 0, t
counts the iterations after them and the run uses T + warm-up samples. The latter is the axis of the
paper's Figs. 1-2 ("APT is initialized with an additional 2N samples before its first iteration").

Run time: the run-time rule of :mod:`bandits.core.run_time` (a budget the run cannot finish in a year is refused,
at once or once the rate of pulls has been measured, from the first pull: the policy's start, e.g. GrAPL's oracle
gamma*, and a free warm-up are left out). A budget above MAX_RUN_SECONDS x MIN_PULLS_PER_SECOND pulls reports no
progress until the rule has decided, so a caller's own estimate never runs ahead of it. A policy that draws a whole
interval of the error grid in one batch (``RandomLaplacian``, T / 100 pulls) is measured at the end of that batch.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.environments import as_counts
from ..core.run_time import RunTime, check_run_time
from ..core.seeds import split_seed
from .algorithms import ThresholdingAlgorithm, ThresholdingPolicy
from .environment import GraphThresholdingBandit

__all__ = ["ThresholdingResult", "run_thresholding"]


def __getattr__(name: str) -> Any:
    """The run-time rule's limit, importable from here as before it moved to :mod:`bandits.core.run_time` (a
    DeprecationWarning; ``check_run_time``, which the runner calls, is still here)."""
    if name == "MAX_RUN_SECONDS":
        from ..core import run_time

        warnings.warn(f"bandits.thresholding.runner.{name} moved to bandits.core.run_time.{name}", DeprecationWarning,
                      stacklevel=2)
        return getattr(run_time, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class ThresholdingResult:
    """Outcome of one run. ``times`` and ``errors`` are the grid and E(t) on it (t = 0 is before any
    pull), ``errors_notebook`` the authors' plotted variant (``GraphThresholdingBandit.error_notebook``);
    ``samples`` counts every pull (T plus a free warm-up); ``superlevel`` lists S_hat at T;
    ``loss`` is L_T; ``diagnostics`` holds algorithm counters (CG iterations, gamma used, ...)."""

    #: the algorithm's name (``ThresholdingAlgorithm.name``)
    algorithm: str
    #: the environment's name
    instance: str
    #: the run's seed when it is an int (None for a SeedSequence or no seed)
    seed: int | None
    #: the budget: pulls of the run, warm-up included when it counts
    T: int
    #: every pull made, a free warm-up included
    samples: int
    #: the times t at which E(t) was recorded (integers in [0, T], T last)
    times: npt.NDArray[np.int64]
    #: E(t) on ``times`` (:meth:`~bandits.thresholding.environment.GraphThresholdingBandit.error`)
    errors: npt.NDArray[np.float64]
    #: the notebook metric on ``times``
    #: (:meth:`~bandits.thresholding.environment.GraphThresholdingBandit.error_notebook`)
    errors_notebook: npt.NDArray[np.float64]
    #: L_t on ``times``: whether some judged arm is misclassified at t (the fixed-budget mode's error at budget t)
    losses: npt.NDArray[np.bool_]
    #: |S_hat_t| on ``times``
    superlevel_sizes: npt.NDArray[np.int64]
    #: seconds from the run's start to each of ``times``
    elapsed: npt.NDArray[np.float64]
    #: E at T
    error: float
    #: L_T: whether some judged arm is misclassified at T
    loss: bool
    #: S_hat at T: indices of the arms with mu_hat_i >= tau
    superlevel: npt.NDArray[np.int64]
    #: seconds of the run
    wall_time: float
    #: whether the warm-up pulls were charged to the budget
    count_warmup: bool
    #: the algorithm's configuration (``ThresholdingAlgorithm.describe``)
    config: dict[str, Any] = field(default_factory=dict)
    #: the policy's counters (``ThresholdingPolicy.diagnostics``)
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def error_at(self, t: int) -> float:
        """E(t) at a recorded time t.

        Parameters
        ----------
        t : int
            A time of ``times``.

        Returns
        -------
        float
            The error E(t).

        Raises
        ------
        InvalidInputError
            ``t`` is not on the recorded grid.
        """
        hit = np.flatnonzero(self.times == t)
        if hit.size == 0:
            raise InvalidInputError(f"t = {t} is not on the recorded grid")
        return float(self.errors[hit[0]])

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready data (arrays as lists).

        Returns
        -------
        dict
            Every field by name.
        """
        out = asdict(self)
        for key in ("times", "errors", "errors_notebook", "losses", "superlevel_sizes", "elapsed", "superlevel"):
            out[key] = np.asarray(out[key]).tolist()
        return out


def record_grid(T: int, record: int | npt.ArrayLike | None) -> npt.NDArray[np.int64]:
    """Times at which E(t) is recorded: ``None`` -> 101 evenly spaced points of [0, T]; an int k -> k + 1
    evenly spaced points; a sequence -> those times (integers in [0, T]). T is always included."""
    if record is None:
        record = 100
    if isinstance(record, (int, np.integer)) and not isinstance(record, bool):
        if record < 1:
            raise InvalidInputError(f"record must be a positive number of grid intervals, got {record}")
        grid = np.round(np.linspace(0, T, int(record) + 1)).astype(np.int64)
    else:
        try:
            grid = np.asarray(record, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InvalidInputError("record must be None, a number of grid points or a sequence of times") from None
        if grid.size == 0 or np.any(grid != np.round(grid)) or grid.min() < 0 or grid.max() > T:
            raise InvalidInputError(f"record times must be integers in [0, T = {T}]")
        grid = grid.astype(np.int64)
    return np.unique(np.append(grid, T))


def run_thresholding(algorithm: ThresholdingAlgorithm, env: GraphThresholdingBandit, T: int,
                     seed: int | np.integer | np.random.SeedSequence | None = None, *,
                     record: int | npt.ArrayLike | None = None, count_warmup: bool = True,
                     progress: Callable[[int, int], None] | None = None) -> ThresholdingResult:
    """Run ``algorithm`` on ``env`` for a budget of ``T`` pulls (see the module docstring).

    Parameters
    ----------
    algorithm : ThresholdingAlgorithm
        A configured algorithm (GrAPL, APT, RandomLaplacian).
    env : GraphThresholdingBandit
        The instance (:func:`sbm`, :func:`nws`, or one built directly).
    T : int
        The budget: the number of pulls (at least 1).
    seed : int, SeedSequence or None
        Seeds the environment's noise and the algorithm's randomness (two independent streams, as
        :func:`bandits.run.run`).
    record : int, sequence of int or None
        Times of the error curve: None for 101 evenly spaced points of [0, T], an int k for k + 1, or the
        times themselves (integers in [0, T]); T is always added.
    count_warmup : bool
        Charge the warm-up pulls (APT's ``init_pulls`` per arm) to the budget (True), or give them free before
        t = 0 (False, the axis of the paper's Figs. 1-2).
    progress : callable, optional
        ``progress(samples, batches)`` after every batch (as :func:`bandits.run.run`): the pulls made so far,
        a free warm-up included, and the batches observed (one pull each for the index rules); for a budget above
        MAX_RUN_SECONDS x MIN_PULLS_PER_SECOND, only once the run-time rule has measured its rate (module docstring).

    Returns
    -------
    ThresholdingResult
        The error curve, E, L_T and S_hat at T, the pulls made, times and the policy's diagnostics.

    Raises
    ------
    InvalidInputError
        An algorithm or environment of the wrong type, T not a positive integer, a bad ``record``, a
        warm-up larger than T when it counts, or a budget that would take more than MAX_RUN_SECONDS (module
        docstring; ``progress`` is then not called before the refusal, RATE_SECONDS into the pulls or after the batch
        that ends them).
    RuntimeError
        The policy proposed a batch outside 1 to the pulls left (a bug of the policy).
    """
    T = _checked_budget(algorithm, env, T)
    check_run_time(T)
    grid = record_grid(T, record)
    env_rng, alg_rng = split_seed(seed)
    start = time.perf_counter()
    policy = algorithm.start(env, alg_rng)
    n = env.n_arms
    samples = _warm_up(policy, env, env_rng, T, count_warmup, algorithm.name)
    errors, errors_nb, elapsed = np.empty(grid.size), np.empty(grid.size), np.empty(grid.size)
    losses, sizes = np.zeros(grid.size, dtype=bool), np.zeros(grid.size, dtype=np.int64)

    def note(g: int) -> None:
        mu_hat = policy.estimate()
        errors[g], errors_nb[g] = env.error(mu_hat), env.error_notebook(mu_hat)
        losses[g], sizes[g] = env.loss(mu_hat), int(np.count_nonzero(mu_hat >= env.tau))
        elapsed[g] = time.perf_counter() - start

    t, g, batches = 0, 0, 0
    if grid[0] == 0:
        note(0)
        g = 1
    run_time = RunTime(T, algorithm.name)  # its clock starts with the pulls
    while t < T:
        budget = int(grid[g]) - t
        counts = as_counts(policy.next_batch(budget), n)
        size = int(counts.sum())
        if size < 1 or size > budget:
            raise RuntimeError(f"{algorithm.name} proposed a batch of {size} pulls; expected 1 to {budget}")
        policy.observe(counts, env.pull(counts, env_rng))
        t += size
        samples += size
        batches += 1
        run_time.check(t)
        if progress is not None and run_time.reports:
            progress(samples, batches)
        if t == grid[g]:
            note(g)
            g += 1
    mu_hat = policy.estimate()
    return ThresholdingResult(
        algorithm=algorithm.name, instance=env.name,
        seed=int(seed) if isinstance(seed, (int, np.integer)) else None,
        T=T, samples=samples, times=grid, errors=errors, errors_notebook=errors_nb, losses=losses,
        superlevel_sizes=sizes, elapsed=elapsed, error=env.error(mu_hat),
        loss=env.loss(mu_hat),
        superlevel=np.flatnonzero(mu_hat >= env.tau), wall_time=time.perf_counter() - start,
        count_warmup=count_warmup, config=algorithm.describe(), diagnostics=policy.diagnostics(),
    )


def _checked_budget(algorithm: ThresholdingAlgorithm, env: GraphThresholdingBandit, T: int) -> int:
    """The budget T as an int, after checking the types of the algorithm and the environment."""
    if not isinstance(algorithm, ThresholdingAlgorithm):
        raise InvalidInputError(f"algorithm must be a ThresholdingAlgorithm, got {type(algorithm).__name__}")
    if not isinstance(env, GraphThresholdingBandit):
        raise InvalidInputError(f"env must be a GraphThresholdingBandit, got {type(env).__name__}")
    return as_count(T, "T")  # the budget


def _warm_up(policy: ThresholdingPolicy, env: GraphThresholdingBandit, env_rng: np.random.Generator, T: int,
             count_warmup: bool, name: str) -> int:
    """The pulls of the policy's warm-up made free before t = 0 (0 when it counts against T, after checking it fits)."""
    samples = 0
    warm = policy.warmup()
    if warm is not None and warm.sum() > 0:
        warm = as_counts(warm, env.n_arms)
        if count_warmup:
            if warm.sum() > T:
                raise InvalidInputError(
                    f"T = {T} is smaller than the warm-up of {name} ({int(warm.sum())} pulls, "
                    f"e.g. init_pulls x N arms); raise T or run with count_warmup=False")
        else:
            policy.observe(warm, env.pull(warm, env_rng))
            samples += int(warm.sum())
    return samples
