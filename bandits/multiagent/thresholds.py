"""Stopping thresholds beta(t, delta) for the factored GLRT (t counted in rounds, GLR in natural units).

* ``"practical"`` — :class:`bandits.core.stopping.PracticalThreshold`, beta = log((1 + log t) / delta). This
  is the Garivier–Kaufmann heuristic that the MF-TaS paper uses in its experiments (§7.1). It is not
  proven delta-correct; it is the default, as in every Track-and-Stop experiment.
* ``"theory"`` — :class:`FactoredTheoryThreshold`, delta-correct under any adaptive sampling:

      beta = (1 + eta) [ log(1/delta) + log(abs(A) - 1) + sum_e max_b log(1 + N_{e,b} / eta) ],

  with eta > 0 (default 1). The test only runs once every N_{e,b} >= 1, after the pass over A0.

  Why it is delta-correct. Suppose the test stops with a_hat != a*. Then the GLR against a* satisfies
  Lambda <= sum_{(e,b) in S} N_{e,b} (theta_hat - theta)^2 / (2 sigma^2). Here S = S(a_hat, a*) holds the
  2k coordinates (e, a_hat_e), (e, a*_e) of the k factors where the two actions differ. The bound holds
  because lambda = theta on S and theta_hat elsewhere is an alternative: the shared coordinates cancel in
  lambda(a*) - lambda(a_hat) = theta(a*) - theta(a_hat) > 0. For a FIXED set S, Abbasi-Yadkori et al.
  (2011, Thm 1) applied to the diagonal design diag(N_S), with regulariser eta I <= eta diag(N_S) (all N >= 1),
  gives, uniformly in time with probability 1 - delta',

      sum_S N (theta_hat - theta)^2 / (2 sigma^2) <= (1 + eta)(log(1/delta') + 1/2 sum_S log(1 + N / eta)).

  The sum over S is at most sum_e 2 max_b (...), since S takes two coordinates per factor at most. The set
  S is determined by a_hat once a* is fixed, so a union bound over the abs(A) - 1 candidates for a_hat, with
  delta' = delta / (abs(A) - 1), makes P(error) <= delta. Cost: log abs(A) = sum_i log K_i (linear in N, where
  a union over every coordinate would cost Abar), plus about (1 + eta) rho log t.

  This is the semi-bandit (diagonal) form of :class:`bandits.core.stopping.LinearTheoryThreshold`,
  restricted to the coordinates that one alternative moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

from ..core.stopping import Threshold
from ..core.validation import is_number

__all__ = ["FactoredTheoryThreshold"]


@dataclass(frozen=True, eq=False)
class FactoredTheoryThreshold(Threshold):
    """beta = (1 + eta)(log(1/delta) + log(abs(A) - 1) + sum_e max_b log(1 + N_{e,b} / eta)), A the joint actions.

    Called as ``beta(t, delta, counts)``: the third argument (``A`` of the :class:`~bandits.core.stopping.Threshold`
    interface) is the group counts N_{e,b}, and t is not read. :meth:`for_structure` builds it from a structure.

    Raises
    ------
    InvalidInputError
        ``eta`` not a positive finite number.
    """

    #: log(abs(A) - 1), the union bound over the candidate a_hat
    log_alternatives: float
    #: first flat index of every factor's block of group actions (rho,)
    block_starts: npt.NDArray[np.int64]
    #: the regulariser eta > 0 of the self-normalised bound
    eta: float = 1.0

    def __post_init__(self) -> None:
        if not (is_number(self.eta) and self.eta > 0):
            raise InvalidInputError(f"eta must be positive, got {self.eta}")

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        if A is None:
            raise InvalidInputError("FactoredTheoryThreshold needs the current counts N_{e,b} (argument A)")
        growth = np.log1p(np.asarray(A, dtype=float) / self.eta)
        per_factor = np.maximum.reduceat(growth, self.block_starts)
        return float((1.0 + self.eta) * (np.log(1.0 / delta) + self.log_alternatives + per_factor.sum()))

    @classmethod
    def for_structure(cls, structure: FactorGraph, eta: float = 1.0) -> FactoredTheoryThreshold:
        """The threshold of a structure: log_alternatives = log(abs(A) - 1) and the factors' blocks.

        Parameters
        ----------
        structure : FactorGraph
            The structure (joint-action count and factor blocks; tables not read).
        eta : float
            The regulariser.

        Returns
        -------
        FactoredTheoryThreshold
            The threshold.
        """
        starts = np.asarray(structure.plan().factor_offsets[:-1], dtype=np.int64)
        return cls(math.log(structure.n_joint_actions - 1), starts, eta)

    def describe(self) -> dict[str, Any]:
        """The threshold's name and eta (the structure's constants are left out).

        Returns
        -------
        dict
            ``{"threshold": "factoredtheory", "eta": eta}``.
        """
        return {"threshold": self.name, "eta": self.eta}
