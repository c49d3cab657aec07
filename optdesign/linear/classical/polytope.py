"""The designs that linear constraints leave, P = {w >= 0, sum_k w_k = 1, A w <= b}, and the linear programs over it.

Three linear programs (HiGHS, through scipy) serve the constrained designs of :mod:`optdesign.linear.classical`:
the maximiser of h^T w over P, whose dual, made exactly feasible, bounds max_{w in P} h^T w <= b^T y + lambda for
every y >= 0 with lambda = max_k (h - A^T y)_k (the certificates of :mod:`~optdesign.linear.classical.certify`,
and the Frank–Wolfe vertex that enters a working set); it also refuses an empty P. The feasible design of largest
slack (P's interior), towards which a conic solver's design, which misses the rows by its tolerance, is moved
until it meets them exactly (:meth:`Polytope.repair`). A row a w_k <= b with a > 0 and b <= 0 fixes w_k = 0 (a cap
of zero): those candidates are dropped before solving (:attr:`Polytope.allowed`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ...errors import InvalidInputError, SolverError
from .constraints import LinearConstraints

__all__ = ["Polytope"]

#: a polytope whose best design misses a row by more than this (relative to max |b|) is empty
FEASIBILITY_TOL = 1e-9
#: a repaired design meets every row with this much to spare (relative to 1 + |b_i|)
REPAIR_MARGIN = 1e-13


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
