"""What every best-arm-identification algorithm provides: a sampling rule, a stopping rule and a
recommendation rule (the split of the papers, and of tidnabbil's Julia code).

An :class:`Algorithm` is an immutable configuration (name and options); ``start`` returns a
:class:`Policy`, the state of one run. The runner (:func:`bandits.run.run`) asks the policy for a
batch of pulls, feeds it the reward sums, then asks whether it stops::

    policy = algorithm.start(env, delta, rng)
    while not policy.stopped(delta):
        counts = policy.next_batch(budget_left)   # pulls per arm (a batch; 1 pull when sequential)
        policy.observe(counts, env.pull(counts, rng_env))
    policy.recommend()

A batch stands for pulls whose choice does not depend on each other's outcomes: static designs
advance to the next checkpoint of a geometric grid in one batch, and adaptive rules re-plan once
per batch (their lazy re-solve schedule). Policies whose sampling ignores delta set
``Algorithm.delta_independent`` so one trajectory yields stopping times for several deltas.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


class Policy(ABC):
    """State of one run. ``solve_time`` accumulates seconds spent in optdesign solves."""

    solve_time: float = 0.0

    @abstractmethod
    def next_batch(self, budget: int) -> np.ndarray:
        """Pull counts per arm for the next batch; their sum is in [1, budget]."""

    @abstractmethod
    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        """Record a batch: ``sums[k]`` is the sum of the ``counts[k]`` rewards of arm k."""

    @abstractmethod
    def stopped(self, delta: float) -> bool:
        """The stopping rule at the current time for confidence ``delta``."""

    @abstractmethod
    def recommend(self) -> int:
        """The recommendation rule: index of the item believed best."""

    @property
    def rounds(self) -> int | None:
        """Rounds in the problem's own time unit when it differs from samples (e.g. graph rounds)."""
        return None

    def stop_statistic(self) -> dict:
        """Optional trace entry describing the current stopping statistic."""
        return {}


@dataclass(frozen=True)
class Algorithm(ABC):
    """An algorithm configuration; subclasses are frozen dataclasses of their options."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short name used by the CLI and in result tables."""

    #: True when the sampling rule ignores delta (one trajectory serves several deltas)
    delta_independent = False

    @abstractmethod
    def start(self, env: Any, delta: float, rng: np.random.Generator) -> Policy:
        """A fresh policy for environment ``env`` (only its public fields) at confidence ``delta``."""

    def describe(self) -> dict:
        out = {"algorithm": self.name}
        for key, value in asdict(self).items():
            out[key] = value.describe() if hasattr(value, "describe") else value
        return out
