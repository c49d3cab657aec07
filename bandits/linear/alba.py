"""ALBA (Tao, Blanco & Zhou, ICML 2018, "Best arm identification in linear bandits with linear dimension
dependency"), fixed confidence, in the elimination form Fiez et al. (2019) ran (the authors' code
ALBA_YELIM.py): rounds that halve the number of surviving arms, each made of steps with fresh samples drawn
i.i.d. from a G-optimal design, and a Bernstein confidence width.

Round r = 0, 1, ... with delta_r = 6 delta / (pi^2 (r + 1)^2), target size p_r = floor(d / 2^r) and K_r surviving
arms at its start, runs steps s = 1, 2, ... while more than p_r arms survive:

* delta_s = 6 delta_r / (pi^2 s^2), eps_s = 2^{-s}, c_0 = max(4 S^2, 3),
  l_s = 4 c_0 (2 + (6 + 4 / 1.1^s) d) (1.1^s / 4)^2 and N_s = ceil(l_s log(5 K_r^2 / (2 delta_s)));
* lambda: the G-optimal design (Kiefer–Wolfowitz, :func:`optdesign.g_optimal`) on the arms lying in the span
  of the survivors, in coordinates of that span; N_s arms drawn i.i.d. from lambda;
* theta_s = (N_s M)^+ b_s with M = sum_x lambda_x x x^T (the design's moment matrix, not the realised one) and
  b_s the step's reward-weighted arms;
* with x_hat the empirical best survivor, arm x is eliminated when conf(y) < y^T theta_s, y = x_hat - x, where
  conf(y) = min(err, ERR) is a Bernstein bound at level log(5 K_r^2 / (2 delta_s)) = N_s / l_s, with
  v = ||y||_{M^+}, L = S:

      err = sqrt(2) L v / sqrt(l_s) + 2 L (||y|| + v sqrt(d)) / (3 l_s) + noise,
      ERR = sqrt(2 E / l_s) + (2 (|y^T theta_s| + eps_s / 2) + L v sqrt(d)) / (3 l_s) + noise,
      E = sum_x lambda_x ((y^T M^+ x) (|x^T theta_s| + eps_s / 2))^2,
      noise = sigma sqrt(2 (v^2 / l_s) (1 + sqrt(3 d / l_s))).

The run stops when one arm survives. S >= ||theta|| (default: the instance's ||theta||, the bound the authors'
code reads). Items must be the arms (Z = X): ALBA eliminates the arms it pulls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import optdesign as od
from optdesign.errors import InvalidInputError

from ..core.algorithm import Algorithm, Policy
from ..core.environments import LinearBandit
from ..core.statistics import LinearStatistics
from .common import linear_items
from .lingape import check_norm_bound
from .phases import PhasedState, phased_policy

__all__ = ["ALBA"]


def span_design(X: np.ndarray, active: np.ndarray) -> np.ndarray:
    """G-optimal weights (zero off the span) on the arms of X lying in the span of X[active], ``active`` indexing
    the surviving arms."""
    U, sv, _ = np.linalg.svd(X[active].T, full_matrices=False)
    basis = U[:, sv > 1e-10 * sv.max()]
    coords = X @ basis
    inside = np.linalg.norm(X - coords @ basis.T, axis=1) <= 1e-9 * np.maximum(np.linalg.norm(X, axis=1), 1.0)
    weights = np.zeros(X.shape[0])
    weights[inside] = od.g_optimal(coords[inside]).weights
    return weights / weights.sum()


@dataclass(frozen=True)
class ALBA(Algorithm):
    """ALBA (Tao, Blanco & Zhou 2018) as in Fiez et al.'s experiments, norm bound ``S`` (None: ||theta||);
    see the module docstring.

    Parameters
    ----------
    S : float or None
        Bound L = S >= ||theta|| in the Bernstein widths and in c_0 = max(4 S^2, 3); None reads the
        instance's ||theta|| (an oracle bound, as the authors' code).

    Raises
    ------
    InvalidInputError
        ``S`` negative or not a number.
    """

    S: float | None = None

    def __post_init__(self) -> None:
        check_norm_bound(self.S)

    @property
    def name(self) -> str:
        """``alba``."""
        return "alba"

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """An ALBA policy at confidence ``delta``; ``rng`` draws the i.i.d. design samples.

        Raises
        ------
        InvalidInputError
            A transductive instance (items Z differ from the arms X).
        """
        items = linear_items(env)
        if items.shape != env.X.shape or not np.array_equal(items, env.X):
            raise InvalidInputError("alba identifies the best arm among the arms it pulls: items Z must equal "
                                    "the arms X (no transductive instances)")
        return phased_policy(env, _ALBAState(self, env, delta, rng))


class _ALBAState(PhasedState):
    def __init__(self, algo: ALBA, env: LinearBandit, delta: float, rng: np.random.Generator) -> None:
        super().__init__(env, delta)
        self.rng = rng
        self.S = float(np.linalg.norm(env.theta)) if algo.S is None else float(algo.S)
        self.d = self.X.shape[1]
        self.round, self.step = 0, 1
        self.round_size = self.active.size  # K_r
        self._step: dict[str, Any] = {}

    def _target(self) -> int:
        return int(self.d // 2**self.round)

    def _plan_phase(self, budget: int) -> np.ndarray:
        while self.active.size <= self._target():  # round r is over: next round, steps from s = 1
            self.round, self.step, self.round_size = self.round + 1, 1, self.active.size
        r, s, d = self.round, self.step, self.d
        delta_r = 6.0 * self.delta / (np.pi**2 * (r + 1) ** 2)
        delta_s = 6.0 * delta_r / (np.pi**2 * s**2)
        c0 = max(4.0 * self.S**2, 3.0)
        l_s = 4.0 * c0 * (2.0 + (6.0 + 4.0 / 1.1**s) * d) * (1.1**s / 4.0) ** 2
        n_s = int(np.ceil(l_s * np.log(5.0 * self.round_size**2 / (2.0 * delta_s))))
        weights = span_design(self.X, self.active)
        self._step = {"round": r, "step": s, "l": l_s, "N": n_s, "eps": 2.0**-s, "weights": weights}
        return self.rng.multinomial(n_s, weights).astype(np.int64)

    def conf(self, Y: np.ndarray, theta: np.ndarray, Minv: np.ndarray) -> np.ndarray:
        """min(err, ERR) of the module docstring for every row y of Y; E = y^T M^+ Q M^+ y with
        Q = sum_x lambda_x (|x^T theta| + eps / 2)^2 x x^T (one d x d matrix for all directions)."""
        rec, L, d = self._step, self.S, self.d
        ls, eps, w = rec["l"], rec["eps"], rec["weights"]
        v = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Y, Minv, Y), 0.0))
        noise = self.sigma * np.sqrt(2.0 * (v**2 / ls) * (1.0 + np.sqrt(3.0 * d / ls)))
        err = np.sqrt(2.0) * L * v / np.sqrt(ls) + 2.0 * L * (np.linalg.norm(Y, axis=1) + v * np.sqrt(d)) / (3.0 * ls)
        scale = w * (np.abs(self.X @ theta) + eps / 2.0) ** 2
        G = Minv @ (self.X.T @ (scale[:, None] * self.X)) @ Minv
        E = np.maximum(np.einsum("ij,jk,ik->i", Y, G, Y), 0.0)
        ERR = np.sqrt(2.0 * E / ls) + (2.0 * (np.abs(Y @ theta) + eps / 2.0) + L * v * np.sqrt(d)) / (3.0 * ls)
        return np.minimum(err, ERR) + noise

    def _end_phase(self, stats: LinearStatistics) -> dict[str, Any]:
        rec = self._step
        w = rec["weights"]
        M = self.X.T @ (w[:, None] * self.X)
        Minv = np.linalg.pinv(M, hermitian=True)
        self.theta = Minv @ stats.b / rec["N"]
        scores = self.X[self.active] @ self.theta
        Y = self.X[self.active[int(np.argmax(scores))]] - self.X[self.active]
        self.active = self.active[self.conf(Y, self.theta, Minv) >= Y @ self.theta]
        self.step += 1
        return {key: value for key, value in rec.items() if key != "weights"}
