"""Track-and-Stop for one agent (Garivier & Kaufmann, COLT 2016) with Gaussian arms.

The optimal weights w*(mu) and T*_GK(mu) (GK16 Thm 5) are the K-armed oracle
:meth:`bandits.pure_exploration.karmed.KArmedProblem.oracle` for the Gaussian family,
d(x, y) = (x - y)^2 / (2 sigma^2). With unit variance T*_GK is twice the MF-TaS convention's T*
(``optdesign.factored.characteristic_time`` on ``FactorGraph.single_agent``).

On one agent a joint action is an arm and the group counts are the arm counts. The rule is the core Track-and-Stop's
schedule (:meth:`bandits.pure_exploration.samplers.TrackAndStop.follow`, ``resolve_growth=0``: w*(mu_hat) re-solved
after every batch of the 1 % grid of rounds) on the K-armed tracker of that problem
(:class:`bandits.pure_exploration.allocation_tracker.ArmTracker`, ``steps="batch"``), inside the factored batches:

* D-tracking: if some N_a < sqrt(t) - K/2, the under-sampled arms get their deficit (forced exploration,
  ``exploration="dtracking"`` of the factored batches). Otherwise the batch tracks t w*(mu_hat(t)) with
  :func:`bandits.core.tracking.track`.
* C-tracking: the target is the cumulative sum sum_s w^{eps_s}(mu_hat(s)), where w^eps is the L-infinity
  projection of w* onto {w >= eps} (:func:`bandits.core.tracking.project_floor`) and eps_s = (K^2 + s)^{-1/2} / 2.
  No forced exploration. Within a batch of R rounds mu_hat is fixed, and the R projections are replaced by
  R w^{eps} at the batch's middle time. eps changes by under 1 % across a batch on the 1 % grid.

Stopping is the GLRT of :mod:`bandits.multiagent.glrt`. For one factor it is GK's Chernoff statistic
min_b (mu_hat_best - mu_hat_b)^2 / (2 sigma^2 (1/N_best + 1/N_b)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optdesign.errors import InvalidInputError
from optdesign.validation import as_vector

from ..core.environments import check_sigma
from ..core.validation import check_choice
from ..pure_exploration.allocation_tracker import TRACKING, ArmTracker
from ..pure_exploration.families import Gaussian
from ..pure_exploration.karmed import KArmedProblem
from ..pure_exploration.samplers.track_and_stop import TrackAndStop
from .batches import RuleState
from .environment import FactoredBandit
from .problem import FactoredProblem
from .sampling import FactoredSampler, _shared_doc

__all__ = ["GKTrackAndStop", "gk_optimal_weights"]

def gk_optimal_weights(mu: npt.ArrayLike, sigma: float = 1.0) -> tuple[npt.NDArray[np.float64], float]:
    """Garivier–Kaufmann optimal weights w* and T*_GK for Gaussian arms: the K-armed oracle (GK16 Thm 5).

    Parameters
    ----------
    mu : array_like, shape (K,)
        Arm means (K >= 2) with a unique best.
    sigma : float
        Noise standard deviation (common to the arms).

    Returns
    -------
    w : ndarray, shape (K,)
        The optimal proportions w* (GK16 Thm 5), summing to 1.
    t_star : float
        T*_GK, with d(x, y) = (x - y)^2 / (2 sigma^2): twice the MF-TaS convention's T* at unit variance.

    Raises
    ------
    InvalidInputError
        Fewer than two means, non-finite means, a tie for the best, or sigma not positive.
    SolverError
        The root finding did not converge (divergences at the limit of floating point).
    """
    mu = as_vector(mu, "mu")
    if mu.size < 2:
        raise InvalidInputError("mu must hold at least two arm means")
    oracle = KArmedProblem(mu.size, Gaussian(check_sigma(sigma))).oracle(mu)
    return oracle.weights, float(oracle.T)


@_shared_doc
@dataclass(frozen=True)
class GKTrackAndStop(FactoredSampler):
    """Garivier–Kaufmann Track-and-Stop (D- or C-tracking) for one agent (module docstring).

    Runs on single-agent instances (``mab``): the plug-in weights w*(mu_hat) are re-solved after every
    batch, and the stopping rule is the factored GLRT, GK's Chernoff statistic for one factor.

    Parameters
    ----------
    tracking : str
        ``"D"`` (default): D-tracking with forced exploration below sqrt(t) - K/2; ``"C"``:
        C-tracking of the cumulated projections w^eps_s, no forced exploration.
%(legacy)s

    Raises
    ------
    InvalidInputError
        An unknown tracking, threshold or glrt option, or a growth outside [0, 1].
    """

    tracking: str = "D"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice(self.tracking, "tracking", TRACKING)

    @property
    def name(self) -> str:
        return "gk-tas"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """Plays the K arms once, then tracks w*(mu_hat) on the grid of rounds.

        Raises
        ------
        InvalidInputError
            ``env`` is not a single-agent, single-factor :class:`~bandits.multiagent.environment.FactoredBandit`.
        """
        if env.n_agents != 1 or env.n_factors != 1:
            raise InvalidInputError(f"gk-tas needs a single-agent instance (one agent, one factor); {env.name} has "
                                    f"{env.n_agents} agents and {env.n_factors} factors: use mf-tas")
        karmed = KArmedProblem(problem.n_arms, Gaussian(problem.sigma))  # one agent: the joint actions are the arms
        tracker = ArmTracker(karmed, self.tracking, steps="batch")
        rule = TrackAndStop(tracking=self.tracking, resolve_growth=0.0).follow(tracker)
        return RuleState(problem, rule, exploration="dtracking" if self.tracking == "D" else "none")
