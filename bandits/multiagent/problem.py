"""Multi-agent best-arm identification on a factor graph as a pure-exploration problem (MF-TaS §3, §6.3).

The arms of the problem are the group actions (e, b), the entries of the factor tables (the environment's arms:
:class:`bandits.multiagent.environment.FactoredBandit`); one round plays a joint action a and observes every
factor, adding 1 to N_{e, a_e} for every e. The parameter is theta (one mean per group action), the answers are
the joint actions, encoded as Python ints (:func:`bandits.multiagent.joint_actions.encode_joint`), and the
correct answer is a* = argmax_a sum_e theta_e(a_e) (max-sum). For weights or counts w over the group actions the
piece of an alternative joint action a != a_hat is, with Gaussian noise of variance sigma^2,

    f_a(w) = D(a)^2 / (2 sigma^2 H_w(a)),   D(a) = sum_e (theta_e(a_hat_e) - theta_e(a_e)),
    H_w(a) = sum over the factors e with a_e != a_hat_e of 1 / w_{e, a_hat_e} + 1 / w_{e, a_e},

and its gradient in w is (theta - lambda_a)^2 / (2 sigma^2) at the closest alternative lambda_a: the entries
(e, a_hat_e) and (e, a_e) of the changed factors, c^2 / (2 sigma^2 w_{e,b}^2) with c = D(a) / H_w(a).

The GLR statistic min_a f_a(N) and its minimiser (the best response) come from the factored GLRT's exact search
(:mod:`bandits.multiagent.glrt`); :meth:`FactoredProblem.pieces` lists every joint action (small instances, checks).
The oracle is the exact T* of :func:`optdesign.characteristic_time` (T = 2 sigma^2 T*, weights: the marginals)."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

import optdesign as od
from optdesign import FactorGraph
from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.factored import MaxSum

from ..core.thresholds import ThresholdContext
from ..core.validation import check_choice
from ..pure_exploration.adahedge import AdaHedge
from ..pure_exploration.allocation_tracker import ALLOCATIONS, TRACKING, Tracker, check_tol
from ..pure_exploration.capabilities import Capabilities
from ..pure_exploration.oracle import Oracle
from ..pure_exploration.pieces import Pieces
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import SamplerState
from .alternatives import leader_share, listed_pieces
from .batches import RuleState
from .best_response import BestResponse, FactoredGLR, exact_best_response
from .exploration import covering_set
from .fw_directions import FactoredDirections
from .gibbs import FactoredAdaHedge
from .glrt import GLRT_MODES, FactoredGLRT, GLRState
from .joint_actions import GroupIndexer, decode, encode_joint, show_joint
from .optimism import FactoredOptimism
from .thresholds import FactoredTheoryThreshold
from .tracking import JointTracker, MeanFieldTracker

__all__ = ["EXACT_TIME_LIMIT", "BestResponse", "FactoredGLR", "FactoredProblem"]

#: joint actions above which :meth:`FactoredProblem.pieces` refuses to list them
MAX_LISTED = 200_000

#: seconds the certified exact T* of a study's lower bound may take before the T^MF reference is used instead
EXACT_TIME_LIMIT = 120.0


class FactoredProblem(Problem):
    """Identify the best joint action of a factor graph from semi-bandit Gaussian observations of its factors.

    Parameters
    ----------
    structure : FactorGraph
        Agents, action counts and scopes (the mean tables are not read).
    sigma : float
        Standard deviation of one factor observation.
    max_enumerated : int
        Cap on the alternatives the GLR search lists (past it, a certified lower bound).
    glrt : str
        The GLR statistic of the stopping rule: ``"exact"`` (the test Lambda_t > beta by the exact search) or
        ``"conservative"`` (its lower bound D_min^2 / (2 sigma^2 H_max): stops later, still delta-correct).

    Raises
    ------
    InvalidInputError
        ``structure`` is not a FactorGraph, or a bad sigma, cap or glrt mode.
    """

    kind = "factored"
    searches_solve = True  # the challenger, best response and gains: eliminations over the joint actions

    def __init__(self, structure: FactorGraph, sigma: float = 1.0, *, max_enumerated: int = 20_000,
                 glrt: str = "exact") -> None:
        if not isinstance(structure, FactorGraph):
            raise InvalidInputError(f"structure must be an optdesign FactorGraph, got {type(structure).__name__}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise InvalidInputError(f"sigma must be a positive number, got {sigma!r}")
        self.structure, self.sigma, self.mode = structure, float(sigma), check_choice(glrt, "glrt", GLRT_MODES)
        self.indexer = GroupIndexer(structure)
        self.glrt = FactoredGLRT(structure, self.indexer, sigma=self.sigma, max_enumerated=max_enumerated)
        self._last: tuple[tuple[bytes, bytes], GLRState] | None = None  # the stop's search, shared with a rule

    @classmethod
    def of_environment(cls, env: Any, glrt: str = "exact") -> FactoredProblem:
        """The problem of a factored instance: its structure and noise level (not its mean tables).

        Parameters
        ----------
        env : FactoredBandit
            The instance.
        glrt : str
            The GLR statistic of the stopping rule (``"exact"`` or ``"conservative"``).

        Returns
        -------
        FactoredProblem
            The problem a learner faces on it.

        Raises
        ------
        InvalidInputError
            An unknown glrt mode.
        """
        return cls(env.structure, env.sigma, glrt=glrt)

    def factor_graph(self) -> FactorGraph:
        """The structure of the joint actions: agents, action counts and scopes (the mean tables are not read)."""
        return self.structure

    def fw_directions(self, *, slack: float, limit: int, search_growth: float, game: str) -> FactoredDirections:
        """The Frank–Wolfe directions over joint actions (:mod:`bandits.multiagent.fw_directions`)."""
        return FactoredDirections(self.glrt, slack, limit, search_growth, game)

    def allocation_tracker(self, *, tracking: str, tol: float | None, rng: np.random.Generator,
                           allocation: str = "exact") -> Tracker:
        """The exact T* allocation's law over joint actions, C-tracked (:class:`JointTracker`; ``tol`` 1e-2 by default),
        or the mean-field allocation, drawn per agent (:class:`MeanFieldTracker`, which solves to its own accuracy).

        Raises
        ------
        InvalidInputError
            An unknown tracking or allocation, D-tracking (its forced exploration pulls single arms), a bad tol."""
        if check_choice(tracking, "tracking", TRACKING) != "C":
            raise InvalidInputError(f"tracking={tracking!r}: a factored problem's pulls are joint actions, whose law "
                                    "is C-tracked (tracking=C); D-tracking's forced exploration pulls single arms")
        if check_choice(allocation, "allocation", ALLOCATIONS) == "mean-field":
            return MeanFieldTracker(self.structure, self.indexer, rng, self._best_action, tol)
        return JointTracker(self.structure, self.graph, self.indexer, rng, check_tol(tol) or 1e-2)  # tol > 0

    def tracking_batches(self, state: SamplerState) -> RuleState:
        """Track-and-Stop in the factored batches: the greedy cover A0 once, then A0 plays while some N_{e,b} <
        sqrt(t / abs(A0)) (MF-TaS §6.2), else tracked rounds (``tas`` and ``mf-tas`` take these as options)."""
        return RuleState(self, state, cover="greedy", exploration="paper")

    def describe_answer(self, answer: int) -> str:
        """The joint action of a code, ``(a0,a1,...)``, its first agents only on large graphs."""
        return show_joint(self.decode(answer))

    @property
    def n_arms(self) -> int:
        return int(self.structure.abar)

    @property
    def n_answers(self) -> int:
        return math.prod(int(k) for k in self.structure.n_actions)

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        return np.divide(sums, counts, out=np.zeros(len(sums)), where=np.asarray(counts) > 0)

    def answer(self, mu: np.ndarray) -> int:
        return encode_joint(MaxSum(self.structure.plan(), self.check_parameter(mu)).best_action,
                            self.structure.n_actions)

    def glr_state(self, mu: np.ndarray, counts: np.ndarray) -> GLRState:
        """The factored GLRT's resumable search at (mu, counts): the threshold test, the exact statistic and more.

        Parameters
        ----------
        mu, counts : numpy.ndarray, shape (Abar,)
            The parameter (theta_hat); counts (or positive weights) per group action.

        Returns
        -------
        GLRState
            The search (:class:`bandits.multiagent.glrt.GLRState`).
        """
        mu, counts = self.check_shapes(mu, counts)
        return self.glrt(mu, counts)

    def _shared_state(self, mu: np.ndarray, counts: np.ndarray) -> GLRState:
        """The search of the last :meth:`glr` when it was at (mu, counts) (the stop's, shared with a rule), else a
        new one."""
        mu, counts = self.check_shapes(mu, counts)
        key = (mu.tobytes(), counts.tobytes())
        if self._last is None or self._last[0] != key:
            self._last = (key, self.glrt(mu, counts))
        return self._last[1]

    def _best_action(self, mu: np.ndarray) -> np.ndarray:
        """a_hat at mu: the stop's search's when it was at mu (no second max-sum), else one max-sum."""
        mu = self.check_parameter(mu)
        if self._last is not None and self._last[0][0] == mu.tobytes():
            return self._last[1].best
        return MaxSum(self.structure.plan(), mu).best_action

    def glr(self, mu: np.ndarray, counts: np.ndarray) -> FactoredGLR:
        """The factored GLRT at (theta_hat, N) (:class:`FactoredGLR`): never lists every joint action.

        Parameters
        ----------
        mu, counts : numpy.ndarray, shape (Abar,)
            theta_hat; N_{e,b}.

        Returns
        -------
        FactoredGLR
            Its answer a_hat and its threshold test.
        """
        self._last = None
        return FactoredGLR(self._shared_state(mu, counts), self.structure.n_actions, self.mode == "conservative")

    def time(self, counts: np.ndarray) -> int:
        """Rounds (joint actions played): every round adds one count to factor 0."""
        return self.indexer.rounds_in(np.asarray(counts))

    rounds = time  # the rounds reported beside the observations are the time

    def learner(self) -> FactoredAdaHedge:
        """AdaHedge over the joint actions, a Gibbs distribution whose weights are its factor marginals."""
        return FactoredAdaHedge(self.glrt.plan)

    def best_pull(self, scores: np.ndarray) -> np.ndarray:
        """The group actions of the joint action of largest total score (one max-sum)."""
        action = MaxSum(self.glrt.plan, np.asarray(scores, dtype=float), keep_regrets=False).best_action
        return self.indexer.flat(action[None, :])[0]

    def draw_pulls(self, learner: AdaHedge, rng: np.random.Generator, n: int) -> np.ndarray:
        """Group counts of ``n`` joint actions drawn by ancestral sampling from the learner's distribution."""
        return self.indexer.counts(cast(FactoredAdaHedge, learner).sample(rng, n), np.ones(n, dtype=np.int64))

    #: a pull is a joint action: no arm (group action) is observed alone
    arm_pull = Capabilities.arm_pull

    def initial_pulls(self) -> np.ndarray:
        """One play of every joint action of the greedy covering set A0 (every group action observed)."""
        return np.bincount(self.exploration_pulls().ravel(), minlength=self.n_arms).astype(np.int64)

    def exploration_pulls(self) -> np.ndarray:
        """The joint actions of the greedy covering set A0 as the group actions each observes."""
        return self.indexer.flat(covering_set(self.structure, "greedy").actions)

    def answer_pull(self, answer: int) -> np.ndarray:
        """The group actions of an answer's joint action (Top-Two plays its leader and challenger)."""
        return self.indexer.flat(self.decode(answer)[None, :])[0]

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """a_hat for a leader other than a_hat (zero cost); for a_hat, its exact best response (None: no other)."""
        leader = self.check_answer(leader)
        state = self._shared_state(mu, counts)
        best = encode_joint(state.best, self.structure.n_actions)
        if leader != best:
            return best
        action = exact_best_response(state).action
        return None if action is None else encode_joint(action, self.structure.n_actions)

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """The IDS share of the leader joint action (:func:`bandits.multiagent.alternatives.leader_share`)."""
        return leader_share(np.asarray(counts), self.answer_pull(leader), self.answer_pull(challenger))

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """Draws theta_{e,b} ~ N(theta_hat_{e,b}, sigma^2 / N_{e,b}), independent over the group actions."""
        N = np.asarray(counts, dtype=float)
        return mu + self.sigma / np.sqrt(N) * rng.standard_normal((size, N.size))

    def optimism(self, mu: np.ndarray, counts: np.ndarray, c: float) -> FactoredOptimism:
        """LinGame's optimistic gains at theta_hat (:class:`bandits.multiagent.optimism.FactoredOptimism`)."""
        mu, counts = self.check_shapes(mu, counts)
        return FactoredOptimism(self.glrt, self.sigma, mu, counts, c)

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """The answers and the structure's own delta-correct threshold (:class:`FactoredTheoryThreshold`)."""
        return ThresholdContext(n_items=self.n_answers, n_arms=self.n_arms,
                                theory=lambda: FactoredTheoryThreshold.for_structure(self.structure))

    def threshold_argument(self, counts: np.ndarray, information: np.ndarray | None) -> np.ndarray:
        """The group counts N_{e,b} (what :class:`FactoredTheoryThreshold` reads)."""
        return counts

    def best_response(self, mu: np.ndarray, w: np.ndarray) -> BestResponse:
        """The alternative joint action of smallest f_a(w), exactly and without listing every joint action
        (:func:`bandits.multiagent.best_response.exact_best_response`).

        Parameters
        ----------
        mu, w : numpy.ndarray, shape (Abar,)
            The parameter; weights or counts per group action.

        Returns
        -------
        BestResponse
            Its value, the joint action and whether the value is exact.
        """
        return exact_best_response(self.glr_state(mu, w))

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        """The piece f_a(w) of every alternative joint action (listed: small instances and checks).

        Parameters
        ----------
        mu, w : numpy.ndarray, shape (Abar,)
            The parameter; weights or counts per group action.
        gradients : bool
            Also return the gradients in w (one row per alternative, one column per group action).

        Returns
        -------
        Pieces
            One piece per joint action other than the answer, in code order.

        Raises
        ------
        InvalidInputError
            A parameter or weights of the wrong length.
        InstanceTooLargeError
            More than ``MAX_LISTED`` joint actions (:meth:`best_response` finds the minimum without listing them).
        """
        mu, w = self.check_shapes(mu, w)
        if self.n_answers > MAX_LISTED:
            raise InstanceTooLargeError(f"pieces lists every joint action: {self.n_answers:,} is above "
                                        f"{MAX_LISTED:,}; use best_response (the exact search) instead")
        actions = np.array(np.unravel_index(np.arange(self.n_answers), self.structure.n_actions)).T
        return listed_pieces(self.indexer.flat(actions), self.answer(mu), mu, w, self.sigma, gradients=gradients)

    def true_parameter(self, env: Any) -> np.ndarray:
        """The factors' mean tables ``env.fg.means``, flattened in the structure's order."""
        return self.check_parameter(env.fg.means)

    def graph(self, mu: np.ndarray) -> FactorGraph:
        """The factor graph of the structure with the mean tables ``mu`` (flattened as :meth:`true_parameter`).

        Parameters
        ----------
        mu : numpy.ndarray
            The flattened mean tables.

        Returns
        -------
        FactorGraph
            The instance the tables make.
        """
        tables = self.structure.split_tables(self.check_parameter(mu))
        return FactorGraph(self.structure.n_actions, list(zip(self.structure.scopes, tables, strict=True)))

    def lower_bound(self, mu: np.ndarray) -> dict[str, Any]:
        """c = 2 sigma^2 T* in rounds (MF-TaS paper, eq. 1): T* when certified optimal within
        :data:`EXACT_TIME_LIMIT` seconds, else the certified lower end of its bracket (still a lower bound), else
        2 sigma^2 T^MF, an upper reference (MF-TaS's rate) labelled so.

        Parameters
        ----------
        mu : numpy.ndarray
            The flattened mean tables.

        Returns
        -------
        dict
            ``{"kind": "2 T*", "2 T* (certified lower end)" or "2 T^MF (reference)", "value": c, "unit": "rounds"}``.
        """
        fg = self.graph(mu)
        try:  # certified by constraint generation at any size; T^MF when it is not settled in time
            exact = od.characteristic_time(fg, solver="CLARABEL", time_limit=EXACT_TIME_LIMIT)
        except InstanceTooLargeError:  # an interaction graph too wide for variable elimination
            exact = None
        if exact is not None and exact.status == "optimal":
            value, kind = exact.value, "2 T*"
        elif exact is not None and exact.lower_bound is not None and exact.lower_bound > 0:
            value, kind = exact.lower_bound, "2 T* (certified lower end)"
        else:
            value, kind = od.mf_characteristic_time(fg, solver="CLARABEL").value, "2 T^MF (reference)"
        return {"kind": kind, "value": 2 * self.sigma**2 * float(value), "unit": "rounds"}

    def oracle(self, mu: np.ndarray) -> Oracle:
        result, scale = od.characteristic_time(self.graph(mu), solver="CLARABEL"), 2.0 * self.sigma**2
        weights = np.concatenate([np.asarray(m, dtype=float).ravel() for m in result.marginals])
        return Oracle(T=scale * result.value, weights=weights, lower_bound=scale * (result.lower_bound or 0.0))

    def decode(self, code: int) -> np.ndarray:
        """The joint action of an answer code.

        Parameters
        ----------
        code : int
            An answer (a joint action's index in C order).

        Returns
        -------
        numpy.ndarray of int, shape (N,)
            The joint action.

        Raises
        ------
        InvalidInputError
            Not a code in [0, n_answers).
        """
        return decode(self.check_answer(code), self.structure.n_actions)
