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
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from optdesign.errors import InvalidInputError

from .core.algorithm import Algorithm, Environment, EnvT, Policy, Question
from .core.environments import as_counts
from .core.seeds import split_seed
from .core.stopping import check_delta
from .core.tracking import portion

if TYPE_CHECKING:
    from .pure_exploration.sampler import Sampler

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
        The correct answer on the instance (its best item, or the policy's problem's answer at the true parameter).
    correct : bool
        Whether the recommendation is a correct answer (the problem's ``correct``: a question may accept several).
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


@dataclass
class _Outcome:
    """What is known when one delta stops: the counters, the recommendation, why it stopped and the times."""

    samples: int
    rounds: int | None
    batches: int
    recommendation: int
    stopped_by: str
    solve_time: float
    elapsed: float


@dataclass
class _Trajectory:
    """A run in progress: the policy, its counters, the deltas still pending and the outcomes of the settled ones."""

    policy: Policy
    deltas: list[float]
    start: float
    samples: int = 0
    batches: int = 0
    pending: dict[int, None] = field(default_factory=dict)  # index -> None until that delta stops
    outcomes: dict[int, _Outcome] = field(default_factory=dict)
    log: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        """Every delta starts pending."""
        self.pending = dict.fromkeys(range(len(self.deltas)))

    def settle(self, i: int, how: str) -> None:
        """Record what is known when delta i stops."""
        policy = self.policy
        elapsed = time.perf_counter() - self.start
        self.outcomes[i] = _Outcome(self.samples, policy.rounds, self.batches, policy.recommend(), how,
                                    policy.solve_time, elapsed)
        self.pending.pop(i, None)

    def settle_all(self, how: str) -> None:
        """Stop every pending delta for the same reason (budget, interruption)."""
        for i in list(self.pending):
            self.settle(i, how)

    def settle_stopped(self) -> None:
        """Stop the pending deltas whose stopping rule fires now."""
        for i in list(self.pending):
            if self.policy.stopped(self.deltas[i]):
                self.settle(i, "stopping_rule")

    def play_batch(self, env: Environment, env_rng: np.random.Generator, max_samples: int, name: str,
                   progress: Callable[[int, int], None] | None) -> bool:
        """Ask the policy for a batch (cut to the budget left), pull it and feed it back; True when it was cut."""
        left = max_samples - self.samples
        counts = as_counts(self.policy.next_batch(left), env.n_arms)
        size = int(counts.sum())
        if size < 1:
            raise RuntimeError(f"{name} proposed an empty batch with {left} pulls left")
        cut = size > left  # a batch the budget cannot hold (e.g. a first pass over more arms than the budget)
        if cut:
            counts = portion(counts, left)
            size = int(counts.sum())
        self.policy.observe(counts, env.pull(counts, env_rng))
        self.samples += size
        self.batches += 1
        if self.log is not None:
            self.log.append({"samples": self.samples, **self.policy.stop_statistic()})
        if progress is not None:
            progress(self.samples, self.batches)
        return cut



@overload
def run(algorithm: Algorithm[EnvT] | Sampler, env: EnvT, delta: float,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False, compiled: bool = True) -> RunResult: ...


@overload
def run(algorithm: Algorithm[EnvT] | Sampler, env: EnvT, delta: list[float] | tuple[float, ...] | np.ndarray,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False, compiled: bool = True) -> list[RunResult]: ...


def run(algorithm: Algorithm[EnvT] | Sampler, env: EnvT, delta: float | list[float] | tuple[float, ...] | np.ndarray,
        seed: int | np.integer | np.random.SeedSequence | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES,
        trace: bool = False, progress: Callable[[int, int], None] | None = None,
        interruptible: bool = False, compiled: bool = True) -> RunResult | list[RunResult]:
    """Run ``algorithm`` on ``env`` until it stops or ``max_samples`` observations are used.

    Returns one :class:`RunResult`, or one per delta (in the given order) when ``delta`` is a
    list. ``trace=True`` records, after every batch, the samples used and the stopping statistic.

    Parameters
    ----------
    algorithm : Algorithm or Sampler
        A configured algorithm (:func:`bandits.registry.make_algorithm` builds one from ``"name:key=value"``), or a
        sampling rule, run under the GLR stop (:func:`bandits.pure_exploration.algorithm.as_algorithm`).
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
    compiled : bool
        Take the compiled path when the run qualifies (:mod:`bandits.pure_exploration.compiled`: K-armed runs of
        round robin, Track-and-Stop and Top-Two, without a trace, a progress callback or ``interruptible``); the
        same run as the reference path, which ``False`` forces. Without ``interruptible``, Ctrl-C raises
        KeyboardInterrupt on either path (the compiled loops look at the signals every few batches).

    Returns
    -------
    RunResult or list of RunResult
        Samples, rounds, recommendation, correctness against the instance's best, why it stopped, times.

    Raises
    ------
    InvalidInputError
        A delta outside (0, 1), an empty list, several deltas for a delta-dependent algorithm, a bad budget,
        a negative seed, or an algorithm that does not run on this kind of instance.
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
    from .pure_exploration.algorithm import as_algorithm  # on first use: ``bandits --help`` stays light

    algorithm = as_algorithm(algorithm)
    deltas, many = _checked_deltas(algorithm, delta, max_samples)
    env_rng, alg_rng = split_seed(seed)
    start = time.perf_counter()
    policy = algorithm.start(env, min(deltas), alg_rng)
    truth = _Truth.of(policy, env)
    trajectory = _Trajectory(policy, deltas, start, log=[] if trace else None)
    if compiled and not trace and progress is None and not interruptible and \
            _run_compiled(algorithm, env, trajectory, env_rng, alg_rng, max_samples):
        return _finished(algorithm, env, seed, trajectory, truth, many)
    trajectory.settle_stopped()
    try:
        while trajectory.pending:
            if trajectory.samples >= max_samples:
                trajectory.settle_all("budget")
                break
            # a cut batch ends the run: the algorithm's guarantees hold for the batches it planned
            if trajectory.play_batch(env, env_rng, max_samples, algorithm.name, progress):
                trajectory.settle_all("budget")
                break
            trajectory.settle_stopped()
    except KeyboardInterrupt:
        if not interruptible:
            raise
        trajectory.settle_all("interrupted")
    return _finished(algorithm, env, seed, trajectory, truth, many)


def _finished(algorithm: Algorithm[EnvT], env: EnvT, seed: int | np.integer | np.random.SeedSequence | None,
              trajectory: _Trajectory, truth: _Truth, many: bool) -> RunResult | list[RunResult]:
    results = _results(algorithm, env, seed, trajectory, truth)
    return results if many else results[0]


def _run_compiled(algorithm: Algorithm[EnvT], env: EnvT, trajectory: _Trajectory, env_rng: np.random.Generator,
                  alg_rng: np.random.Generator, max_samples: int) -> bool:
    """Settle every delta by the compiled loop when the run qualifies (:mod:`bandits.pure_exploration.compiled`);
    False (nothing done) otherwise."""
    from .pure_exploration.compiled import compiled_run_of, run_compiled

    plan = compiled_run_of(algorithm, env, getattr(trajectory.policy, "problem", None), trajectory.deltas,
                           max_samples)
    if plan is None:
        return False
    for i, out in enumerate(run_compiled(plan, env_rng, alg_rng, trajectory.start)):
        trajectory.outcomes[i] = _Outcome(out["samples"], None, out["batches"], out["recommendation"],
                                          out["stopped_by"], out["solve_time"], out["elapsed"])
    trajectory.pending.clear()
    return True


def _checked_deltas(algorithm: Algorithm[EnvT], delta: float | list[float] | tuple[float, ...] | np.ndarray,
                    max_samples: int) -> tuple[list[float], bool]:
    """The checked deltas and whether several were asked for; the algorithm and the budget are checked too."""
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
    return deltas, many


@dataclass(frozen=True)
class _Truth:
    """What a run is judged against: the question's true parameter (None: the instance's best item)."""

    best: int
    question: Question | None
    mu: np.ndarray | None

    @classmethod
    def of(cls, policy: Policy, env: Environment) -> _Truth:
        """Read the truth before the run, so a question that cannot be scored on ``env`` fails before any pull."""
        question = policy.problem
        if question is None:
            return cls(int(env.best_item), None, None)
        mu = question.true_parameter(env)
        return cls(int(question.answer(mu)), question, mu)

    def correct(self, recommendation: int) -> bool:
        """Whether the recommendation answers the question correctly."""
        if self.question is None or self.mu is None:
            return recommendation == self.best
        return bool(self.question.correct(recommendation, self.mu))


def _results(algorithm: Algorithm[EnvT], env: EnvT, seed: int | np.integer | np.random.SeedSequence | None,
             run: _Trajectory, truth: _Truth) -> list[RunResult]:
    """One RunResult per delta, in the given order, from the outcomes of the settled run."""
    results = []
    for i, d in enumerate(run.deltas):
        out = run.outcomes[i]
        n, rounds, rec = out.samples, out.rounds, out.recommendation
        results.append(RunResult(
            algorithm=algorithm.name, instance=getattr(env, "name", type(env).__name__), delta=d,
            seed=seed if isinstance(seed, (int, np.integer, type(None))) else None,
            samples=int(n), rounds=int(n if rounds is None else rounds), batches=out.batches, recommendation=int(rec),
            best=truth.best, correct=truth.correct(int(rec)), stopped_by=out.stopped_by, solve_time=out.solve_time,
            other_time=out.elapsed - out.solve_time, config=algorithm.describe(), trace=run.log,
        ))
    return results
