"""MF-TaS (Vannella, Proutiere, Jeong, ICML 2023) and its baselines on factored multi-agent bandits.

All four share the batches of :class:`~bandits.multiagent.sampling.FactoredState` under the one pure-exploration
policy: one pass over A0, forced exploration, batches on a 1 % geometric grid of rounds, the factored GLRT and a max-sum
recommendation. They differ only in the sampling rule:

* :class:`MFTaS` (``mf-tas``): tracks the mean-field allocation at the plug-in estimate. The MF program
  depends on theta only through a* and Delta_min (m = 1). :class:`optdesign.factored.MeanFieldModel`
  is built and solved ONCE per structure, for a* = 0, and its solution is relabelled to a_hat:
  T^MF(theta_hat) = t* / Delta_hat_min^2, v_hat = relabel(v*, a_hat). So "re-solving" at a checkpoint is a
  relabelling (microseconds). It happens only when a_hat has changed since the last checkpoint, and
  a_hat is computed anyway by the GLRT. The schedule is the stopping grid: after every batch, i.e. at
  rounds t_{k+1} = max(t_k + 1, ceil(1.01 t_k)). Solved models are shared per (action counts, scopes)
  (:meth:`optdesign.factored.MeanFieldModel.for_structure`), so repeated runs on one structure solve once, even
  when each run rebuilds the instance. Tracking: independent
  per-agent draws a_i ~ v_hat_i (:mod:`bandits.multiagent.tracking` says why, not the paper's per-agent
  D-tracking).
* :class:`MFTaSOracle` (``mf-tas-oracle``): the paper's "Oracle" baseline (§7.1), MF-TaS with theta_hat replaced
  by theta in the sampling rule: it tracks the MF allocation relabelled to the true a*, from the first tracked
  round; A0 pass, forced exploration and the GLRT stop on the estimates are MF-TaS's.
* :class:`UniformSampling` (``uniform``): every agent uniform and independent (expected cost about
  2 Abar / Delta_min^2 log(1/delta), App. H), same stopping rule, no forced exploration needed.
* :class:`ExactTaS` (``tas``): follows the exact optimal allocation of T* (eq. 1), re-solved at theta_hat on
  its own geometric grid (``resolve_growth``, 10 %) by constraint generation
  (:func:`optdesign.factored.characteristic_time` with ``method="generate"``, certified to relative gap
  ``tol``), each re-solve warm-started from the previous result (its working set of joint actions, and its clique
  tables as the centre of the first master solve; CLARABEL gets the master directly, without cvxpy, and small
  instances are separated by enumeration, so a re-solve costs milliseconds: ``benchmarks/bench_exact_tas.py``,
  RESULTS §6). The solve returns clique tables of a distribution over joint actions whose group marginals are the
  optimal wbar. On at most ``TRACKED_JOINT_ACTIONS`` joint actions their law P
  (:func:`optdesign.factored.joint_action_probabilities`) is C-tracked: the tracked rounds' counts per joint action
  follow t P (:func:`bandits.core.tracking.track`), so past deficits are made up and the group counts follow t wbar
  up to the rounding of the batches. Drawing the joint actions i.i.d. from P instead leaves the deficits of earlier
  plug-in allocations in place and stops later (about a quarter more rounds on the mftas_synthetic cells, RESULTS §6).
  Beyond that size every round draws a joint action by ancestral sampling down the clique tree
  (:func:`optdesign.factored.sample_joint_actions`), so the group frequencies converge to wbar as MF-TaS's
  independent draws do. Any number of joint actions: the cost is the re-solves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import CharTimeResult, FactorGraph
from optdesign.errors import InvalidInputError, SolverError
from optdesign.factored import (
    EliminationPlan,
    MeanFieldModel,
    characteristic_time,
    joint_action_probabilities,
    sample_joint_actions,
)

from ..core.tracking import next_checkpoint, track
from ..core.validation import check_growth
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.sampler import Observations
from .environment import FactoredBandit
from .problem import FactoredGLR, FactoredProblem
from .sampling import CoveredSampler, FactoredState, _shared_doc
from .tracking import sample_product, uniform_local

__all__ = ["ExactTaS", "MFTaS", "MFTaSOracle", "UniformSampling"]

# seconds one exact re-solve may take; past it the allocation reached so far (certified gap above tol) is used
RESOLVE_TIME_LIMIT = 120.0
# up to this many joint actions exact TaS tracks the law of the allocation over all of them (beyond: ancestral draws)
TRACKED_JOINT_ACTIONS = 20_000


@_shared_doc
@dataclass(frozen=True)
class MFTaS(CoveredSampler):
    """MF-TaS: track the relabelled mean-field allocation, factored GLRT stop (module docstring).

    Vannella, Proutiere, Jeong (ICML 2023), Alg. 2, with independent per-agent draws a_i ~ v_hat_i
    instead of per-agent D-tracking (:mod:`bandits.multiagent.tracking`).

    Parameters
    ----------
%(cover)s
%(exploration)s Default ``"paper"``.
%(legacy)s

%(raises)s
    """

    @property
    def name(self) -> str:
        """``"mf-tas"``."""
        return "mf-tas"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """The MF program of the structure solved once (cached), then relabelled to a_hat."""
        return _MFState(problem, rng, cover=self.cover, exploration=self.exploration)


class _MFState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, **options: Any) -> None:
        super().__init__(problem, rng, **options)
        start = time.perf_counter()
        self.model: MeanFieldModel = MeanFieldModel.for_structure(self.structure)
        self.t_star = self.model.solve().t  # T^MF(theta) = t* / Delta_min^2 for every theta
        self.solve_time += time.perf_counter() - start
        self.local: list[np.ndarray] | None = None
        self._local_for: np.ndarray | None = None
        self.relabels = 0

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        best = self.glr_state(obs).best
        if self.local is None or self._local_for is None or not np.array_equal(best, self._local_for):
            start = time.perf_counter()
            self.local = self.model.local_allocations(best)
            self._local_for = best.copy()
            self.relabels += 1
            self.solve_time += time.perf_counter() - start
        return self.indexer.counts(sample_product(self.local, n, self.rng))

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        out = super().describe(statistic)
        if statistic is not None:
            d = cast(FactoredGLR, statistic).state.d_min()
            out["t_mf_hat"] = self.t_star / d**2 if d > 0 else np.inf
        return out


@_shared_doc
@dataclass(frozen=True)
class MFTaSOracle(CoveredSampler):
    """The paper's "Oracle" (§7.1): MF-TaS with theta_hat replaced by the true theta in the sampling rule.

    Tracks v* = argmin of T^MF_theta (eqs. 2-3) at the true a*, relabelled once; the initial pass over A0,
    the forced exploration and the factored GLRT stop on the estimates are MF-TaS's. Reads ``env.fg``.

    Parameters
    ----------
%(cover)s
%(exploration)s Default ``"paper"``.
%(legacy)s

%(raises)s
    """

    @property
    def name(self) -> str:
        """``"mf-tas-oracle"``."""
        return "mf-tas-oracle"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """Tracks the MF allocation at the true a* of ``env`` from the first tracked round."""
        return _MFOracleState(problem, env, rng, cover=self.cover, exploration=self.exploration)


class _MFOracleState(_MFState):
    def __init__(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator,
                 **options: Any) -> None:
        super().__init__(problem, rng, **options)
        start = time.perf_counter()
        self.local = self.model.local_allocations(env.best_action)
        self._local_for = np.array(env.best_action, copy=True)
        self.t_mf = self.t_star / env.gap_min**2  # T^MF at the true theta
        self.solve_time += time.perf_counter() - start

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        assert self.local is not None  # set in __init__ and never relabelled
        return self.indexer.counts(sample_product(self.local, n, self.rng))

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        return {**super().describe(statistic), "t_mf": self.t_mf}


@_shared_doc
@dataclass(frozen=True)
class UniformSampling(CoveredSampler):
    """Every agent samples uniformly and independently; factored GLRT stop.

    The uniform baseline of MF-TaS App. H (expected cost about 2 Abar / Delta_min^2 log(1/delta)).

    Parameters
    ----------
%(cover)s
%(exploration)s Default ``"none"``: uniform draws explore every group action.
%(legacy)s

%(raises)s
    """

    exploration: str = "none"

    @property
    def name(self) -> str:
        """``"uniform"``."""
        return "uniform"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """After the pass over A0, every round draws each a_i uniformly."""
        return _UniformState(problem, rng, cover=self.cover, exploration=self.exploration)


class _UniformState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, **options: Any) -> None:
        super().__init__(problem, rng, **options)
        self.local = uniform_local(self.structure.n_actions)

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        return self.indexer.counts(sample_product(self.local, n, self.rng))


@_shared_doc
@dataclass(frozen=True)
class ExactTaS(CoveredSampler):
    """Track-and-Stop on the exact T* allocation, re-solved by constraint generation (module docstring).

    The allocation of T*(theta_hat) (MF-TaS eq. 1) is C-tracked over the joint actions when there are at most
    ``TRACKED_JOINT_ACTIONS``, else followed by ancestral draws of joint actions. Until a solve succeeds the agents
    draw uniformly; a failed re-solve (empirical tie, solver failure) keeps the last allocation. A re-solve is capped
    at ``RESOLVE_TIME_LIMIT`` seconds (then its best allocation is used).

    Parameters
    ----------
%(cover)s
%(exploration)s Default ``"paper"``.
%(legacy)s
    resolve_growth : float
        Relative step in [0, 1] of the grid of rounds on which T*(theta_hat) is re-solved (0.1: every 10 percent;
        0: every tracked batch).
    tol : float
        Certified relative gap in (0, 1) at which a re-solve stops (tracking a plug-in allocation needs no more).

    Raises
    ------
    InvalidInputError
        An unknown threshold, glrt, cover or exploration option, a growth or resolve_growth outside [0, 1],
        or a tol outside (0, 1).
    """

    resolve_growth: float = 0.1
    tol: float = 1e-2  # certified relative gap of each re-solve: tracking a plug-in allocation needs no more

    def __post_init__(self) -> None:
        super().__post_init__()
        check_growth(self.resolve_growth, "resolve_growth")
        if not (isinstance(self.tol, (int, float)) and not isinstance(self.tol, bool) and 0 < self.tol < 1):
            raise InvalidInputError(f"tol must be a number in (0, 1), got {self.tol!r}")

    @property
    def name(self) -> str:
        """``"tas"``."""
        return "tas"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """T*(theta_hat) is first solved at the first tracked batch, after the pass over A0."""
        return _ExactState(problem, rng, self.resolve_growth, self.tol, cover=self.cover, exploration=self.exploration)


class _ExactState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, resolve_growth: float, tol: float,
                 **options: Any) -> None:
        super().__init__(problem, rng, **options)
        self.resolve_growth, self.tol = resolve_growth, tol
        # elimination plan and consistent clique tables of the last solve (None: uniform)
        self.elimination: EliminationPlan | None = None
        self.clique_weights: np.ndarray | None = None
        # on structures of at most TRACKED_JOINT_ACTIONS joint actions: all of them (row r: code r), the law of the
        # last solve's tables over them, and the tracked rounds' plays of each
        n_joint = int(np.prod(self.structure.n_actions, dtype=float))
        self.joint = (np.indices(self.structure.n_actions).reshape(len(self.structure.n_actions), -1).T
                      if n_joint <= TRACKED_JOINT_ACTIONS else None)
        self.law: np.ndarray | None = None
        self.joint_counts = np.zeros(0 if self.joint is None else n_joint, dtype=np.int64)
        self.last: CharTimeResult | None = None  # the last solve, the warm start of the next
        self._next_solve = 0
        self.solves = 0
        self.failed_solves = 0
        self.inaccurate_solves = 0  # re-solves that stopped before the certified gap tol

    def _resolve(self, theta_hat: np.ndarray) -> None:
        """T*(theta_hat) by constraint generation, warm-started from the last solve; the last allocation is kept on
        an empirical tie or a solver failure."""
        start = time.perf_counter()
        tables = self.structure.split_tables(theta_hat)
        fg_hat = FactorGraph(self.structure.n_actions, list(zip(self.structure.scopes, tables, strict=True)))
        try:
            res = characteristic_time(fg_hat, method="generate", tol=self.tol, solver="CLARABEL",
                                      time_limit=RESOLVE_TIME_LIMIT, warm_start=self.last)
            self.elimination, self.clique_weights, self.last = fg_hat.plan(), res.clique_weights, res
            if self.joint is not None and res.clique_weights is not None:
                self.law = joint_action_probabilities(self.elimination, res.clique_weights,
                                                      max_joint_actions=TRACKED_JOINT_ACTIONS)
            self.inaccurate_solves += res.status != "optimal"
            self.solves += 1
        except (InvalidInputError, SolverError):  # tie in theta_hat or solver failure: keep the last allocation
            self.failed_solves += 1
        self.solve_time += time.perf_counter() - start

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        if obs.time >= self._next_solve:
            self._resolve(obs.mu)
            self._next_solve = next_checkpoint(obs.time, self.resolve_growth)
        if self.elimination is None or self.clique_weights is None:
            return self.indexer.counts(sample_product(uniform_local(self.structure.n_actions), n, self.rng))
        if self.joint is not None and self.law is not None:  # C-tracking of the joint actions' counts
            batch = track(self.joint_counts, self.law, n)
            self.joint_counts += batch
            played = np.flatnonzero(batch)
            return self.indexer.counts(self.joint[played], batch[played])
        return self.indexer.counts(sample_joint_actions(self.elimination, self.clique_weights, n, self.rng))
