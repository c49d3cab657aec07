"""K-armed best-arm identification with rewards from a one-parameter exponential family.

Answers are the arms; the pieces at (mu, w) are the other arms a, with closest alternative moving mu_best and
mu_a to their weighted mean m_a = (w_b mu_b + w_a mu_a) / (w_b + w_a), so

    f_a(w) = w_b d(mu_b, m_a) + w_a d(mu_a, m_a)          (Garivier & Kaufmann, COLT 2016, Lemma 3).

The oracle solves GK16's Theorem 5: with x_a(y) the inverse of g_a(x) = (1 + x) I_{1/(1+x)}(mu_b, mu_a),
find y* with sum_a d(mu_b, m_a) / d(mu_a, m_a) = 1 (m_a at weights (1, x_a(y*))); then
w_b = 1 / (1 + sum_a x_a), w_a = x_a w_b and T* = (1 + sum_a x_a) / y*. The inner inverses are vectorised
bisections over the arms, the outer equation is solved by Brent's method, and the result is certified by
:func:`bandits.pure_exploration.problem.certified_bracket`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq

from optdesign.validation import as_count, unique_argmax

from .families import ExponentialFamily, Gaussian
from .problem import Oracle, Pieces, Problem, certified_bracket

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["KArmedProblem"]

#: bisection steps of the inner inverses x_a(y) (on u = x / (1 + x) in [0, 1): 2^-60 resolution)
BISECTION_STEPS = 60


class KArmedProblem(Problem):
    """Best-arm identification among K arms of one exponential family.

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    family : ExponentialFamily
        The reward family (Gaussian with its sigma, Bernoulli, ...).

    Raises
    ------
    InvalidInputError
        Fewer than two arms.
    """

    kind = "karmed"

    def __init__(self, n_arms: int, family: ExponentialFamily | None = None) -> None:
        self._K = as_count(n_arms, "n_arms (a K-armed problem needs at least two arms)", minimum=2)
        self.family = family if family is not None else Gaussian()

    @classmethod
    def of_environment(cls, env: KArmedBandit) -> KArmedProblem:
        """The problem of a K-armed instance: its number of arms and its family (not its means).

        Parameters
        ----------
        env : KArmedBandit
            The instance.

        Returns
        -------
        KArmedProblem
            The problem a learner faces on it.
        """
        return cls(env.n_arms, env.family)

    @property
    def n_arms(self) -> int:
        return self._K

    @property
    def n_answers(self) -> int:
        return self._K

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)

    def answer(self, mu: np.ndarray) -> int:
        return int(np.argmax(mu))

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        b = self.answer(mu)
        others = np.delete(np.arange(self._K), b)
        wb, wa = float(w[b]), np.asarray(w, dtype=float)[others]
        total = wb + wa
        safe = np.where(total > 0, total, 1.0)
        m = np.where(total > 0, (wb * mu[b] + wa * mu[others]) / safe, 0.5 * (mu[b] + mu[others]))
        db, da = self.family.kl(mu[b], m), self.family.kl(mu[others], m)
        values = wb * db + wa * da
        grads = None
        if gradients:
            grads = np.zeros((others.size, self._K))
            grads[:, b] = db
            grads[np.arange(others.size), others] = da
        return Pieces(best=b, answers=others, values=values, gradients=grads)

    def oracle(self, mu: np.ndarray) -> Oracle:
        mu = self.family.check_means(self.check_parameter(mu))
        b = unique_argmax(mu, "the arms' means")
        others = np.delete(np.arange(self._K), b)
        mb, ma = mu[b], mu[others]
        top = float(self.family.kl(mb, ma).min())  # sup of every g_a is d(mu_b, mu_a)

        def inverses(y: float) -> tuple[np.ndarray, np.ndarray]:
            """x_a(y) for every other arm, and the weighted means m_a there."""
            lo, hi = np.zeros(ma.size), np.ones(ma.size)
            for _ in range(BISECTION_STEPS):  # g_a(x) = ((1-u) d(mb, m) + u d(ma, m)) / (1 - u), increasing in u
                u = 0.5 * (lo + hi)
                m = (1 - u) * mb + u * ma
                g = ((1 - u) * self.family.kl(mb, m) + u * self.family.kl(ma, m)) / (1 - u)
                below = g < y
                lo, hi = np.where(below, u, lo), np.where(below, hi, u)
            u = 0.5 * (lo + hi)
            return u / (1 - u), (1 - u) * mb + u * ma

        def balance(y: float) -> float:
            """sum_a d(mu_b, m_a) / d(mu_a, m_a) - 1 at y (increasing from -1)."""
            _, m = inverses(y)
            return float(np.sum(self.family.kl(mb, m) / np.maximum(self.family.kl(ma, m), 1e-300)) - 1.0)

        y = brentq(balance, top * 1e-12, top * (1 - 1e-12), xtol=1e-15 * top, rtol=1e-13)
        x, _ = inverses(y)
        weights = np.empty(self._K)
        weights[b] = 1.0 / (1.0 + x.sum())
        weights[others] = x * weights[b]
        lower, upper = certified_bracket(self, mu, weights)
        return Oracle(T=upper, weights=weights, lower_bound=min(lower, upper))
