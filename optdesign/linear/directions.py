"""Direction sets of the min-max designs: pairwise differences and oracle directions.

XY-allocation and transductive designs without theta use Y = {z - z'} (y and -y identified); oracle designs use
Y = {(z* - z) / ((z* - z)^T theta)}, whose min-max value is H_LB (Soare et al. eq. 6) or rho* (Fiez et al.).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..validation import as_matrix, as_vector, unique_argmax

__all__ = ["oracle_directions", "pairwise_differences"]


def pairwise_differences(Z: np.ndarray) -> np.ndarray:
    """All differences z_i - z_j for i < j, without zero or repeated rows (y and -y are equivalent).

    Parameters
    ----------
    Z : array_like, shape (n, d)
        The items, one per row.

    Returns
    -------
    numpy.ndarray, shape (m, d)
        The distinct nonzero differences, m <= n (n - 1) / 2, each signed so that its first nonzero entry is
        positive, in lexicographic order (empty when the items are all equal).

    Raises
    ------
    InvalidInputError
        ``Z`` is not a finite 2-D array.
    """
    Z = as_matrix(Z, "Z")
    i, j = np.triu_indices(Z.shape[0], 1)
    return clean_directions(Z[i] - Z[j])


def clean_directions(Y: np.ndarray) -> np.ndarray:
    """The rows of Y without zeros, y and -y identified (first nonzero entry made positive), sorted and unique."""
    Y = Y[np.any(Y != 0, axis=1)]
    if Y.shape[0] == 0:
        return Y
    # identify y with -y: make the first nonzero coordinate positive, then drop duplicates
    first = np.argmax(Y != 0, axis=1)
    sign = np.sign(Y[np.arange(Y.shape[0]), first])
    return np.unique(Y * sign[:, None], axis=0)


def oracle_directions(Z: np.ndarray, theta: np.ndarray, name: str = "Z") -> tuple[np.ndarray, int]:
    """Directions (z* - z) / ((z* - z)^T theta) for z != z*, and the index of z* (must be unique).

    Their min-max value is H_LB (Soare et al. 2014 eq. 6, Z = X) or rho* (Fiez et al. 2019).

    Parameters
    ----------
    Z : array_like, shape (n, d)
        The items, n >= 2; z* = argmax_z z^T theta.
    theta : array_like, shape (d,)
        The parameter.
    name : str
        The name of ``Z`` in error messages.

    Returns
    -------
    directions : numpy.ndarray, shape (n - 1, d)
        (z* - z) / gap(z) for every other item z, in the order of ``Z``.
    best : int
        The index of z* in ``Z``.

    Raises
    ------
    InvalidInputError
        Fewer than two items, shapes that do not match, NaN/inf, or a tie for z*.
    """
    Z = as_matrix(Z, name)
    theta = as_vector(theta, "theta", length=Z.shape[1])
    if Z.shape[0] < 2:
        raise InvalidInputError(f"{name} must have at least two items for an identification problem")
    scores = Z @ theta
    best = unique_argmax(scores, f"{name} @ theta")
    others = np.delete(np.arange(Z.shape[0]), best)
    diff = Z[best] - Z[others]
    gaps = diff @ theta
    return diff / gaps[:, None], best
