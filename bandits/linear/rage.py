"""RAGE, randomised adaptive gap elimination (Fiez, Jain, Jamieson & Ratliff 2019, Alg. 1), for
linear and transductive best-arm identification (measure with X, identify the best item of Z).

Phase k = 1, 2, ... with surviving items Z_k (Z_1 = Z) and delta_k = delta / k^2:

* design: lambda_k = od.transductive(X, Z_k), minimising rho(lambda) = max_{y in Y_k} ||y||^2_{A(lambda)^{-1}}
  over Y_k = {z - z' : z, z' in Z_k}; weights below 1e-5 are zeroed as in the authors' code and
  rho_k is the value of the pruned design (equal to the optimum up to that mass); its support p;
* size: N_k = max(ceil(2 4^k (1 + eps) rho_k sigma^2 log(2 |Z|^2 / delta_k)), r(eps)), r(eps) = ceil(2 p / eps)
  (the code's ``8 (2^{k-1})^2 ...`` and ``n_min = 2 factor support`` with factor = 1 / eps);
* pulls: od.round_design(lambda_k, N_k) in one batch; theta_k = least squares on phase-k samples only
  (pseudo-inverse: A_k may be singular off the span of Y_k, y^T theta_k is still the OLS estimate);
* elimination: Z_{k+1} = Z_k minus {z : exists z' in Z_k with (z' - z)^T theta_k >= 2^{-k}}; stop when |Z_k| = 1.

Pairing and correctness (threshold 2^{-k} with the N_k above, as in the authors' code; the paper's
2^{-(k+2)} would need 16 times more samples): efficient apportionment gives every support arm
n_i >= (N - p) lambda_i (ceil((N - p) lambda_i) is a feasible allocation and the rounding maximises
min_i n_i / lambda_i), so A_k >= (N_k - p) A(lambda_k) and, as N_k >= 2 p / eps with eps <= 1,
||y||^2_{A_k^{-1}} <= rho_k / (N_k (1 - eps / 2)) <= (1 + eps) rho_k / N_k
<= 1 / (2 4^k sigma^2 log(2 |Z|^2 / delta_k)).
Gaussian noise then gives P(|y^T (theta_k - theta)| >= 2^{-k}) <= 2 exp(-4^{-k} / (2 sigma^2 ||y||^2_{A_k^{-1}}))
<= delta_k / |Z|^2 per direction; a union over the <= |Z|^2 / 2 directions (y and -y are one) and
over phases costs sum_k delta / (2 k^2) = (pi^2 / 12) delta < delta. On that event z* is never
eliminated ((z' - z*)^T theta_k < -Delta_{z'} + 2^{-k} <= 2^{-k}) and every z with Delta_z >= 2^{1-k}
is ((z* - z)^T theta_k > Delta_z - 2^{-k} >= 2^{-k}), so the run stops after about log2(2 / Delta_min)
phases and recommends z*. The realised variance bound is recorded per phase (``max_var`` <= ``var_bound``).

If the budget is smaller than a phase, the policy pulls what fits and never completes that phase
(the runner reports ``stopped_by="budget"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.linear import max_pair_variance

from ..core.algorithm import Algorithm, Policy
from ..core.environments import LinearBandit
from ..core.statistics import LinearStatistics
from ..core.validation import is_number
from .common import LinearModel
from .phases import PhasedState, phased_policy

__all__ = ["RAGE"]

PRUNE = 1e-5  # design weights below this are zeroed before rounding (authors' code)
RCOND = 1e-12  # relative eigenvalue cut-off of the pseudo-inverse (A has integer-count scale)


def pruned_design(X: np.ndarray, Z: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights with entries below PRUNE zeroed and renormalised, and their value
    max_{z, z' in Z} ||z - z'||^2_{A(w)^+} (the unpruned weights and their value when pruning would
    lose a direction); InvalidInputError when neither makes the differences of ``Z`` estimable."""
    w = np.where(weights >= PRUNE, weights, 0.0)
    for cand in (w / w.sum(), weights / weights.sum()):
        value = max_pair_variance(X.T @ (cand[:, None] * X), Z, rcond=RCOND)
        if np.isfinite(value):
            return cand, value
    raise InvalidInputError("the design does not make the directions of the surviving items estimable")


@dataclass(frozen=True)
class RAGE(Algorithm[LinearBandit]):
    """RAGE (Fiez et al. 2019) with rounding tolerance ``eps`` in (0, 1]; see the module docstring.

    Parameters
    ----------
    eps : float
        Rounding tolerance in (0, 1] of Alg. 1: each phase takes at least r(eps) = ceil(2 p / eps) samples
        (p the design's support) and (1 + eps) times the continuous design's count (default 0.1).

    Raises
    ------
    InvalidInputError
        ``eps`` outside (0, 1].
    """

    eps: float = 0.1

    def __post_init__(self) -> None:
        if not (is_number(self.eps) and 0 < self.eps <= 1):
            raise InvalidInputError(f"eps (rounding tolerance) must lie in (0, 1], got {self.eps!r}")

    @property
    def name(self) -> str:
        """``rage``."""
        return "rage"

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """A phased elimination policy at confidence ``delta`` (deterministic: ``rng`` is unused)."""
        return phased_policy(env, _RAGEState(self, env, delta))


class _RAGEState(PhasedState):
    def __init__(self, algo: RAGE, env: LinearModel, delta: float) -> None:
        super().__init__(env, delta)
        self.algo = algo
        self._record: dict[str, Any] = {}

    def _log_term(self, k: int) -> float:
        """log(2 |Z|^2 / delta_k) with delta_k = delta / k^2."""
        return float(np.log(2.0 * self.Z.shape[0] ** 2 * k**2 / self.delta))

    def _plan_phase(self, budget: int) -> np.ndarray:
        k, eps, sigma2 = self.phase, self.algo.eps, self.sigma**2
        items = self.Z[self.active]
        design = od.transductive(self.X, items)
        weights, rho = pruned_design(self.X, items, design.weights)
        support = int(np.count_nonzero(weights))
        r_eps = int(np.ceil(2 * support / eps))
        n_k = max(int(np.ceil(2.0 * 4.0**k * (1.0 + eps) * rho * sigma2 * self._log_term(k))), r_eps)
        self._record = {"k": k, "delta_k": self.delta / k**2, "rho": rho, "support": support, "r_eps": r_eps,
                        "N": n_k, "threshold": 2.0**-k, "items": items}
        return od.round_design(weights, n_k)

    def _end_phase(self, stats: LinearStatistics) -> dict[str, Any]:
        rec, k = self._record, self.phase
        A = stats.A
        self.theta = np.linalg.pinv(A, rcond=RCOND, hermitian=True) @ stats.b
        scores = self.Z[self.active] @ self.theta
        self.active = self.active[np.max(scores) - scores < 2.0**-k]
        rec["max_var"] = max_pair_variance(A, rec.pop("items"), rcond=RCOND)
        rec["var_bound"] = 1.0 / (2.0 * 4.0**k * self.sigma**2 * self._log_term(k))
        return rec
