"""What the questions beyond the best arm share on arms whose parameter holds more than the means (Gaussian arms of
unknown variances, arms with rewards in [0, 1]): the arms' model, an
:class:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem`, owns the estimate, the means, the costs of moving a mean
and the ``theory`` threshold; the question (thresholding, top m) owns its answers and pieces, and delegates the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from optdesign.errors import InvalidInputError

from .arm_pairs import ArmPairsProblem
from .pieces import Pieces
from .problem import Problem
from .questions import LevelSets, ScoredSets, TopSets

if TYPE_CHECKING:
    from ..core.stopping import Threshold
    from ..core.thresholds import ThresholdContext

__all__ = ["ArmQuestion"]


class ArmQuestion(ScoredSets, Problem):
    """A question asked of the arms of an :class:`ArmPairsProblem` (module docstring); answers are bit masks of arms.

    A subclass sets ``kind`` and ``arms_class`` (the arms' model of that kind) and calls ``_ask`` first; placed
    after the class of its answers (:class:`~bandits.pure_exploration.questions.LevelSets`, ``TopSets``) in the bases,
    it gives them the arms' number and means.
    """

    #: the arms' model of the instance kind (a subclass's)
    arms_class: type[ArmPairsProblem]
    arms: ArmPairsProblem

    def _ask(self, arms: ArmPairsProblem) -> None:
        """Keep the arms' model, refused when an answer cannot be a 64-bit mask or the model is of another kind."""
        if arms.n_arms > 62:
            raise InvalidInputError(f"at most 62 arms (an answer is a 64-bit mask), got {arms.n_arms}")
        if arms.kind != self.kind:
            raise InvalidInputError(f"{type(self).__name__} is asked of {self.kind} arms, not {arms.kind} ones")
        self.arms = arms

    @property
    def moments(self) -> int:  # type: ignore[override]
        """The arms' statistics per batch."""
        return self.arms.moments

    @property
    def n_arms(self) -> int:
        return self.arms.n_arms

    @property
    def dim(self) -> int:
        """The arms' parameter's length."""
        return self.arms.dim

    def initial_pulls(self) -> np.ndarray:
        return self.arms.initial_pulls()

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        return self.arms.estimate(counts, sums)

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The arms' means."""
        return self.arms.arm_means(mu)

    def check_parameter(self, mu: np.ndarray) -> np.ndarray:
        return self.arms.check_parameter(mu)

    def true_parameter(self, env: Any) -> np.ndarray:
        """The arms' parameter (ties between arms allowed: the answer is a set)."""
        return self.arms.parameter_of(env)

    def own_threshold(self, threshold: Threshold | None) -> ThresholdContext:
        """The context of the threshold factories, with the question's ``theory`` threshold (None: none).

        Parameters
        ----------
        threshold : Threshold or None
            The arms' delta-correct threshold for this question's pieces.

        Returns
        -------
        ThresholdContext
            The answers' and arms' counts and the threshold.
        """
        from ..core.thresholds import ThresholdContext

        return ThresholdContext(n_items=self.n_arms, n_arms=self.n_arms,
                                theory=None if threshold is None else lambda: threshold)

    def threshold_argument(self, counts: np.ndarray, information: np.ndarray | None) -> np.ndarray:
        """The counts (the arms' caps read them)."""
        return np.asarray(counts)


class ArmSwaps(TopSets):
    """Top m of K arms whose pieces are pairs of arms: the pieces, and Top-Two's swap challengers, from the
    subclass's :meth:`_pair_pieces`."""

    def _pair_pieces(self, mu: np.ndarray, w: np.ndarray, pairs: np.ndarray,
                    gradients: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """The pieces of the pairs (i, j), i put above j, at (mu, w)."""
        raise NotImplementedError

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)  # type: ignore[attr-defined]
        best = self.answer(mu)
        pairs, answers = self.swap_pairs(best, self.n_members)
        values, G = self._pair_pieces(mu, w, pairs, gradients)
        return Pieces(best=best, answers=answers, values=values, gradients=G if gradients else None, pairs=pairs)

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The swap S - {i} + {j} of least cost from the leader set S at the counts (0 where mu_i <= mu_j)."""
        return self._least_swap(mu, counts, leader, penalised=False)

    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The least swap's cost plus log(N_i N_j / (N_i + N_j)), the log of the swapped pair's harmonic count (TCI)."""
        return self._least_swap(mu, counts, leader, penalised=True)

    def _least_swap(self, mu: np.ndarray, counts: np.ndarray, leader: int, *, penalised: bool) -> int:
        w = np.asarray(counts, dtype=float)
        return self.least_swap(leader, w, lambda pairs: self._pair_pieces(np.asarray(mu, dtype=float), w, pairs,
                                                                         False)[0], penalised=penalised)


class ArmLevels(LevelSets):
    """Thresholding of K arms: the pieces w_k d_k(tau) and Top-Two's flip challengers, from the subclass's
    :meth:`_level_costs`."""

    def _level_costs(self, mu: np.ndarray) -> np.ndarray:
        """d_k(tau), each arm's cost per pull of moving its mean to the level."""
        raise NotImplementedError

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)  # type: ignore[attr-defined]
        best = self.answer(mu)
        costs = self._level_costs(mu)
        answers = best ^ np.left_shift(1, np.arange(self.n_members))
        return Pieces(best=best, answers=answers, values=w * costs, gradients=np.diag(costs) if gradients else None)

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The leader with the side of its arm of least cost N_k d_k(tau) flipped (0 for an arm the leader places on
        the other side of its mean)."""
        return self._least_flip(mu, counts, leader, penalised=False)

    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The least flip's cost plus log N_k (TCI)."""
        return self._least_flip(mu, counts, leader, penalised=True)

    def _least_flip(self, mu: np.ndarray, counts: np.ndarray, leader: int, *, penalised: bool) -> int:
        counts = np.asarray(counts, dtype=float)
        return self.least_flip(mu, counts, leader, counts * self._level_costs(np.asarray(mu, dtype=float)),
                               penalised=penalised)
