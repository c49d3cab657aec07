"""Frank–Wolfe directions of batched Frank–Wolfe sampling (``fws:steps=batch``) and FWS's forced schedule.

Batched FWS (Wang, Tzeng & Proutiere, NeurIPS 2021, in lazy form) takes its iterate to be the played proportions
w = N / t and plays, for a batch of R pulls, the Frank–Wolfe direction z at w: R steps of size 1/t with z frozen.
The direction solves max_{z in conv(pulls)} min_i <grad f_i(w), z - w> over the near-tied pieces f_i(w) <=
(1 + r) F(w), F = min_j f_j (a relative slack r, at most m pieces, the smallest first). A problem offering the
``fw_directions`` capability gives a :class:`Directions` per run; the default, :class:`ArmDirections`, is for
problems whose pulls are single arms: it lists the pieces at w and solves the game over the arms
(:func:`bandits.pure_exploration.games.solve_game`). A factored problem, whose pulls are joint actions and whose
pieces cannot be listed, searches the near-tied pieces and solves the game over joint actions by column generation
(:mod:`bandits.multiagent.fw_directions`).

:func:`forced_rounds` counts the pulls of FWS's forced exploration in a batch: those at times t with
floor(t / P) a perfect square, P the number of exploration pulls (the K arms in the paper).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from optdesign.validation import as_count, as_nonnegative

from ..core.validation import check_choice
from .games import GAME_METHODS, solve_game
from .pieces import GLRStatistic, Pieces

__all__ = ["ArmDirections", "BatchStart", "Direction", "Directions", "check_options", "forced_rounds"]


class BatchStart(Protocol):
    """What a step reads of a batch's start (:class:`bandits.pure_exploration.sampler.Observations`)."""

    counts: np.ndarray

    def pieces(self, w: np.ndarray | None = None, *, gradients: bool = True) -> Pieces:
        """The problem's pieces at the estimate and w.

        Parameters
        ----------
        w : numpy.ndarray, optional
            Weights per arm (default: the counts).
        gradients : bool
            Also their gradients.

        Returns
        -------
        Pieces
            The pieces.
        """

    def statistic(self) -> GLRStatistic:
        """The GLR statistic at the estimate and the counts."""


@dataclass(frozen=True)
class Direction:
    """A Frank–Wolfe direction z = sum_v q_v e_{pull_v}, a mixture of pulls.

    Parameters
    ----------
    pulls : numpy.ndarray of int, shape (M, m)
        The arms each pull of the mixture observes (m = 1 for arm pulls), the largest weight first.
    weights : numpy.ndarray, shape (M,)
        The mixture's weights q (positive, summing to 1).
    """

    pulls: np.ndarray
    weights: np.ndarray


class Directions(ABC):
    """The Frank–Wolfe directions of one batched FWS run (a problem's ``fw_directions``)."""

    #: whether a step calls optdesign's solvers (max-sums, eliminations): its time is then the run's solve time
    solves = False

    @abstractmethod
    def tied(self, obs: BatchStart) -> bool:
        """Whether the estimate has no unique answer (F = 0: no direction; the batch explores).

        Parameters
        ----------
        obs : BatchStart
            The batch's start.

        Returns
        -------
        bool
            True on a tie.
        """

    @abstractmethod
    def step(self, obs: BatchStart) -> Direction:
        """The direction at w = N / t (called only when the estimate is not tied).

        Parameters
        ----------
        obs : BatchStart
            The batch's start: the estimate and the counts N.

        Returns
        -------
        Direction
            The mixture of pulls.
        """

    def glr_upper_bound(self, statistic: GLRStatistic) -> float:
        """Lambda_t <= min of the pieces the directions have seen at the counts (the rule's
        :meth:`~bandits.pure_exploration.sampler.SamplerState.glr_upper_bound`); none by default.

        Parameters
        ----------
        statistic : GLRStatistic
            The GLR statistic at the counts, whose state a search may share.

        Returns
        -------
        float
            inf, or a value the statistic does not exceed.
        """
        return float("inf")

    def describe(self) -> dict[str, Any]:
        """Counters of the directions' work (none by default).

        Returns
        -------
        dict
            Plain numbers.
        """
        return {}


class ArmDirections(Directions):
    """Arms as pulls: the pieces at w listed, the near-tied ones kept, the game solved over the arms.

    Parameters
    ----------
    slack : float
        The relative slack r >= 0.
    limit : int
        At most this many near-tied pieces (>= 1).
    game : str
        The game's solver, ``"simplex"`` or ``"highs"``.
    """

    def __init__(self, slack: float, limit: int, game: str) -> None:
        check_options(slack, limit, 0.0, game)
        self.slack, self.limit, self.game = float(slack), int(limit), game

    def tied(self, obs: BatchStart) -> bool:
        values = obs.pieces(gradients=False).values
        return bool(values.size == 0 or values.min() <= 0)

    def step(self, obs: BatchStart) -> Direction:
        w = obs.counts / obs.counts.sum()
        pieces = obs.pieces(w)
        assert pieces.gradients is not None
        order = np.argsort(pieces.values, kind="stable")[:self.limit]
        order = order[pieces.values[order] <= (1.0 + self.slack) * pieces.values[order[0]]]
        G = pieces.gradients[order]
        if G.shape[0] == 1:
            z = np.zeros(w.size)
            z[int(np.argmax(G[0]))] = 1.0
        else:
            z, _ = solve_game(G - (G @ w)[:, None], method=self.game)
        support = np.argsort(-z, kind="stable")
        support = support[z[support] > 0]
        return Direction(support[:, None], z[support] / z[support].sum())


def check_options(slack: float, limit: int, search_growth: float, game: str) -> None:
    """Check the options of batched FWS's directions.

    Parameters
    ----------
    slack : float
        The relative slack of the near-tied pieces (>= 0).
    limit : int
        At most this many near-tied pieces (>= 1).
    search_growth : float
        The growth of t between full searches (>= 0).
    game : str
        The game's solver (:data:`bandits.pure_exploration.games.GAME_METHODS`).

    Raises
    ------
    InvalidInputError
        A negative or non-numeric slack or search_growth, a limit below 1, or an unknown game solver.
    """
    as_nonnegative(slack, "slack")
    as_nonnegative(search_growth, "search_growth")
    as_count(limit, "pieces")
    check_choice(game, "game", GAME_METHODS)


def forced_rounds(t: int, rounds: int, size: int) -> int:
    """The times t' in [t, t + rounds) of FWS's forced exploration: floor(t' / size) is a perfect square
    (Wang, Tzeng & Proutiere 2021, ``size`` exploration pulls in the place of K): sqrt(size t') of the first t'.

    Parameters
    ----------
    t : int
        The batch's first time (>= 0).
    rounds : int
        The batch's length (>= 0).
    size : int
        The number of exploration pulls (>= 1).

    Returns
    -------
    int
        How many of the batch's pulls are forced.

    Raises
    ------
    InvalidInputError
        A negative t or rounds, or a size below 1.
    """
    t, rounds, size = as_count(t, "t", minimum=0), as_count(rounds, "rounds", minimum=0), as_count(size, "size")
    first, last = t // size, (t + rounds - 1) // size
    count = 0
    for s in range(math.isqrt(max(first - 1, 0)), math.isqrt(max(last, 0)) + 1):
        start = size * s * s
        count += max(0, min(t + rounds, start + size) - max(t, start))
    return count
