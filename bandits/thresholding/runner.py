"""One fixed-budget thresholding run: (algorithm, environment, T, seed) -> ThresholdingResult.

Unlike :func:`bandits.run.run` (fixed confidence, runs until a stopping rule fires) the run lasts exactly
T pulls and is judged at the end, and along the way on a grid of times: the error curve
E(t) = #{judged arms misclassified by S_hat_t} / N (spec §3.4) and, at T, the loss
L_T = 1{some arm with |mu_i - tau| > eps is misclassified} and S_hat = {i : mu_hat_i >= tau}.

The seed feeds ``numpy.random.SeedSequence`` exactly as in :mod:`bandits.run`: one child drives the
environment's noise, the other the algorithm's own randomness (ties, random arms).

Warm-up pulls (APT's ``init_pulls`` per arm): with ``count_warmup=True`` (default) they are the first
pulls of the budget and T must cover them; with ``count_warmup=False`` they are given before t = 0, t
counts the iterations after them and the run uses T + warm-up samples. The latter is the axis of the
paper's Figs. 1-2 ("APT is initialized with an additional 2N samples before its first iteration").
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from optdesign.errors import InvalidInputError

from ..environments import as_counts
from ..run import split_seed
from .algorithms import ThresholdingAlgorithm
from .environment import GraphThresholdingBandit


@dataclass
class ThresholdingResult:
    """Outcome of one run. ``times`` and ``errors`` are the grid and E(t) on it (t = 0 is before any
    pull), ``errors_notebook`` the authors' plotted variant (``GraphThresholdingBandit.error_notebook``);
    ``samples`` counts every pull (T plus a free warm-up); ``superlevel`` lists S_hat at T;
    ``loss`` is L_T; ``diagnostics`` holds algorithm counters (CG iterations, gamma used, ...)."""

    algorithm: str
    instance: str
    seed: int | None
    T: int
    samples: int
    times: np.ndarray
    errors: np.ndarray
    errors_notebook: np.ndarray
    error: float
    loss: bool
    superlevel: np.ndarray
    wall_time: float
    count_warmup: bool
    config: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)

    def error_at(self, t: int) -> float:
        """E(t) at a recorded time t."""
        hit = np.flatnonzero(self.times == t)
        if hit.size == 0:
            raise InvalidInputError(f"t = {t} is not on the recorded grid")
        return float(self.errors[hit[0]])

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("times", "errors", "errors_notebook", "superlevel"):
            out[key] = np.asarray(out[key]).tolist()
        return out


def record_grid(T: int, record) -> np.ndarray:
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


def run_thresholding(algorithm: ThresholdingAlgorithm, env: GraphThresholdingBandit, T: int, seed=None, *,
                     record=None, count_warmup: bool = True) -> ThresholdingResult:
    """Run ``algorithm`` on ``env`` for a budget of ``T`` pulls (see the module docstring)."""
    if not isinstance(algorithm, ThresholdingAlgorithm):
        raise InvalidInputError(f"algorithm must be a ThresholdingAlgorithm, got {type(algorithm).__name__}")
    if not isinstance(env, GraphThresholdingBandit):
        raise InvalidInputError(f"env must be a GraphThresholdingBandit, got {type(env).__name__}")
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise InvalidInputError(f"T must be a positive integer (the budget), got {T!r}")
    T = int(T)
    grid = record_grid(T, record)
    env_rng, alg_rng = split_seed(seed)
    start = time.perf_counter()
    policy = algorithm.start(env, alg_rng)
    n = env.n_arms
    samples = 0
    warm = policy.warmup()
    if warm is not None and warm.sum() > 0:
        warm = as_counts(warm, n)
        if count_warmup:
            if warm.sum() > T:
                raise InvalidInputError(
                    f"T = {T} is smaller than the warm-up of {algorithm.name} ({int(warm.sum())} pulls, "
                    f"e.g. init_pulls x N arms); raise T or run with count_warmup=False")
        else:
            policy.observe(warm, env.pull(warm, env_rng))
            samples += int(warm.sum())
    errors, errors_nb = np.empty(grid.size), np.empty(grid.size)

    def note(g: int) -> None:
        mu_hat = policy.estimate()
        errors[g], errors_nb[g] = env.error(mu_hat), env.error_notebook(mu_hat)

    t, g = 0, 0
    if grid[0] == 0:
        note(0)
        g = 1
    while t < T:
        budget = int(grid[g]) - t
        counts = as_counts(policy.next_batch(budget), n)
        size = int(counts.sum())
        if size < 1 or size > budget:
            raise RuntimeError(f"{algorithm.name} proposed a batch of {size} pulls; expected 1 to {budget}")
        policy.observe(counts, env.pull(counts, env_rng))
        t += size
        samples += size
        if t == grid[g]:
            note(g)
            g += 1
    mu_hat = policy.estimate()
    return ThresholdingResult(
        algorithm=algorithm.name, instance=env.name,
        seed=seed if isinstance(seed, (int, np.integer, type(None))) else None,
        T=T, samples=samples, times=grid, errors=errors, errors_notebook=errors_nb, error=env.error(mu_hat),
        loss=env.loss(mu_hat),
        superlevel=np.flatnonzero(mu_hat >= env.tau), wall_time=time.perf_counter() - start,
        count_warmup=count_warmup, config=algorithm.describe(), diagnostics=policy.diagnostics(),
    )
