"""Linear Track-and-Stop: track the oracle design at the plug-in estimate (Garivier & Kaufmann 2016,
Sec. 3, carried to linear and transductive bandits with the XY-oracle / rho* design of Soare et al.
2014 and Fiez et al. 2019).

Sampling. After one pull of each of d spanning arms, the policy re-plans on a geometric grid of
times (``replan_growth``, default 10 %): it solves, at theta_hat,

    w(theta_hat) = argmin_w max_{z != z_hat} ||z_hat - z||^2_{A(w)^{-1}} / ((z_hat - z)^T theta_hat)^2

(``od.transductive(X, Z, theta_hat)``; the XY-oracle when Z = X), and between re-plans it keeps that
design (lazy updates: theta_hat moves little within a 10 % step while a solve costs ~10 ms, so
re-solving at every batch would dominate the run; on Soare's instance, d = 3, omega = 0.1, 20 seeds,
replan_growth 0.05, 0.1 and 0.2 give mean stopping times within 1 % of each other at delta = 1e-6 and
1e-20, and 10 % halves the solves of 5 %). Forced exploration mixes in the G-optimal design
g of X: the target of a batch starting at time n is

    w_eps = (1 - gamma_n) w(theta_hat) + gamma_n g,   gamma_n = min(1, d / (2 sqrt(d^2 + n))),

a mixture in place of GK16's L-infinity projection, with their per-arm rate eps_n = 1/(2 sqrt(K^2 + n))
and K -> d (g has about d support arms). Every support arm of g is then pulled about g_a d sqrt(n)
times (C-tracking; at least half that with D-tracking), so A_n >= c sqrt(n) A(g) with A(g) > 0 and
theta_hat -> theta almost surely (the sqrt(t) forced exploration of GK16 Lemma 7, and of Jedra &
Proutiere 2020 for linear bandits), at a cost of O(d sqrt(n)) = o(n) samples. A mixture rather than a
"pull an under-sampled arm" rule because it acts inside one batch; G-optimal rather than uniform
because with many arms (Fiez's many-arms instance, 10^4 arms) uniform exploration would spread over
every arm while g spans R^d with at most d(d+1)/2 arms.

Tracking (:func:`bandits.core.tracking.track`, batch form): ``tracking="C"`` (default, GK16 C-tracking)
follows the cumulative target W_n = sum over past batches of (batch size) * w_eps, so counts stay
within O(K) of W_n; ``tracking="D"`` follows the current w_eps (the mixture replaces D-tracking's
"pull an arm with N_a < sqrt(n) - K/2" rule). Batches end on a finer grid (``growth``, 1 %), where
the GLRT is checked, so the stopping time overshoots by at most that fraction.

Ties. The oracle design needs a unique empirical best item (optdesign raises InvalidInputError on
a tie of z^T theta_hat, which has probability 0 under Gaussian noise but occurs with structurally
tied items). On a tie the policy keeps its previous design (the G-optimal design before the first
successful solve) and retries at the next re-plan time.

Stopping: the GLR stop of every pure-exploration rule (:class:`bandits.pure_exploration.stop.GLRStop`, the run's
policy :class:`bandits.pure_exploration.policy.PureExplorationPolicy`) with threshold
``practical`` (log((1 + log t)/delta), GK16 Sec. 6; default), ``theory`` (delta-correct under adaptive
sampling) or ``soare``; recommendation argmax_z z^T theta_hat. Sampling ignores delta.

Lower bound (unit of comparison). For Gaussian noise of variance sigma^2 every delta-correct
algorithm has E[tau] >= T*_GK kl(delta, 1 - delta) with T*_GK^{-1} = max_w min_z Delta_z^2 /
(2 sigma^2 ||z* - z||^2_{A(w)^{-1}}), i.e. T*_GK = 2 sigma^2 rho* (rho* = value of
``od.transductive(X, Z, theta)``, = H_LB when Z = X; in the project's MF-TaS convention T* = sigma^2 rho*
and E[tau] >= 2 T* kl). Fiez et al.'s rho* log(1/(2.4 delta)) is the same bound loosened by a factor
2 (kl(delta, 1 - delta) >= log(1/(2.4 delta))). Since A_n = n A(N/n), Lambda_n <= n / (2 sigma^2
rho*(theta_hat_n)) whatever the counts, and tracking w* makes it an equality asymptotically: the
stopping time is about 2 sigma^2 rho* beta(t, delta) ~ T*_GK log(1/delta).

``solver_mode="fast"`` (default) calls the certified barrier method (``method="barrier"``: a design
whose gap misses the tolerance is still used, never a slow fallback); ``solver_mode="model"`` builds
one ``od.OracleDesignModel(X, Z)`` at start and re-solves it with theta_hat (cvxpy DPP: compiled
once, new parameter values per solve), the build-once/re-solve pattern; slower per solve.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import optdesign as od
from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm
from ..core.environments import LinearBandit
from ..core.stopping import Threshold
from ..core.thresholds import check_threshold_option
from ..core.tracking import next_checkpoint, track
from ..core.validation import check_choice
from ..pure_exploration.linear import LinearProblem
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import GLRStop
from .common import check_growth

__all__ = ["LinearTrackAndStop", "LinearTrackAndStopState"]

SOLVER_MODES = ("fast", "model")
TRACKINGS = ("C", "D")


def exploration_rate(n: int, d: int) -> float:
    """Mass gamma_n = min(1, d / (2 sqrt(d^2 + n))) of the forced-exploration (G-optimal) component at time ``n``
    in dimension ``d``."""
    return min(1.0, d / (2.0 * np.sqrt(d * d + n)))


@dataclass(frozen=True)
class LinearTrackAndStop(Algorithm[LinearBandit]):
    """Track-and-Stop for linear / transductive BAI tracking the plug-in oracle design (module docstring).

    Parameters
    ----------
    threshold : str or Threshold
        beta(t, delta) of the GLRT: ``"practical"`` (log((1 + log t) / delta), GK16 Sec. 6; default), ``"theory"``
        (delta-correct under adaptive sampling), ``"soare"`` or an instance.
    tracking : str
        ``"C"`` (C-tracking of the cumulative target, GK16; default) or ``"D"`` (track the current target).
    growth : float
        Relative step in (0, 1] of the grid where batches end and the GLRT is checked (default 1 %).
    replan_growth : float
        Relative step in (0, 1] of the grid where the oracle design is re-solved at theta_hat (default 10 %).
    solver_mode : str
        ``"fast"`` (certified barrier method per solve; default) or ``"model"`` (one cvxpy model built at
        start, re-solved with new parameter values).

    Raises
    ------
    InvalidInputError
        An unknown threshold, tracking or solver mode, or a growth or replan_growth outside (0, 1].
    """

    threshold: str | Threshold = "practical"
    tracking: str = "C"
    growth: float = 0.01
    replan_growth: float = 0.1
    solver_mode: str = "fast"
    delta_independent = True

    def __post_init__(self) -> None:
        check_threshold_option(self.threshold)
        check_choice(self.tracking, "tracking", TRACKINGS)
        check_choice(self.solver_mode, "solver_mode", SOLVER_MODES)
        check_growth(self.growth)
        check_growth(self.replan_growth, "replan_growth")

    @property
    def name(self) -> str:
        """``lin-tas``."""
        return "lin-tas"

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> PureExplorationPolicy:
        """The pure-exploration policy of the rule on ``env``'s linear problem, under the GLR stop; the sampling
        ignores ``delta`` and ``rng`` (deterministic tracking)."""
        problem = LinearProblem.of_environment(env)
        return PureExplorationPolicy(problem, LinearTrackAndStopState(self, problem), GLRStop(self.threshold),
                                     self.growth)


class LinearTrackAndStopState(SamplerState):
    """State of one run of :class:`LinearTrackAndStop`: the oracle design, its re-plan grid and the C-tracking target.

    Parameters
    ----------
    algo : LinearTrackAndStop
        The configuration.
    problem : LinearProblem
        The problem of the run (arms, items, noise level; theta is never read).
    """

    def __init__(self, algo: LinearTrackAndStop, problem: LinearProblem) -> None:
        self.algo, self.X, self.Z = algo, problem.X, problem.Z
        start = time.perf_counter()
        self.exploration = od.g_optimal(self.X).weights
        self.model = od.OracleDesignModel(self.X, self.Z) if algo.solver_mode == "model" else None
        self.solve_time = time.perf_counter() - start
        self.design = self.exploration  # current oracle design (G-optimal until the first solve)
        self.design_value = float("nan")
        self.solves = 0
        self.ties = 0
        self.cumulative = np.zeros(self.X.shape[0])  # C-tracking target W_n
        self._next_replan = 0

    def oracle_design(self, theta: np.ndarray) -> od.DesignResult:
        """argmin_w max_{z != z_hat} ||z_hat - z||^2_{A(w)^-1} / ((z_hat - z)^T theta)^2, its time added to
        ``solve_time``.

        Parameters
        ----------
        theta : numpy.ndarray, shape (d,)
            The parameter at which to solve (the plug-in estimate).

        Returns
        -------
        optdesign.DesignResult
            The oracle design on the arms and its value rho(theta). optdesign raises InvalidInputError on a
            tie for the best item.
        """
        with self.solving():
            if self.model is not None:
                return self.model.solve(theta)
            return od.transductive(self.X, self.Z, theta, method="barrier")

    def _replan(self, theta: np.ndarray, n: int) -> None:
        try:
            res = self.oracle_design(theta)
        except InvalidInputError:  # X, Z and theta_hat are valid here: a tie for the best item; keep the design
            self.ties += 1
        else:
            self.design, self.design_value = res.weights, res.value
            self.solves += 1
        self._next_replan = next_checkpoint(n, self.algo.replan_growth)

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """One pull of each of d spanning arms (:meth:`~bandits.pure_exploration.Problem.exploration_arms`), the first
        part of the C-tracking target."""
        counts = np.zeros(problem.n_arms, dtype=np.int64)
        counts[problem.exploration_arms()] = 1
        self.cumulative += counts
        return counts

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        """Re-solving on the re-plan grid, ``n`` pulls tracking the mixture of the oracle design and the G-optimal
        exploration."""
        t = obs.t
        if t >= self._next_replan:
            self._replan(obs.mu, t)
        gamma = exploration_rate(t, self.X.shape[1])
        target = (1.0 - gamma) * self.design + gamma * self.exploration
        if self.algo.tracking == "C":
            self.cumulative += n * target
            return track(obs.counts, self.cumulative / (t + n), n)
        return track(obs.counts, target, n)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """``{"design_value": rho(theta_hat) of the current oracle design}``."""
        return {"design_value": self.design_value}
