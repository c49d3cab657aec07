"""Stopping as its own choice: any fixed-confidence algorithm on K-armed or linear instances under the GLR stop.

The text form (``bandits run --stop``, a study's ``stop`` key) is read by :func:`parse_stop`:

* ``own``: the algorithm's own stopping rule (the default; for a sampling rule that is the GLR stop with the
  options it was given);
* ``glr`` or ``glr:threshold=NAME,growth=G``: the GLR stopping rule of :class:`GLRStop` (threshold ``practical``
  by default, ``theory``, ``kk21``, ``soare`` or ``package.module:Class``), checked every max(1, ceil(G t)) pulls
  (G = 0.01 by default).

A sampling rule (:class:`PureExploration`) takes the GLR stop directly. Any other algorithm is wrapped in
:class:`WithStop`: its policy still chooses every pull (batches are passed through, cut to the GLR's checking
grid, and the shares pulled are fed back), while the wrapper keeps its own counts and reward sums and stops and
recommends by the GLR of :func:`problem_of` the instance; the algorithm's own stopping rule is never consulted.

An elimination algorithm (a policy with survivors ``active``: XY-Adaptive, RAGE, ALBA, ...) may end its sampling
before the GLR stops, when one item survives. From then on the wrapper keeps pulling in the proportions of the
algorithm's last phase (the pulls between the last two changes of its survivors), by C-tracking, until the GLR
stops or the sample budget ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm, Policy
from ..core.entries import split_options
from ..core.tracking import next_checkpoint, portion, track
from ..core.validation import check_growth
from .policy import GLRPolicyBase, problem_of
from .problem import Problem
from .stop import GLRStop, check_stop_options

__all__ = ["StopChoice", "WithStop", "WithStopPolicy", "parse_stop", "with_stop"]

#: the stopping-rule forms ``parse_stop`` reads
STOP_FORMS = "own, glr or glr:threshold=NAME,growth=G"


@dataclass(frozen=True)
class StopChoice:
    """A parsed stop option: the GLR rule with its threshold and checking grid.

    Parameters
    ----------
    stop : GLRStop
        The GLR stopping rule (its threshold checked).
    growth : float or None
        Relative spacing of the GLR checks, when given.
    """

    stop: GLRStop
    growth: float | None = None


def parse_stop(text: str | None) -> StopChoice | None:
    """``own`` (or nothing) -> None; ``glr[:threshold=NAME,growth=G]`` -> the GLR stop.

    Parameters
    ----------
    text : str or None
        The option as written.

    Returns
    -------
    StopChoice or None
        None for the algorithm's own rule.

    Raises
    ------
    InvalidInputError
        Another form, an unknown key, an unknown threshold or a growth outside [0, 1].
    """
    if text is None or str(text).strip() in ("", "own"):
        return None
    name, options = split_options(str(text))
    if name != "glr":
        raise InvalidInputError(f"unknown stopping rule {text!r}; valid: {STOP_FORMS}")
    unknown = sorted(set(options) - {"threshold", "growth"})
    if unknown:
        raise InvalidInputError(f"stop {text!r}: unknown option(s) {', '.join(unknown)}; valid: threshold, growth")
    growth = options.get("growth")
    return StopChoice(GLRStop(options.get("threshold", "practical")),
                      None if growth is None else check_growth(growth, f"stop {text!r}: growth"))


def with_stop(algorithm: Any, name: str, choice: StopChoice | None, run_options: dict[str, Any] | None = None) -> Any:
    """An algorithm under its stopping rule: a sampler under PureExploration, others wrapped if asked.

    Parameters
    ----------
    algorithm : Algorithm or Sampler
        The configured algorithm (a Sampler when ``run_options`` is not None).
    name : str
        Its name, for messages.
    choice : StopChoice or None
        The stop asked for (None: its own).
    run_options : dict, optional
        A sampler's ``threshold``, ``growth`` and ``problem`` options (None: not a sampler).

    Returns
    -------
    Algorithm
        :class:`PureExploration` for a sampler, :class:`WithStop` for another algorithm under the GLR stop, else
        ``algorithm`` itself.

    Raises
    ------
    InvalidInputError
        A threshold given both as a sampler option and in the stop (the registry refuses a GLR stop for an
        algorithm that runs on neither K-armed nor linear instances).
    """
    from .algorithm import PureExploration

    if run_options is not None:
        options = dict(run_options)
        if choice is not None:
            if "threshold" in options:
                raise InvalidInputError(f"algorithm {name}: give the threshold once, in the stop "
                                        "(glr:threshold=...) or as the option threshold=, not both")
            if choice.growth is not None:
                options["growth"] = choice.growth
        stop = choice.stop if choice is not None else GLRStop(options.pop("threshold", "practical"))
        options.pop("threshold", None)
        return PureExploration(algorithm, stop, **options)
    if choice is None:
        return algorithm
    return WithStop(algorithm, choice.stop, 0.01 if choice.growth is None else choice.growth)


@dataclass(frozen=True)
class WithStop(Algorithm[Any]):
    """An algorithm's sampling under the GLR stopping rule (its own stopping rule ignored).

    Parameters
    ----------
    algorithm : Algorithm
        The algorithm whose policy chooses the pulls.
    stop : GLRStop
        The stopping rule.
    growth : float
        Relative spacing of the GLR checks: batches end on the grid t -> max(t + 1, ceil(t (1 + growth)))
        (0 checks every pull).

    Raises
    ------
    InvalidInputError
        An algorithm or stop of the wrong type, or ``growth`` outside [0, 1].
    """

    algorithm: Algorithm[Any]
    stop: GLRStop = field(default_factory=GLRStop)
    growth: float = 0.01

    def __post_init__(self) -> None:
        """Check the options."""
        if not isinstance(self.algorithm, Algorithm):
            raise InvalidInputError(f"algorithm must be an Algorithm, got {type(self.algorithm).__name__}")
        check_stop_options(self.stop, self.growth)

    @property
    def name(self) -> str:
        """The algorithm's name."""
        return self.algorithm.name

    @property
    def delta_independent(self) -> bool:  # type: ignore[override]
        """As the algorithm's sampling."""
        return self.algorithm.delta_independent

    def start(self, env: Any, delta: float, rng: np.random.Generator) -> Policy:
        return WithStopPolicy(problem_of(env), self.algorithm.start(env, delta, rng), self.stop, self.growth)

    def describe(self) -> dict[str, Any]:
        """The algorithm's record with the GLR stop; its own threshold option, if any, as ``own_threshold``.

        Returns
        -------
        dict
            ``{"algorithm": name, options..., "stop": "glr", "threshold": ..., "stop_growth": ...}``.
        """
        record = self.algorithm.describe()
        if "threshold" in record:
            record["own_threshold"] = record.pop("threshold")
        return {**record, **self.stop.describe(), "stop_growth": self.growth}


class WithStopPolicy(GLRPolicyBase):
    """One run: the algorithm's policy samples, the GLR on the wrapper's own statistics stops and recommends.

    Parameters
    ----------
    problem : Problem
        The structure (its pieces give the GLR).
    inner : Policy
        The algorithm's policy.
    stop : GLRStop
        The stopping rule.
    growth : float
        Relative spacing of the GLR checks.
    """

    def __init__(self, problem: Problem, inner: Policy, stop: GLRStop, growth: float) -> None:
        super().__init__(problem, stop, growth)
        self.inner = inner
        K = problem.n_arms
        self._forward = True
        self._phase = np.zeros(K, dtype=np.int64)  # the algorithm's pulls since its survivors last changed
        self._last_phase = np.zeros(K, dtype=np.int64)
        self._survivors = self._active_size()

    @property
    def solve_time(self) -> float:  # type: ignore[override]
        """Seconds the algorithm's policy spent in optdesign."""
        return self.inner.solve_time

    def _active_size(self) -> int | None:
        """The number of the algorithm's survivors (None for a policy without elimination)."""
        active = self.inner.survivors()
        return None if active is None else len(active)

    def finished(self) -> bool:
        """Whether the algorithm's own sampling has ended (one survivor of an elimination algorithm).

        Returns
        -------
        bool
            True once the wrapper samples in the last phase's proportions.
        """
        size = self._active_size()
        return size is not None and size <= 1

    def next_batch(self, budget: int) -> np.ndarray:
        t = self.problem.time(self.counts)
        n = min(budget, next_checkpoint(t, self.growth) - t)
        self._forward = not self.finished()
        if not self._forward:
            last = self._last_phase if self._last_phase.sum() else np.maximum(self.counts, 1)
            return track(self.counts, last / last.sum(), n)
        batch = np.asarray(self.inner.next_batch(budget), dtype=np.int64)
        return portion(batch, n) if t > 0 and batch.sum() > n else batch

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        super().observe(counts, sums)
        if not self._forward:
            return
        self.inner.observe(counts, sums)
        self._phase += counts
        size = self._active_size()
        if size != self._survivors:
            self._last_phase, self._phase = self._phase, np.zeros_like(self._phase)
            self._survivors = size

    def recommend(self) -> int:
        if not self.ready():
            return self.inner.recommend()
        return super().recommend()
