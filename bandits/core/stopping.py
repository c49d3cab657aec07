"""Stopping thresholds beta(t, delta) for GLR statistics, in one unit convention.

Every stopping rule here has the form "stop when Lambda_t > beta(t, delta)" where Lambda_t is a
Gaussian GLR in natural units, Lambda = min_{z != z_hat} Delta_hat(z)^2 / (2 sigma^2 ||z_hat - z||^2_{A^{-1}})
(:mod:`bandits.core.statistics`). Confidence-set tests of the papers are rewritten in these units:
"c ||y||_{A^{-1}} sqrt(L) <= Delta_hat(y)" with c = 2 sigma sqrt(2) is "Lambda >= c^2 L / (2 sigma^2) = 4 L".

Thresholds are frozen dataclasses (results and study files record them), named in :mod:`bandits.core.thresholds`:

* :class:`PracticalThreshold`: log((1 + log t) / delta), the heuristic of Garivier & Kaufmann
  (2016, Sec. 6) used by most Track-and-Stop experiments; not proven delta-correct.
* :class:`SoareThreshold`: Soare et al. (2014) eq. 11, 4 log(c' t^2 K^2 / delta), c' = 6/pi^2 as printed (Prop. 1),
  K the number of items; valid for a fixed (non-adaptive) design.
* :class:`BilinearThreshold`: Rizk et al. (2021) stopping condition (S1), 4 log(6 m^2 t^2 K^4 / (delta pi)), t counted
  in rounds and m directed edges (printed form).
* :class:`LinearTheoryThreshold`: delta-correct under *adaptive* sampling. By the self-normalised
  bound of Abbasi-Yadkori et al. (2011, Thm 1) with V = eta A_0 (A_0 the information of the
  initial spanning pulls) and A_t >= A_0,
  ||theta_hat - theta||^2_{A_t} / (2 sigma^2) <= (1 + eta)(log(1/delta) + 1/2 log det(I + A_0^{-1} A_t / eta))
  for all t with probability 1 - delta, and a wrong recommendation forces Lambda_t below that
  quantity; hence beta = its right-hand side.
* :class:`Kk21Threshold`: delta-correct for Gaussian K-armed best-arm identification under any sampling rule,
  2 C_G(log((K - 1) / delta) / 2) + 4 log(4 + log(t / 2)), from the Gaussian mixture-martingale deviation
  inequality of Kaufmann & Koolen (2021) as restated for best-arm identification by Jourdan & Degenne (2022,
  TTUCB) and later Top-Two papers; C_G is :func:`gaussian_calibration`.
* :class:`Kk21ExpFamilyThreshold`: the same for any one-parameter exponential family, 2 T(log((K - 1) / delta) / 2)
  + 6 log(1 + log(t / 2)), T the exponential-family calibration of the same paper (:func:`exponential_calibration`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

__all__ = ["BilinearThreshold", "Kk21ExpFamilyThreshold", "Kk21Threshold", "LinearTheoryThreshold",
           "PracticalThreshold", "SoareThreshold", "Threshold", "exponential_calibration", "gaussian_calibration"]


def check_delta(delta: float) -> float:
    """A confidence level in (0, 1).

    Parameters
    ----------
    delta : float
        The confidence level to check (anything ``float`` converts).

    Returns
    -------
    float
        ``delta`` as a float.

    Raises
    ------
    InvalidInputError
        Not a number, or outside the open interval (0, 1).
    """
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InvalidInputError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not (0.0 < value < 1.0):
        raise InvalidInputError(f"delta must lie in (0, 1), got {delta!r}")
    return value


@dataclass(frozen=True)
class Threshold:
    """Base class: calling it returns beta(t, delta), which the GLR statistic must exceed for the run to stop; ``t``
    is the time (samples, or rounds for :class:`BilinearThreshold`), ``delta`` in (0, 1), ``A`` the current
    information matrix (read by :class:`LinearTheoryThreshold` only)."""

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        raise NotImplementedError

    def log_log_form(self, delta: float) -> tuple[float, float, float, float, float] | None:
        """Constants (a, c, b, floor, s) with beta(t, delta) = a + c log(b + log(max(t, floor) / s)) for every t, when
        the threshold has that form and reads no matrix (compiled runs evaluate it so); None otherwise.

        Parameters
        ----------
        delta : float
            The confidence level the constants are for.

        Returns
        -------
        tuple of five floats, or None
            (a, c, b, floor, s), or None when the threshold has no such form.
        """
        return None

    @property
    def name(self) -> str:
        """Short name (``practical``, ``soare``, ``bilinear``, ``lineartheory``)."""
        return type(self).__name__.removesuffix("Threshold").lower()

    def describe(self) -> dict[str, Any]:
        """The threshold as a flat record (its name and constants) for result tables.

        Returns
        -------
        dict
            ``{"threshold": name, field: value, ...}``.
        """
        return {"threshold": self.name, **asdict(self)}


@dataclass(frozen=True)
class PracticalThreshold(Threshold):
    """beta(t, delta) = log((1 + log t) / delta)."""

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        return float(np.log((1.0 + np.log(max(t, 1.0))) / delta))

    def log_log_form(self, delta: float) -> tuple[float, float, float, float, float]:
        """-log delta + log(1 + log max(t, 1))."""
        return -float(np.log(delta)), 1.0, 1.0, 1.0, 1.0


@dataclass(frozen=True)
class SoareThreshold(Threshold):
    """beta(t, delta) = 4 log(c' t^2 K^2 / delta), c' = 6 / pi^2 (Soare et al. 2014, eq. 11).

    Parameters
    ----------
    n_items : int
        K, the number of items (rows of Z).
    """

    n_items: int

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        return float(4.0 * np.log(6.0 / np.pi**2 * max(t, 1.0) ** 2 * self.n_items**2 / delta))


@dataclass(frozen=True)
class BilinearThreshold(Threshold):
    """beta(t, delta) = 4 log(6 m^2 t^2 K^4 / (delta pi)), t in rounds (Rizk et al. 2021, (S1)).

    Parameters
    ----------
    n_edges : int
        m, the number of directed edges of the graph.
    n_node_arms : int
        K, the number of arms of one node.
    """

    n_edges: int
    n_node_arms: int

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        return float(4.0 * np.log(6.0 * self.n_edges**2 * max(t, 1.0) ** 2 * self.n_node_arms**4 / (delta * np.pi)))


@dataclass(frozen=True)
class LinearTheoryThreshold(Threshold):
    """beta = (1 + eta)(log(1/delta) + 1/2 log det(I + A_0^{-1} A_t / eta)); delta-correct for adaptive sampling.

    Parameters
    ----------
    A0 : tuple of tuple of float
        The information matrix A_0 of the initial spanning pulls (d x d), as nested tuples (hashable,
        serialisable); :meth:`from_matrix` builds it from an array.
    eta : float
        The regularisation V = eta A_0 of the self-normalised bound (> 0).
    """

    A0: tuple[tuple[float, ...], ...]
    eta: float = 1.0

    @classmethod
    def from_matrix(cls, A0: np.ndarray, eta: float = 1.0) -> LinearTheoryThreshold:
        """The threshold for the initial information matrix ``A0`` given as an array.

        Parameters
        ----------
        A0 : array_like, shape (d, d)
            Information matrix of the initial spanning pulls (positive definite).
        eta : float
            Regularisation level (> 0); 1 by default.

        Returns
        -------
        LinearTheoryThreshold
            The threshold, with A0 stored as nested tuples.

        Raises
        ------
        InvalidInputError
            ``eta`` is not a positive finite number.
        """
        if not (np.isfinite(eta) and eta > 0):
            raise InvalidInputError(f"eta must be positive, got {eta}")
        return cls(A0=tuple(map(tuple, np.asarray(A0, dtype=float))), eta=float(eta))

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        if A is None:
            raise InvalidInputError("LinearTheoryThreshold needs the current information matrix A")
        A0 = np.asarray(self.A0)
        _, logdet = np.linalg.slogdet(np.eye(A0.shape[0]) + np.linalg.solve(A0, A) / self.eta)
        return float((1.0 + self.eta) * (np.log(1.0 / delta) + 0.5 * logdet))

    def describe(self) -> dict[str, Any]:
        """Name and eta only (A0 is a d x d matrix, too large for a table cell)."""
        return {"threshold": self.name, "eta": self.eta}


def _g_gaussian(lam: float) -> float:
    """g_G(lambda) = 2 lambda - 2 lambda log(4 lambda) + log zeta(2 lambda) - log(1 - lambda) / 2 on (1/2, 1)."""
    from scipy.special import zeta

    return float(2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam)) - 0.5 * np.log1p(-lam))


def check_calibration_argument(x: float) -> None:
    """Refuse an argument of a calibration function that is negative or not finite (InvalidInputError)."""
    if not (np.isfinite(x) and x >= 0):
        raise InvalidInputError(f"the calibration function needs a finite x >= 0, got {x!r}")


@lru_cache(maxsize=256)
def gaussian_calibration(x: float) -> float:
    """C_G(x) = min over lambda in (1/2, 1] of (g_G(lambda) + x) / lambda, the calibration of the Gaussian
    deviation inequality of Kaufmann & Koolen (2021), g_G as in :class:`Kk21Threshold`.

    The objective tends to infinity at both ends (zeta(2 lambda) at 1/2, -log(1 - lambda) / 2 at 1), so the
    minimum is interior: a grid over s = -log(1 - lambda) brackets it and a bounded scalar minimisation refines it
    (the parametrisation keeps lambda's distance to 1, about 1 / (2x), resolved for large x). For large x,
    C_G(x) = x + log(2x) / 2 + 5/2 - 2 log 4 + log zeta(2) + o(1) (the minimiser is lambda ~ 1 - 1 / (2x)).

    Parameters
    ----------
    x : float
        The argument (a log-inverse error level), nonnegative.

    Returns
    -------
    float
        C_G(x).

    Raises
    ------
    InvalidInputError
        ``x`` negative or not finite.
    """
    check_calibration_argument(x)
    from scipy.optimize import minimize_scalar

    def objective(s: float) -> float:
        lam = -np.expm1(-s)  # 1 - e^{-s}
        return (_g_gaussian(lam) + x) / lam

    grid = np.linspace(np.log(2.0) + 1e-9, 34.0, 400)
    values = [objective(s) for s in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return float(min(res.fun, values[i]))


@dataclass(frozen=True)
class Kk21Threshold(Threshold):
    """beta(t, delta) = 2 C_G(log((K - 1) / delta) / 2) + 4 log(4 + log(t / 2)), Gaussian K-armed bandits.

    Kaufmann & Koolen (2021) bound, for Gaussian arms of known variance and any sampling rule, the probability
    that for some t the sum over a set S of arms of N_a d(mu_hat_a, mu_a) - 2 log(4 + log N_a) exceeds
    |S| C_G(x / |S|) by e^{-x}, with C_G = :func:`gaussian_calibration` and
    g_G(lambda) = 2 lambda - 2 lambda log(4 lambda) + log zeta(2 lambda) - log(1 - lambda) / 2. A wrong
    recommendation needs the GLR of some pair (best, a) to exceed the deviation of those two arms; a union over
    the K - 1 pairs (x = log((K - 1) / delta)), |S| = 2, and concavity (log(4 + log N_b) + log(4 + log N_a)
    <= 2 log(4 + log(t / 2))) give this threshold, which makes the GLR stop delta-correct. The form is the one
    Jourdan & Degenne (2022, TTUCB) and later Top-Two papers state and use. A question whose wrong answers misorder
    other pairs takes the union over those (top m: the m (K - m) pairs of an arm of the m best and one outside).
    Other families: :class:`Kk21ExpFamilyThreshold`.

    Parameters
    ----------
    n_arms : int
        K, the number of arms (at least 2).
    pairs : int, optional
        The pairs the union runs over (default K - 1, best-arm identification).
    """

    n_arms: int
    pairs: int | None = None

    def __post_init__(self) -> None:
        as_count(self.n_arms, "n_arms (K, at least 2)", minimum=2)
        as_count(self.pairs if self.pairs is not None else 1, "pairs (of the union)")

    #: the calibration C of the deviation inequality (C_G here) and (c, b, floor) of the log-log term
    #: c log(b + log(max(t, floor) / 2))
    LOG_LOG: ClassVar[tuple[Callable[[float], float], float, float, float]] = (gaussian_calibration, 4.0, 4.0, 1.0)

    def _level(self, delta: float) -> float:
        """x / 2 = log(P / delta) / 2, the level of each of the P pairs of the union (P = K - 1 unless given)."""
        return 0.5 * float(np.log((self.n_arms - 1 if self.pairs is None else self.pairs) / delta))

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        x = self._level(delta)
        return 2.0 * gaussian_calibration(max(x, 0.0)) + 4.0 * float(np.log(4.0 + np.log(max(t, 1.0) / 2.0)))

    def log_log_form(self, delta: float) -> tuple[float, float, float, float, float]:
        """2 C(x) + c log(b + log(max(t, floor) / 2)), x = log(P / delta) / 2, with this class's calibration C
        and constants (:data:`LOG_LOG`)."""
        x = self._level(delta)
        calibration, c, b, floor = self.LOG_LOG
        return 2.0 * calibration(max(x, 0.0)), c, b, floor, 2.0

    @property
    def name(self) -> str:
        """``kk21``."""
        return "kk21"

    def describe(self) -> dict[str, Any]:
        """Name, K and, when given, the pairs of the union."""
        record = super().describe()
        if self.pairs is None:
            del record["pairs"]
        return record


def _h_inverse(x: float) -> float:
    """The inverse of h(u) = u - log u on [1, inf), for x >= 1: the root of u - log u = x in [1, x + log x + 1]."""
    from scipy.optimize import brentq

    if x <= 1.0:
        return 1.0
    return float(brentq(lambda u: u - np.log(u) - x, 1.0, x + np.log(x) + 1.0, xtol=1e-13, rtol=1e-15))


def _h_tilde(x: float, z: float = 1.5) -> float:
    """h~_z(x) = min over s in (0, log z] of e^s (x - log s), z in (1, e]: e^{1/u} u with u = h^{-1}(x) when
    x >= h(1 / log z) (the interior minimiser s = 1/u), else z (x - log log z) (the end s = log z); both branches
    equal z / log z at the switch."""
    if x >= 1.0 / np.log(z) + np.log(np.log(z)):
        u = _h_inverse(x)
        return float(np.exp(1.0 / u) * u)
    return float(z * (x - np.log(np.log(z))))


@lru_cache(maxsize=256)
def exponential_calibration(x: float) -> float:
    """T(x) = 2 h~_{3/2}((h^{-1}(1 + x) + log(2 zeta(2))) / 2), the calibration of the deviation inequality of
    Kaufmann & Koolen (2021) for one-parameter exponential families, with h(u) = u - log u (h^{-1} its inverse on
    [1, inf)) and h~_z(x) = min over s in (0, log z] of e^s (x - log s).

    The closed form of h~_z: e^{1/h^{-1}(x)} h^{-1}(x) if x >= h(1 / log z), else z (x - log log z) (continuous:
    both equal z / log z at the switch). For large x, T(x) = x + 3 log x + 3 + log(zeta(2) / 2) + o(1); the
    approximation x + 4 log(1 + x + sqrt(2x)) sometimes used for it lies above T only from x = 15.2 on.

    Parameters
    ----------
    x : float
        The argument (a log-inverse error level), nonnegative.

    Returns
    -------
    float
        T(x).

    Raises
    ------
    InvalidInputError
        ``x`` negative or not finite.
    """
    check_calibration_argument(x)
    return 2.0 * _h_tilde(0.5 * (_h_inverse(1.0 + x) + np.log(np.pi**2 / 3)))


@dataclass(frozen=True)
class Kk21ExpFamilyThreshold(Kk21Threshold):
    """beta(t, delta) = 2 T(log((K - 1) / delta) / 2) + 6 log(1 + log(t / 2)), K arms of one exponential family.

    Kaufmann & Koolen (2021) bound, for arms of a one-parameter exponential family and any sampling rule, the
    probability that for some t the sum over a set S of arms of N_a d(mu_hat_a, mu_a) - 3 log(1 + log N_a) exceeds
    |S| T(x / |S|) by e^{-x}, T = :func:`exponential_calibration`. As for :class:`Kk21Threshold`, a union over the
    K - 1 pairs (best, a), |S| = 2 and concavity of log(1 + log n) give this threshold, which makes the GLR stop
    delta-correct for Bernoulli (or any exponential-family) arms. The same calibration and the 3 log(1 + log n)
    per arm are those of the Bernoulli GLR test of Besson, Kaufmann, Maillard & Seznec (JMLR 2022).

    Parameters
    ----------
    n_arms : int
        K, the number of arms (at least 2).
    pairs : int, optional
        The pairs the union runs over (default K - 1, best-arm identification).
    """

    LOG_LOG: ClassVar[tuple[Callable[[float], float], float, float, float]] = (exponential_calibration, 6.0, 1.0, 2.0)

    def __call__(self, t: float, delta: float, A: np.ndarray | None = None) -> float:
        x = self._level(delta)
        return 2.0 * exponential_calibration(max(x, 0.0)) + 6.0 * float(np.log1p(np.log(max(t, 2.0) / 2.0)))
