"""Best-arm identification among Gaussian arms of unequal variances, known to the learner or not.

Arm k gives rewards N(mu_k, sigma_k^2). Moving its mean to x costs, per observation,

    known variances:    g_k(x) = (mu_k - x)^2 / (2 sigma_k^2)
    unknown variances:  g_k(x) = log(1 + (mu_k - x)^2 / sigma_k^2) / 2

(the second is KL(N(mu_k, sigma_k^2), N(x, v)) minimised over the alternative's variance v, attained at
v = sigma_k^2 + (mu_k - x)^2: Jourdan, Degenne & Kaufmann, "Dealing with unknown variances in best-arm
identification", ALT 2023). With i the best arm, the piece of arm j at weights w is

    f_j(w) = min over x in [mu_j, mu_i] of w_i g_i(x) + w_j g_j(x),

a minimum of functions linear in w: concave and positively homogeneous, and 1 / T* = max over the simplex of
min_j f_j(w) (Garivier & Kaufmann 2016, Thm 1, with these divergences). The minimiser x is the precision-weighted
mean for known variances; for unknown ones it is a real root of the cubic

    w_i (x - mu_i) (sigma_j^2 + (x - mu_j)^2) + w_j (x - mu_j) (sigma_i^2 + (x - mu_i)^2) = 0

(the stationarity condition times its positive denominators) or an end of the interval: every root in it and both
ends are compared, so the minimum is global although g_k is not convex
(:mod:`optdesign.identification.variance_kernels`, compiled).

T* is computed by Kelley's cutting planes on a linear program, certified by weak duality
(:mod:`optdesign.identification.cutting_planes`). The fast path (``method="equalise"``) is Garivier & Kaufmann's
equalisation with these pieces (:func:`optdesign.identification.variance_kernels.equalise`), certified the same way;
the tests hold it to the program.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from ..validation import as_count, as_tolerance, unique_argmax
from .cutting_planes import MAX_CUTS, cutting_plane_time, equalised_time, time_doc, top_m_time
from .pairs import IdentificationTime

__all__ = ["heteroscedastic_characteristic_time", "heteroscedastic_pieces", "variance_divergence"]

def variance_divergence(means: npt.ArrayLike, sigmas: npt.ArrayLike, x: npt.ArrayLike, *,
                        known_variances: bool) -> np.ndarray:
    """g_k(x): the cost per observation of moving a Gaussian arm's mean to x (module docstring), elementwise.

    Parameters
    ----------
    means, sigmas, x : array_like
        The arms' means and standard deviations and the moved means (broadcast together).
    known_variances : bool
        The learner knows sigma (the squared gap over 2 sigma^2), or not (half the log of 1 + gap^2 / sigma^2).

    Returns
    -------
    numpy.ndarray
        g_k(x) >= 0, zero at x = mu_k.
    """
    z = np.square(np.subtract(means, x)) / np.square(sigmas)
    return 0.5 * z if known_variances else 0.5 * np.log1p(z)


def heteroscedastic_pieces(means: npt.ArrayLike, sigmas: npt.ArrayLike, w: npt.ArrayLike, *,
                           known_variances: bool = False, best: int | None = None,
                           gradients: bool = True) -> tuple[int, np.ndarray, np.ndarray | None, np.ndarray]:
    """The pieces f_j(w) of best-arm identification on Gaussian arms of unequal variances (module docstring).

    Parameters
    ----------
    means : array_like, shape (K,)
        The means (the best is the first largest).
    sigmas : array_like, shape (K,)
        The standard deviations (positive).
    w : array_like, shape (K,)
        Nonnegative weights or counts.
    known_variances : bool
        The divergence of the known-variance model (default: unknown variances).
    best : int, optional
        The arm i the pieces put above the others (default: the first largest mean); a piece is 0 where
        mu_j >= mu_i (no move is needed).
    gradients : bool
        Also build the gradients (else None in their place).

    Returns
    -------
    tuple
        ``(best, values, gradients, closest)``: the arm i, f_j(w) for every other arm j in increasing index
        (shape (K - 1,)), their gradients g_k(x_j) (shape (K - 1, K), zero outside arms i and j), and the closest
        common mean x_j of each piece.
    """
    from .variance_kernels import pair_pieces  # numba, on first use

    mu, sd, wt = (np.asarray(v, dtype=float) for v in (means, sigmas, w))
    i = int(np.argmax(mu)) if best is None else int(best)
    values, x, gi, gj = pair_pieces(mu, sd * sd, wt, i, not known_variances)
    if not gradients:
        return i, values, None, x
    others = np.delete(np.arange(mu.size), i)
    G = np.zeros((others.size, mu.size))
    G[:, i] = gi
    G[np.arange(others.size), others] = gj
    return i, values, G, x


def _values_and_gradients(mu: np.ndarray, sd: np.ndarray, w: np.ndarray,
                          known_variances: bool) -> tuple[np.ndarray, np.ndarray]:
    _, values, G, _ = heteroscedastic_pieces(mu, sd, w, known_variances=known_variances)
    assert G is not None
    return values, G


def _check_instance(means: npt.ArrayLike, sigmas: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = np.asarray(means, dtype=float), np.asarray(sigmas, dtype=float)
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise InvalidInputError("means must be a vector of at least two finite numbers")
    if sd.shape != mu.shape or not np.all(np.isfinite(sd)) or not np.all(sd > 0):
        raise InvalidInputError(f"sigmas must be {mu.size} positive finite numbers, one per arm, got {sd.tolist()!r}")
    return mu, sd


@time_doc
def heteroscedastic_characteristic_time(means: npt.ArrayLike, sigmas: npt.ArrayLike, *,
                                        known_variances: bool = False, m: int = 1, method: str = "program",
                                        solver: str | None = None, tol: float = 1e-6,
                                        max_cuts: int = MAX_CUTS) -> IdentificationTime:
    """T* and w* of best-arm (or top-m) identification on Gaussian arms of unequal variances, certified (module
    docstring).

    Parameters
    ----------
    means : array_like, shape (K,)
        The means, with a unique largest (m = 1) or distinct m-th and (m+1)-th largest.
    sigmas : array_like, shape (K,)
        The standard deviations.
    known_variances : bool
        The learner knows the variances (default False: the unknown-variance lower bound, which is larger).
    m : int
        The answer's size: 1, the best arm; m > 1, the m best arms, whose pieces are the pairs (i among them, j
        outside), by cutting planes only.
    method : str
        ``"program"`` (default): the cutting-plane linear program; ``"equalise"``: the fast path, Garivier &
        Kaufmann's equalisation with these pieces (:func:`optdesign.identification.variance_kernels.equalise`, a
        millisecond), certified the same way by weak duality with the multipliers 1 / g_j(x_j) that are optimal at
        its weights.
    %(program)s

    Raises
    ------
    InvalidInputError
        Means that are not finite or tie for the largest (the m-th largest), sigmas that are not positive, one per
        arm, m outside [1, K), or an unknown method (the equalisation for m > 1).
    SolverError
        The linear program was not solved.

    Examples
    --------
    >>> import optdesign as od
    >>> r = od.heteroscedastic_characteristic_time([1.0, 0.0], [1.0, 2.0], known_variances=True)
    >>> round(r.value, 3)  # two arms: 2 (sigma_1 + sigma_2)^2 / gap^2
    18.0
    """
    mu, sd = _check_instance(means, sigmas)
    tol = as_tolerance(tol)
    max_cuts = as_count(max_cuts, "max_cuts", minimum=1)
    if method not in ("program", "equalise"):
        raise InvalidInputError(f"method must be 'program' or 'equalise', got {method!r}")
    if isinstance(m, bool) or m != 1:
        return top_m_time(lambda w, i: heteroscedastic_pieces(mu, sd, w, known_variances=known_variances, best=i)[1:3],
                          mu, m, method, solver=solver, tol=tol, max_cuts=max_cuts)
    best = unique_argmax(mu, "means")
    if method == "equalise":
        from .variance_kernels import equalise

        start = time.perf_counter()
        w, _ = equalise(mu, sd * sd, best, not known_variances)
        values, G = _values_and_gradients(mu, sd, w, known_variances)
        return equalised_time(w, values, G, best, "equalisation", start)
    return cutting_plane_time(lambda w: _values_and_gradients(mu, sd, w, known_variances), mu.size, best,
                              solver=solver, tol=tol, max_cuts=max_cuts)
