"""MF-TaS (Vannella, Proutiere, Jeong, ICML 2023) and its baselines on factored multi-agent bandits.

All four share the batches of :class:`~bandits.multiagent.batches.RuleState` under the one pure-exploration
policy: one pass over A0, forced exploration, batches on a 1 % geometric grid of rounds, the factored GLRT and a max-sum
recommendation. They differ only in the sampling rule:

* :class:`MFTaS` (``mf-tas``): the core Track-and-Stop with ``allocation="mean-field"`` (the problem's tracker:
  :class:`bandits.multiagent.tracking.MeanFieldTracker`) in these batches; it tracks the mean-field allocation at the
  plug-in estimate. The MF program depends on theta only through a* and Delta_min (m = 1).
  :class:`optdesign.factored.MeanFieldModel` is built and solved ONCE per structure, for a* = 0, and its solution is
  relabelled to a_hat: T^MF(theta_hat) = t* / Delta_hat_min^2, v_hat = relabel(v*, a_hat). So "re-solving" at a
  checkpoint is a relabelling (microseconds). It happens only when a_hat has changed since the last checkpoint, and
  a_hat is the stop's at that estimate. The schedule is the stopping grid: after every batch, i.e. at rounds t_{k+1} =
  max(t_k + 1, ceil(1.01 t_k)). Solved models are shared per (action counts, scopes)
  (:meth:`optdesign.factored.MeanFieldModel.for_structure`), so repeated runs on one structure solve once, even when
  each run rebuilds the instance. Tracking: independent per-agent draws a_i ~ v_hat_i
  (:mod:`bandits.multiagent.tracking` says why, not the paper's per-agent D-tracking).
* :class:`MFTaSOracle` (``mf-tas-oracle``): the paper's "Oracle" baseline (§7.1), MF-TaS with theta_hat replaced
  by theta in the sampling rule: it tracks the MF allocation relabelled to the true a*, from the first tracked
  round; A0 pass, forced exploration and the GLRT stop on the estimates are MF-TaS's.
* :class:`UniformSampling` (``uniform``): every agent uniform and independent (expected cost about
  2 Abar / Delta_min^2 log(1/delta), App. H), same stopping rule, no forced exploration needed.
* :class:`ExactTaS` (``tas``): the core Track-and-Stop (``track-and-stop:tracking=C``) on the factored problem, in
  these batches; the problem's tracker (:class:`bandits.multiagent.tracking.JointTracker`) follows the exact optimal
  allocation of T* (eq. 1), re-solved at theta_hat on its own geometric grid (``resolve_growth``, 10 %) by constraint
  generation (:func:`optdesign.factored.characteristic_time` with ``method="generate"``, certified to relative gap
  ``tol``), each re-solve warm-started from the previous result (its working set of joint actions, and its clique
  tables as the centre of the first master solve; CLARABEL gets the master directly, without cvxpy, and small
  instances are separated by enumeration, so a re-solve costs milliseconds: ``benchmarks/bench_exact_tas.py``, RESULTS
  §6). The solve returns clique tables of a distribution over joint actions whose group marginals are the optimal
  wbar. On at most ``tracking.TRACKED_JOINT_ACTIONS`` joint actions their law P
  (:func:`optdesign.factored.joint_action_probabilities`) is C-tracked: the tracked rounds' counts per joint action
  follow t P (:func:`bandits.core.tracking.track`), so past deficits are made up and the group counts follow t wbar up
  to the rounding of the batches. Drawing the joint actions i.i.d. from P instead leaves the deficits of earlier
  plug-in allocations in place and stops later (about a quarter more rounds on the mftas_synthetic cells, RESULTS §6).
  Beyond that size every round draws a joint action by ancestral sampling down the clique tree
  (:func:`optdesign.factored.sample_joint_actions`), so the group frequencies converge to wbar as MF-TaS's independent
  draws do. Any number of joint actions: the cost is the re-solves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..core.validation import check_growth
from ..pure_exploration.allocation_tracker import Tracker
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.samplers.track_and_stop import TrackAndStop
from .batches import RuleState
from .environment import FactoredBandit
from .problem import FactoredProblem
from .sampling import CoveredSampler, _shared_doc
from .tracking import MeanFieldTracker, ProductTracker

__all__ = ["ExactTaS", "MFTaS", "MFTaSOracle", "UniformSampling"]


@_shared_doc
@dataclass(frozen=True)
class MFTaS(CoveredSampler):
    """MF-TaS: track the relabelled mean-field allocation, factored GLRT stop (module docstring): the core
    Track-and-Stop (``track-and-stop:tracking=C,allocation=mean-field,resolve_growth=0``) in the factored batches.

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

    def batched(self) -> TrackAndStop:
        """The core Track-and-Stop on the mean-field allocation, its a_hat checked after every batch.

        Returns
        -------
        TrackAndStop
            ``TrackAndStop(tracking="C", resolve_growth=0, allocation="mean-field")``.
        """
        return TrackAndStop(tracking="C", resolve_growth=0.0, allocation="mean-field")

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """The MF program of the structure solved once (cached), then relabelled to a_hat."""
        return RuleState(problem, self.batched().tracked(problem, rng), cover=self.cover,
                         exploration=self.exploration)


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

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """Tracks the MF allocation at the true a* of ``env`` from the first tracked round."""
        start = time.perf_counter()
        tracker = cast(MeanFieldTracker, problem.allocation_tracker(tracking="C", tol=None, rng=rng,
                                                                   allocation="mean-field"))
        tracker.relabel(env.best_action)
        rule = _Fixed(tracker, {"t_mf": tracker.t_star / env.gap_min**2})  # T^MF at the true theta
        rule.solve_time = time.perf_counter() - start
        return RuleState(problem, rule, cover=self.cover, exploration=self.exploration)


class _Fixed(SamplerState):
    """A tracker's target followed as it is (never re-solved), and numbers of the run's truth for its trace."""

    def __init__(self, tracker: Tracker, truth: dict[str, Any]) -> None:
        self.tracker, self.truth = tracker, truth

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        return self.tracker.plan(obs.counts, n)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        return {**self.tracker.describe(statistic), **self.truth}


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

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """After the pass over A0, every round draws each a_i uniformly."""
        rule = _Fixed(ProductTracker(problem.structure, problem.indexer, rng), {})
        return RuleState(problem, rule, cover=self.cover, exploration=self.exploration)


@_shared_doc
@dataclass(frozen=True)
class ExactTaS(CoveredSampler):
    """Track-and-Stop on the exact T* allocation, re-solved by constraint generation: the core rule
    (``track-and-stop:tracking=C``) on the factored problem, in the factored batches (module docstring).

    The allocation of T*(theta_hat) (MF-TaS eq. 1) is C-tracked over the joint actions when there are at most
    ``tracking.TRACKED_JOINT_ACTIONS``, else followed by ancestral draws of joint actions
    (:class:`bandits.multiagent.tracking.JointTracker`). Until a solve succeeds the agents draw uniformly; a failed
    re-solve (empirical tie, solver failure) keeps the last allocation. A re-solve is capped at
    ``tracking.RESOLVE_TIME_LIMIT`` seconds (then its best allocation is used).

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
        self.batched()

    @property
    def name(self) -> str:
        """``"tas"``."""
        return "tas"

    def batched(self) -> TrackAndStop:
        """The core Track-and-Stop with this rule's options.

        Returns
        -------
        TrackAndStop
            ``TrackAndStop(tracking="C", resolve_growth=..., tol=...)``.
        """
        return TrackAndStop(tracking="C", resolve_growth=self.resolve_growth, tol=self.tol)

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """T*(theta_hat) is first solved at the first tracked batch, after the pass over A0."""
        return RuleState(problem, self.batched().tracked(problem, rng), cover=self.cover,
                         exploration=self.exploration)
