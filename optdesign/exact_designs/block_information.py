"""The information of a design whose runs fall in groups (blocks, whole plots), and the price of changing it.

Model: y = X beta + Z gamma + eps, Z (N x b) the indicator of the runs' groups, eps ~ (0, sigma^2 I). Group g holds
n_g runs, rows X_g, column sums s_g = X_g^T 1. Every information matrix here has the form

    M = sum_g X_g^T (I - c_g 1 1^T) X_g = X^T X - sum_g c_g s_g s_g^T,

with one shrinkage c_g per group:

* fixed group effects (gamma unknown constants): c_g = 1 / n_g, the within-group centering, so that
  M = X^T (I - P_Z) X, P_Z the projection on the columns of Z; beta must then leave out the intercept (and any
  combination of its columns that is constant), which the block effects absorb;
* random group effects (gamma ~ (0, eta sigma^2 I), eta = sigma_g^2 / sigma^2 >= 0): the generalised least
  squares information X^T V^{-1} X, V = I + eta Z Z^T, whose group blocks invert to
  V_g^{-1} = I - (eta / (1 + eta n_g)) 1 1^T, so c_g = eta / (1 + eta n_g): 0 at eta = 0 (no grouping), rising to
  1 / n_g as eta grows (M falls, in the Loewner order, to the fixed-effect information).

Since 0 <= c_g <= 1 / n_g, I - c_g 1 1^T lies between I and I - 11^T / n_g, so X^T (I - P_Z) X <= M <= X^T X: the
grouping only removes information (:mod:`optdesign.exact_designs.blocked` turns this into certified bounds).

A change of some runs is M' = M + U C U^T with U (p x r) and C (r x r, symmetric, possibly singular). With
G = U^T M^{-1} U and Q = U^T M^{-1} B M^{-1} U (Sylvester's determinant identity and Woodbury's, in the form
that needs no inverse of C):

    det M' / det M = det(I + C G),    tr(B M'^{-1}) = tr(B M^{-1}) - tr((I + C G)^{-1} C Q).

One run of group g moved from x_i to x_j is r = 3, U = [x_j, x_i, s_g], C = diag(1, -1, 0) - c_g (a a^T - e3 e3^T),
a = (1, -1, 1) (the search prices it, for any number of groupings, as :mod:`optdesign.exact_designs.group_structure`
says); two runs of groups g1 != g2 exchanged (x1 in g1, x2 in g2, delta = x2 - x1) leave X^T X alone and are r = 3, U =
[s_g1, s_g2, delta], C = -c_g1 ((1, 0, 1)(1, 0, 1)^T - e1 e1^T) - c_g2 ((0, 1, -1)(0, 1, -1)^T - e2 e2^T). Both are
priced for many moves at once from G and Q stacked (``low_rank_gains``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import cholesky

from ..errors import InvalidInputError
from ..validation import as_matrix, real_array
from .criteria import MIN_DET_RATIO, ExactCriterion, ExactDCriterion, ExactLinearCriterion

__all__ = ["BlockEffects", "blocked_information"]

#: how the groups enter the model: unknown constants, or random effects of variance ratio eta
BlockEffects = Literal["fixed", "random"]
#: the change of M when two runs of groups g1, g2 are exchanged: C = -(c_g1 SWAP_1 + c_g2 SWAP_2)
SWAP_1 = np.outer([1.0, 0.0, 1.0], [1.0, 0.0, 1.0]) - np.diag([1.0, 0.0, 0.0])
SWAP_2 = np.outer([0.0, 1.0, -1.0], [0.0, 1.0, -1.0]) - np.diag([0.0, 1.0, 0.0])


def shrinkage(sizes: np.ndarray, effects: str, eta: float) -> np.ndarray:
    """c_g of every group (module docstring): 1 / n_g for fixed effects, eta / (1 + eta n_g) for random ones."""
    n = sizes.astype(float)
    return 1.0 / n if effects == "fixed" else eta / (1.0 + eta * n)


def group_sums(X: np.ndarray, rows: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """s_g = X_g^T 1 of every group (b x p), the runs ``rows`` listed group after group."""
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    sums: np.ndarray = np.add.reduceat(X[rows], offsets, axis=0)
    return sums


def information(X: np.ndarray, rows: np.ndarray, sizes: np.ndarray, shrink: np.ndarray) -> np.ndarray:
    """M = X^T X - sum_g c_g s_g s_g^T over the runs ``rows`` (group after group), symmetrised."""
    Xr = X[rows]
    S = group_sums(X, rows, sizes)
    M = Xr.T @ Xr - (S * shrink[:, None]).T @ S
    out: np.ndarray = (M + M.T) / 2
    return out


def criterion_values(M: np.ndarray, n: int, region: np.ndarray) -> dict[str, float]:
    """The D, A and I values of the normalised M / n (I over the region of moment matrix ``region``).

    Raises
    ------
    LinAlgError
        M is not positive definite.
    """
    L = cholesky(M, lower=True, check_finite=False)
    return {"D": ExactDCriterion().value(L, n), "A": ExactLinearCriterion(np.eye(M.shape[0]), "A").value(L, n),
            "I": ExactLinearCriterion(region, "I").value(L, n)}


def low_rank_gains(criterion: ExactCriterion, C: np.ndarray, G: np.ndarray, Q: np.ndarray | None) -> np.ndarray:
    """Loss decreases of the changes M + U C U^T, stacked: C (r x r or P x r x r), G and Q (P x r x r, module
    docstring); -inf where det M' / det M <= MIN_DET_RATIO (M' numerically singular). D: log det(I + C G); the
    linear criteria: tr((I + C G)^{-1} C Q)."""
    A = np.eye(G.shape[-1]) + C @ G
    ratio = _det3(A) if A.shape[-1] == 3 else np.linalg.det(A)
    out = np.full(ratio.shape, -np.inf)
    ok = ratio > MIN_DET_RATIO
    if Q is None:
        out[ok] = np.log(ratio[ok])
    else:
        CQ = np.broadcast_to(C @ Q, Q.shape)
        out[ok] = np.trace(np.linalg.solve(A[ok], CQ[ok]), axis1=1, axis2=2)
    return out


def _det3(A: np.ndarray) -> np.ndarray:
    """det of stacked 3 x 3 matrices by the rule of Sarrus (the moves and exchanges priced here are rank three;
    cheaper than a batched LU for the few dozen matrices of a call)."""
    det: np.ndarray = (A[..., 0, 0] * (A[..., 1, 1] * A[..., 2, 2] - A[..., 1, 2] * A[..., 2, 1])
                       - A[..., 0, 1] * (A[..., 1, 0] * A[..., 2, 2] - A[..., 1, 2] * A[..., 2, 0])
                       + A[..., 0, 2] * (A[..., 1, 0] * A[..., 2, 1] - A[..., 1, 1] * A[..., 2, 0]))
    return det


def as_sizes(sizes: ArrayLike, name: str) -> np.ndarray:
    """Runs per group: a nonempty list of positive whole numbers, as int64."""
    try:
        arr = real_array(sizes)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be the numbers of runs of the groups: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidInputError(f"{name} must be a nonempty list of runs per group, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} contains NaN or infinite entries")
    bad = np.flatnonzero((arr < 1) | (arr != np.round(arr)) | (arr > 2**31))
    if bad.size:
        g = int(bad[0])
        raise InvalidInputError(f"{name} must hold positive whole numbers of runs (every group at least one run), "
                                f"got {arr[g]!r} for group {g}")
    return arr.astype(np.int64)


def as_eta(eta: object, name: str = "eta") -> float:
    """The variance ratio eta = sigma_group^2 / sigma^2: a finite real number >= 0."""
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.integer, np.floating)) or not np.isfinite(eta) \
            or eta < 0:
        raise InvalidInputError(f"{name} (the variance ratio sigma_group^2 / sigma^2) must be a finite number >= 0, "
                                f"got {eta!r}")
    return float(eta)


def blocked_information(X: ArrayLike, rows: ArrayLike, block_sizes: ArrayLike,
                        block_effects: BlockEffects = "random", eta: float = 1.0) -> np.ndarray:
    """The information matrix of a grouped design: sum_g X_g^T (I - c_g 1 1^T) X_g over its groups.

    Fixed group effects: c_g = 1 / n_g, the within-group centred X^T (I - P_Z) X; random ones: c_g =
    eta / (1 + eta n_g), the generalised least squares X^T V^{-1} X with V = I + eta Z Z^T (Goos 2002). The
    columns of X are taken as they are: with fixed effects an intercept column (or any constant combination of
    columns) has no information, so the matrix is singular unless X leaves it out.

    Parameters
    ----------
    X : array_like
        The candidates' model matrix, K x p, one row per candidate.
    rows : array_like of int
        The candidate of every run (N indices into X), the runs of group 0 first, then those of group 1, ...
    block_sizes : array_like of int
        Runs per group (positive, summing to N).
    block_effects : {"fixed", "random"}
        How the groups enter the model.
    eta : float
        Random effects only: the variance ratio sigma_group^2 / sigma^2 >= 0 (0: no grouping).

    Returns
    -------
    numpy.ndarray
        The p x p information matrix (unnormalised: the runs count one each).

    Raises
    ------
    InvalidInputError
        X not a finite matrix, rows not N valid indices, block sizes not positive whole numbers summing to N,
        an unknown ``block_effects``, eta negative or not finite.

    Examples
    --------
    A slope on {-1, 1} in two blocks of two: balanced blocks lose nothing; blocks that confound the slope lose it
    all with fixed effects, and part of it with random ones (eta = 1: c = 1/3, 4 - 8/3).

    >>> import numpy as np
    >>> from optdesign.exact_designs import blocked_information
    >>> X = np.array([[-1.0], [1.0]])
    >>> blocked_information(X, [0, 1, 0, 1], [2, 2], "fixed")
    array([[4.]])
    >>> blocked_information(X, [0, 0, 1, 1], [2, 2], "fixed")
    array([[0.]])
    >>> blocked_information(X, [0, 0, 1, 1], [2, 2], "random", eta=1.0).round(6)
    array([[1.333333]])
    """
    Xa = as_matrix(X, "X")
    sizes = as_sizes(block_sizes, "block_sizes")
    if block_effects not in ("fixed", "random"):
        raise InvalidInputError(f"block_effects must be 'fixed' or 'random', got {block_effects!r}")
    c = shrinkage(sizes, block_effects, as_eta(eta))
    idx = np.asarray(rows)
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or idx.size != int(sizes.sum()) \
            or (idx.size and (idx.min() < 0 or idx.max() >= Xa.shape[0])):
        raise InvalidInputError(f"rows must be {int(sizes.sum())} candidate indices in [0, {Xa.shape[0]}) (one per "
                                f"run, block sizes summing to it), got {np.asarray(rows)!r}")
    return information(Xa, idx, sizes, c)
