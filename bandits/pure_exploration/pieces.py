"""The pieces of a problem's alternative set at (mu, w): one per other answer, with its value f_j(w) and gradient.

F(w) = min_j f_j(w) is the characteristic function of the problem (:mod:`bandits.pure_exploration.problem`): its
value at the counts is the GLR statistic, its minimiser the best response, the gradients of its near-minimal pieces
what Frank–Wolfe sampling follows. :class:`GLRStatistic` is what the GLR stopping rule reads of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cap_bounds import CapBounds

__all__ = ["GLRStatistic", "Pieces"]


def with_leader(values: np.ndarray, leader: int) -> np.ndarray:
    """The K - 1 pair costs of the arms other than the leader as K, inf at the leader: np.insert's array without its
    overhead, which Top-Two's challenger paid at every pull."""
    out = np.empty(values.size + 1)
    out[:leader], out[leader], out[leader + 1:] = values[:leader], np.inf, values[leader:]
    return out


@dataclass(frozen=True)
class Pieces:
    """The alternative pieces of a problem at (mu, w); piece j stands for answer ``answers[j]``.

    Parameters
    ----------
    best : int
        The answer i*(mu) the pieces are alternatives to.
    answers : numpy.ndarray of int, shape (J,)
        The other answers, one per piece.
    values : numpy.ndarray, shape (J,)
        f_j(w) = gradients[j] @ w (0 for a piece tied with the best: no information separates them).
    gradients : numpy.ndarray, shape (J, K), or None
        d(mu_k, lambda_j,k) for every piece and arm (None when not asked for).
    pairs : numpy.ndarray of int, shape (J, 2), optional
        The two arms each piece moves, when they are not the best answer and the piece's answer (top m: the swapped
        arms); a pairwise threshold bounds each piece by its pair's caps.
    """

    best: int
    answers: np.ndarray
    values: np.ndarray
    gradients: np.ndarray | None
    pairs: np.ndarray | None = None

    @property
    def value(self) -> float:
        """F(w) = min_j f_j(w): the GLR statistic when w are counts (inf with no other answer)."""
        return float(self.values.min()) if self.values.size else float("inf")

    @property
    def best_response(self) -> int:
        """Index (into ``answers``) of the piece attaining the minimum: the most confusing alternative."""
        return int(np.argmin(self.values))

    @property
    def challenger(self) -> int:
        """The answer of the best response (the Top-Two challenger by transportation cost)."""
        return int(self.answers[self.best_response])

    def near_minimal(self, slack: float) -> np.ndarray:
        """Indices of the pieces within ``slack`` of the minimum (the r-subdifferential of Frank–Wolfe sampling).

        Parameters
        ----------
        slack : float
            Additive slack r >= 0 (0 keeps the minimal pieces only).

        Returns
        -------
        numpy.ndarray of int
            Indices into ``answers``.
        """
        return np.flatnonzero(self.values <= self.values.min() + slack)


class GLRStatistic:
    """The GLR statistic at (mu_hat, N) as the stopping rule reads it: the answer it is for and the test against a
    threshold. This one reads the pieces at the counts (their minimum); a problem whose pieces cannot be listed
    gives its own (the factored problem's exact search).

    Parameters
    ----------
    pieces : Pieces
        The pieces at the estimate and the counts.
    """

    def __init__(self, pieces: Pieces) -> None:
        self.pieces = pieces

    @property
    def answer(self) -> int:
        """The answer the statistic is for (the estimate's)."""
        return self.pieces.best

    @property
    def value(self) -> float:
        """min_j f_j(N) in nats."""
        return self.pieces.value

    def exceeds(self, beta: float | CapBounds) -> bool:
        """The stopping test GLR > beta; against a pairwise threshold, every piece (best, j) above its own bound.

        Parameters
        ----------
        beta : float or CapBounds
            The threshold beta(t, delta), or one bound per pair of arms
            (:class:`bandits.pure_exploration.cap_bounds.CapThreshold`).

        Returns
        -------
        bool
            Whether the statistic exceeds it.
        """
        if isinstance(beta, CapBounds):
            pieces = self.pieces
            return bool(np.all(pieces.values > beta.of_pieces(pieces.best, pieces.answers, pieces.pairs)))
        return self.value > beta

    def describe(self) -> dict[str, float | int]:
        """The statistic for a run's trace.

        Returns
        -------
        dict
            ``{"glr": value, "best": answer}``.
        """
        return {"glr": self.value, "best": self.answer}
