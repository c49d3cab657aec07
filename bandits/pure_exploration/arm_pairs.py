"""Best-arm identification whose pieces are pairs of arms with no closed form (Gaussian arms of unknown variances,
arms with rewards in [0, 1]): the answers, the pieces and the Top-Two capabilities, from one function, the pieces with
a given arm put above the others (their GLR statistic is read pair by pair against a
:class:`bandits.pure_exploration.cap_bounds.CapThreshold`).

With B an arm and N the counts, the piece of arm j is W_B,j = min over x of N_B g_B(x) + N_j g_j(x) (the pair's
closest common mean x, g_k the cost per pull of moving arm k's mean to x); its gradient holds g_B(x) and g_j(x).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from optdesign.validation import unique_argmax

from .oracle import Oracle
from .pieces import Pieces, with_leader
from .problem import Problem
from .values import checked_index

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext

__all__ = ["ORACLE_TOL", "ArmPairsProblem"]

#: the certified relative gap of a run's top-m oracle (cutting planes): the weights Track-and-Stop tracks need no more
#: (a study's lower bound, ``bound=True``, is solved to 1e-6)
ORACLE_TOL = 1e-4


class ArmPairsProblem(Problem):
    """Best-arm identification on K arms whose parameter holds more than the means (module docstring): a subclass
    gives its number of arms ``_K``, :meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.arm_means` and
    :meth:`~bandits.pure_exploration.arm_pairs.ArmPairsProblem.arm_pieces`."""

    _K: int

    @abstractmethod
    def arm_means(self, mu: np.ndarray) -> np.ndarray:
        """The arms' means at a parameter.

        Parameters
        ----------
        mu : numpy.ndarray
            The parameter.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The means.
        """

    @abstractmethod
    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        """The pieces with ``best`` (None: the first best mean) put above every other arm.

        Parameters
        ----------
        mu : numpy.ndarray
            The parameter.
        w : numpy.ndarray, shape (K,)
            Weights or counts.
        best : int or None
            The arm put above the others.
        gradients : bool
            Also the gradients (else None).

        Returns
        -------
        tuple
            ``(best, values, gradients)``: values of shape (K - 1,) (other arms in increasing index; 0 where an arm's
            mean is at or above the best's), gradients of shape (K - 1, K).
        """

    @abstractmethod
    def parameter_of(self, env: Any) -> np.ndarray:
        """The instance's parameter theta, checked (ties between arms allowed).

        Parameters
        ----------
        env : object
            The instance.

        Returns
        -------
        numpy.ndarray
            theta.
        """

    def true_parameter(self, env: Any) -> np.ndarray:
        """The instance's parameter, with a unique best arm (best-arm identification's question)."""
        theta = self.parameter_of(env)
        unique_argmax(self.arm_means(theta), "means")
        return theta

    @abstractmethod
    def level_costs(self, mu: np.ndarray, level: float) -> np.ndarray:
        """The cost per pull of moving each arm's mean to a level (thresholding's pieces,
        :mod:`bandits.pure_exploration.arm_levels`).

        Parameters
        ----------
        mu : numpy.ndarray
            The parameter.
        level : float
            The level tau.

        Returns
        -------
        numpy.ndarray, shape (K,)
            d_k(tau) >= 0, zero for an arm whose mean is on the level.
        """

    @abstractmethod
    def level_threshold(self) -> Any:
        """The delta-correct ``theory`` threshold of thresholding on these arms (one cap per arm), or None.

        Returns
        -------
        CapThreshold or None
            The threshold, or None when the model has none.
        """

    @abstractmethod
    def pair_threshold(self, n_pairs: int) -> Any:
        """The delta-correct ``theory`` threshold of a question whose pieces are pairs of arms, ``n_pairs`` of which
        can be misordered by a wrong answer (best-arm identification: K - 1; top m: m (K - m)), or None.

        Parameters
        ----------
        n_pairs : int
            The pairs a union bound runs over.

        Returns
        -------
        Threshold or None
            The threshold (a :class:`~bandits.pure_exploration.cap_bounds.CapThreshold` read pair by pair, or one
            number), or None when the model has none.
        """

    @abstractmethod
    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* of the m best arms with these costs, certified (m = 1: best-arm identification).

        Parameters
        ----------
        mu : numpy.ndarray
            The parameter, with distinct m-th and (m+1)-th means.
        m : int
            The answer's size.
        bound : bool
            The lower bound a study reports (it may differ from the model the pieces use: a plug-in statistic).

        Returns
        -------
        Oracle
            T* (Garivier & Kaufmann's convention), w* and its certified lower bound.
        """

    def oracle(self, mu: np.ndarray) -> Oracle:
        return self.top_m_oracle(mu, 1)

    def lower_bound(self, mu: np.ndarray) -> dict[str, Any]:
        """T* of the learner's model (:meth:`top_m_oracle` with ``bound``)."""
        return {"kind": "T*", "value": float(self.top_m_oracle(mu, 1, bound=True).T), "unit": "samples"}

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """The problem's own ``theory`` threshold: :meth:`pair_threshold` over the K - 1 pairs of the best arm."""
        from ..core.thresholds import ThresholdContext

        own = self.pair_threshold(self._K - 1)
        return ThresholdContext(n_items=self._K, n_arms=self._K, theory=None if own is None else lambda: own)

    @property
    def n_arms(self) -> int:
        return self._K

    @property
    def n_answers(self) -> int:
        return self._K

    def answer(self, mu: np.ndarray) -> int:
        return int(np.argmax(self.arm_means(mu)))

    def answer_value(self, answer: int, mu: np.ndarray) -> float | None:
        """mu_a: an answer is an arm."""
        return float(self.arm_means(mu)[checked_index(answer, self._K, "an arm")])

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        best, values, G = self.arm_pieces(mu, w, None, gradients)
        return Pieces(best=best, answers=np.delete(np.arange(self._K), best), values=values, gradients=G)

    def pair_costs(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> np.ndarray:
        """W_B,j: the pieces with the leader B put above every other arm (0 where mu_j >= mu_B); inf at B."""
        leader = checked_index(leader, self._K, "an arm")
        _, values, _ = self.arm_pieces(mu, counts, leader, False)
        return with_leader(values, leader)

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """The leader's part N_B g_B(x) of the pair's cost at its closest common mean x (1/2 when it vanishes)."""
        leader = checked_index(leader, self._K, "an arm")
        challenger = checked_index(challenger, self._K, "an arm")
        _, values, G = self.arm_pieces(mu, counts, leader, True)
        row = challenger - (challenger > leader)
        assert G is not None
        lead = float(G[row, leader]) * float(counts[leader])
        return lead / float(values[row]) if values[row] > 0 else 0.5

    def threshold_argument(self, counts: np.ndarray, information: np.ndarray | None) -> np.ndarray:
        """The counts (the pairwise bounds read them)."""
        return np.asarray(counts)
