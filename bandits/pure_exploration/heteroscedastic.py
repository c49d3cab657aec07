"""Best-arm identification among Gaussian arms of unequal variances, known to the learner or not.

The instance (:class:`bandits.pure_exploration.environment.HeteroscedasticBandit`) draws, for a batch of n pulls
of arm k, the reward sum and the sum of squares exactly in law (the sum is N(n mu_k, n sigma_k^2); the centred sum of
squares, independent of it, is sigma_k^2 chi^2_{n-1}), so a run keeps counts, sums and sums of squares per arm. The
problem's parameter is theta = (mu_1, ..., mu_K, sigma_1^2, ..., sigma_K^2); the estimate is the empirical means and
the maximum-likelihood variances. Three questions are asked of the same instances (Jourdan, Degenne & Kaufmann,
ALT 2023):

* ``unknown-variances`` (the instance's own), ``statistic="ev"``: the EV-GLR, whose pieces cost
  log(1 + (mu_k - x)^2 / sigma_hat_k^2) / 2 per pull (the Gaussian divergence minimised over the unknown variance);
  its oracle is the unknown-variance characteristic time, the lower bound a study reports;
* ``unknown-variances:statistic=plugin``: the known-variance pieces at the empirical variances;
* ``known-variances``: the known-variance pieces at the true variances (the baseline of the price of not knowing).

The ``theory`` threshold is delta-correct for each (:mod:`bandits.pure_exploration.variance_bounds` for unknown
variances; Kaufmann & Koolen's :class:`bandits.core.stopping.Kk21Threshold` for known ones); ``practical`` is the
usual heuristic. Pieces and oracles: :mod:`optdesign.identification.variances`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InvalidInputError
from optdesign.identification import heteroscedastic_characteristic_time, heteroscedastic_pieces, variance_divergence
from optdesign.validation import as_count, as_vector

from .arm_pairs import ORACLE_TOL, ArmPairsProblem
from .environment import HeteroscedasticBandit
from .oracle import Oracle
from .variance_bounds import VarianceThreshold

if TYPE_CHECKING:
    from ..core.stopping import Threshold

__all__ = ["HeteroscedasticProblem"]

#: the statistics a learner who does not know the variances may use
STATISTICS = ("ev", "plugin")


class HeteroscedasticProblem(ArmPairsProblem):
    """Best-arm identification among Gaussian arms of unequal variances (module docstring).

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    statistic : str
        ``"ev"`` (default: the EV-GLR) or ``"plugin"``; ignored when the variances are known.
    sigmas : array_like, optional
        The standard deviations, when the learner knows them (None: unknown variances).

    Raises
    ------
    InvalidInputError
        Fewer than two arms, an unknown statistic, or sigmas that are not positive numbers, one per arm; a
        parameter theta (:meth:`check_parameter`) with a variance that is not positive.
    """

    kind = "heteroscedastic"
    #: a batch observes two moments of the rewards per arm (sums and sums of squares)
    moments = 2

    def __init__(self, n_arms: int, statistic: str = "ev", sigmas: ArrayLike | None = None) -> None:
        self._K = as_count(n_arms, "n_arms (a K-armed problem needs at least two arms)", minimum=2)
        if statistic not in STATISTICS:
            raise InvalidInputError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")
        self.statistic = statistic
        self.sigmas = None
        if sigmas is not None:
            sd = as_vector(sigmas, "sigmas")
            if sd.shape != (self._K,) or not np.all(sd > 0):
                raise InvalidInputError(f"sigmas must be {self._K} positive numbers, one per arm")
            self.sigmas = sd

    @classmethod
    def of_environment(cls, env: HeteroscedasticBandit, statistic: str = "ev",
                       known: bool = False) -> HeteroscedasticProblem:
        """The problem a learner faces on the instance: its number of arms, and its sigmas when ``known``.

        Parameters
        ----------
        env : HeteroscedasticBandit
            The instance.
        statistic : str
            ``"ev"`` or ``"plugin"`` (unknown variances).
        known : bool
            The learner is given the variances.

        Returns
        -------
        HeteroscedasticProblem
            The problem.
        """
        return cls(env.n_arms, statistic, env.sigmas if known else None)

    @property
    def known(self) -> bool:
        """Whether the learner knows the variances."""
        return self.sigmas is not None

    @property
    def log_divergence(self) -> bool:
        """The pieces cost log(1 + gap^2 / sigma^2) / 2 per pull (EV-GLR) rather than gap^2 / (2 sigma^2)."""
        return not self.known and self.statistic == "ev"

    @property
    def dim(self) -> int:
        """2K: the means, then the variances."""
        return 2 * self._K

    def initial_pulls(self) -> np.ndarray:
        """Two pulls of every arm: the first pass that shows every arm's variance."""
        return np.full(self._K, 2, dtype=np.int64)

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        stats = np.asarray(sums, dtype=float).reshape(self._K, 2)
        N = np.maximum(np.asarray(counts, dtype=float), 1.0)
        mu = stats[:, 0] / N
        if self.sigmas is not None:
            return np.concatenate([mu, self.sigmas**2])
        var = np.maximum(stats[:, 1] / N - mu**2, 0.0)
        return np.concatenate([mu, np.where(var > 0, var, np.finfo(float).tiny)])

    def _split(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta = np.asarray(theta, dtype=float)
        return theta[: self._K], np.sqrt(theta[self._K:])

    def arm_means(self, mu: np.ndarray) -> np.ndarray:
        """The means: the first K entries of theta."""
        return np.asarray(mu, dtype=float)[: self._K]

    def arm_pieces(self, mu: np.ndarray, w: np.ndarray, best: int | None,
                   gradients: bool) -> tuple[int, np.ndarray, np.ndarray | None]:
        means, sds = self._split(mu)
        best, values, G, _ = heteroscedastic_pieces(means, sds, w, known_variances=not self.log_divergence,
                                                    best=best, gradients=gradients)
        return best, values, G

    def level_costs(self, mu: np.ndarray, level: float) -> np.ndarray:
        """g_k(tau) of every arm in the problem's model (:func:`optdesign.identification.variance_divergence`)."""
        means, sds = self._split(mu)
        return variance_divergence(means, sds, level, known_variances=not self.log_divergence)

    def level_threshold(self) -> VarianceThreshold | None:
        """The unknown-variance caps read per arm; None with the variances known (no per-arm theory threshold)."""
        return None if self.known else VarianceThreshold(self._K, self.log_divergence, per_arm=True)

    def check_parameter(self, mu: np.ndarray) -> np.ndarray:
        theta = super().check_parameter(mu)
        if not np.all(theta[self._K:] > 0):
            raise InvalidInputError("the variances (the last K entries of the parameter) must be positive")
        return theta

    def parameter_of(self, env: HeteroscedasticBandit) -> np.ndarray:
        """(env.means, env.sigmas^2)."""
        return self.check_parameter(np.concatenate([env.means, env.sigmas**2]))

    def top_m_oracle(self, mu: np.ndarray, m: int, *, bound: bool = False) -> Oracle:
        """T* and w* of the m best arms (:func:`optdesign.heteroscedastic_characteristic_time`: its equalisation for
        the best arm, its cutting planes for the top m; certified): with the problem's own pieces, or with ``bound``
        the unknown-variance T* when the learner does not know the variances (whatever its statistic).

        Parameters
        ----------
        mu : numpy.ndarray
            theta = (means, variances), distinct m-th and (m+1)-th means.
        m : int
            The answer's size.
        bound : bool
            The lower bound of the learner's model rather than its statistic's pieces.

        Returns
        -------
        Oracle
            T* (Garivier & Kaufmann's convention), w* and its certified lower bound.
        """
        known = self.known if bound else not self.log_divergence
        means, sds = self._split(self.check_parameter(mu))
        result = heteroscedastic_characteristic_time(means, sds, known_variances=known, m=m,
                                                     method="equalise" if m == 1 else "program",
                                                     tol=1e-6 if bound else ORACLE_TOL)
        return Oracle(T=result.value, weights=result.weights, lower_bound=result.lower_bound)

    def pair_threshold(self, n_pairs: int) -> Threshold:
        """:class:`VarianceThreshold` for unknown variances (its caps hold for every arm at once, whatever the
        pairs), Kaufmann & Koolen's over ``n_pairs`` pairs for known ones."""
        from ..core.stopping import Kk21Threshold

        return Kk21Threshold(self._K, n_pairs) if self.known else VarianceThreshold(self._K, self.log_divergence)
