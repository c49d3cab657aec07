"""Frank–Wolfe sampling (FWS: Wang, Tzeng & Proutiere, NeurIPS 2021, "Fast pure exploration via Frank–Wolfe").

FWS runs Frank–Wolfe on F(x) = min_j f_j(x) at the estimate and tracks its iterate. At step t (t samples so
far, x uniform at the start):

* forced exploration z = (1/K, ..., 1/K) when floor(t/K) is a perfect square or the estimate has no unique
  answer;
* otherwise, with r_t = t^(-9/10) / K, the pieces within r_t of the minimum at (mu_hat, x): one piece gives
  z = e_k, k = argmax of its gradient; several give the zero-sum game max_{z in simplex} min_j <z - x, grad f_j>
  (:func:`bandits.pure_exploration.games.solve_game`);
* x <- (1 - 1/t) x + z / t, and the arm pulled is argmax_k x_k / N_k (the published tracking rule).

A problem offering the ``design_inverse`` capability (linear problems: H = V(x)^{-1} kept by rank-one updates,
:mod:`bandits.pure_exploration.design_inverse`) gives the pieces along the path; on any other problem they are
the problem's pieces at (mu_hat, x).

``steps="batch"`` is the lazy form for batches of pulls and for problems whose pulls observe several arms: the
iterate is the played proportions w = N / t, and a batch of R pulls plays the direction at w, its R pulls shared
among the direction's pulls by efficient rounding (:func:`optdesign.round_design`), over near-tied pieces with a
relative slack (f_j <= (1 + slack) F, at most ``pieces`` of them), from the problem's ``fw_directions`` capability
(:mod:`bandits.pure_exploration.fw_directions`: the game over the arms, or over joint actions on a factored problem).
Its forced exploration plays the exploration pulls in turn at the times of the schedule above, and every pull of a
batch whose estimate has no unique answer.

``inverse_update="as-published"`` reproduces a bug of the authors' published code, for reproductions only: it
starts from H = V(x_1) itself, scales H by (t - 1) / t and updates it with u = (z_k / t) a_k, so H is the
inverse of W_{t+1} = t / (t - 1) W_t + sum_k (z_k / t)^2 a_k a_k^T, not V(x)^{-1}; the pieces are evaluated
there as f_j = <x, grad f_j>. At that matrix the piece values are over-estimated (Cauchy–Schwarz): the
published code's Frank–Wolfe oracle reports a lower bound 1.088 times below 2 sigma^2 rho* kl(delta) on
Soare et al.'s instance (d = 6, omega = 0.1: 359 against 391 at delta = 0.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign import round_design
from optdesign.errors import InvalidInputError

from ...core.validation import check_choice
from ..capabilities import offered
from ..design_inverse import DesignInverse
from ..fw_directions import check_options, forced_rounds
from ..games import solve_game
from ..pieces import GLRStatistic
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState

__all__ = ["FW_STEPS", "INVERSE_UPDATES", "BatchFrankWolfeState", "FrankWolfe"]

#: the ways of keeping H = V(x)^{-1} on linear problems
INVERSE_UPDATES = ("exact", "as-published")
#: one Frank-Wolfe step per pull (the paper), or one lazy step per batch at w = N / t
FW_STEPS = ("round", "batch")


@dataclass(frozen=True)
class FrankWolfe(Sampler):
    """Frank–Wolfe sampling (Wang, Tzeng & Proutiere 2021): FW steps on min_j f_j(x), x tracked by argmax x_k/N_k.

    Parameters
    ----------
    inverse_update : str
        ``"exact"`` (H = V(x)^{-1}, the correct algorithm) or ``"as-published"`` (the published code's update,
        which is not V(x)^{-1}; linear problems only, see the module's documentation).
    refresh : int
        Steps between exact recomputations of H (``"exact"`` only; at least 1).
    game : str
        Solver of the zero-sum game over several near-minimal pieces: ``"simplex"`` (exact, here) or ``"highs"``
        (scipy's linprog).
    steps : str
        ``"round"`` (a step per pull, the paper's rule, default) or ``"batch"`` (a lazy step per batch at w = N / t).
    forced : bool
        Wang et al.'s forced exploration (default True).
    slack, pieces : float, int
        ``"batch"`` only: the near-tied pieces, at most ``pieces`` (>= 1) with f_j <= (1 + slack) F (slack >= 0).
    search_growth : float
        ``"batch"`` only, on problems whose pieces are searched (factored ones): the growth of t between full
        searches (>= 0; 0: every batch).

    Raises
    ------
    InvalidInputError
        An unknown inverse update, steps or game solver, ``refresh`` or ``pieces`` below 1, a negative slack or
        search_growth, or the published update with ``"batch"`` steps.
    """

    inverse_update: str = "exact"
    refresh: int = 100
    game: str = "simplex"
    steps: str = "round"
    forced: bool = True
    slack: float = 0.3
    pieces: int = 8
    search_growth: float = 0.1

    def __post_init__(self) -> None:
        """Check the options."""
        check_choice(self.inverse_update, "inverse_update", INVERSE_UPDATES)
        check_choice(self.steps, "steps", FW_STEPS)
        check_options(self.slack, self.pieces, self.search_growth, self.game)
        if isinstance(self.refresh, bool) or not isinstance(self.refresh, (int, np.integer)) or self.refresh < 1:
            raise InvalidInputError(f"refresh must be an integer >= 1, got {self.refresh!r}")
        if not isinstance(self.forced, (bool, np.bool_)):
            raise InvalidInputError(f"forced must be true or false, got {self.forced!r}")
        if self.steps == "batch" and self.inverse_update == "as-published":
            raise InvalidInputError("inverse_update='as-published' reproduces the published per-pull rule; "
                                    "it needs steps='round'")

    @property
    def name(self) -> str:
        """``fws``."""
        return "fws"

    def requires(self) -> tuple[str, ...]:
        """Arms to pull (per-pull steps), the directions over the pulls (batches); the published inverse update
        needs a problem with a design inverse (a linear one)."""
        if self.steps == "batch":
            return ("fw_directions",)
        return ("arm_pull", "design_inverse") if self.inverse_update == "as-published" else ("arm_pull",)

    def start(self, problem: Problem, env: Any, rng: np.random.Generator) -> SamplerState:
        """A fresh Frank–Wolfe state: x uniform (and H = V(x)^{-1} on a linear problem).

        Parameters
        ----------
        problem : Problem
            The structure.
        env : object
            The instance (unused: the rule reads only the observations).
        rng : numpy.random.Generator
            Unused (the rule is deterministic).

        Returns
        -------
        SamplerState
            The FWS state.
        """
        if self.steps == "batch":
            return BatchFrankWolfeState(problem, self)
        return FrankWolfeState(problem, self)


def is_square(n: int) -> bool:
    """Whether n >= 0 is a perfect square (0 included)."""
    r = math.isqrt(n)
    return r * r == n


class FrankWolfeState(SequentialState):
    """One FWS run: the iterate x, and the design inverse at x when the problem offers one.

    Parameters
    ----------
    problem : Problem
        The structure.
    config : FrankWolfe
        The options.
    """

    def __init__(self, problem: Problem, config: FrankWolfe) -> None:
        K = problem.n_arms
        self.problem, self.config = problem, config
        self.x = np.full(K, 1.0 / K)
        self.inverse: DesignInverse | None = None
        if "design_inverse" in offered(problem):
            self.inverse = problem.design_inverse(self.x, published=config.inverse_update == "as-published",
                                                  refresh=config.refresh)

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self.inverse is not None:
            self.inverse.start_batch(obs.mu)
        return super().plan(obs, n)

    def choose(self, obs: Observations, counts: np.ndarray) -> int:
        t = max(int(counts.sum()), 2)
        z = self.direction(obs, t)
        self.x += (z - self.x) / t
        if self.inverse is not None:
            self.inverse.step(t, z, self.x)
        ratio = np.divide(self.x, counts, out=np.full(self.x.size, np.inf), where=counts > 0)
        return int(np.argmax(ratio))

    def direction(self, obs: Observations, t: int) -> np.ndarray:
        """The Frank–Wolfe direction z at step t: forced, the best gradient vertex, or the game's solution.

        Parameters
        ----------
        obs : Observations
            The batch's start (its estimate).
        t : int
            The step.

        Returns
        -------
        numpy.ndarray, shape (K,)
            A point of the simplex.
        """
        K = self.x.size
        if self.config.forced and is_square(t // K):
            return np.full(K, 1.0 / K)
        values, grads = self._pieces(obs, t ** -0.9 / K)
        if values is None or grads is None:
            return np.full(K, 1.0 / K)
        z = np.zeros(K)
        if grads.shape[0] == 1:
            z[int(np.argmax(grads[0]))] = 1.0
            return z
        z, _ = solve_game(grads - (grads @ self.x)[:, None], method=self.config.game)
        return z

    def objective(self, obs: Observations) -> float:
        """F(x) = min_j f_j(x) at the estimate as the rule evaluates it (for ``"as-published"``, at its matrix).

        Parameters
        ----------
        obs : Observations
            Supplies the estimate (after :meth:`plan` has seen it, for linear problems).

        Returns
        -------
        float
            The minimum piece value (0 when the estimate has no unique answer); 1 / F(x) is the characteristic
            time the rule's iterate certifies, or, for the published update, what the published oracle reports.
        """
        values, _ = self._pieces(obs, 0.0)
        return 0.0 if values is None else float(values.min())

    def _pieces(self, obs: Observations, slack: float) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The values of all pieces at (mu_hat, x) and the gradients of those within ``slack`` of the minimum
        (None, None when the estimate has no unique answer)."""
        if self.inverse is not None:
            return self.inverse.pieces(self.x, slack)
        pieces = obs.problem.pieces(obs.mu, self.x)
        if pieces.values.size == 0 or pieces.values.min() <= 0:
            return None, None
        assert pieces.gradients is not None
        return pieces.values, pieces.gradients[pieces.near_minimal(slack)]


class BatchFrankWolfeState(SamplerState):
    """One batched FWS run: each batch plays the direction at w = N / t, rounded over its pulls (module docstring).

    Parameters
    ----------
    problem : Problem
        The structure (its ``fw_directions``).
    config : FrankWolfe
        The options (``steps="batch"``).
    exploration_pulls : numpy.ndarray of int, shape (P, m), optional
        The pulls of forced exploration, as the arms each observes (default: the problem's exploration pulls).
    """

    def __init__(self, problem: Problem, config: FrankWolfe, exploration_pulls: np.ndarray | None = None) -> None:
        self.config = config
        self.directions = problem.fw_directions(slack=config.slack, limit=config.pieces,
                                                search_growth=config.search_growth, game=config.game)
        self.exploration = problem.exploration_pulls() if exploration_pulls is None else exploration_pulls
        self.next_exploration = 0  # the exploration pull a forced or tied pull plays next
        self.forced_pulls = 0

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        size = self.exploration.shape[0]
        forced = n if self.directions.tied(obs) else (
            forced_rounds(obs.time, n, size) if self.config.forced else 0)
        counts = np.zeros(obs.counts.size, dtype=np.int64)
        if forced:
            members = (self.next_exploration + np.arange(forced)) % size
            self.next_exploration = int(members[-1] + 1) % size
            np.add.at(counts, self.exploration[members].ravel(), 1)
            self.forced_pulls += forced
        if forced < n:
            with self.solving(self.directions.solves):
                direction = self.directions.step(obs)
            reps = round_design(direction.weights, n - forced)
            np.add.at(counts, direction.pulls.ravel(), np.repeat(reps, direction.pulls.shape[1]))
        return counts

    def glr_upper_bound(self, statistic: GLRStatistic) -> float:
        """The directions' bound from the pieces they have seen."""
        return self.directions.glr_upper_bound(statistic)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The forced pulls and the directions' counters."""
        return {"forced_rounds": self.forced_pulls, **self.directions.describe()}
