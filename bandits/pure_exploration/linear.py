"""Linear and transductive best-arm identification with Gaussian noise (Soare et al. 2014; Fiez et al. 2019).

Pulling arm x_k returns x_k^T theta + sigma N(0, 1); the answer is the best item z* = argmax_{z in Z} z^T theta.
With A(w) = sum_k w_k x_k x_k^T and y_j = z* - z_j, piece j's closest alternative is
lambda_j = theta - (y_j^T theta / ||y_j||^2_{A^{-1}}) A^{-1} y_j, and::

    f_j(w) = (y_j^T theta)^2 / (2 sigma^2 ||y_j||^2_{A(w)^{-1}}),
    d f_j / d w_k = (x_k^T (theta - lambda_j))^2 / (2 sigma^2)
                  = (y_j^T theta / ||y_j||^2_{A^{-1}})^2 (x_k^T A^{-1} y_j)^2 / (2 sigma^2).

At the counts, min_j f_j is the linear GLR statistic. Values, gradients and best response are those of
:class:`bandits.core.alternatives.Alternatives`, the implementation the linear algorithms' GLR
(:meth:`bandits.core.statistics.LinearStatistics.glr`) shares. The oracle is the transductive design of
:func:`optdesign.transductive`: T* = 2 sigma^2 rho*(theta), certified by its lower bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from optdesign import greedy_choice, transductive
from optdesign.errors import InvalidInputError
from optdesign.validation import as_arms, as_matrix, unique_argmax

from ..core.alternatives import Alternatives, Directions, Halfspaces, Whitening
from ..core.statistics import spanning_subset
from .design_inverse import DesignInverse
from .optimism import Optimism
from .oracle import Oracle
from .pieces import Pieces
from .problem import Problem

if TYPE_CHECKING:
    from ..core.environments import LinearBandit

__all__ = ["LinearOptimism", "LinearProblem"]


class LinearProblem(Problem):
    """Identify the best item of Z by pulling the arms of X, under Gaussian noise of standard deviation sigma.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms (spanning R^d).
    Z : array_like, shape (M, d), optional
        The items (at least two); None means X.
    sigma : float
        Standard deviation of one reward.

    Raises
    ------
    InvalidInputError
        Malformed or non-spanning arms, items of another dimension or fewer than two, a bad sigma.
    """

    kind = "linear"
    duel_sides = 1  # Top-Two tests a pair of items with one pull (top_two_pulls)

    def __init__(self, X: ArrayLike, Z: ArrayLike | None = None, sigma: float = 1.0) -> None:
        self.X = as_arms(X, "X")
        self.Z = self.X if Z is None else as_matrix(Z, "Z", n_cols=self.X.shape[1])
        if self.Z.shape[0] < 2:
            raise InvalidInputError("Z must hold at least two items")
        if not (np.isfinite(sigma) and sigma > 0):
            raise InvalidInputError(f"sigma must be a positive number, got {sigma!r}")
        self.sigma = float(sigma)

    @classmethod
    def of_environment(cls, env: LinearBandit) -> LinearProblem:
        """The problem of a linear instance: its arms, items and noise level (not its theta).

        Parameters
        ----------
        env : LinearBandit
            The instance.

        Returns
        -------
        LinearProblem
            The problem a learner faces on it.
        """
        return cls(env.X, env.Z, env.sigma)

    @property
    def n_arms(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_answers(self) -> int:
        return int(self.Z.shape[0])

    @property
    def dim(self) -> int:
        """The dimension d of theta."""
        return int(self.X.shape[1])

    def information(self, counts: np.ndarray) -> np.ndarray:
        pulled = np.flatnonzero(counts)
        Xp = self.X[pulled]
        return Xp.T @ (Xp * np.asarray(counts, dtype=float)[pulled, None])

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        return Whitening(self.information(counts), pseudo=True).solve(self.X.T @ sums)

    def answer(self, mu: np.ndarray) -> int:
        return int(np.argmax(self.Z @ mu))

    def answer_value(self, answer: int, mu: np.ndarray) -> float | None:
        """z_a^T theta: an answer is an item of Z."""
        return float(self.Z[int(answer)] @ np.asarray(mu, dtype=float))

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        alternatives = self.alternatives(mu, w)
        grads = alternatives.gradients(self.X) if gradients else None
        return Pieces(best=alternatives.best, answers=alternatives.answers, values=alternatives.values,
                      gradients=grads)

    def halfspaces(self, mu: np.ndarray, answer: int | None = None) -> Halfspaces:
        """The pieces of an answer's alternative set as halfspaces: y_j = z_b - z_j for every other item j
        (:class:`bandits.core.alternatives.Directions`; other questions on linear arms override it).

        Parameters
        ----------
        mu : numpy.ndarray, shape (d,)
            A parameter theta.
        answer : int, optional
            The answer b whose alternatives these are (the answer at mu by default; another one, a Top-Two leader,
            has negative gaps to the answers mu prefers).

        Returns
        -------
        Halfspaces
            The answer, the pieces' answers, normals and gaps.
        """
        return Directions(self.Z, mu, best=None if answer is None else self.check_answer(answer))

    def alternatives(self, mu: np.ndarray, w: np.ndarray, *, directions: Halfspaces | None = None) -> Alternatives:
        """The closest alternatives at (mu, w) (:class:`bandits.core.alternatives.Alternatives`), through the Cholesky
        factor of A(w) (its pseudo-inverse when w does not span R^d).

        Parameters
        ----------
        mu : numpy.ndarray, shape (d,)
            A parameter theta.
        w : numpy.ndarray, shape (K,)
            Weights or counts over the arms.
        directions : Halfspaces, optional
            ``halfspaces(mu)`` when already formed (a rule evaluating many weights at one estimate).

        Returns
        -------
        Alternatives
            The best item, the other items, and each one's gap, norm, value, gradients and displacement.

        Raises
        ------
        InvalidInputError
            A parameter or weights of the wrong shape.
        """
        mu, w = self.check_shapes(mu, w)
        whitening = Whitening(self.information_weights(w), pseudo=True)
        return Alternatives(self.halfspaces(mu) if directions is None else directions, whitening, self.sigma)

    def information_weights(self, w: np.ndarray) -> np.ndarray:
        """A(w) = sum_k w_k x_k x_k^T for weights or counts w (floats allowed).

        Parameters
        ----------
        w : numpy.ndarray, shape (K,)
            Nonnegative weights over the arms.

        Returns
        -------
        numpy.ndarray, shape (d, d)
            The information matrix.
        """
        w = np.asarray(w, dtype=float)
        return self.X.T @ (self.X * w[:, None])

    def true_parameter(self, env: LinearBandit) -> np.ndarray:
        """theta (:meth:`~bandits.pure_exploration.Problem.true_parameter`).

        Parameters
        ----------
        env : LinearBandit
            The instance.

        Returns
        -------
        numpy.ndarray
            ``env.theta``.

        Raises
        ------
        InvalidInputError
            A tie for the best item (no run identifies one of several best items).
        """
        theta = self.check_parameter(env.theta)
        unique_argmax(self.Z @ theta, "the items' values z^T theta")
        return theta

    def lower_bound(self, mu: np.ndarray) -> dict[str, Any]:
        """c = 2 sigma^2 rho*(theta) in samples (Soare et al. 2014; Fiez et al. 2019): the oracle's T*.

        Parameters
        ----------
        mu : numpy.ndarray
            theta.

        Returns
        -------
        dict
            ``{"kind": "2 sigma^2 rho*", "value": c, "unit": "samples"}``.
        """
        return {"kind": "2 sigma^2 rho*", "value": float(self.oracle(mu).T), "unit": "samples"}

    def exploration_arms(self) -> np.ndarray:
        """d arms spanning R^d (:func:`bandits.core.statistics.spanning_subset` of X)."""
        return spanning_subset(self.X)

    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The answer of the leader's least piece at the counts, argmin_j max(gap_j, 0)^2 / (2 sigma^2
        ||y_j||^2_{A^{-1}}) over the leader's halfspaces (:meth:`halfspaces`; Top-Two's TC challenger)."""
        return self._least_piece(mu, counts, leader, penalised=False)

    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """The TC challenger's cost plus log(||y_j||^2 / ||y_j||^2_{A^{-1}}), the log of the information the piece's
        direction has received (TCI; on canonical arms log(N_B N_j / (N_B + N_j)) + log 2, EB-TCI's log N_j up to a
        constant when the leader is pulled far more); a direction A does not see wins."""
        return self._least_piece(mu, counts, leader, penalised=True)

    def _least_piece(self, mu: np.ndarray, counts: np.ndarray, leader: int, *, penalised: bool) -> int | None:
        """The answer of the leader's piece of least cost (plus the penalty of :meth:`penalised_challenger`)."""
        directions = self.halfspaces(mu, leader)
        alternatives = self.alternatives(mu, counts, directions=directions)
        if not alternatives.answers.size:
            return None
        score = alternatives.values
        if penalised:
            with np.errstate(divide="ignore"):
                score = score + np.log(np.einsum("ij,ij->i", directions.Y, directions.Y) / alternatives.norms)
        return int(alternatives.answers[int(np.argmin(score))])

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """theta ~ N(theta_hat, sigma^2 A^{-1}), the posterior under a flat prior (L-T3C's Thompson leader)."""
        root = Whitening(self.information(counts), pseudo=True).root  # R^T R = A^{-1}
        return np.asarray(mu, dtype=float) + self.sigma * (rng.standard_normal((size, root.shape[0])) @ root)

    def top_two_pulls(self, leader: int, challenger: int, counts: np.ndarray) -> tuple[int, int]:
        """One pull for both sides: the arm that most reduces the variance of the pair's gap estimate,
        argmin_k y^T (A + x_k x_k^T)^{-1} y for the pair's normal y (:meth:`duel_direction`) and the information A
        at the counts (:func:`optdesign.greedy_choice`; LinGapE's greedy rule, L-T3C's "G" pull)."""
        k = greedy_choice(self.X, self.duel_direction(leader, challenger)[None, :], self.information(counts))
        return k, k

    def duel_direction(self, leader: int, challenger: int) -> np.ndarray:
        """The normal of the piece that separates two answers: z_B - z_C for two items.

        Parameters
        ----------
        leader, challenger : int
            Two answers.

        Returns
        -------
        numpy.ndarray, shape (d,)
            The direction whose variance decides the pair.
        """
        return self.Z[self.check_answer(leader)] - self.Z[self.check_answer(challenger)]

    def design_inverse(self, x: np.ndarray, *, published: bool, refresh: int) -> DesignInverse:
        """H = V(x)^{-1} along the Frank–Wolfe path, by rank-one updates (:class:`DesignInverse`)."""
        return DesignInverse(self.X, self.halfspaces, self.sigma, x, published, refresh)

    def optimism(self, mu: np.ndarray, counts: np.ndarray, c: float) -> LinearOptimism:
        """LinGame's optimism, widths sigma sqrt(2 c) ||x_k||_{A^{-1}} at the counts (:class:`LinearOptimism`)."""
        return LinearOptimism(self, mu, counts, c)

    def oracle(self, mu: np.ndarray) -> Oracle:
        mu = self.check_parameter(mu)
        unique_argmax(self.Z @ mu, "the items' values z^T theta")
        design = transductive(self.X, self.Z, mu, solver="CLARABEL")
        two_var = 2.0 * self.sigma**2
        lower = design.lower_bound if design.lower_bound is not None else 0.0
        return Oracle(T=two_var * design.value, weights=np.asarray(design.weights), lower_bound=two_var * lower)


class LinearOptimism(Optimism):
    """LinGame's optimistic gains on a linear problem (the authors' implementation): for the closest alternative
    lambda, U_k = min((|x_k^T (theta_hat - lambda)| + sigma sqrt(2 c) ||x_k||_{A^{-1}})^2 / (2 sigma^2), c), with
    A = sum_k N_k x_k x_k^T (its pseudo-inverse before the arms span R^d).

    Parameters
    ----------
    problem : LinearProblem
        The structure.
    mu : numpy.ndarray, shape (d,)
        The estimate theta_hat.
    counts : numpy.ndarray, shape (K,)
        Pulls per arm.
    c : float
        The level c_t.
    """

    def __init__(self, problem: LinearProblem, mu: np.ndarray, counts: np.ndarray, c: float) -> None:
        self.problem, self.mu, self.c = problem, mu, c
        self.directions = problem.halfspaces(mu)
        self.best = self.directions.best
        H = np.linalg.pinv(problem.information(counts), hermitian=True)
        norms = np.einsum("kd,kd->k", problem.X @ H, problem.X)
        self.widths = problem.sigma * np.sqrt(2.0 * c * np.maximum(norms, 0.0))

    def gains(self, w: np.ndarray) -> np.ndarray:
        alternatives = self.problem.alternatives(self.mu, w, directions=self.directions)
        response = int(np.argmin(alternatives.values))  # the best response: the piece of least value
        return self._gains(np.abs(self.problem.X @ alternatives.displacement(response)))

    def at_estimate(self) -> np.ndarray:
        return self._gains(np.zeros(self.problem.n_arms))

    def _gains(self, shift: np.ndarray) -> np.ndarray:
        """min((shift_k + width_k)^2 / (2 sigma^2), c) for the shifts |x_k^T (theta_hat - lambda)|."""
        return np.minimum((shift + self.widths) ** 2 / (2.0 * self.problem.sigma**2), self.c)
