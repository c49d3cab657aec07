"""The divergences of one-parameter exponential families in the mean parameter, and the cvxpy form of the pieces
they give.

A family's divergence is the Bregman divergence of the convex conjugate phi of its log-partition function, written in
the means: d(x, y) = phi(x) - phi(y) - phi'(y) (x - y). Moving two arms i, j to a common mean at least cost, with
weights w_i, w_j, puts them at their weighted mean m = P / W (P = w_i x_i + w_j x_j, W = w_i + w_j), so

    f_ij(w) = inf_lambda w_i d(x_i, lambda) + w_j d(x_j, lambda) = w_i phi(x_i) + w_j phi(x_j) - W phi(P / W),

a linear function minus the perspective of phi: concave in w, and a disciplined convex expression for each family.

=============  ===================================  =======================================================
family         phi(x)                               W phi(P / W) in cvxpy
=============  ===================================  =======================================================
gaussian       x^2 / (2 sigma^2)                    quad_over_lin(P, W) / (2 sigma^2)
bernoulli      x log x + (1 - x) log(1 - x)         rel_entr(P, W) + rel_entr(W - P, W)
poisson        x log x - x                          rel_entr(P, W) - P
exponential    -log x - 1 (x the mean)              rel_entr(W, P) - W
=============  ===================================  =======================================================
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.special import xlogy

from .._lazy import cp
from ..errors import InvalidInputError

__all__ = ["FAMILIES", "Family", "check_family", "check_means", "divergence", "phi", "phi_perspective"]

Family = Literal["gaussian", "bernoulli", "poisson", "exponential"]
#: the families, as their names
FAMILIES: tuple[str, ...] = ("gaussian", "bernoulli", "poisson", "exponential")


def check_family(family: object, sigma: float = 1.0) -> tuple[Family, float]:
    """The family's name and the Gaussian sigma, checked.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    sigma : float
        The Gaussian arms' standard deviation (positive; read by the Gaussian family only).

    Returns
    -------
    tuple
        ``(family, sigma)``.

    Raises
    ------
    InvalidInputError
        An unknown family, or a sigma that is not a positive finite number.
    """
    if family not in FAMILIES:
        raise InvalidInputError(f"unknown family {family!r}; valid: {', '.join(FAMILIES)}")
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not (np.isfinite(sigma) and sigma > 0):
        raise InvalidInputError(f"sigma must be a positive number, got {sigma!r}")
    return family, float(sigma)  # type: ignore[return-value]


def check_means(means: Any, family: Family, *, closed: bool = False) -> np.ndarray:
    """The arms' means as a finite vector inside the family's mean space (or its closure: estimates).

    Parameters
    ----------
    means : array_like, shape (K,)
        The means.
    family : str
        The family (Bernoulli: (0, 1); Poisson and exponential: positive; Gaussian: any real).
    closed : bool
        Accept the boundary an estimate can reach (Bernoulli 0 and 1, a Poisson 0), where the divergences from the
        mean are finite.

    Returns
    -------
    numpy.ndarray
        The means as floats.

    Raises
    ------
    InvalidInputError
        Not a vector of at least two finite numbers, or a mean outside the family's open mean space (where the
        divergences are infinite or undefined).
    """
    mu = np.asarray(means, dtype=float) if not isinstance(means, str) else np.array([np.nan])
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise InvalidInputError("means must be a vector of at least two finite numbers")
    if family == "bernoulli" and not (np.all((mu >= 0) & (mu <= 1)) if closed else np.all((mu > 0) & (mu < 1))):
        raise InvalidInputError(f"Bernoulli means must lie {'in [0, 1]' if closed else 'strictly between 0 and 1'}")
    if family == "poisson" and not (np.all(mu >= 0) if closed else np.all(mu > 0)):
        raise InvalidInputError(f"poisson means must be {'nonnegative' if closed else 'positive'}")
    if family == "exponential" and not np.all(mu > 0):
        raise InvalidInputError("exponential means must be positive")
    return mu


def phi(x: np.ndarray, family: Family, sigma: float = 1.0) -> np.ndarray:
    """The conjugate phi(x) of the family's log-partition function at means x (module table).

    Parameters
    ----------
    x : numpy.ndarray
        Means inside the family's mean space.
    family : str
        The family.
    sigma : float
        The Gaussian sigma.

    Returns
    -------
    numpy.ndarray
        phi(x), elementwise.
    """
    x = np.asarray(x, dtype=float)
    if family == "gaussian":
        return np.asarray(x**2 / (2.0 * sigma**2))
    if family == "bernoulli":
        return np.asarray(xlogy(x, x) + xlogy(1.0 - x, 1.0 - x))
    if family == "poisson":
        return np.asarray(xlogy(x, x) - x)
    return np.asarray(-np.log(x) - 1.0)


def divergence(x: npt.ArrayLike, y: npt.ArrayLike, family: Family, sigma: float = 1.0) -> np.ndarray:
    """d(x, y): the KL divergence between the family's laws of means x and y.

    Parameters
    ----------
    x, y : numpy.ndarray
        Means (broadcast together).
    family : str
        The family.
    sigma : float
        The Gaussian sigma.

    Returns
    -------
    numpy.ndarray
        d(x, y) >= 0, elementwise.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if family == "gaussian":
        return np.asarray((x - y) ** 2 / (2.0 * sigma**2))
    # differences of logarithms: at y close to x their rounding can fall below 0, which d never does
    if family == "bernoulli":  # written with xlogy so that 0 log 0 = 0 at the boundary
        d = xlogy(x, x) - xlogy(x, y) + xlogy(1.0 - x, 1.0 - x) - xlogy(1.0 - x, 1.0 - y)
    elif family == "poisson":
        d = xlogy(x, x) - xlogy(x, y) - x + y
    else:  # r - 1 - log r at r = x / y, which grows as r at r = inf (y = 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = x / y
            d = np.where(np.isinf(r), np.inf, r - 1.0 - np.log(r))
    return np.asarray(np.maximum(d, 0.0))


def phi_perspective(P: Any, W: Any, family: Family, sigma: float = 1.0) -> Any:
    """W phi(P / W) as a convex cvxpy expression of affine P and W (module table).

    Parameters
    ----------
    P, W : cvxpy.Expression
        Affine vectors of one length: weighted sums of two means and the sums of their weights.
    family : str
        The family.
    sigma : float
        The Gaussian sigma.

    Returns
    -------
    cvxpy.Expression
        The perspective, jointly convex in (P, W).
    """
    if family == "gaussian":  # quad_over_lin takes a scalar denominator: one atom per entry
        return cp.hstack([cp.quad_over_lin(P[k], W[k]) for k in range(P.shape[0])]) / (2.0 * sigma**2)
    if family == "bernoulli":
        return cp.rel_entr(P, W) + cp.rel_entr(W - P, W)
    if family == "poisson":
        return cp.rel_entr(P, W) - P
    return cp.rel_entr(W, P) - W
