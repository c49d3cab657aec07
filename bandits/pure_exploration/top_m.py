"""Top-m identification: the m arms of largest means among K arms of one exponential family (Kalyanakrishnan,
Tewari, Auer & Stone, ICML 2012; the characteristic time of Garivier & Kaufmann's Theorem 1 for this question).

An answer is a set S of m arms, encoded as the bit mask sum_{k in S} 2^k. The alternatives to S at mu are the
parameters where some arm j outside S is at least some arm i of S; the pieces are the pairs (i in S, j not in S),

    f_ij(w) = w_i d(mu_i, m_ij) + w_j d(mu_j, m_ij),   m_ij = (w_i mu_i + w_j mu_j) / (w_i + w_j),

0 when mu_i <= mu_j (:func:`optdesign.identification.pair_pieces`). Piece (i, j) stands for the answer S - {i} + {j}.
The oracle T*, w* is the declarative model of :class:`optdesign.identification.PairsModel` on the pairs of
:func:`optdesign.top_m_pairs` (compiled once per pair structure), certified by weak duality. With m = 1 the question
is best-arm identification (with answers as masks).

The K-armed rules that pick arms and read only the pieces (Track-and-Stop, Frank-Wolfe sampling, Lazy Track-and-Stop,
uniform, oracle weights) run on it; LinGame and LinGame-C (optimistic gains at the least piece's closest alternative;
an answer's row is its rank among the m-sets); and Top-Two with the TC challenger (the least-cost swap S - {i} + {j},
its two sides pulling i and j, beta fixed or IDS on that pair).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from optdesign import top_m_pairs
from optdesign.errors import InvalidInputError
from optdesign.identification import PairsModel, pair_pieces
from optdesign.validation import as_count

from .arm_pairs import ORACLE_TOL
from .arm_questions import ArmSwaps
from .families import ExponentialFamily
from .karmed import KArmedProblem, pair_response
from .oracle import Oracle
from .questions import KArmedQuestion

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext
    from .environment import KArmedBandit

__all__ = ["TopMProblem"]


class TopMProblem(ArmSwaps, KArmedQuestion):
    """Identify the m arms of largest means (module docstring); answers are bit masks of m arms.

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    m : int
        The answer's size, 1 <= m < K.
    family : ExponentialFamily
        The reward family (Gaussian with its sigma by default, Bernoulli, Poisson or exponential).

    Raises
    ------
    InvalidInputError
        Fewer than two arms, or m outside [1, K).
    """

    def __init__(self, n_arms: int, m: int = 1, family: ExponentialFamily | None = None) -> None:
        super().__init__(n_arms, family)
        self.m = as_count(m, "m (the size of the answer)")
        if not self.m < self.n_arms:
            raise InvalidInputError(f"m must be below the number of arms K = {self.n_arms}, got {m}")
        self._models: dict[bytes, PairsModel] = {}

    @classmethod
    def of_environment(cls, env: KArmedBandit, m: int = 1) -> TopMProblem:
        """The top-m problem of a K-armed instance.

        Parameters
        ----------
        env : KArmedBandit
            The instance (its number of arms and its family).
        m : int
            The answer's size.

        Returns
        -------
        TopMProblem
            The problem.
        """
        return cls(env.n_arms, m, env.family)

    def scores(self, mu: np.ndarray) -> np.ndarray:
        """The arms' means."""
        return np.asarray(mu, dtype=float)

    def _pair_pieces(self, mu: np.ndarray, w: np.ndarray, pairs: np.ndarray,
                    gradients: bool) -> tuple[np.ndarray, np.ndarray | None]:
        return pair_pieces(mu, pairs, w, **self.family_args)

    optimism = KArmedProblem.optimism  # LinGame's gains, at the best response's pair

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """The share of the leader's arm i of the swapped pair (i, j), as on K arms (information-directed beta)."""
        i, j = self.duel_pulls(leader, challenger)
        return KArmedProblem.pair_share(self, mu, counts, int(i), int(j))

    def response(self, mu: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The closest alternative of the least piece at (mu, w): its pair (i, j) moved to their weighted mean."""
        mu, w = self.check_shapes(mu, w)
        pieces = self.pieces(mu, w, gradients=False)
        assert pieces.pairs is not None
        i, j = pieces.pairs[pieces.best_response]
        return pair_response(mu, w, int(i), int(j))

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """The K-armed context, Kaufmann & Koolen's union over the m (K - m) pairs a wrong answer can misorder."""
        return replace(super().threshold_context(counts), n_pairs=self.m * (self.n_arms - self.m))

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) and w*(mu) from the cvxpy model of :class:`optdesign.identification.PairsModel`, certified.

        Parameters
        ----------
        mu : numpy.ndarray
            The means, with the m-th and (m+1)-th largest distinct.

        Returns
        -------
        Oracle
            T* in Garivier & Kaufmann's convention, w* and the certified lower bound.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, outside the family's mean space, or with a tie at the m-th mean.
        SolverError
            No solver answered.
        """
        mu = self.family.check_means(self.check_parameter(mu))
        pairs = top_m_pairs(mu, self.m)
        key = pairs.tobytes()
        if key not in self._models:  # one compiled model per pair structure, re-solved at new means
            self._models[key] = PairsModel(self.n_arms, pairs, **self.family_args)
        result = self._models[key].solve(mu, tol=ORACLE_TOL)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)
