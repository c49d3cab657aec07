"""Best-arm identification among arms with rewards in [0, 1], the learner knowing nothing else of their
distributions: the nonparametric question, whose costs are KL_inf (Honda & Takemura 2010) rather than one family's
divergence.

The instance (:class:`bandits.pure_exploration.environment.BoundedBandit`) puts its rewards on a finite support, so
the counts of rewards on each support point are sufficient and a batch is drawn exactly (multinomial). The learner
estimates each arm's empirical distribution; its model is every distribution on [0, 1], so the pieces are
W_B,j = min over x of N_B K-(F_hat_B, x) + N_j K+(F_hat_j, x) (:mod:`optdesign.identification.bounded`), the oracle
is T* with KL_inf (Agrawal, Koolen & Juneja 2020; the lower bound a study reports), and the ``theory`` threshold is
:mod:`bandits.pure_exploration.betting_bounds` (delta-correct whatever the distributions on [0, 1]). On Bernoulli
instances (``levels=2``) KL_inf is the Bernoulli kl, so T* is Bernoulli's: what the learner pays for knowing only
the range is in its threshold alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InvalidInputError
from optdesign.identification import bounded_characteristic_time, bounded_pieces, check_bounded_arms, kl_inf_rows
from optdesign.validation import as_count

from .arm_pairs import ORACLE_TOL, ArmPairsProblem
from .betting_bounds import BettingThreshold
from .environment import BoundedBandit
from .oracle import Oracle

__all__ = ["BoundedProblem"]


class BoundedProblem(ArmPairsProblem):
    """Best-arm identification among arms with rewards in [0, 1] (module docstring). The parameter theta is the
    arms' distributions on the support, row by row (K L entries).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    support : array_like, shape (L,)
        The reward values the instance reports counts of, in [0, 1].

    Raises
    ------
    InvalidInputError
        Fewer than two arms or a support outside [0, 1]; a parameter (:meth:`check_parameter`) whose rows are not
        distributions.
    """

    kind = "bounded"

    def __init__(self, n_arms: int, support: ArrayLike) -> None:
        self._K = as_count(n_arms, "n_arms (a K-armed problem needs at least two arms)", minimum=2)
        _, self.support = check_bounded_arms(np.ones(np.size(support)) / np.size(support), support)

    @classmethod
    def of_environment(cls, env: BoundedBandit) -> BoundedProblem:
        """The problem a learner faces on the instance: its number of arms and its support.

        Parameters
        ----------
        env : BoundedBandit
            The instance.

        Returns
        -------
        BoundedProblem
            The problem.
        """
        return cls(env.n_arms, env.support)

    @property
    def moments(self) -> int:  # type: ignore[override]
        """L: a batch reports, per arm, its count of rewards on each support point."""
        return int(self.support.size)

    @property
    def dim(self) -> int:
        """K L: every arm's distribution."""
        return self._K * self.moments

    def _probs(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=float).reshape(self._K, self.moments)

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """The empirical distributions: each arm's counts on the support over its pulls."""
        N = np.maximum(np.asarray(counts, dtype=float), 1.0)
        return (np.asarray(sums, dtype=float).reshape(self._K, self.moments) / N[:, None]).ravel()

    def arm_means(self, mu: np.ndarray) -> np.ndarray:
        """The means of the distributions theta."""
        return self._probs(mu) @ self.support

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        best, values, G, _ = bounded_pieces(self._probs(mu), self.support, w, best=best, gradients=gradients)
        return best, values, G

    def level_costs(self, mu: np.ndarray, level: float) -> np.ndarray:
        """KL_inf(F_k, tau) of every arm (:func:`optdesign.identification.kl_inf_rows`)."""
        return kl_inf_rows(self._probs(mu), self.support, level)

    def level_threshold(self) -> BettingThreshold:
        """The betting threshold read per arm: log(K / delta) + log V(N_k)."""
        return BettingThreshold(self._K, per_arm=True)

    def check_parameter(self, mu: np.ndarray) -> np.ndarray:
        theta = super().check_parameter(mu)
        check_bounded_arms(self._probs(theta), self.support)
        return theta

    def parameter_of(self, env: BoundedBandit) -> np.ndarray:
        """The instance's distributions, row by row.

        Parameters
        ----------
        env : BoundedBandit
            The instance.

        Returns
        -------
        numpy.ndarray, shape (K L,)
            theta.

        Raises
        ------
        InvalidInputError
            A support other than the problem's.
        """
        if not np.array_equal(env.support, self.support):
            raise InvalidInputError("the instance's support differs from the problem's")
        return self.check_parameter(env.probs.ravel())

    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* with KL_inf at theta (:func:`optdesign.bounded_characteristic_time`: its equalisation for the
        best arm, its cutting planes for the top m; certified).

        Parameters
        ----------
        mu : numpy.ndarray
            theta, the distributions, with distinct m-th and (m+1)-th means.
        m : int
            The answer's size.
        bound : bool
            Unused: the pieces are the learner's model.

        Returns
        -------
        Oracle
            T* (Garivier & Kaufmann's convention), w* and its certified lower bound.
        """
        result = bounded_characteristic_time(self._probs(self.check_parameter(mu)), self.support, m=m,
                                             method="equalise" if m == 1 else "program",
                                             tol=1e-6 if bound else ORACLE_TOL)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)

    def pair_threshold(self, n_pairs: int) -> BettingThreshold:
        """The betting threshold over ``n_pairs`` pairs: log(n_pairs / delta) / 2 + log V(N_k) per arm."""
        return BettingThreshold(self._K, pairs=n_pairs)
