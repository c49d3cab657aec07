"""Linear constraints A w <= b on a design (R OptimalDesign's resource form), their helpers and their polytope.

A design stays normalised (w >= 0, sum_k w_k = 1), so the constraints bound fractions of the runs: a budget
sum_k c_k w_k <= B is a cost per run, and augmenting n0 existing runs with n new ones is ``augment(counts /
(n0 + n))``. The helpers return :class:`LinearConstraints`, which add up (``budget(c, 2.0) + caps(u)``) and
unpack as the pair ``(A, b)`` (A sparse); every design function takes ``constraints=`` as one of them, an
``(A, b)`` pair of arrays or a list of either.

:class:`Polytope` is the set P of feasible designs. Two linear programs (HiGHS, through scipy) serve the
designs: one finds the feasible design of largest slack (P is empty when that slack is negative; a conic
solver's design, which misses the rows by its tolerance, is moved towards it until it meets them exactly), and
one bounds max_{w in P} h^T w from above for the certificates of :mod:`optdesign.linear.classical.criteria`,
through a dual solution made exactly feasible: max_P h^T w <= b^T y + lambda for every y >= 0 with
lambda = max_k (h - A^T y)_k.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.optimize import linprog

from ...errors import InvalidInputError, SolverError
from ...validation import as_vector

#: a polytope whose best design misses a row by more than this (relative to max |b|) is empty
FEASIBILITY_TOL = 1e-9
#: a repaired design meets every row with this much to spare (relative to 1 + |b_i|)
REPAIR_MARGIN = 1e-13

__all__ = ["ConstraintsLike", "LinearConstraints", "Polytope", "augment", "budget", "caps", "group_totals"]


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


def not_estimable(label: str, why: str) -> InvalidInputError:
    """The error of constraints whose designs cannot estimate the criterion ``label``."""
    return InvalidInputError(f"no design meeting the constraints estimates the {label} criterion ({why}): the "
                             "candidates they allow give a singular information matrix")


class Polytope:
    """The feasible designs P = {w >= 0, sum_k w_k = 1, A w <= b} (module doc).

    Parameters
    ----------
    constraints : LinearConstraints
        The inequalities, on n candidates.
    """

    def __init__(self, constraints: LinearConstraints):
        self.A, self.b = constraints.A, constraints.b
        self.n = self.A.shape[1]
        self._interior: tuple[np.ndarray, float] | None = None
        rows = np.flatnonzero(np.diff(self.A.indptr) == 1)  # a single coefficient a w_k <= b, a > 0, b <= 0: w_k = 0
        cols, coef = self.A.indices[self.A.indptr[rows]], self.A.data[self.A.indptr[rows]]
        zero = np.zeros(self.n, dtype=bool)
        zero[cols[(coef > 0) & (self.b[rows] <= 0)]] = True
        #: the candidates no single row fixes at 0 (a cap of 0 removes a candidate)
        self.allowed = np.flatnonzero(~zero)

    def interior(self, columns: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """The feasible design of largest smallest slack t = min_i (b - A w)_i (t capped at 1), and t.

        One LP (HiGHS's interior point method: the slack variable t meets every row); cached for all columns.

        Parameters
        ----------
        columns : numpy.ndarray, optional
            Candidates the design may weight (all by default).

        Returns
        -------
        tuple of (numpy.ndarray, float)
            The design (nonnegative, summing to 1, over all n candidates) and its slack, clipped at 0 (0 when some
            inequality holds with equality at every such design).

        Raises
        ------
        InvalidInputError
            P is empty: no design satisfies the constraints.
        SolverError
            HiGHS failed on the linear program.
        """
        if columns is None and self._interior is not None:
            return self._interior
        cols = np.arange(self.n) if columns is None else np.asarray(columns)
        A, m = self.A[:, cols], self.A.shape[0]
        A_ub = sparse.hstack([A, sparse.csr_matrix(np.ones((m, 1)))], format="csr")
        A_eq = sparse.csr_matrix(np.concatenate([np.ones(cols.size), [0.0]])[None, :])
        res = linprog(np.concatenate([np.zeros(cols.size), [-1.0]]), A_ub=A_ub, b_ub=self.b, A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0, None)] * cols.size + [(None, 1.0)], method="highs-ipm")
        if res.status != 0:
            raise SolverError(f"HiGHS could not decide the feasible designs: {res.message}", solver="HIGHS")
        if columns is None and -res.fun < -FEASIBILITY_TOL * (1.0 + float(np.max(np.abs(self.b)))):
            raise InvalidInputError("the constraints leave no design: no weights w >= 0 summing to 1 satisfy "
                                    f"A w <= b (the best design misses a row by {res.fun:.3g})")
        w = np.zeros(self.n)
        w[cols] = np.clip(res.x[: cols.size], 0.0, None)
        w /= w.sum()
        out = (w, max(0.0, float(np.min(self.b - self.A @ w))))
        if columns is None:
            self._interior = out
        return out

    def repair(self, w: np.ndarray) -> np.ndarray:
        """w moved towards an :meth:`interior` design just enough to satisfy A w <= b - REPAIR_MARGIN (1 + |b|) (a
        conic solver's design misses the rows by about its tolerance, 1e-8, and the margin keeps the rounding of
        A w below b); its weights below 1e-9 of the largest are dropped first.

        The interior design is sought on the support of w first (so the support stays), then on all candidates.

        Parameters
        ----------
        w : numpy.ndarray, shape (n,)
            A design (nonnegative, summing to 1).

        Returns
        -------
        numpy.ndarray
            (1 - theta) w + theta w_c with the smallest theta that satisfies every row.

        Raises
        ------
        SolverError
            w misses a row by more than FEASIBILITY_TOL and P has no interior to move it into.
        """
        w = np.where(w >= 1e-9 * np.max(w), w, 0.0)
        w = w / w.sum()
        margin = REPAIR_MARGIN * (1.0 + np.abs(self.b))  # so that rounding in A w (1e-16) cannot cross b
        excess = self.A @ w - (self.b - margin)
        if np.all(excess <= 0):
            return w
        for columns in (np.flatnonzero(w), None):
            centre, slack = self.interior(columns)
            if slack > 2 * REPAIR_MARGIN * (1.0 + float(np.max(np.abs(self.b)))):
                break
        else:
            if np.max(excess) <= FEASIBILITY_TOL * (1.0 + float(np.max(np.abs(self.b)))):
                return w
            raise SolverError(f"the conic solver's design misses the constraints by {np.max(excess):.2e} and they "
                              "leave no interior to move it into (some inequality holds with equality at every "
                              "feasible design)", solver="CLARABEL")
        room = np.maximum(self.b - margin - self.A @ centre, slack / 2)  # the centre's slack exceeds the margin
        bad = excess > 0
        theta = min(1.0, float(np.max(excess[bad] / (excess[bad] + room[bad]))) * (1.0 + 1e-6))
        out: np.ndarray = (1.0 - theta) * w + theta * centre
        return out

    def check(self) -> None:
        """Refuse an empty polytope (one LP).

        Raises
        ------
        InvalidInputError
            No design satisfies the constraints.
        """
        self.maximiser(np.zeros(self.n))

    def maximiser(self, h: np.ndarray) -> tuple[float, np.ndarray]:
        """A certified upper bound on max_{w in P} h^T w (a dual solution of HiGHS made exactly feasible), and the
        maximising design.

        Parameters
        ----------
        h : numpy.ndarray, shape (n,)
            The prices.

        Returns
        -------
        tuple of (float, numpy.ndarray)
            b^T y + max_k (h - A^T y)_k >= max_P h^T w for the dual y >= 0 (capped by max_k h_k), and HiGHS's vertex
            (a basic solution: few candidates besides those at a bound).

        Raises
        ------
        InvalidInputError
            P is empty: no design satisfies the constraints.
        SolverError
            HiGHS failed on the linear program.
        """
        res = linprog(-h, A_ub=self.A, b_ub=self.b, A_eq=np.ones((1, self.n)), b_eq=[1.0], bounds=(0, None),
                      method="highs")
        if res.status == 2:
            raise InvalidInputError("the constraints leave no design: no weights w >= 0 summing to 1 satisfy A w <= b")
        if res.status != 0:
            raise SolverError(f"HiGHS failed on max h^T w over the constrained designs: {res.message}", solver="HIGHS")
        y = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
        bound = min(float(self.b @ y + np.max(h - self.A.T @ y)), float(np.max(h)))
        return bound, np.clip(res.x, 0.0, None)

    def max_linear(self, h: np.ndarray) -> float:
        """A certified upper bound on max_{w in P} h^T w (:meth:`maximiser`'s bound).

        Parameters
        ----------
        h : numpy.ndarray, shape (n,)
            The prices.

        Returns
        -------
        float
            The bound.
        """
        return self.maximiser(h)[0]

    def restrict(self, S: np.ndarray) -> LinearConstraints:
        """The constraints of the designs supported on the candidates S (rows that no longer bind are dropped).

        Parameters
        ----------
        S : numpy.ndarray
            Candidate indices.

        Returns
        -------
        LinearConstraints
            A[:, S] w_S <= b on len(S) candidates.
        """
        A = self.A[:, S].tocsr()
        keep = (np.diff(A.indptr) > 0) | (self.b < 0)
        return LinearConstraints(A[keep], self.b[keep])
