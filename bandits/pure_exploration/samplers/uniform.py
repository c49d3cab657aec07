"""The two reference sampling rules: round robin, and fixed proportions (the oracle w*(mu) of the instance)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

from ...core.tracking import track
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState

__all__ = ["FixedWeights", "RoundRobin"]


@dataclass(frozen=True)
class RoundRobin(Sampler):
    """Uniform sampling: every pull goes to an arm with the fewest pulls (the smallest index on a tie)."""

    @property
    def name(self) -> str:
        """``round-robin``."""
        return "round-robin"

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        return _Tracking(np.full(problem.n_arms, 1.0 / problem.n_arms))


@dataclass(frozen=True)
class FixedWeights(Sampler):
    """Track fixed proportions: the oracle w*(mu) at the instance's true parameter (an oracle baseline, which
    reads the truth), or given weights.

    Parameters
    ----------
    weights : tuple of float, optional
        Proportions over the arms (normalised); None tracks w*(mu) of the true parameter.
    """

    weights: tuple[float, ...] | None = None

    @property
    def name(self) -> str:
        """``oracle-weights`` for w*(mu), ``fixed-weights`` otherwise."""
        return "oracle-weights" if self.weights is None else "fixed-weights"

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """Proportions tracked from the first batch on: w*(mu) of the truth (one oracle solve) or the given ones.

        Parameters
        ----------
        problem : Problem
            The structure.
        env : object
            The instance; its ``theta`` or ``means`` is the true parameter.
        rng : numpy.random.Generator
            Unused (the rule is deterministic).

        Returns
        -------
        SamplerState
            C-tracking of the proportions.

        Raises
        ------
        InvalidInputError
            No true parameter on the instance, or weights of the wrong length, negative or all zero.
        """
        start = time.perf_counter()
        if self.weights is None:
            w = problem.oracle(problem.true_parameter(env)).weights
        else:
            w = np.asarray(self.weights, dtype=float)
            if w.shape != (problem.n_arms,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
                raise InvalidInputError(f"weights must be {problem.n_arms} nonnegative numbers, not all zero")
        state = _Tracking(w / w.sum())
        state.solve_time = time.perf_counter() - start
        return state


class _Tracking(SamplerState):
    """Batches that bring the counts towards t w (C-tracking in batch form, :func:`bandits.core.tracking.track`)."""

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return track(obs.counts, self.weights, n)
