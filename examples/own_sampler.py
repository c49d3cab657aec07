"""A sampling rule written outside the package: pull the arm that informs the most confusing alternative most."""

from dataclasses import dataclass

import numpy as np

from bandits.pure_exploration import Observations, Pieces, Sampler, SamplerState, SequentialState


@dataclass(frozen=True)
class MostConfusing(Sampler):
    """Pull the arm with the largest gradient of the best-response piece; forced exploration below sqrt(t)."""

    explore: float = 1.0  # an arm with fewer than explore * sqrt(t) pulls is pulled first

    @property
    def name(self) -> str:
        return "most-confusing"

    def start(self, problem, env, rng) -> SamplerState:
        return MostConfusingState(self.explore)


class MostConfusingState(SequentialState):
    def __init__(self, explore: float) -> None:
        self.explore = explore
        self.pieces: Pieces | None = None

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        self.pieces = obs.pieces()  # once per batch: the estimate is frozen within it
        return super().plan(obs, n)

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        starved = np.flatnonzero(counts < self.explore * np.sqrt(counts.sum()))
        if starved.size:
            return int(starved[np.argmin(counts[starved])])
        assert self.pieces is not None and self.pieces.gradients is not None
        return int(np.argmax(self.pieces.gradients[self.pieces.best_response]))
