"""Frank–Wolfe sampling (FWS: Wang, Tzeng & Proutiere, NeurIPS 2021, "Fast pure exploration via Frank–Wolfe").

FWS runs Frank–Wolfe on F(x) = min_j f_j(x) at the estimate and tracks its iterate. At step t (t samples so
far, x uniform at the start):

* forced exploration z = (1/K, ..., 1/K) when floor(t/K) is a perfect square or the estimate has no unique
  answer;
* otherwise, with r_t = t^(-9/10) / K, the pieces within r_t of the minimum at (mu_hat, x): one piece gives
  z = e_k, k = argmax of its gradient; several give the zero-sum game max_{z in simplex} min_j <z - x, grad f_j>
  (:func:`bandits.pure_exploration.samplers.games.solve_game`);
* x <- (1 - 1/t) x + z / t, and the arm pulled is argmax_k x_k / N_k (the published tracking rule).

Linear problems keep H = V(x)^{-1}, V(x) = sum_k x_k a_k a_k^T, by Sherman–Morrison: after the step
V <- (1 - 1/t) V + sum_k (z_k / t) a_k a_k^T, so H is scaled by t / (t - 1) and updated by rank one with
u = sqrt(z_k / t) a_k, and recomputed exactly every ``refresh`` steps and after a dense z. The projections
H y_j of the answers' directions are updated alongside (O(J d) per rank one instead of O(J d^2)).

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

from ...alternatives import piece_gradients, piece_values
from ..linear import LinearProblem
from ..problem import Problem
from ..sampler import Observations, Sampler, SamplerState, SequentialState
from .games import solve_game

__all__ = ["INVERSE_UPDATES", "DesignInverse", "FrankWolfe"]

#: the ways of keeping H = V(x)^{-1} on linear problems
INVERSE_UPDATES = ("exact", "as-published")
#: a direction z with more nonzero entries than this refreshes H by one inversion instead of rank-one updates
DENSE_SUPPORT = 4


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


class DesignInverse:
    """H = W^{-1} for the design W of the Frank–Wolfe iterate, with the answers' projections H y_j kept alongside.

    ``exact``: W = V(x) and H its inverse. ``as-published``: W and H follow the published code (module docs).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    x : numpy.ndarray, shape (K,)
        The starting iterate (positive, with V(x) invertible).
    published : bool
        Follow the published code's update.
    refresh : int
        Steps between exact recomputations of H (exact update only).
    """

    def __init__(self, X: np.ndarray, x: np.ndarray, published: bool, refresh: int) -> None:
        self.X, self.published, self.refresh = X, published, refresh
        V = X.T @ (X * x[:, None])
        self.W: np.ndarray = np.linalg.inv(V) if published else V
        self.H: np.ndarray = V if published else np.linalg.inv(V)
        self.Y = np.zeros((0, X.shape[1]))
        self.P = np.zeros((0, X.shape[1]))  # rows H y_j
        self.q = np.zeros(0)  # y_j^T H y_j
        self._since = 0

    def project(self, Y: np.ndarray) -> None:
        """Use the directions Y (rows y_j = z* - z_j) from now on.

        Parameters
        ----------
        Y : numpy.ndarray, shape (J, d)
            The answers' directions.
        """
        self.Y = Y
        self.P = Y @ self.H
        self.q = np.einsum("jd,jd->j", self.P, Y)

    def step(self, t: int, z: np.ndarray, x: np.ndarray) -> None:
        """Follow the Frank–Wolfe step x <- (1 - 1/t) x + z / t (``x`` is the new iterate).

        Parameters
        ----------
        t : int
            The step (at least 2).
        z : numpy.ndarray, shape (K,)
            The direction (a point of the simplex).
        x : numpy.ndarray, shape (K,)
            The iterate after the step.
        """
        support = np.flatnonzero(z)
        if self.published:
            scale, coef = t / (t - 1.0), (z[support] / t) ** 2
        else:
            scale, coef = (t - 1.0) / t, z[support] / t
        Xs = self.X[support]
        self.W = scale * self.W + Xs.T @ (Xs * coef[:, None])
        self._since += 1
        if support.size > DENSE_SUPPORT or (not self.published and self._since >= self.refresh):
            if not self.published:
                self.W = self.X.T @ (self.X * x[:, None])
            self._invert()
            return
        self.H /= scale
        self.P /= scale
        self.q /= scale
        for u in Xs * np.sqrt(coef)[:, None]:
            h = self.H @ u
            denom = 1.0 + u @ h
            Pu = self.P @ u
            self.H -= np.outer(h, h / denom)
            self.P -= np.outer(Pu, h / denom)
            self.q -= Pu**2 / denom

    def _invert(self) -> None:
        """H = W^{-1} by one inversion, and the projections from it."""
        H = np.linalg.inv(self.W)
        self.H = 0.5 * (H + H.T)
        self._since = 0
        self.project(self.Y)


def is_square(n: int) -> bool:
    """Whether n >= 0 is a perfect square (0 included)."""
    r = math.isqrt(n)
    return r * r == n


class FrankWolfeState(SequentialState):
    """One FWS run: the iterate x, and on a linear problem the inverse design at x.

    Parameters
    ----------
    problem : Problem
        The structure.
    config : FrankWolfe
        The options.

    Raises
    ------
    InvalidInputError
        ``inverse_update="as-published"`` on a problem that is not linear.
    """

    def __init__(self, problem: Problem, config: FrankWolfe) -> None:
        K = problem.n_arms
        self.problem, self.config = problem, config
        self.x = np.full(K, 1.0 / K)
        self.inverse: DesignInverse | None = None
        if isinstance(problem, LinearProblem):
            self.inverse = DesignInverse(problem.X, self.x, config.inverse_update == "as-published", config.refresh)
        elif config.inverse_update != "exact":
            raise InvalidInputError(f"inverse_update={config.inverse_update!r} applies to linear problems only")
        self._gaps = np.zeros(0)
        self._best = -1

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        if self.inverse is not None:
            problem = self.problem
            assert isinstance(problem, LinearProblem)
            best = problem.answer(obs.mu)
            if best != self._best:
                self._best = best
                self.inverse.project(problem.Z[best] - np.delete(problem.Z, best, axis=0))
            self._gaps = self.inverse.Y @ obs.mu
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
        if self.inverse is None:
            pieces = obs.problem.pieces(obs.mu, self.x)
            if pieces.values.size == 0 or pieces.values.min() <= 0:
                return None, None
            assert pieces.gradients is not None
            return pieces.values, pieces.gradients[pieces.near_minimal(slack)]
        gaps, inv = self._gaps, self.inverse
        if gaps.size == 0 or gaps.min() <= 0:
            return None, None
        problem = obs.problem
        assert isinstance(problem, LinearProblem)
        if inv.published:  # the published code's f_j = <x, grad f_j> at its matrix
            grads = piece_gradients(gaps, inv.q, inv.P @ problem.X.T, problem.sigma)
            values = grads @ self.x
            return values, grads[values <= values.min() + slack]
        values = piece_values(gaps, inv.q, problem.sigma)
        near = np.flatnonzero(values <= values.min() + slack)
        return values, piece_gradients(gaps[near], inv.q[near], inv.P[near] @ problem.X.T, problem.sigma)
