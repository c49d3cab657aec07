"""Frank–Wolfe sampling over joint actions on factor graphs (``joint-fws``): the generic FWS in batches
(:class:`bandits.pure_exploration.samplers.frank_wolfe.FrankWolfe` with ``steps="batch"``) on the factored problem,
inside the factored batches (:mod:`bandits.multiagent.batches`: the pass over A0, the D-tracking level).

FWS (Wang, Tzeng & Proutiere, NeurIPS 2021) climbs F(w) = min_{a != a_hat} D(a)^2 / (2 sigma^2 H_w(a)) at the
estimate by Frank–Wolfe steps and plays the steps' directions. Here w is a point of the marginal polytope (the factor
marginals of a distribution over joint actions), so the directions are mixtures of joint actions, and the iterate is
the played proportions themselves, w = N / t (group counts over rounds): a batch of R rounds that plays the direction
z moves w to (t w + R z) / (t + R), R Frank–Wolfe steps of size 1/t with z frozen (lazy re-planning on the policy's
grid, ``growth``). Per batch, the factored problem's directions (:mod:`bandits.multiagent.fw_directions`) give:

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
  covering set A0 in turn (:func:`~bandits.pure_exploration.fw_directions.forced_rounds`: the paper's uniform step, A0
  in the place of the K arms; alone, ``"fws"``), and the policy's D-tracking level sqrt(t) - Abar/2 acts on top, as does
  a batch whose estimate has no unique best joint action (F = 0, A0 in turn). The schedule acts from the start on any
  graph (D-tracking's level does not before t > (Abar/2)^2, 4.9e4 to 8.0e5 rounds on planted lines of 50 to 200 agents);
  the level keeps every entry near sqrt(t) on small graphs, where a plug-in direction can follow a wrong a_hat for long
  (one run of mftas_synthetic's line N = 4, K = 3: 5.0e5 rounds under the level alone, a median of 2.5e4; RESULTS §6).

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

from dataclasses import dataclass

import numpy as np

from optdesign import FactorGraph
from optdesign.validation import as_count

from ..core.tracking import next_checkpoint
from ..core.validation import check_choice
from ..pure_exploration.fw_directions import forced_rounds
from ..pure_exploration.samplers.frank_wolfe import BatchFrankWolfeState, FrankWolfe
from .batches import RuleState
from .environment import FactoredBandit
from .exploration import EXPLORATION, covering_set
from .problem import FactoredProblem
from .sampling import CoveredSampler, _shared_doc

__all__ = ["FW_EXPLORATION", "JointFrankWolfe", "OracleRun", "forced_rounds", "oracle_frank_wolfe"]

#: forced exploration: the policy's levels, ``"fws"`` (the schedule of Wang et al., A0 for the uniform step), or that
#: schedule with the D-tracking level on top
FW_EXPLORATION = (*EXPLORATION, "fws", "fws+dtracking")


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
        self.batched()  # checks the slack, pieces, search_growth and game

    def _check_exploration(self) -> None:
        check_choice(self.exploration, "exploration", FW_EXPLORATION)

    @property
    def name(self) -> str:
        """``"joint-fws"``."""
        return "joint-fws"

    def state(self, problem: FactoredProblem, env: FactoredBandit, rng: np.random.Generator) -> RuleState:
        """After the pass over A0, each batch plays the Frank–Wolfe direction at N / t."""
        level = self.exploration
        if level.startswith("fws"):  # the schedule is the rule's, a level the shared batches'
            level = level.partition("+")[2] or "none"
        rule = self.batched()
        return RuleState(problem, lambda cover: BatchFrankWolfeState(problem, rule, exploration_pulls=cover),
                         cover=self.cover, exploration=level)

    def batched(self) -> FrankWolfe:
        """The generic FWS in batches with this rule's options (its forced schedule on for ``"fws..."``).

        Returns
        -------
        FrankWolfe
            ``FrankWolfe(steps="batch", ...)``.
        """
        return FrankWolfe(steps="batch", forced=self.exploration.startswith("fws"), slack=self.slack,
                          pieces=self.pieces, search_growth=self.search_growth, game=self.game)


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
    directions = problem.fw_directions(slack=slack, limit=pieces, search_growth=search_growth, game="simplex")
    A0 = covering_set(fg, cover)
    counts = env.indexer.counts(A0.actions, np.ones(A0.size, dtype=np.int64)).astype(float)
    rounds, t, steps = as_count(rounds, "rounds", minimum=A0.size), A0.size, 0
    theta = fg.means
    while t < rounds:
        batch = min(next_checkpoint(t, growth), rounds) - t
        step = directions.step_at(problem.glr_state(theta, counts), counts)
        np.add.at(counts, env.indexer.flat(step.actions).ravel(), np.repeat(batch * step.weights, fg.n_factors))
        t, steps = t + batch, steps + 1
    value = problem.best_response(theta, counts / t).value
    return OracleRun(counts / t, value, t, steps)
