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
from .problem import Problem
from .questions import ScoredSets

if TYPE_CHECKING:
    from ..core.stopping import Threshold
    from ..core.thresholds import ThresholdContext

__all__ = ["ArmQuestion"]


class ArmQuestion(ScoredSets, Problem):
    """A question asked of the arms of an :class:`ArmPairsProblem` (module docstring); answers are bit masks of arms.

    A subclass sets ``kind`` and ``arms_class`` (the arms' model of that kind) and calls :meth:`_ask` first; placed
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
    def n_members(self) -> int:
        """The arms (a set answer's members)."""
        return self.arms.n_arms

    @property
    def dim(self) -> int:
        """The arms' parameter's length."""
        return self.arms.dim

    def initial_arms(self) -> np.ndarray:
        return self.arms.initial_arms()

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
