"""LinGame's optimistic gains on a factor graph (Degenne, Ménard, Shang & Valko, ICML 2020, with the joint actions as
arms; the learner and the tracked pull are the factored problem's, :class:`bandits.pure_exploration.pulls.Pulls`).

At the play w (a point of the marginal polytope, floored at :data:`W_FLOOR`) the best response is the alternative
a != a_hat of least f_a(w) = D(a)^2 / (2 sigma^2 H_w(a)) (:func:`bandits.multiagent.fw_game.near_tied_pieces` with
no slack: enumeration on small structures, the Pareto elimination on large ones). Its closest alternative lambda moves
the entries of the factors a changes by c / w_{e,b} (:mod:`bandits.multiagent.alternatives`), so (theta_hat -
lambda)_{e,b}^2 / (2 sigma^2) is the piece's gradient and the shift is read from it. The gains are

    U_{e,b} = min((abs(theta_hat_{e,b} - lambda_{e,b}) + sigma sqrt(2 c_t / N_{e,b}))^2 / (2 sigma^2), c_t),

the entries off the changed factors getting the confidence bonus alone, as all do when the estimate has no unique
best joint action. On one agent they are the K-armed Gaussian gains.
"""

from __future__ import annotations

import numpy as np

from ..pure_exploration.optimism import Optimism
from .fw_game import is_tied, near_tied_pieces
from .glrt import FactoredGLRT, GLRState
from .joint_actions import encode_joint

__all__ = ["W_FLOOR", "FactoredOptimism"]

#: the learner's marginals are floored here in H_w (a marginal that underflowed to 0 would make H infinite)
W_FLOOR = 1e-150


class FactoredOptimism(Optimism):
    """The gains of the module docstring at one estimate (one batch), the last best response seeding the next search.

    Parameters
    ----------
    glrt : FactoredGLRT
        The structure's GLR test (its states at (theta_hat, w) give the best responses).
    sigma : float
        The noise level.
    mu : numpy.ndarray, shape (Abar,)
        theta_hat.
    counts : numpy.ndarray, shape (Abar,)
        N_{e,b} (positive).
    c : float
        The level c_t.
    """

    def __init__(self, glrt: FactoredGLRT, sigma: float, mu: np.ndarray, counts: np.ndarray, c: float) -> None:
        self.glrt, self.sigma, self.c = glrt, sigma, c
        self.state = state = glrt(mu, counts)
        self.best = encode_joint(state.best, glrt.plan.n_actions)
        self.tied = is_tied(state)
        self.width = self.sigma * np.sqrt(2.0 * c / counts)
        self._response: np.ndarray | None = None

    def gains(self, w: np.ndarray) -> np.ndarray:
        if self.tied:
            return self.at_estimate()
        floored = np.maximum(w, W_FLOOR)
        state = GLRState(self.glrt, self.state.theta, floored, same_theta=self.state)  # theta_hat's gaps reused
        near = near_tied_pieces(state, floored, slack=0.0, limit=1, candidates=self._response)
        self._response = near.actions[:1]
        shift = self.sigma * np.sqrt(2.0 * near.gradients[0])  # the gradient is (theta_hat - lambda)^2 / 2 s^2
        return self._gains(shift)

    def at_estimate(self) -> np.ndarray:
        return self._gains(np.zeros_like(self.width))

    def _gains(self, shift: np.ndarray) -> np.ndarray:
        """min((shift + width)^2 / (2 sigma^2), c)."""
        return np.minimum((shift + self.width) ** 2 / (2.0 * self.sigma**2), self.c)
