"""Soare et al. (2014) adaptive strategies: XY-Adaptive (Sec. 5, Fig. 3) and the "fully adaptive"
XY allocation of their experiments (Sec. 6, confidence bound of Prop. 2).

XY-Adaptive runs in phases. Phase j starts from A_0 (one pull of each of d spanning arms), then
follows a static XY allocation restricted to the directions Y_j = {z - z' : z, z' in Z_j} between
the surviving items (pulls may use any arm of X), and ends at the first n with (Eq. 18 in matrix
form)

    max_{y in Y_j} y^T A_n^{-1} y  <=  alpha * max_{y in Y_{j-1}} y^T A_{j-1}^{-1} y,

A_{j-1} being the information matrix at the end of phase j-1. The estimate theta_j uses phase-j
samples only, so the allocation of phase j is fixed given the past and Prop. 1 (fixed design)
applies to it; item z is then discarded (Lemma 4) when some surviving z' has

    c ||z' - z||_{A_j^{-1}} sqrt(log(c' n^2 K^2 / delta)) < (z' - z)^T theta_j,    c = 2 sigma sqrt(2), c' = 6/pi^2,

with n the total number of samples so far (the paper's n: phases end at distinct totals, so the
union over n in Prop. 1 also covers the union over phases) and K = |Z| (K = |X| in the paper).
With c' = 6/pi^2 as printed that union sums to (pi^4/36) delta; c' = pi^2/6 would give delta, but
for Gaussian noise c = 2 sigma sqrt 2 is already far wider than needed. Candidates and dominators
are the survivors Z_j (a discarded item never returns, and the empirical best of Z_j is never
dominated, so Z_{j+1} is never empty). The algorithm stops when one item survives.
Transductive problems (items Z != arms X; Fiez et al. 2019 reuse XY-Adaptive on their benchmark)
only change the items: measure with X, discard in Z.

Phases are computed before they start ("given Y_j and rho_{j-1} this quantity can be computed
before the actual beginning of phase j"), so a whole phase is one batch of sufficient statistics:

* ``rule="design"`` (default): the continuous XY design w_j = od.minmax_design(X, Y_j), solved once
  per phase; the phase pulls A_0 + round_design(w_j, m), and m is the smallest count meeting Eq. 18
  with these rounded counts, found by doubling then bisection (each test is one d x d Cholesky).
* ``rule="greedy"``: Soare's incremental rule x_t = argmin_x max_{y in Y_j} y^T (A + x x^T)^{-1} y
  from A_0 (exact ties to the least pulled arm), simulated on matrices only
  (od.greedy_scores, one pull per step) until Eq. 18 holds; exact but O(n) per phase, for small problems.

First phase: the reference value is the one reached by A_0 alone, max_{y in Y_1} y^T A_0^{-1} y
(scale-free), rather than the reconstruction's rho_0 / n_0 = 1 / (d(d+1)+1), which depends on the
units of X.

``variant="fiez"``: XY-Adaptive as Fiez et al. (2019) ran it (:mod:`bandits.linear.fiez_adaptive`).

The fully adaptive variant re-plans the XY design on the items not yet eliminated, using all
samples and the regularised least squares of Prop. 2 (A^eta = eta I + A):

    |y^T (theta - theta_hat^eta)| <= ||y||_{(A^eta)^{-1}} (sigma sqrt(d log((1 + n L^2 / eta) / delta)) + eta^{1/2} S),

an ellipsoid bound valid for all n and all directions at once under adaptive sampling (printed
form; S >= ||theta|| is an option since ||theta|| is unknown, L = max_x ||x||). For d >= 2 the
printed radius is at least Abbasi-Yadkori et al.'s sqrt(2 log(1/delta) + d log(1 + n L^2/(d eta))),
so it is delta-correct; for d = 1 it is slightly smaller. Its sqrt(d) costs less than the
n^2 K^2 union and the per-phase restarts of XY-Adaptive, so on Soare's benchmark this variant is
not worse than XY-Adaptive here, unlike the paper's Fig. 4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import optdesign as od
from optdesign import single_threaded_blas
from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm, Policy
from ..core.environments import LinearBandit
from ..core.statistics import LinearStatistics, spanning_subset
from ..core.tracking import portion, track
from ..core.validation import check_choice, is_number
from ..pure_exploration.linear import LinearProblem
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import EliminationStop
from .common import LinearModel, check_growth, linear_items
from .fiez_adaptive import FiezXYAdaptiveState
from .phases import PhasedState, Survivors, dominated, greedy_pulls, phased_policy, smallest_passing

__all__ = ["FullyAdaptiveXY", "XYAdaptive"]

C_PRIME = 6.0 / np.pi**2  # Soare et al. Prop. 1, as printed
RULES = ("design", "greedy")
VARIANTS = ("soare", "fiez")


def soare_log(n: int, n_items: int, delta: float) -> float:
    """log_n(K^2 / delta) = log(c' n^2 K^2 / delta) with c' = 6 / pi^2 (Soare et al. 2014, Prop. 1), for ``n``
    samples, K = ``n_items`` and confidence ``delta``."""
    return float(np.log(C_PRIME * max(n, 1) ** 2 * n_items**2 / delta))


def design_phase(X: np.ndarray, Y: np.ndarray, base: np.ndarray, weights: np.ndarray, target: float,
                 cap: int) -> np.ndarray:
    """Counts base + round_design(weights, m) for the smallest m <= cap (doubling, then bisection) with
    max_{y in Y} y^T A^{-1} y <= target, A the information of those counts; m = cap if none does."""

    def counts(m: int) -> np.ndarray:
        return base + od.round_design(weights, m) if m > 0 else base.copy()

    def ok(m: int) -> bool:
        return od.minmax_value(X, counts(m), Y) <= target

    return counts(0) if cap <= 0 or ok(0) else counts(smallest_passing(ok, cap))


def greedy_phase(X: np.ndarray, Y: np.ndarray, base: np.ndarray, target: float, cap: int) -> np.ndarray:
    """Counts base + the first m <= cap greedy XY pulls (:func:`greedy_pulls` from the information of ``base``)
    after which max_{y in Y} y^T A^{-1} y <= target (m = cap if never)."""
    counts = base.copy()
    if cap <= 0 or od.minmax_value(X, counts, Y) <= target:
        return counts
    for m, score in greedy_pulls(X, Y, X.T @ (counts[:, None] * X), counts):
        if score <= target or m >= cap:
            break
    return counts


@dataclass(frozen=True)
class XYAdaptive(Algorithm[LinearBandit]):
    """XY-Adaptive (Soare et al. 2014, Sec. 5): phased XY allocation on the surviving directions,
    phase length by Eq. 18 (ratio ``alpha`` in (0, 1)), Lemma 4 discards; see the module docstring.

    Parameters
    ----------
    alpha : float
        Ratio in (0, 1) of Eq. 18: a phase ends once its worst variance max_y y^T A^{-1} y falls below
        alpha times the previous phase's (default 0.1); smaller alpha, longer phases.
    rule : str
        How a phase pulls: ``"design"`` (the rounded XY design, phase length by bisection; default) or
        ``"greedy"`` (Soare's incremental rule, one pull at a time; small problems).
    variant : str
        ``"soare"`` (the paper, default) or ``"fiez"`` (the constants of Fiez et al.'s code, see
        :mod:`bandits.linear.fiez_adaptive`).

    Raises
    ------
    InvalidInputError
        ``alpha`` outside (0, 1), or an unknown rule or variant.
    """

    alpha: float = 0.1
    rule: str = "design"
    variant: str = "soare"

    def __post_init__(self) -> None:
        if not (is_number(self.alpha) and 0 < self.alpha < 1):
            raise InvalidInputError(f"alpha (phase-length ratio of Eq. 18) must lie in (0, 1), got {self.alpha!r}")
        check_choice(self.rule, "rule", RULES)
        check_choice(self.variant, "variant", VARIANTS)

    @property
    def name(self) -> str:
        """``xy-adaptive``."""
        return "xy-adaptive"

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """A phased policy at confidence ``delta`` (deterministic: ``rng`` is unused)."""
        if self.variant == "fiez":
            return phased_policy(env, FiezXYAdaptiveState(self, env, delta))
        return phased_policy(env, _XYAdaptiveState(self, env, delta))


class _XYAdaptiveState(PhasedState):
    def __init__(self, algo: XYAdaptive, env: LinearModel, delta: float) -> None:
        super().__init__(env, delta)
        self.algo = algo
        self.base = np.zeros(self.X.shape[0], dtype=np.int64)
        self.base[spanning_subset(self.X)] = 1  # A_0, pulled at the start of every phase
        self.c = 2.0 * self.sigma * np.sqrt(2.0)
        self._reference: float | None = None  # max_{y in Y_{j-1}} y^T A_{j-1}^{-1} y
        self._Y: np.ndarray | None = None

    def _plan_phase(self, budget: int) -> np.ndarray:
        X = self.X
        self._Y = Y = od.pairwise_differences(self.Z[self.active])
        if self._reference is None:  # first phase: against the uncertainty left by A_0 alone
            self._reference = od.minmax_value(X, self.base, Y)
        target = self.algo.alpha * self._reference
        cap = int(budget) - int(self.base.sum())
        if self.algo.rule == "design":
            weights = od.minmax_design(X, Y).weights
            return design_phase(X, Y, self.base, weights, target, cap)
        return greedy_phase(X, Y, self.base, target, cap)

    def _end_phase(self, stats: LinearStatistics) -> dict[str, Any]:
        if self._Y is None or self._reference is None:  # _plan_phase set both before the phase ran
            raise RuntimeError("a phase ended before it was planned")
        value = od.minmax_value(self.X, stats.counts, self._Y)
        target = self.algo.alpha * self._reference
        self.theta = stats.theta_hat()
        width = self.c * np.sqrt(soare_log(self.n_total, self.Z.shape[0], self.delta))
        M = np.linalg.inv(stats.A)
        self.active = self.active[~dominated(self.Z[self.active], self.theta, M, width)]
        self._reference = value
        return {"value": value, "target": target, "eq18": bool(value <= target)}


@dataclass(frozen=True)
class FullyAdaptiveXY(Algorithm[LinearBandit]):
    """Fully adaptive XY allocation (Soare et al. 2014, Sec. 6): XY design on the directions between
    the items not yet eliminated, re-planned when they change and tracked on a geometric grid
    (``growth``); elimination by the adaptive bound of Prop. 2 with regulariser ``eta`` and norm
    bound ``S >= ||theta||`` (default 2, the norm of Soare's benchmark theta = 2 e_1).

    Parameters
    ----------
    eta : float
        Ridge regulariser (> 0) of the least squares A^eta = eta I + A of Prop. 2 (default 1).
    S : float
        Bound (>= 0) on ||theta|| in the confidence radius (default 2).
    growth : float
        Relative step in (0, 1] of the grid where batches end and eliminations are checked (default 1 %).

    Raises
    ------
    InvalidInputError
        ``eta`` not positive, ``S`` negative, or ``growth`` outside (0, 1].
    """

    eta: float = 1.0
    S: float = 2.0
    growth: float = 0.01

    def __post_init__(self) -> None:
        if not (is_number(self.eta) and self.eta > 0):
            raise InvalidInputError(f"eta (ridge regulariser) must be a positive number, got {self.eta!r}")
        if not (is_number(self.S) and self.S >= 0):
            raise InvalidInputError(f"S (bound on ||theta||) must be a nonnegative number, got {self.S!r}")
        check_growth(self.growth)

    @property
    def name(self) -> str:
        """``xy-fully-adaptive``."""
        return "xy-fully-adaptive"

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """An elimination run at confidence ``delta`` under its own stop, one survivor (deterministic: ``rng`` is
        unused)."""
        return PureExplorationPolicy(LinearProblem(env.X, env.Z, env.sigma), _FullyAdaptiveState(self, env, delta),
                                     EliminationStop(), self.growth)


class _FullyAdaptiveState(Survivors, SamplerState):
    def __init__(self, algo: FullyAdaptiveXY, env: LinearModel, delta: float) -> None:
        self.algo = algo
        self.X, self.Z, self.sigma = env.X, linear_items(env), env.sigma
        self.delta = float(delta)
        self.stats = LinearStatistics(self.X)
        self.spanning = np.zeros(self.X.shape[0], dtype=np.int64)
        self.spanning[spanning_subset(self.X)] = 1
        self.L2 = float(np.max(np.sum(self.X**2, axis=1)))
        self.active = np.arange(self.Z.shape[0])
        self.solve_time = 0.0
        self.theta: np.ndarray | None = None
        self._weights: np.ndarray | None = None

    def radius(self, n: int) -> float:
        """sigma sqrt(d log((1 + n L^2 / eta) / delta)) + eta^{1/2} S (Prop. 2, printed form)."""
        d, eta = self.X.shape[1], self.algo.eta
        return float(self.sigma * np.sqrt(d * np.log((1.0 + n * self.L2 / eta) / self.delta))
                     + np.sqrt(eta) * self.algo.S)

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """One pull of each of d spanning arms (a share when the budget is smaller)."""
        return portion(self.spanning - self.stats.counts, budget)

    def batch(self, obs: Observations, n: int) -> np.ndarray:
        """The spanning pulls not made yet, then pulls tracking the XY design of the survivors up to the next
        checkpoint."""
        if self.stats.n < self.spanning.sum():
            return self.initial(obs.problem, obs.budget)
        return self.plan(obs, min(n, obs.budget))

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self._weights is None:
            with self.solving(), single_threaded_blas():
                self._weights = od.minmax_design(self.X, od.pairwise_differences(self.Z[self.active])).weights
        return track(self.stats.counts, self._weights, n)

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.stats.add(counts, sums)
        if self.stats.n < self.spanning.sum():
            return
        A = self.algo.eta * np.eye(self.X.shape[1]) + self.stats.A
        M = np.linalg.inv(A)
        self.theta = M @ self.stats.b
        keep = ~dominated(self.Z[self.active], self.theta, M, self.radius(self.stats.n))
        if not np.all(keep):
            self.active = self.active[keep]
            self._weights = None

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        return {"active": int(self.active.size)}
