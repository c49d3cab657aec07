"""Frank–Wolfe sampling over joint actions on factor graphs (``joint-fws``).

FWS (Wang, Tzeng & Proutiere, NeurIPS 2021) climbs F(w) = min_{a != a_hat} D(a)^2 / (2 sigma^2 H_w(a)) at the
estimate by Frank–Wolfe steps and plays the steps' directions. Here w is a point of the marginal polytope (the factor
marginals of a distribution over joint actions), so the directions are mixtures of joint actions, and the iterate is
the played proportions themselves, w = N / t (group counts over rounds): a batch of R rounds that plays the direction
z moves w to (t w + R z) / (t + R), R Frank–Wolfe steps of size 1/t with z frozen (lazy re-planning on the policy's
grid, ``growth``). Per batch of the factored loop (:mod:`bandits.multiagent.sampling`):

* the near-tied pieces at (theta_hat, N / t): at most ``pieces`` alternatives with f_a <= (1 + ``slack``) F
  (:func:`bandits.multiagent.fw_game.near_tied_pieces`), searched over every joint action at every batch on
  structures small enough to enumerate; on larger ones (the Pareto elimination, the costly part of a batch) when t
  has grown by ``search_growth`` since the last search or a_hat has changed, and in between
  among the closest alternatives of the last search and the stopping rule's best listed one. The stopping rule first
  reads those: when one of them is at most beta, Lambda_t <= beta without the GLRT's search;
* the direction: one max-sum when one piece is near-tied, else the game over joint actions by column generation,
  warm-started by the previous support (:func:`bandits.multiagent.fw_game.frank_wolfe_step`);
* the R rounds are shared among the direction's joint actions by efficient rounding (:func:`optdesign.round_design`;
  the largest weight first); the next steps read the counts, so they correct the rounding;
* forced exploration (default ``"fws+dtracking"``): the rounds t with floor(t / abs(A0)) a perfect square play the
  covering set A0 in turn (:func:`forced_rounds`: the paper's uniform step, A0 in the place of the K arms; alone,
  ``"fws"``), and the policy's D-tracking level sqrt(t) - Abar/2 acts on top, as does a batch whose estimate has no
  unique best joint action (F = 0, A0 in turn). The schedule acts from the start on any graph (D-tracking's level
  does not before t > (Abar/2)^2, 4.9e4 to 8.0e5 rounds on planted lines of 50 to 200 agents); the level keeps every
  entry near sqrt(t) on small graphs, where a plug-in direction can follow a wrong a_hat for long (one run of
  mftas_synthetic's line N = 4, K = 3: 5.0e5 rounds under the level alone, a median of 2.5e4; RESULTS §6).

Between the paper and this rule: the slack is relative (D^2 / sigma^2 varies by orders of magnitude between
instances) and does not shrink with t as the paper's r_t = t^(-0.9) / K does, since a lazy batch moves w by
``growth`` at once. Its default, 0.3, brings many near-tied alternatives of a large graph into one game, whose
direction then deviates several agents at once (RESULTS §6 compares it with 0.05 on planted lines). With one agent
the step is the K-armed FWS step at x = N / t with the same r (same pieces, same game value,
``tests/test_joint_fws.py``); when the optimal direction is not unique the two games may return different optimal
mixtures, and on a mixture the K-armed rule pulls argmax_k z_k / N_k where this one pulls the joint action of largest
weight (the same arm when both directions are the same vertex).

:func:`oracle_frank_wolfe` runs the same steps at the true means with real-valued counts (no noise, no rounding, no
forced exploration): its F(w) tends to max F = 1 / (2 sigma^2 T*), up to the grid's step.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph, round_design
from optdesign.validation import as_count, as_nonnegative

from ..core.tracking import next_checkpoint
from ..core.validation import check_choice
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.sampler import Observations
from .environment import FactoredBandit
from .exploration import EXPLORATION, covering_set
from .fw_game import FrankWolfeStep, candidate_ratios, enumerated, frank_wolfe_step, is_tied, near_tied_pieces
from .glrt import FactoredGLRT, GLRState
from .problem import FactoredGLR, FactoredProblem
from .sampling import CoveredSampler, FactoredState, _shared_doc

__all__ = ["FW_EXPLORATION", "GAME_SOLVERS", "JointFrankWolfe", "OracleRun", "forced_rounds", "oracle_frank_wolfe"]

#: the solvers of the restricted games
GAME_SOLVERS = ("simplex", "highs")
#: forced exploration: the policy's levels, ``"fws"`` (the schedule of Wang et al., A0 for the uniform step), or that
#: schedule with the D-tracking level on top
FW_EXPLORATION = (*EXPLORATION, "fws", "fws+dtracking")


def forced_rounds(t: int, rounds: int, size: int) -> int:
    """The rounds t' in [t, t + rounds) of FWS's forced exploration: floor(t' / size) is a perfect square
    (Wang, Tzeng & Proutiere 2021, with ``size`` = abs(A0) in the place of K): sqrt(size t') of the first t'.

    Parameters
    ----------
    t : int
        The batch's first round (>= 0).
    rounds : int
        The batch's length (>= 0).
    size : int
        abs(A0) (>= 1).

    Returns
    -------
    int
        How many rounds of the batch are forced.

    Raises
    ------
    InvalidInputError
        A negative t or rounds, or a size below 1.
    """
    t, rounds, size = as_count(t, "t", minimum=0), as_count(rounds, "rounds", minimum=0), as_count(size, "size")
    first, last = t // size, (t + rounds - 1) // size
    count = 0
    for s in range(math.isqrt(max(first - 1, 0)), math.isqrt(max(last, 0)) + 1):
        start = size * s * s
        count += max(0, min(t + rounds, start + size) - max(t, start))
    return count


@_shared_doc
@dataclass(frozen=True)
class JointFrankWolfe(CoveredSampler):
    """Frank–Wolfe sampling on a factor graph: FW steps on F(w) over the marginal polytope, w = N / t, directions
    from the game over joint actions (module docstring), factored GLRT stop.

    Parameters
    ----------
    slack : float
        The relative slack r of the near-tied pieces, f_a <= (1 + r) F (>= 0; default 0.3).
    pieces : int
        At most this many near-tied pieces per step (>= 1; default 8).
    search_growth : float
        On structures of more than :data:`~bandits.multiagent.fw_game.ENUMERATED_MAX` joint actions, the pieces are
        searched over every joint action when t has grown by this fraction since the last search (>= 0; default 0.1;
        0: every batch) or a_hat changed, and in between among the closest ones found (smaller structures: every
        batch).
    game : str
        The restricted games' solver: ``"simplex"`` (exact tableau, default) or ``"highs"`` (scipy's linprog).
%(cover)s
%(exploration)s Also ``"fws"``: the rounds t with floor(t / abs(A0)) a perfect square play A0 (the schedule
        of Wang et al.), and ``"fws+dtracking"`` (default): that schedule and the D-tracking level.
%(legacy)s

    Raises
    ------
    InvalidInputError
        A negative or non-numeric slack or search_growth, pieces below 1, an unknown game solver, threshold, glrt,
        cover or exploration option, or a growth outside [0, 1].
    """

    slack: float = 0.3
    pieces: int = 8
    search_growth: float = 0.1
    game: str = "simplex"
    exploration: str = "fws+dtracking"

    def __post_init__(self) -> None:
        super().__post_init__()
        as_nonnegative(self.slack, "slack")
        as_nonnegative(self.search_growth, "search_growth")
        as_count(self.pieces, "pieces")
        check_choice(self.game, "game", GAME_SOLVERS)

    def _check_exploration(self) -> None:
        check_choice(self.exploration, "exploration", FW_EXPLORATION)

    @property
    def name(self) -> str:
        """``"joint-fws"``."""
        return "joint-fws"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> FactoredState:
        """After the pass over A0, each batch plays the Frank–Wolfe direction at N / t."""
        level = self.exploration
        if level.startswith("fws"):  # the schedule is the rule's, a level the shared batches'
            level = level.partition("+")[2] or "none"
        return _FrankWolfeState(problem, rng, self, cover=self.cover, exploration=level)


class _Planner:
    """Frank–Wolfe steps at successive points, each warm-started by the previous one's pieces and support. The pieces
    are searched over every joint action at every step on enumerated structures, else on a grid of rounds and when
    a_hat changes, and in between among the closest ones of the last search and the best responses seen since."""

    def __init__(self, glrt: FactoredGLRT, rule: JointFrankWolfe) -> None:
        self.glrt, self.rule = glrt, rule
        self.every_step = enumerated(glrt) or rule.search_growth == 0
        self.pool: np.ndarray | None = None  # the candidates of the lazy steps
        self.support: np.ndarray | None = None  # the last step's joint actions
        self.searched_for: np.ndarray | None = None  # a_hat at the last search
        self.next_search = 0.0  # rounds at which the next search is due
        self.searches = 0

    def step(self, state: GLRState, counts: np.ndarray) -> FrankWolfeStep:
        """The step at w = counts / t, t = counts.sum() / rho (the GLR state is at the counts: same pieces, scaled)."""
        t = counts.sum() / self.glrt.indexer.n_factors
        search = (self.every_step or self.pool is None or t >= self.next_search or self.searched_for is None
                  or not np.array_equal(state.best, self.searched_for))
        near = near_tied_pieces(state, counts, slack=self.rule.slack, limit=self.rule.pieces, candidates=self.pool,
                                search=search)
        if search:
            self.pool, self.searched_for = near.closest, state.best.copy()
            self.next_search, self.searches = t * (1.0 + self.rule.search_growth), self.searches + 1
        elif state.argmin_action is not None and self.pool is not None:
            self.pool = np.concatenate([self.pool, state.argmin_action[None, :]])
        out = frank_wolfe_step(self.glrt, near.gradients, counts / t, warm=self.support, prefer=state.best,
                               method=self.rule.game)
        self.support = out.actions
        return out


class _FrankWolfeState(FactoredState):
    def __init__(self, problem: FactoredProblem, rng: np.random.Generator, rule: JointFrankWolfe,
                 **options: Any) -> None:
        super().__init__(problem, rng, **options)
        self.rule = rule
        self.planner = _Planner(problem.glrt, rule)
        self.next_cover = 0  # the A0 member a forced or tied round plays next
        self.columns = 0  # joint actions generated by the games (max-sum calls)

    def plan(self, obs: Observations, n: int) -> npt.NDArray[np.int64]:
        state = self.glr_state(obs)
        cover = n if is_tied(state) else (  # no unique a_hat: A0 in turn
            forced_rounds(obs.time, n, self.cover.size) if self.rule.exploration.startswith("fws") else 0)
        counts = np.zeros(self.abar, dtype=np.int64)
        if cover:
            members = (self.next_cover + np.arange(cover)) % self.cover.size
            self.next_cover = int(members[-1] + 1) % self.cover.size
            counts += self.indexer.counts(self.cover.actions[members], np.ones(cover, dtype=np.int64))
            self.forced_rounds += cover
        if cover < n:
            start = time.perf_counter()
            step = self.planner.step(state, obs.counts.astype(float))
            self.solve_time += time.perf_counter() - start
            self.columns += step.columns
            reps = round_design(step.weights, n - cover)
            keep = reps > 0
            counts += self.indexer.counts(step.actions[keep], reps[keep])
        return counts

    def glr_upper_bound(self, statistic: GLRStatistic) -> float:
        """The least value of the pieces the last search kept: Lambda_t <= f_a(N) for every a."""
        pool = self.planner.pool
        if pool is None:
            return float("inf")
        _, ratios = candidate_ratios(cast(FactoredGLR, statistic).state, pool)
        if ratios.size and ratios.max() > 0:
            return 1.0 / (2.0 * self.sigma**2 * float(ratios.max()))
        return float("inf")

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        return {**super().describe(statistic), "fw_columns": self.columns, "fw_searches": self.planner.searches}


@dataclass(frozen=True)
class OracleRun:
    """The iterate of :func:`oracle_frank_wolfe` and its objective at the true means.

    Parameters
    ----------
    weights : numpy.ndarray, shape (Abar,)
        The final w (each factor's entries sum to 1).
    value : float
        F(w) at the true means (exact: the best response).
    rounds : int
        The final t (real-valued rounds, A0 pass included).
    steps : int
        Frank–Wolfe steps (batches) taken.
    """

    weights: np.ndarray
    value: float
    rounds: int
    steps: int

    @property
    def characteristic_time(self) -> float:
        """1 / F(w), at least 2 sigma^2 T* (equal at the optimum)."""
        return 1.0 / self.value if self.value > 0 else float("inf")


def oracle_frank_wolfe(fg: FactorGraph, rounds: int, *, sigma: float = 1.0, growth: float = 0.01,
                       slack: float = 0.3, pieces: int = 8, search_growth: float = 0.1,
                       cover: str = "greedy") -> OracleRun:
    """The sampling rule of ``joint-fws`` at the true means: the A0 pass, then steps on the grid up to ``rounds``.

    Counts are real numbers (a batch of R rounds adds R z exactly) and nothing is observed, so F(w) tends to
    1 / (2 sigma^2 T*) (MF-TaS eq. 1) as the steps' direction game is solved at every step.

    Parameters
    ----------
    fg : FactorGraph
        The instance (its mean tables are the truth; a unique best joint action).
    rounds : int
        The horizon t (at least the size of A0).
    sigma : float
        The noise level (the pieces' scale).
    growth : float
        The relative step of the grid of batches, in (0, 1].
    slack : float
        The relative slack of the near-tied pieces (>= 0).
    pieces : int
        At most this many near-tied pieces per step (>= 1).
    search_growth : float
        The grid of searches over every joint action on large structures (>= 0; see :class:`JointFrankWolfe`).
    cover : str
        The covering set of the first pass: ``"greedy"`` or ``"build-a0"``.

    Returns
    -------
    OracleRun
        The final w and F(w).

    Raises
    ------
    InvalidInputError
        Not a FactorGraph or no unique best joint action, a bad sigma, growth, slack, pieces, search_growth or cover.
    """
    problem = FactoredProblem(fg, sigma)  # checks fg and sigma
    env = FactoredBandit(fg, sigma)  # checks that the best joint action is unique
    config = JointFrankWolfe(slack=slack, pieces=pieces, search_growth=search_growth, cover=cover)
    A0 = covering_set(fg, cover)
    counts = env.indexer.counts(A0.actions, np.ones(A0.size, dtype=np.int64)).astype(float)
    rounds, t, steps = as_count(rounds, "rounds", minimum=A0.size), A0.size, 0
    planner = _Planner(problem.glrt, config)
    theta = fg.means
    while t < rounds:
        batch = min(next_checkpoint(t, growth), rounds) - t
        step = planner.step(problem.glr_state(theta, counts), counts)
        np.add.at(counts, env.indexer.flat(step.actions).ravel(), np.repeat(batch * step.weights, fg.n_factors))
        t, steps = t + batch, steps + 1
    value = problem.best_response(theta, counts / t).value
    return OracleRun(counts / t, value, t, steps)
