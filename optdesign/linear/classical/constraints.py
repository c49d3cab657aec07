"""Linear constraints A w <= b on a design (R OptimalDesign's resource form) and their helpers.

A design stays normalised (w >= 0, sum_k w_k = 1), so the constraints bound fractions of the runs: a budget
sum_k c_k w_k <= B is a cost per run, and augmenting n0 existing runs with n new ones is ``augment(counts /
(n0 + n))``. The helpers return :class:`LinearConstraints`, which add up (``budget(c, 2.0) + caps(u)``) and
unpack as the pair ``(A, b)`` (A sparse); every design function takes ``constraints=`` as one of them, an
``(A, b)`` pair of arrays or a list of either.

The set of designs they leave, and the linear programs over it, are
:class:`~optdesign.linear.classical.polytope.Polytope`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from ...errors import InvalidInputError
from ...validation import as_vector

__all__ = ["ConstraintsLike", "LinearConstraints", "augment", "budget", "caps", "group_totals"]


@dataclass(frozen=True)
class LinearConstraints:
    """Linear inequalities A w <= b on the weights of a design over n candidates (unpacks as ``A, b``).

    Parameters
    ----------
    A : scipy.sparse.csr_matrix, shape (m, n)
        One row per inequality.
    b : numpy.ndarray, shape (m,)
        The right-hand sides.
    """

    A: sparse.csr_matrix
    b: np.ndarray

    def __iter__(self) -> Iterator:
        return iter((self.A, self.b))

    def __add__(self, other: LinearConstraints) -> LinearConstraints:
        if not isinstance(other, LinearConstraints):
            return NotImplemented
        if other.A.shape[1] != self.A.shape[1]:
            raise InvalidInputError(f"cannot stack constraints on {self.A.shape[1]} and {other.A.shape[1]} candidates")
        return LinearConstraints(sparse.vstack([self.A, other.A], format="csr"), np.concatenate([self.b, other.b]))


#: what ``constraints=`` accepts: a LinearConstraints, an (A, b) pair meaning A w <= b, a list of them, or None
ConstraintsLike = Union[LinearConstraints, "tuple[Any, Any]", "Sequence[LinearConstraints | tuple[Any, Any]]", None]


def _rows(A: ArrayLike, b: ArrayLike, n: int | None = None, name: str = "constraints") -> LinearConstraints:
    """Check an (A, b) pair: finite, A with n columns (when given) and one b per row."""
    try:
        matrix = sparse.csr_matrix(A, dtype=float) if sparse.issparse(A) else sparse.csr_matrix(np.atleast_2d(
            np.asarray(A, dtype=float)))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name}: A must be a numeric matrix: {exc}") from None
    rhs = as_vector(np.atleast_1d(np.asarray(b, dtype=float)), f"{name}: b")
    if matrix.ndim != 2 or matrix.shape[0] != rhs.size:
        raise InvalidInputError(f"{name}: A must have one row per entry of b ({rhs.size}), got shape {matrix.shape}")
    if n is not None and matrix.shape[1] != n:
        raise InvalidInputError(f"{name}: A must have one column per candidate ({n}), got {matrix.shape[1]}")
    if not np.all(np.isfinite(matrix.data)):
        raise InvalidInputError(f"{name}: A contains NaN or infinite entries")
    return LinearConstraints(matrix, rhs)


def budget(cost: ArrayLike, total: float) -> LinearConstraints:
    """A budget sum_k cost_k w_k <= total (a cost per run: the design is normalised).

    Parameters
    ----------
    cost : array_like, shape (n,)
        The cost of a run at each candidate.
    total : float
        The budget per run.

    Returns
    -------
    LinearConstraints
        One row.

    Examples
    --------
    Quadratic regression on {-1, 0, 1} where a run at x = 0 costs 3 and the others 1, at most 1.5 per run:
    the A-optimal design (1/4, 1/2, 1/4) costs 2, so the budget moves weight to the ends.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.a_optimal(np.column_stack([np.ones(3), x, x**2]), constraints=od.budget([1.0, 3.0, 1.0], 1.5))
    >>> print(np.round(res.weights, 4), round(res.value, 3))
    [0.375 0.25  0.375] 10.667
    """
    c = as_vector(cost, "cost")
    return _rows(sparse.csr_matrix(c[None, :]), [total], name="budget")


def caps(upper: ArrayLike) -> LinearConstraints:
    """Caps w_k <= u_k (e.g. 1 / n for at most one of n runs per candidate).

    Parameters
    ----------
    upper : array_like, shape (n,)
        The largest weight of each candidate, nonnegative.

    Returns
    -------
    LinearConstraints
        n rows (a sparse identity).

    Examples
    --------
    >>> import optdesign as od
    >>> A, b = od.caps([0.5, 0.2, 0.5])
    >>> A.toarray().tolist(), b.tolist()
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.5, 0.2, 0.5])

    Raises
    ------
    InvalidInputError
        A negative or non-finite cap.
    """
    u = as_vector(upper, "caps")
    if np.any(u < 0):
        raise InvalidInputError("caps must be nonnegative")
    return LinearConstraints(sparse.identity(u.size, format="csr"), u)


def augment(existing: ArrayLike) -> LinearConstraints:
    """Fixed existing runs: w_k >= w0_k (the new design augments w0).

    Parameters
    ----------
    existing : array_like, shape (n,)
        The weights already spent at each candidate (nonnegative, summing to at most 1).

    Returns
    -------
    LinearConstraints
        n rows -w_k <= -w0_k.

    Examples
    --------
    Half the runs already made at x = 1 of a quadratic on {-1, 0, 1}: the D-optimal completion splits the rest.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.phi_optimal(np.column_stack([np.ones(3), x, x**2]), 0, constraints=od.augment([0.0, 0.0, 0.5]))
    >>> print(np.round(res.weights, 3))
    [0.25 0.25 0.5 ]

    Raises
    ------
    InvalidInputError
        Negative weights, or weights summing to more than 1.
    """
    w0 = as_vector(existing, "augment")
    if np.any(w0 < 0) or w0.sum() > 1.0 + 1e-12:
        raise InvalidInputError(f"augment: the existing weights must be nonnegative and sum to at most 1, "
                                f"got sum {w0.sum():.6g}")
    return LinearConstraints(-sparse.identity(w0.size, format="csr"), -w0)


def group_totals(groups: ArrayLike, lo: ArrayLike | None = None, hi: ArrayLike | None = None) -> LinearConstraints:
    """Group totals lo_g <= sum_{k in g} w_k <= hi_g (e.g. batches, blocks, sites).

    Parameters
    ----------
    groups : array_like, shape (n,)
        The group label of each candidate.
    lo : float or array_like, optional
        Smallest total of each group, one value or one per label in sorted order (``numpy.unique``).
    hi : float or array_like, optional
        Largest total of each group, likewise.

    Returns
    -------
    LinearConstraints
        One row per bounded group and side.

    Examples
    --------
    >>> import optdesign as od
    >>> A, b = od.group_totals(["a", "b", "a"], hi=[0.6, 0.5])
    >>> A.toarray().tolist(), b.tolist()
    ([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [0.6, 0.5])

    Raises
    ------
    InvalidInputError
        ``groups`` not 1-D, bounds of the wrong length, neither bound given.
    """
    labels = np.asarray(groups)
    if labels.ndim != 1 or labels.size == 0:
        raise InvalidInputError("groups must be a non-empty 1-D array of labels, one per candidate")
    names, index = np.unique(labels, return_inverse=True)
    G = sparse.csr_matrix((np.ones(labels.size), (index, np.arange(labels.size))), shape=(names.size, labels.size))
    if lo is None and hi is None:
        raise InvalidInputError("group_totals needs lo, hi or both")
    parts = []
    for bound, sign in ((hi, 1.0), (lo, -1.0)):
        if bound is not None:
            values = np.broadcast_to(np.asarray(bound, dtype=float), names.shape) if np.ndim(bound) == 0 \
                else as_vector(bound, "group bound", length=names.size)
            parts.append(_rows(sign * G, sign * values, name="group_totals"))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def as_constraints(value: object, n: int) -> LinearConstraints | None:
    """``constraints=`` as one LinearConstraints on n candidates: None, a LinearConstraints, an (A, b) pair, or a
    list of these; InvalidInputError otherwise."""
    if value is None:
        return None
    if isinstance(value, LinearConstraints):
        return _rows(value.A, value.b, n)
    if isinstance(value, tuple) and len(value) == 2 and not isinstance(value[0], (tuple, LinearConstraints)):
        return _rows(value[0], value[1], n)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0:
        parts = [as_constraints(item, n) for item in value]
        out = parts[0]
        for part in parts[1:]:
            out = out + part  # type: ignore[operator]
        return out
    raise InvalidInputError("constraints must be an (A, b) pair meaning A w <= b, a LinearConstraints (budget, caps, "
                            f"augment, group_totals) or a list of them; got {type(value).__name__}")
