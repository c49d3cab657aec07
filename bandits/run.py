"""One run: (algorithm, environment, delta, seed) -> RunResult.

The seed feeds ``numpy.random.SeedSequence``; its two children drive the environment's noise and
the algorithm's own randomness, so a run is reproducible and its noise does not depend on how
the algorithm draws. A run ends when the stopping rule fires or when ``max_samples`` is reached
(``stopped_by="budget"``, recommendation still reported): nothing loops forever. With ``interruptible=True``
Ctrl-C ends it the same way (``stopped_by="interrupted"``) instead of raising; ``progress`` is called after every
batch with the samples and batches so far (the CLI shows them on a terminal).

``delta`` may be a list when the algorithm's sampling ignores delta
(``Algorithm.delta_independent``): the stopping rule is checked for every delta along one
trajectory, which is valid because each delta's stopping time only reads the trajectory up to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, overload

import numpy as np

from optdesign.errors import InvalidInputError

from .algorithm import Algorithm, EnvT
from .environments import as_counts
from .stopping import check_delta
from .tracking import portion

__all__ = ["DEFAULT_MAX_SAMPLES", "RunResult", "run"]

#: observation cap of a run when none is given
DEFAULT_MAX_SAMPLES = 10**9


@dataclass
class RunResult:
    """Outcome of one run. ``samples`` counts observations; ``rounds`` the problem's own time unit
    (equal to samples for linear bandits, graph rounds for bilinear ones); ``batches`` the number
    of sampling decisions. ``solve_time`` is the time spent in optdesign solves, ``other_time``
    the rest (simulation, statistics, stopping checks).

    Parameters
    ----------
    algorithm : str
        The algorithm's name (``Algorithm.name``).
    instance : str
        The environment's name.
    delta : float
        The confidence level this result is for.
    seed : int or None
        The seed of the run (None when it was a SeedSequence or absent).
    samples : int
        Observations used when the run stopped.
    rounds : int
        Time in the problem's own unit (samples, or graph rounds, or joint plays).
    batches : int
        Sampling decisions (batches) made.
    recommendation : int
        The recommended item.
    best : int
        The instance's best item.
    correct : bool
        Whether ``recommendation == best``.
    stopped_by : str
        ``"stopping_rule"``, ``"budget"`` (``max_samples`` reached or a batch cut to it) or ``"interrupted"``.
    solve_time : float
        Seconds spent in optdesign solves.
    other_time : float
        The other seconds of the run (simulation, statistics, stopping checks).
    config : dict
        The algorithm's configuration (``Algorithm.describe``).
    trace : list of dict or None
        With ``trace=True``: after every batch, the samples and the stopping statistic.
    """

    algorithm: str
    instance: str
    delta: float
    seed: int | np.integer | None
    samples: int
    rounds: int
    batches: int
    recommendation: int
    best: int
    correct: bool
    stopped_by: str
    solve_time: float
    other_time: float
    config: dict[str, Any] = field(default_factory=dict)
    trace: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict (one row of a results table).

        Returns
        -------
        dict
            Every field by name.
        """
        return asdict(self)


def split_seed(
    seed: int | np.integer | np.random.SeedSequence | None,
) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the environment's noise and the algorithm's own draws (the two children
    of ``SeedSequence(seed)``)."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    env_ss, alg_ss = ss.spawn(2)
    return np.random.default_rng(env_ss), np.random.default_rng(alg_ss)


@overload
def run(algorithm: Algorithm[EnvT], env: EnvT, delta: float,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False) -> RunResult: ...


@overload
def run(algorithm: Algorithm[EnvT], env: EnvT, delta: list[float] | tuple[float, ...] | np.ndarray,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False) -> list[RunResult]: ...


def run(algorithm: Algorithm[EnvT], env: EnvT, delta: float | list[float] | tuple[float, ...] | np.ndarray,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False) -> RunResult | list[RunResult]:
    """Run ``algorithm`` on ``env`` until it stops or ``max_samples`` observations are used.

    Returns one :class:`RunResult`, or one per delta (in the given order) when ``delta`` is a
    list. ``trace=True`` records, after every batch, the samples used and the stopping statistic.

    Parameters
    ----------
    algorithm : Algorithm
        A configured algorithm (:func:`bandits.registry.make_algorithm` builds one from ``"name:key=value"``).
    env : Environment
        The instance: a linear, bilinear or factored bandit (:mod:`bandits.instances`) of the kind the
        algorithm runs on.
    delta : float or sequence of float
        Confidence level(s) in (0, 1); several need an algorithm whose sampling does not depend on delta.
    seed : int, SeedSequence or None
        Seeds the environment's noise and the algorithm's randomness (two independent streams).
    max_samples : int
        Observation budget; a run that reaches it stops with ``stopped_by == "budget"`` (a batch larger than
        what is left is cut to it).
    trace : bool
        Record the samples and the stopping statistic after every batch (``RunResult.trace``).
    progress : callable, optional
        ``progress(samples, batches)`` after every batch.
    interruptible : bool
        Ctrl-C ends the run with ``stopped_by == "interrupted"`` instead of raising KeyboardInterrupt.

    Returns
    -------
    RunResult or list of RunResult
        Samples, rounds, recommendation, correctness against the instance's best, why it stopped, times.

    Raises
    ------
    InvalidInputError
        A delta outside (0, 1), an empty list, several deltas for a delta-dependent algorithm, a bad budget,
        or an algorithm that does not run on this kind of instance.
    RuntimeError
        The policy proposed an empty batch (a bug of the algorithm).

    Examples
    --------
    >>> from bandits.instances import parse_instance
    >>> from bandits.registry import make_algorithm
    >>> from bandits.run import run
    >>> result = run(make_algorithm("xy-adaptive"), parse_instance("soare:d=2,omega=0.3"), delta=0.05, seed=0)
    >>> print(result.correct, result.stopped_by)
    True stopping_rule
    """
    if not isinstance(algorithm, Algorithm):
        raise InvalidInputError(f"algorithm must be a bandits Algorithm, got {type(algorithm).__name__}")
    many = isinstance(delta, (list, tuple, np.ndarray))
    deltas = [check_delta(d) for d in (delta if isinstance(delta, (list, tuple, np.ndarray)) else [delta])]
    if not deltas:
        raise InvalidInputError("delta is an empty list")
    if many and len(deltas) > 1 and not algorithm.delta_independent:
        raise InvalidInputError(
            f"{algorithm.name} samples differently for each delta: run it once per delta"
        )
    if isinstance(max_samples, bool) or not isinstance(max_samples, (int, np.integer)) or max_samples < 1:
        raise InvalidInputError(f"max_samples must be a positive integer, got {max_samples!r}")
    env_rng, alg_rng = split_seed(seed)
    start = time.perf_counter()
    policy = algorithm.start(env, min(deltas), alg_rng)
    n_arms = env.n_arms
    samples, batches = 0, 0
    pending = dict.fromkeys(range(len(deltas)))  # index -> None until that delta stops
    outcomes: dict[int, tuple[int, int | None, int, int, str, float, float]] = {}
    log: list[dict[str, Any]] | None = [] if trace else None

    def settle(i: int, how: str) -> None:  # what is known when delta i stops
        elapsed = time.perf_counter() - start
        outcomes[i] = (samples, policy.rounds, batches, policy.recommend(), how, policy.solve_time, elapsed)
        pending.pop(i, None)

    for i in list(pending):
        if policy.stopped(deltas[i]):
            settle(i, "stopping_rule")
    try:
        while pending:
            if samples >= max_samples:
                for i in list(pending):
                    settle(i, "budget")
                break
            left = max_samples - samples
            counts = as_counts(policy.next_batch(left), n_arms)
            size = int(counts.sum())
            if size < 1:
                raise RuntimeError(f"{algorithm.name} proposed an empty batch with {left} pulls left")
            cut = size > left  # a batch the budget cannot hold (e.g. a first pass over more arms than the budget)
            if cut:
                counts = portion(counts, left)
                size = int(counts.sum())
            policy.observe(counts, env.pull(counts, env_rng))
            samples += size
            batches += 1
            if log is not None:
                log.append({"samples": samples, **policy.stop_statistic()})
            if progress is not None:
                progress(samples, batches)
            if cut:  # the algorithm's guarantees hold for the batches it planned, not for a cut one
                for i in list(pending):
                    settle(i, "budget")
                break
            for i in list(pending):
                if policy.stopped(deltas[i]):
                    settle(i, "stopping_rule")
    except KeyboardInterrupt:
        if not interruptible:
            raise
        for i in list(pending):
            settle(i, "interrupted")
    best = int(env.best_item)
    results = []
    for i, d in enumerate(deltas):
        n, rounds, nb, rec, how, solve_time, elapsed = outcomes[i]
        results.append(RunResult(
            algorithm=algorithm.name, instance=getattr(env, "name", type(env).__name__), delta=d,
            seed=seed if isinstance(seed, (int, np.integer, type(None))) else None,
            samples=int(n), rounds=int(n if rounds is None else rounds), batches=nb, recommendation=int(rec),
            best=best, correct=int(rec) == best, stopped_by=how, solve_time=solve_time,
            other_time=elapsed - solve_time, config=algorithm.describe(), trace=log,
        ))
    return results if many else results[0]
