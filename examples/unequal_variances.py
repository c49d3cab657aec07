"""A problem written outside the package: Gaussian arms with known, unequal variances.

Arm k gives N(mu_k, sigma_k^2) rewards; the answer is the best arm. For weights w, the closest alternative that
makes arm a beat the best arm b moves both to their precision-weighted mean m, so the piece of a is

    f_a(w) = (mu_b - mu_a)^2 / (2 (sigma_b^2 / w_b + sigma_a^2 / w_a)),  d f_a / d w_k = (mu_k - m)^2 / (2 sigma_k^2),

and T*(mu) = min_w max_a 2 (sigma_b^2 / w_b + sigma_a^2 / w_a) / (mu_b - mu_a)^2, a convex program (solved here
with cvxpy and certified by the toolkit's bracket). Besides the pieces, the problem offers every capability of
the K-armed rules, so each generic sampling rule runs on it:

    from bandits.pure_exploration import PureExploration
    from bandits.pure_exploration.samplers.top_two import TopTwo
    from bandits.run import run

    env = UnequalGaussian([1.0, 0.8, 0.5], [1.0, 0.3, 2.0])
    run(PureExploration(TopTwo(), problem=UnequalVariances), env, delta=0.01, seed=0)
"""

from __future__ import annotations

from typing import ClassVar

import cvxpy as cp
import numpy as np

from bandits.pure_exploration import Oracle, Pieces, Problem, certified_bracket
from bandits.pure_exploration.capabilities import Optimism


class UnequalGaussian:
    """The instance: Gaussian arms of means ``means`` and standard deviations ``sigmas`` (simulated by reward sums)."""

    kind: ClassVar[str] = "karmed"

    def __init__(self, means: list[float], sigmas: list[float]) -> None:
        self.means, self.sigmas = np.asarray(means, dtype=float), np.asarray(sigmas, dtype=float)
        self.name = "unequal-gaussian"

    @property
    def n_arms(self) -> int:
        return self.means.size

    @property
    def best_item(self) -> int:
        return int(np.argmax(self.means))

    def pull(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = np.asarray(counts, dtype=float)
        return n * self.means + self.sigmas * np.sqrt(n) * rng.standard_normal(n.size)


class UnequalVariances(Problem):
    """Best-arm identification among Gaussian arms of known standard deviations ``sigmas``."""

    kind = "karmed"

    def __init__(self, sigmas: np.ndarray) -> None:
        self.sigmas = np.asarray(sigmas, dtype=float)
        self.var = self.sigmas**2

    @classmethod
    def of_environment(cls, env: UnequalGaussian) -> UnequalVariances:
        return cls(env.sigmas)

    @property
    def n_arms(self) -> int:
        return self.sigmas.size

    @property
    def n_answers(self) -> int:
        return self.sigmas.size

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        return np.divide(sums, counts, out=np.zeros(len(sums)), where=np.asarray(counts) > 0)

    def answer(self, mu: np.ndarray) -> int:
        return int(np.argmax(mu))

    def true_parameter(self, env: UnequalGaussian) -> np.ndarray:
        return self.check_parameter(env.means)

    def _merge(self, mu: np.ndarray, w: np.ndarray, b: int, others: np.ndarray) -> np.ndarray:
        """The precision-weighted means m of the best arm b and each other arm (their plain mean at zero weight)."""
        pb, pa = w[b] / self.var[b], w[others] / self.var[others]
        total = pb + pa
        return np.where(total > 0, (pb * mu[b] + pa * mu[others]) / np.where(total > 0, total, 1.0),
                        0.5 * (mu[b] + mu[others]))

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, np.asarray(w, dtype=float))
        b = self.answer(mu)
        others = np.delete(np.arange(self.n_arms), b)
        m = self._merge(mu, w, b, others)
        db, da = (mu[b] - m) ** 2 / (2 * self.var[b]), (mu[others] - m) ** 2 / (2 * self.var[others])
        values = w[b] * db + w[others] * da
        grads = None
        if gradients:
            grads = np.zeros((others.size, self.n_arms))
            grads[:, b] = db
            grads[np.arange(others.size), others] = da
        return Pieces(best=b, answers=others, values=values, gradients=grads)

    def oracle(self, mu: np.ndarray) -> Oracle:
        mu = self.check_parameter(mu)
        b = self.answer(mu)
        others = np.delete(np.arange(self.n_arms), b)
        w = cp.Variable(self.n_arms, nonneg=True)
        times = cp.hstack([2 * (self.var[b] * cp.inv_pos(w[b]) + self.var[a] * cp.inv_pos(w[a]))
                           / (mu[b] - mu[a]) ** 2 for a in others])
        cp.Problem(cp.Minimize(cp.max(times)), [cp.sum(w) == 1]).solve(solver="CLARABEL")
        weights = np.maximum(np.asarray(w.value, dtype=float), 0.0)
        weights /= weights.sum()
        lower, upper = certified_bracket(self, mu, weights)
        return Oracle(T=upper, weights=weights, lower_bound=lower)

    # the capabilities of the K-armed rules (bandits.pure_exploration.capabilities)
    def pair_costs(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> np.ndarray:
        N = np.asarray(counts, dtype=float)
        gap = np.maximum(mu[leader] - mu, 0.0)
        W = gap**2 / (2 * (self.var[leader] / N[leader] + self.var / N))
        W[leader] = np.inf
        return W

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        lead, chal = self.var[leader] / counts[leader], self.var[challenger] / counts[challenger]
        return float(lead / (lead + chal))  # N_B d_B(mu_B, m) / W_B,C at the precision-weighted mean m

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        return mu + self.sigmas / np.sqrt(counts) * rng.standard_normal((size, self.n_arms))

    def upper_indices(self, mu: np.ndarray, counts: np.ndarray, level: float) -> np.ndarray:
        return mu + self.sigmas * np.sqrt(2.0 * level / np.asarray(counts, dtype=float))

    def optimism(self, mu: np.ndarray, counts: np.ndarray, c: float) -> Optimism:
        return _Optimism(self, mu, counts, c)


class _Optimism(Optimism):
    """LinGame's gains min(max over [mu_k -/+ sigma_k sqrt(2 c / N_k)] of (q - lambda_k)^2 / (2 sigma_k^2), c)."""

    def __init__(self, problem: UnequalVariances, mu: np.ndarray, counts: np.ndarray, c: float) -> None:
        self.problem, self.mu, self.c = problem, mu, c
        self.best = problem.answer(mu)
        self.width = problem.sigmas * np.sqrt(2.0 * c / np.maximum(counts, 1e-300))

    def gains(self, w: np.ndarray) -> np.ndarray:
        pieces = self.problem.pieces(self.mu, w, gradients=False)
        a = np.array([pieces.challenger])
        lam = self.mu.astype(float).copy()
        lam[[pieces.best, a[0]]] = self.problem._merge(self.mu, np.asarray(w, dtype=float), pieces.best, a)[0]
        return self._gains(lam)

    def at_estimate(self) -> np.ndarray:
        return self._gains(self.mu.astype(float))

    def _gains(self, lam: np.ndarray) -> np.ndarray:
        return np.minimum((np.abs(self.mu - lam) + self.width) ** 2 / (2 * self.problem.var), self.c)
