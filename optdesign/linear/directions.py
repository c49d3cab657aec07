"""Direction sets of the min-max designs: pairwise differences and oracle directions.

XY-allocation and transductive designs without theta use Y = {z - z'} (y and -y identified); oracle designs use
Y = {(z* - z) / ((z* - z)^T theta)}, whose min-max value is H_LB (Soare et al. eq. 6) or rho* (Fiez et al.).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..validation import as_matrix, as_vector, unique_argmax


def pairwise_differences(Z: np.ndarray) -> np.ndarray:
    """All differences z_i - z_j for i < j, without zero or repeated rows (y and -y are equivalent)."""
    Z = as_matrix(Z, "Z")
    i, j = np.triu_indices(Z.shape[0], 1)
    return clean_directions(Z[i] - Z[j])


def clean_directions(Y: np.ndarray) -> np.ndarray:
    Y = Y[np.any(Y != 0, axis=1)]
    if Y.shape[0] == 0:
        return Y
    # identify y with -y: make the first nonzero coordinate positive, then drop duplicates
    first = np.argmax(Y != 0, axis=1)
    sign = np.sign(Y[np.arange(Y.shape[0]), first])
    return np.unique(Y * sign[:, None], axis=0)


def oracle_directions(Z: np.ndarray, theta: np.ndarray, name: str = "Z") -> tuple[np.ndarray, int]:
    """Directions (z* - z) / ((z* - z)^T theta) for z != z*, and the index of z* (must be unique)."""
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
