"""Following an allocation over joint actions: a mean-field (product) allocation by independent per-agent draws
(:class:`MeanFieldTracker`, MF-TaS), and the exact T* allocation by C-tracking its law (:class:`JointTracker`).

The MF program (MF-TaS eqs. 2-3) gives local allocations v_i in the simplex. Its constraints are
written on the PRODUCT group marginals wbar_{e,b} = prod_{i in S_e} v_{i,b_i}, so what must converge is
N_{e,b}(t) / t -> prod_i v_{i,b_i}, not only the per-agent frequencies. The rule here: every round
each agent draws a_{t,i} ~ v_i independently (inverse-CDF draws, a whole batch of R rounds at once). Given
v_hat(t) -> v*, the group frequencies then converge almost surely to the product marginals (martingale strong
law), with O(sqrt(t)) fluctuations.

Why not the paper's per-agent D-tracking a_{t,i} = argmax_k (t v_{i,k} - N_{i,k}(t)) (Alg. 2)? It makes
each agent's frequencies converge to v_i, but it says nothing about the joint frequencies. Deterministic
per-agent rules run in lockstep: two agents with v = (1/2, 1/2) and the same tie-breaking alternate
(0,0), (1,1), (0,0), ..., so the group actions (0,1) and (1,0) get only the sqrt(t) forced-exploration
samples. The GLR of alternatives that use them then grows like sqrt(t) instead of t. Independent draws
cannot fall into that lockstep; they cost only a vanishing relative variance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import CharTimeResult, FactorGraph, shared_doc
from optdesign.errors import InvalidInputError, SolverError
from optdesign.factored import (
    EliminationPlan,
    MeanFieldModel,
    characteristic_time,
    joint_action_probabilities,
    sample_joint_actions,
)

from ..core.tracking import track
from ..pure_exploration.allocation_tracker import Tracker
from ..pure_exploration.pieces import GLRStatistic
from .best_response import FactoredGLR
from .joint_actions import GroupIndexer

__all__ = ["RESOLVE_TIME_LIMIT", "TRACKED_JOINT_ACTIONS", "JointTracker", "MeanFieldTracker", "ProductTracker",
           "sample_product", "uniform_local"]

#: seconds one exact re-solve may take; past it the allocation reached so far (certified gap above tol) is used
RESOLVE_TIME_LIMIT = 120.0
#: up to this many joint actions the law of the allocation is tracked over all of them (beyond: ancestral draws)
TRACKED_JOINT_ACTIONS = 20_000

#: entries of the R x N x K comparison array held at once
SAMPLE_CHUNK = 2**22


def sample_product(local: list[npt.NDArray[np.float64]], rounds: int,
                   rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """``rounds`` x N joint actions with a_{r,i} ~ local[i] independently (inverse-CDF sampling).

    Parameters
    ----------
    local : list of ndarray
        v_i for every agent i: K_i nonnegative weights (normalised here; the last action takes any
        rounding leftover).
    rounds : int
        Number of joint actions R to draw (in chunks of ``SAMPLE_CHUNK`` comparisons).
    rng : numpy.random.Generator
        Source of the R N uniforms.

    Returns
    -------
    ndarray of int64, shape (rounds, N)
        One joint action per row.
    """
    n = len(local)
    kmax = max(v.size for v in local)
    cdf = np.ones((n, kmax))
    for i, v in enumerate(local):
        c = np.cumsum(np.clip(v, 0.0, None))
        cdf[i, : v.size] = c / c[-1]
        cdf[i, v.size - 1:] = np.inf  # the last action takes any rounding leftover
    kmax_idx = np.asarray([v.size - 1 for v in local])
    out = np.empty((rounds, n), dtype=np.int64)
    step = max(1, SAMPLE_CHUNK // (n * kmax))
    for lo in range(0, rounds, step):
        u = rng.random((min(step, rounds - lo), n))
        a = (u[:, :, None] >= cdf[None, :, :]).sum(axis=2)
        out[lo:lo + u.shape[0]] = np.minimum(a, kmax_idx)
    return out


def uniform_local(n_actions: Iterable[int]) -> list[npt.NDArray[np.float64]]:
    """v_i uniform on every agent's actions (uniform product sampling).

    Parameters
    ----------
    n_actions : iterable of int
        K_i for every agent.

    Returns
    -------
    list of ndarray
        The vector of K_i entries 1/K_i for every agent.
    """
    return [np.full(int(k), 1.0 / int(k)) for k in n_actions]


class JointTracker(Tracker):
    """Track-and-Stop's target on a factor graph: the exact T* allocation (MF-TaS eq. 1) at the estimate, followed
    over joint actions.

    Each re-solve runs constraint generation (:func:`optdesign.factored.characteristic_time`, ``method="generate"``)
    to the certified relative gap ``tol``, warm-started from the last solve (its working set of joint actions and its
    clique tables), capped at :data:`RESOLVE_TIME_LIMIT` seconds. Its clique tables give a law P over joint actions
    whose group marginals are the optimal wbar. On at most :data:`TRACKED_JOINT_ACTIONS` joint actions the tracked
    rounds' counts per joint action are C-tracked towards t P (:func:`bandits.core.tracking.track`), which makes up
    the deficits of earlier plug-in allocations; beyond, every round draws a joint action down the clique tree
    (:func:`optdesign.factored.sample_joint_actions`). Before the first solve the agents draw uniformly.

    Parameters
    ----------
    structure : FactorGraph
        The structure (the actions and scopes; its tables are not read).
    graph : callable
        The factor graph of the structure at an estimate (:meth:`bandits.multiagent.problem.FactoredProblem.graph`).
    indexer : GroupIndexer
        The group actions a joint action observes.
    rng : numpy.random.Generator
        The draws (uniform ones, and ancestral ones past the tracked size).
    tol : float
        The certified relative gap of each re-solve, in (0, 1).
    """

    def __init__(self, structure: FactorGraph, graph: Callable[[np.ndarray], FactorGraph], indexer: GroupIndexer,
                 rng: np.random.Generator, tol: float) -> None:
        self.structure, self.graph, self.indexer, self.rng, self.tol = structure, graph, indexer, rng, tol
        # elimination plan and consistent clique tables of the last solve (None: uniform)
        self.elimination: EliminationPlan | None = None
        self.clique_weights: np.ndarray | None = None
        # on at most TRACKED_JOINT_ACTIONS joint actions: all of them (row r: code r), the law of the last solve's
        # tables over them, and the tracked rounds' plays of each
        n_joint = int(np.prod(structure.n_actions, dtype=float))
        self.joint = (np.indices(structure.n_actions).reshape(len(structure.n_actions), -1).T
                      if n_joint <= TRACKED_JOINT_ACTIONS else None)
        self.law: np.ndarray | None = None
        self.joint_counts = np.zeros(0 if self.joint is None else n_joint, dtype=np.int64)
        self.last: CharTimeResult | None = None  # the last solve, the warm start of the next
        self.inaccurate_solves = 0  # re-solves that stopped before the certified gap tol

    def resolve(self, mu: np.ndarray) -> None:
        """T*(mu) by constraint generation, warm-started from the last solve (the last allocation kept on an empirical
        tie or a solver failure)."""
        graph = self.graph(mu)
        try:
            res = characteristic_time(graph, method="generate", tol=self.tol, solver="CLARABEL",
                                      time_limit=RESOLVE_TIME_LIMIT, warm_start=self.last)
            self.elimination, self.clique_weights, self.last = graph.plan(), res.clique_weights, res
            if self.joint is not None and res.clique_weights is not None:
                self.law = joint_action_probabilities(self.elimination, res.clique_weights,
                                                      max_joint_actions=TRACKED_JOINT_ACTIONS)
            self.inaccurate_solves += res.status != "optimal"
            self.solves += 1
        except (InvalidInputError, SolverError):  # tie in mu or solver failure: keep the last allocation
            self.failures += 1

    def plan(self, counts: np.ndarray, n: int) -> npt.NDArray[np.int64]:
        if self.elimination is None or self.clique_weights is None:
            return self.indexer.counts(sample_product(uniform_local(self.structure.n_actions), n, self.rng))
        if self.joint is not None and self.law is not None:  # C-tracking of the joint actions' counts
            batch = track(self.joint_counts, self.law, n)
            self.joint_counts += batch
            played = np.flatnonzero(batch)
            return self.indexer.counts(self.joint[played], batch[played])
        return self.indexer.counts(sample_joint_actions(self.elimination, self.clique_weights, n, self.rng))


#: the parameters of the product trackers (their docstrings share them)
_product_doc = shared_doc({"product": """    structure : FactorGraph
        The structure (the actions and scopes; its tables are not read).
    indexer : GroupIndexer
        The group actions a joint action observes.
    rng : numpy.random.Generator
        The per-agent draws."""})


@_product_doc
class ProductTracker(Tracker):
    """A product allocation over joint actions, followed by independent per-agent draws a_i ~ v_i (module docstring);
    as given (uniform by default: the uniform baseline), it has nothing to re-solve.

    Parameters
    ----------
%(product)s
    """

    def __init__(self, structure: FactorGraph, indexer: GroupIndexer, rng: np.random.Generator) -> None:
        self.structure, self.indexer, self.rng = structure, indexer, rng
        self.local = uniform_local(structure.n_actions)

    def resolve(self, mu: np.ndarray) -> None:
        """Nothing: the allocation does not depend on the estimate.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate (not read).
        """

    def plan(self, counts: np.ndarray, n: int) -> npt.NDArray[np.int64]:
        return self.indexer.counts(sample_product(self.local, n, self.rng))


@_product_doc
class MeanFieldTracker(ProductTracker):
    """MF-TaS's target (Vannella et al., ICML 2023, Alg. 2): the mean-field allocation at the estimate, followed by
    independent per-agent draws a_i ~ v_hat_i (module docstring).

    The MF program (eqs. 2-3) depends on theta only through a* and Delta_min, so
    :class:`optdesign.factored.MeanFieldModel` is solved once per structure, for a* = 0 (shared between runs:
    :meth:`~optdesign.factored.MeanFieldModel.for_structure`), and a re-solve is a relabelling to a_hat, done only when
    a_hat has changed: T^MF(theta_hat) = t* / Delta_hat_min^2, v_hat = relabel(v*, a_hat).

    Parameters
    ----------
%(product)s
    best_at : callable
        The estimate's best joint action a_hat (the factored problem's: its stop's at that estimate, else one max-sum).
    tol : None
        The program is solved to its own accuracy and takes no tolerance.

    Raises
    ------
    InvalidInputError
        A tolerance given.
    """

    def __init__(self, structure: FactorGraph, indexer: GroupIndexer, rng: np.random.Generator,
                 best_at: Callable[[np.ndarray], np.ndarray], tol: float | None = None) -> None:
        if tol is not None:
            raise InvalidInputError(f"tol={tol!r}: the mean-field program is solved once per structure to its own "
                                    "accuracy and takes no tolerance (leave tol unset)")
        super().__init__(structure, indexer, rng)
        self.model = MeanFieldModel.for_structure(structure)
        self.t_star = self.model.solve().t  # T^MF(theta) = t* / Delta_min^2 for every theta
        self.best_at = best_at
        self.local_for: np.ndarray | None = None  # the a_hat the local allocations are relabelled to

    def resolve(self, mu: np.ndarray) -> None:
        """Relabel the allocation to a_hat = argmax_a sum_e mu_e(a_e) (max-sum) when a_hat has changed."""
        self.relabel(self.best_at(mu))

    def relabel(self, best: np.ndarray) -> None:
        """Make the target the mean-field allocation relabelled to the joint action ``best`` (unless it already is).

        Parameters
        ----------
        best : numpy.ndarray of int, shape (N,)
            A joint action.

        Raises
        ------
        InvalidInputError
            Not one joint action of the structure (shape, integers, range).
        """
        if np.ndim(best) != 1:
            raise InvalidInputError(f"best must be one joint action, shape ({len(self.structure.n_actions)},), "
                                    f"got shape {np.shape(best)}")
        best = self.indexer.check(best)[0]
        if self.local_for is None or not np.array_equal(best, self.local_for):
            self.local = self.model.local_allocations(best)
            self.local_for = np.array(best, copy=True)
            self.solves += 1

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """``t_mf_hat``: T^MF at the estimate, t* / Delta_hat_min^2 (inf on an empirical tie)."""
        if statistic is None:
            return {}
        d = cast(FactoredGLR, statistic).state.d_min()
        return {"t_mf_hat": self.t_star / d**2 if d > 0 else np.inf}

