"""AdaHedge over the joint actions of a factor graph, with the distribution kept implicit.

Losses linear in the factor entries, loss(a) = sum_e l_e(a_e), keep the exponential weights over joint actions a
Gibbs distribution p(a) ∝ exp(-eta sum_e L_e(a_e)) of the cumulative entry losses L, so the learner stores L (one
number per group action) and never lists a joint action. With Z(L) = sum_a exp(-eta L(a)) and the sum-product pass
of :class:`optdesign.factored.inference.sum_product.SumProduct` (cost O(N K^{w+1})), AdaHedge (de Rooij et al.
2014) needs

* its play, the factor marginals w_{e,b} = p(a_e = b): a point of the marginal polytope;
* the Hedge loss E_p loss = sum_{e,b} w_{e,b} l_{e,b}, and the mix loss -(1/eta) (ln Z(L + l) - ln Z(L));
* eta = ln(prod_i K_i) / Delta, Delta the summed gaps (Hedge minus mix loss).

While Delta = 0 it follows the leaders: p is uniform on argmin_a L(a), through max-sum's local regrets (a joint
action minimises L exactly when each of its rows has regret 0,
:func:`~optdesign.factored.inference.sum_product.maximiser_terms`), and the mix loss is min l(a) over those, one max
pass with the same row terms. The update is
the K-armed :class:`~bandits.pure_exploration.adahedge.AdaHedge`'s, so on a single factor the two learners
are one.
"""

from __future__ import annotations

import math

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.factored import EliminationPlan, SumProduct, maximiser_terms

from ..pure_exploration.adahedge import AdaHedge

__all__ = ["FactoredAdaHedge"]


class FactoredAdaHedge(AdaHedge):
    """AdaHedge over the joint actions of a plan's structure, losses given per group action (module docstring).

    ``losses`` holds the cumulative L_e(b), flat as the plan's tables; :meth:`weights` returns the factor
    marginals of the learner's distribution, not one weight per joint action.

    Parameters
    ----------
    plan : EliminationPlan
        The structure's elimination plan (its tables' layout is the losses').

    Raises
    ------
    InvalidInputError
        ``plan`` is not an EliminationPlan.
    """

    def __init__(self, plan: EliminationPlan) -> None:
        if not isinstance(plan, EliminationPlan):
            raise InvalidInputError(f"plan must be an EliminationPlan, got {type(plan).__name__}")
        super().__init__(plan.table_size)
        self.plan = plan
        self._log_size = float(sum(math.log(k) for k in plan.n_actions))
        self._cached: tuple[np.ndarray, float, SumProduct] | None = None

    @property
    def log_size(self) -> float:
        """ln prod_i K_i, ln of the number of joint actions."""
        return self._log_size

    def _distribution(self) -> SumProduct:
        """The sum-product pass of the current distribution (kept until the next update)."""
        if self._cached is not None and self._cached[0] is self.losses and self._cached[1] == self.gap:
            return self._cached[2]
        if self.gap <= 0:  # follow the leaders: uniform on argmin L
            sp = SumProduct(self.plan, np.zeros(self.plan.table_size), row_terms=maximiser_terms(self.plan,
                                                                                                -self.losses))
        else:
            sp = SumProduct(self.plan, -self.log_size / self.gap * self._shifted(self.losses)[0])
        self._cached = (self.losses, self.gap, sp)
        return sp

    def weights(self) -> np.ndarray:
        """The factor marginals of the learner's distribution over joint actions.

        Returns
        -------
        numpy.ndarray, shape (Abar,)
            w_{e,b} = p(a_e = b); each factor's entries sum to 1.
        """
        return self._distribution().marginals()

    def update(self, loss: np.ndarray) -> None:
        """Incur the loss sum_e l_e(a_e) of every joint action a: AdaHedge's update, the sums implicit.

        Parameters
        ----------
        loss : numpy.ndarray, shape (Abar,)
            l_e(b) per group action (finite).

        Raises
        ------
        InvalidInputError
            A loss of the wrong length or not finite.
        """
        loss = np.asarray(loss, dtype=float)
        if loss.shape != self.losses.shape or not np.isfinite(loss).all():
            raise InvalidInputError(f"the loss must be {self.losses.size} finite numbers, one per group action")
        super().update(loss)

    def _mix_loss(self, loss: np.ndarray, w: np.ndarray) -> float:
        """-(1/eta) (ln Z(L + l) - ln Z(L)); while Delta = 0 the least loss among the minimisers of L."""
        if self.gap <= 0:
            return -SumProduct(self.plan, -loss, row_terms=maximiser_terms(self.plan, -self.losses),
                               reduce="max").log_partition
        eta = self.log_size / self.gap
        _, low = self._shifted(self.losses)
        after, high = self._shifted(self.losses + loss)
        return (high - low) - (SumProduct(self.plan, -eta * after).log_partition
                               - self._distribution().log_partition) / eta

    def _shifted(self, losses: np.ndarray) -> tuple[np.ndarray, float]:
        """(L_e(b) - min_b L_e(b), sum_e min_b L_e(b)): the same Gibbs distribution, its log Z moved by eta times the
        sum, and eta L of order eta times the losses' spread rather than their size (log Z keeps its precision)."""
        mins = np.minimum.reduceat(losses, self.plan.factor_offsets[:-1])
        return losses - np.repeat(mins, np.diff(self.plan.factor_offsets)), float(mins.sum())

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` joint actions drawn independently from the learner's distribution (ancestral sampling).

        Parameters
        ----------
        rng : numpy.random.Generator
            The source of the draws.
        n : int
            Number of draws (>= 0).

        Returns
        -------
        numpy.ndarray of int64, shape (n, N)
            One joint action per row; their group counts have expectation n times :meth:`weights`.

        Raises
        ------
        InvalidInputError
            A negative n.
        """
        return self._distribution().sample(rng, n)
