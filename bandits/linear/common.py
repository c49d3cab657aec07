"""Pieces shared by the linear best-arm-identification algorithms: initial spanning pulls, the
threshold by name, and a policy base class whose stopping rule is the linear GLRT."""

from __future__ import annotations

import numpy as np
from scipy.linalg import qr

from optdesign.errors import InvalidInputError

from ..algorithm import Policy
from ..statistics import GLR, LinearStatistics
from ..stopping import THRESHOLDS, LinearTheoryThreshold, PracticalThreshold, SoareThreshold, Threshold


def spanning_arms(X: np.ndarray) -> np.ndarray:
    """Indices of d arms spanning R^d (pivoted QR of X^T), pulled once each to make A invertible.

    Soare et al. start every static allocation and every XY-Adaptive phase from A_0 = one pull of
    each canonical arm; on their instance pivoted QR picks d such arms.
    """
    d = X.shape[1]
    _, _, piv = qr(X.T, pivoting=True, mode="economic")
    return np.sort(piv[:d])


def make_threshold(name: str | Threshold, env, A0: np.ndarray) -> Threshold:
    """A threshold object from its name (``practical``, ``soare``, ``theory``) or as given."""
    if isinstance(name, Threshold):
        return name
    if name == "practical":
        return PracticalThreshold()
    if name == "soare":
        return SoareThreshold(n_items=env.Z.shape[0])
    if name == "theory":
        return LinearTheoryThreshold.from_matrix(A0)
    raise InvalidInputError(f"threshold must be one of {', '.join(THRESHOLDS)}; got {name!r}")


def check_growth(growth: float) -> float:
    if not (np.isfinite(growth) and 0 < growth <= 1):
        raise InvalidInputError(f"growth (relative step of the checkpoint grid) must lie in (0, 1], got {growth}")
    return float(growth)


class LinearGLRPolicy(Policy):
    """Policy state with linear sufficient statistics and the GLRT stopping rule
    Lambda_t > beta(t, delta) over the items Z (recommendation: argmax_z z^T theta_hat)."""

    def __init__(self, env, threshold: str | Threshold):
        self.X, self.Z, self.sigma = env.X, env.Z, env.sigma
        self.stats = LinearStatistics(self.X)
        self.initial = spanning_arms(self.X)
        A0 = self.X[self.initial].T @ self.X[self.initial]
        self.threshold = make_threshold(threshold, env, A0)
        self.solve_time = 0.0
        self._glr: GLR | None = None

    @property
    def n(self) -> int:
        return self.stats.n

    def initial_batch(self) -> np.ndarray:
        counts = np.zeros(self.X.shape[0], dtype=np.int64)
        counts[self.initial] = 1
        return counts

    def observe(self, counts, sums) -> None:
        self.stats.add(counts, sums)
        self._glr = None

    def glr(self) -> GLR | None:
        if self.n < len(self.initial):
            return None
        if self._glr is None:
            self._glr = self.stats.glr(self.Z, self.sigma)
        return self._glr

    def stopped(self, delta: float) -> bool:
        glr = self.glr()
        if glr is None:
            return False
        return glr.value > self.threshold(self.n, delta, self.stats.A)

    def recommend(self) -> int:
        glr = self.glr()
        return 0 if glr is None else glr.best

    def stop_statistic(self) -> dict:
        glr = self.glr()
        return {} if glr is None else {"glr": glr.value, "best": glr.best}
