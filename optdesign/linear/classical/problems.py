"""From the arguments of a public design function to a checked problem: the arms, the criterion, its fast path.

Every criterion but c/L needs arms that span R^d (otherwise A(w) is singular for every w). For c- and
L-optimality X may be rank deficient as long as each row of C is estimable, i.e. lies in the row space of X (the
range of X^T X); the problem is then solved in coordinates of that row space, X Q and C Q with Q (d x r)
orthonormal, which leaves every design's value unchanged. The region of the I-criterion becomes the factor C of
its moment matrix B = C^T C: for points z_j with weights rho_j, the QR factor of diag(sqrt(rho / sum rho)) Z; for a
given PSD matrix, its eigen-factor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import svd

from ...errors import InvalidInputError
from ...validation import as_arms, as_matrix, as_vector, check_scale, check_weights
from ..criteria import triangular_factor
from ..exchange import spanning_factor
from .criteria import RANGE_TOL, Criterion
from .kiefer import KieferCriterion
from .linear import LinearCriterion
from .subset import SubsetCriterion

__all__ = ["ClassicalProblem"]

#: from this many rows the arms are checked without a copy (:func:`optdesign.linear.exchange.spanning_factor`)
LARGE_ARMS = 2_000

#: the fast path of a problem: Frank–Wolfe, Elfving's LP, the SDP on a working set, or the D-optimal paths
FastPath = Literal["smooth", "elfving", "eigen", "kiefer-wolfowitz"]


@dataclass(frozen=True)
class ClassicalProblem:
    """A classical design problem, checked: arms (possibly reduced coordinates), criterion, fast path, extras."""

    #: the arms in the coordinates of the criterion
    X: np.ndarray
    #: the criterion (value, gradient, line search)
    criterion: Criterion
    #: which fast path solves it
    path: FastPath
    #: entries copied into the result's extras
    extras: dict = field(default_factory=dict)
    #: lower-triangular L with L L^T = X^T X when the check of X built it (it seeds the active set), else None
    factor: np.ndarray | None = None


def arms(X: ArrayLike) -> np.ndarray:
    """X as arms spanning R^d (without a copy from LARGE_ARMS rows)."""
    return checked_arms(X)[0]


def checked_arms(X: ArrayLike) -> tuple[np.ndarray, np.ndarray | None]:
    """X as arms spanning R^d and, from LARGE_ARMS rows (checked without a copy), L with L L^T = X^T X."""
    try:
        large = np.ndim(X) == 2 and np.shape(X)[0] >= LARGE_ARMS
    except ValueError:  # a ragged nested list: as_arms names the problem
        large = False
    return spanning_factor(X) if large else (as_arms(X), None)


def a_problem(X: ArrayLike) -> ClassicalProblem:
    """A-optimality: tr(A^{-1}), C = I_d."""
    Xa, factor = checked_arms(X)
    return ClassicalProblem(Xa, LinearCriterion(np.eye(Xa.shape[1]), "a-optimal"), "smooth", factor=factor)


def i_problem(X: ArrayLike, region: ArrayLike | None, region_weights: ArrayLike | None,
              moments: ArrayLike | None) -> ClassicalProblem:
    """I-optimality: tr(A^{-1} B), B the second moments of the region (the candidates, uniformly, by default)."""
    Xa, factor = checked_arms(X)
    d = Xa.shape[1]
    if moments is not None:
        if region is not None or region_weights is not None:
            raise InvalidInputError("give the region either as points (region, region_weights) or as moments, not both")
        C = _moment_factor(as_matrix(moments, "moments", n_cols=d), d)
    else:
        Z = Xa if region is None else check_scale(as_matrix(region, "region", n_cols=d), "region")
        rho = np.ones(Z.shape[0]) if region_weights is None else check_weights(region_weights, "region_weights")
        if rho.size != Z.shape[0]:
            raise InvalidInputError(f"region_weights must have one weight per region point ({Z.shape[0]}), "
                                    f"got {rho.size}")
        if region is None and region_weights is None and factor is not None:  # the candidates uniformly:
            C = factor.T / np.sqrt(Z.shape[0])  # from the check's L L^T = X^T X
        else:
            C = triangular_factor(Z, rho / rho.sum())
    return ClassicalProblem(Xa, LinearCriterion(C, "i-optimal"), "smooth", factor=factor)


def _moment_factor(B: np.ndarray, d: int) -> np.ndarray:
    """C with C^T C = B for a symmetric PSD d x d matrix B (eigen-factor; zero eigenvalues dropped)."""
    if B.shape != (d, d):
        raise InvalidInputError(f"moments must be a {d} x {d} matrix, got shape {B.shape}")
    scale = float(np.max(np.abs(B)))
    if scale == 0 or np.max(np.abs(B - B.T)) > 1e-10 * scale:
        raise InvalidInputError("moments must be a nonzero symmetric matrix")
    lam, U = np.linalg.eigh((B + B.T) / 2)
    if lam[0] < -1e-10 * lam[-1]:
        raise InvalidInputError(f"moments must be positive semidefinite; its smallest eigenvalue is {lam[0]:.3g}")
    keep = lam > 1e-14 * lam[-1]
    factor: np.ndarray = np.sqrt(lam[keep])[:, None] * U[:, keep].T
    return factor


def c_problem(X: ArrayLike, c: ArrayLike) -> ClassicalProblem:
    """c-optimality (c a vector) or L-optimality (c a matrix of rows): tr(C A^- C^T); X may be rank deficient."""
    Xa = check_scale(as_matrix(X, "X"), "X")
    d = Xa.shape[1]
    C = as_vector(c, "c", length=d)[None, :] if np.ndim(c) == 1 else as_matrix(c, "c", n_cols=d)
    if not np.any(C):
        raise InvalidInputError("c must be nonzero")
    label = "c-optimal" if np.ndim(c) == 1 else "l-optimal"
    R = triangular_factor(Xa)
    _, sigma, Vt = svd(R, full_matrices=True, check_finite=False)
    rank = int(np.sum(sigma > sigma[0] * max(Xa.shape) * np.finfo(float).eps)) if sigma.size and sigma[0] > 0 else 0
    Q = Vt[:rank].T
    residual = np.linalg.norm(C - (C @ Q) @ Q.T)
    if residual > RANGE_TOL * np.linalg.norm(C):
        raise InvalidInputError(f"c is not estimable: {'it' if C.shape[0] == 1 else 'some row'} is not in the range "
                                f"of X^T X (the row space of X, rank {rank}), so no design estimates it")
    extras: dict = {}
    if rank < d:  # solve in coordinates of the row space of X
        Xa, C = Xa @ Q, C @ Q
        extras["rank"] = rank
    path: FastPath = "elfving" if C.shape[0] == 1 else "smooth"
    return ClassicalProblem(Xa, LinearCriterion(C, label), path, extras)


def e_problem(X: ArrayLike) -> ClassicalProblem:
    """E-optimality: 1 / lambda_min(A)."""
    return ClassicalProblem(arms(X), KieferCriterion(np.inf, "e-optimal"), "eigen")


def ds_problem(X: ArrayLike, subset: ArrayLike) -> ClassicalProblem:
    """Ds-optimality: det(K^T A^{-1} K)^{1/s}, K the columns of I_d at ``subset``."""
    Xa = arms(X)
    d = Xa.shape[1]
    idx = np.asarray(subset)
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise InvalidInputError(f"subset must be a non-empty 1-D sequence of column indices, got {subset!r}")
    if np.any(idx < 0) or np.any(idx >= d) or np.unique(idx).size != idx.size:
        raise InvalidInputError(f"subset must list distinct column indices in 0..{d - 1}, got {idx.tolist()}")
    return ClassicalProblem(Xa, SubsetCriterion(np.eye(d)[:, np.sort(idx)], "ds-optimal"), "smooth",
                   {"subset": np.sort(idx).tolist()})


def phi_problem(X: ArrayLike, p: float) -> ClassicalProblem:
    """Kiefer's phi_p: (tr(A^{-p}) / d)^{1/p}; p = 0 is D, p = 1 is A / d, p = inf is E."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or np.isnan(p) or p < 0:
        raise InvalidInputError(f"p must be a number in [0, inf], got {p!r}")
    Xa = arms(X)
    d = Xa.shape[1]
    p = float(p)
    extras = {"p": p}
    if p == 1.0:  # tr(A^{-1}) / d: the linear criterion with C = I / sqrt(d)
        return ClassicalProblem(Xa, LinearCriterion(np.eye(d) / np.sqrt(d), "phi-optimal"), "smooth", extras)
    path: FastPath = "kiefer-wolfowitz" if p == 0 else "eigen" if np.isinf(p) else "smooth"
    return ClassicalProblem(Xa, KieferCriterion(p, "phi-optimal"), path, extras)


def make_problem(X: ArrayLike, name: str, given: dict) -> ClassicalProblem:
    """The problem of the criterion ``name`` (a :data:`optdesign.vocabulary.ClassicalCriterion`) with the arguments
    ``given`` (c, region, region_weights, moments, subset, p; missing keys are None)."""
    given = {key: given.get(key) for key in ("c", "region", "region_weights", "moments", "subset", "p")}
    if name == "a":
        return a_problem(X)
    if name == "i":
        return i_problem(X, given["region"], given["region_weights"], given["moments"])
    if name == "c":
        return c_problem(X, given["c"])
    if name == "e":
        return e_problem(X)
    if name == "ds":
        return ds_problem(X, given["subset"])
    if name == "phi":
        return phi_problem(X, given["p"])
    return ClassicalProblem(arms(X), KieferCriterion(0.0, "d"), "kiefer-wolfowitz")  # "d" (and "g", which uses only X)


