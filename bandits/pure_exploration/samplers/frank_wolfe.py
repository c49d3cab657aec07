"""Frank–Wolfe sampling (FWS: Wang, Tzeng & Proutiere, NeurIPS 2021, "Fast pure exploration via Frank–Wolfe").

FWS runs Frank–Wolfe on F(x) = min_j f_j(x) at the estimate and tracks its iterate. At step t (t samples so
far, x uniform at the start):

* forced exploration z = (1/K, ..., 1/K) when floor(t/K) is a perfect square or the estimate has no unique
  answer;
* otherwise, with r_t = t^(-9/10) / K, the pieces within r_t of the minimum at (mu_hat, x): one piece gives
  z = e_k, k = argmax of its gradient; several give the zero-sum game max_{z in simplex} min_j <z - x, grad f_j>
  (:func:`bandits.pure_exploration.samplers.games.solve_game`);
* x <- (1 - 1/t) x + z / t, and the arm pulled is argmax_k x_k / N_k (the published tracking rule).

A problem offering the ``design_inverse`` capability (linear problems: H = V(x)^{-1} kept by rank-one updates,
:mod:`bandits.pure_exploration.design_inverse`) gives the pieces along the path; on any other problem they are
the problem's pieces at (mu_hat, x).

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

from optdesign.errors import InvalidInputError

from ..capabilities import offered
from ..design_inverse import DesignInverse
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState
from .games import solve_game

__all__ = ["INVERSE_UPDATES", "FrankWolfe"]

#: the ways of keeping H = V(x)^{-1} on linear problems
INVERSE_UPDATES = ("exact", "as-published")


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

    Raises
    ------
    InvalidInputError
        An unknown inverse update or game solver, or ``refresh`` below 1.
    """

    inverse_update: str = "exact"
    refresh: int = 100
    game: str = "simplex"

    def __post_init__(self) -> None:
        """Check the options."""
        if self.inverse_update not in INVERSE_UPDATES:
            raise InvalidInputError(f"unknown inverse_update {self.inverse_update!r}; valid: "
                                    f"{', '.join(INVERSE_UPDATES)}")
        if self.game not in ("simplex", "highs"):
            raise InvalidInputError(f"unknown game solver {self.game!r}; valid: simplex, highs")
        if isinstance(self.refresh, bool) or not isinstance(self.refresh, (int, np.integer)) or self.refresh < 1:
            raise InvalidInputError(f"refresh must be an integer >= 1, got {self.refresh!r}")

    @property
    def name(self) -> str:
        """``fws``."""
        return "fws"

    def requires(self) -> tuple[str, ...]:
        """Arms to pull; the published inverse update needs a problem with a design inverse (a linear one)."""
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
        if is_square(t // K):
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
