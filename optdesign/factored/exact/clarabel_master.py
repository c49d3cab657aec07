"""The scaled master programs written straight into CLARABEL's conic form, without cvxpy's compilation.

A constraint-generation master (:mod:`.generated`) is a new program at every iteration: its working set grows and
every solve is centred on the previous iterate (:mod:`.rescaling`), so a cvxpy model is rebuilt and recompiled each
time, and at the sizes a bandit re-solves (tens of clique entries) that compilation costs several times the
interior-point solve itself (profile in ``benchmarks/RESULTS.md`` §6). The program is small and fixed in form, so it
is written here directly as CLARABEL's data, min q.x s.t. b - A x in a product of cones, with the variables of
:class:`~.rescaling.ScaledAllocation` around a reference (y_ref, w_ref):

    y = y_ref * nu (nu >= 0),   x = (W diag(y_ref) nu) / w_ref,   x_i t_i >= 1,   t <= sigma,   s = sigma / w_ref,

the cone x_i t_i >= 1 as the second-order cone ||(2, x_i - t_i)|| <= x_i + t_i, the roots' unit masses and the
separator rows (each scaled to a largest coefficient 1) as equalities. The epigraph variable t is cvxpy's own form of
inv_pos(x) <= sigma: without it the multipliers of the rows came out less accurate, and on a ring N = 16, K = 2
(seed 0) the certified gap stalled at 1.8e-4 above tol 1e-4 (``tests/test_warm_generation.py``). With ``rows`` H the
program is
min z s.t. H s <= z (T* on a working set); with ``cost`` c it is min c.s (the dual bound's minimiser). Nothing here
is trusted by the certificate: the bracket of constraint generation is computed from the returned point and
multipliers alone, as for the cvxpy model.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...errors import InvalidInputError, SolverError, TimeLimitReached
from ...runtime import solvers
from ...runtime.deadline import remaining_budget
from ...runtime.solvers import SolveInfo
from ...vocabulary import Status
from .rescaling import Reference

__all__ = ["ConicSolution", "ScaledConicLayout"]

# CLARABEL's answers as cvxpy statuses; any other answer is a failure
STATUSES: dict[str, Status] = {"Solved": "optimal", "AlmostSolved": "optimal_inaccurate", "MaxTime": "not_converged"}


@dataclass(frozen=True)
class ConicSolution:
    """One :meth:`ScaledConicLayout.solve`: the allocation y, the optimum, the rows' multipliers, the solve's info."""

    #: y = y_ref * nu at the solver's point (negative rounding clipped to 0).
    allocation: np.ndarray
    #: The optimum: z with ``rows``, the cost c.s with ``cost``.
    value: float
    #: The multipliers of the rows H s <= z (>= 0 up to rounding; empty with ``cost``).
    duals: np.ndarray
    #: Status (``"optimal"`` or ``"optimal_inaccurate"``), solver and wall time.
    info: SolveInfo


class ScaledConicLayout:
    """The conic program of the module docstring for one polytope (W, R, C): the sparsity pattern is laid out once,
    and :meth:`~optdesign.factored.exact.clarabel_master.ScaledConicLayout.solve` fills in the values of a reference
    and solves.

    Parameters
    ----------
    W : scipy.sparse matrix, shape (m, n)
        Allocation to marginals (the junction tree's ``F``).
    R : scipy.sparse matrix, shape (r, n)
        One unit-mass row per root.
    C : scipy.sparse matrix, shape (c, n)
        Separator consistency rows.
    """

    def __init__(self, W: sp.spmatrix, R: sp.spmatrix, C: sp.spmatrix):
        self.W, self.R, self.C = (sp.coo_matrix(M) for M in (W, R, C))
        self.m, self.n = self.W.shape
        # the equalities' rows and columns: R, then C (each C row scaled to a largest coefficient 1)
        self._eq_rows = np.concatenate([self.R.row, self.R.shape[0] + self.C.row])
        self._eq_cols = np.concatenate([self.R.col, self.C.col])
        i = np.arange(self.m)
        # variables (nu, sigma, t[, z]); cone i has rows 3i (x_i + t_i), 3i + 1 (x_i - t_i), 3i + 2 (the constant 2)
        self._soc_rows = np.concatenate([3 * self.W.row, 3 * self.W.row + 1, 3 * i, 3 * i + 1])
        self._soc_cols = np.concatenate([self.W.col, self.W.col, self.n + self.m + i, self.n + self.m + i])
        self._soc_sign = np.concatenate([-np.ones(2 * self.W.nnz), -np.ones(self.m), np.ones(self.m)])

    def solve(self, reference: Reference, *, rows: sp.csr_matrix | None = None, cost: np.ndarray | None = None,
              options: dict | None = None, accept_limit: bool = False) -> ConicSolution:
        """min z s.t. ``rows`` s <= z, or min ``cost`` . s, over y >= 0 with R y = 1, C y = 0, s >= 1 / (W y)
        (module docstring), solved by CLARABEL around ``reference``.

        Parameters
        ----------
        reference : Reference
            The centre (y_ref, w_ref) of the scaled variables.
        rows : scipy.sparse.csr_matrix, shape (k, m), optional
            Nonnegative rows H over s = 1 / w: the program is min z s.t. H s <= z. Exactly one of ``rows`` and
            ``cost``.
        cost : numpy.ndarray, shape (m,), optional
            Nonnegative cost over s: the program is min cost . s.
        options : dict, optional
            CLARABEL settings (``tol_gap_rel``, ...), on top of :data:`optdesign.runtime.solvers.SOLVER_OPTIONS`;
            inside a :func:`optdesign.runtime.deadline.time_budget` the time left is CLARABEL's ``time_limit``.
        accept_limit : bool
            Return the point CLARABEL stopped at on the time budget (status ``"not_converged"``) instead of raising
            TimeLimitReached, as :func:`optdesign.runtime.solvers.solve` does: only for callers certified whatever
            the point.

        Returns
        -------
        ConicSolution
            y, the optimum, the rows' multipliers and the solve's info.

        Raises
        ------
        InvalidInputError
            Both or neither of ``rows`` and ``cost`` given.
        TimeLimitReached
            The budget was spent before the solve, or CLARABEL stopped on it (without ``accept_limit``).
        SolverError
            CLARABEL answered neither Solved nor AlmostSolved nor MaxTime.
        """
        import clarabel

        if (rows is None) == (cost is None):
            raise InvalidInputError("the scaled master needs exactly one of rows and cost")
        k = 0 if rows is None else rows.shape[0]
        q, A, b, cones = self._data(reference, rows, cost)
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        for key, value in {**solvers.SOLVER_OPTIONS.get("CLARABEL", {}), **(options or {})}.items():
            setattr(settings, key, value)
        left = remaining_budget()
        if left is not None:
            if left <= 0:
                raise TimeLimitReached("the time budget was spent before this conic solve", solver="CLARABEL")
            settings.time_limit = left
        start = time.perf_counter()
        solution = clarabel.DefaultSolver(sp.csc_matrix((q.size, q.size)), q, A, b, cones, settings).solve()
        answer = str(solution.status)
        if answer == "MaxTime" and not (accept_limit and left is not None):
            raise TimeLimitReached(f"CLARABEL stopped on the time budget ({time.perf_counter() - start:.3g} s)",
                                   solver="CLARABEL")
        if answer not in STATUSES:
            raise SolverError(f"CLARABEL answered {answer} on the scaled master", solver="CLARABEL", status=answer)
        x, dual = np.asarray(solution.x), np.asarray(solution.z)
        first = b.size - 4 * self.m - k  # the rows H s <= z come before t <= sigma and the cones
        return ConicSolution(reference.allocation * np.clip(x[:self.n], 0.0, None), float(q @ x),
                             dual[first:first + k].copy(),
                             SolveInfo(STATUSES[answer], "CLARABEL", time.perf_counter() - start))

    def _data(self, reference: Reference, rows: sp.csr_matrix | None,
              cost: np.ndarray | None) -> tuple[np.ndarray, sp.csc_matrix, np.ndarray, list]:
        """(q, A, b, cones) over (nu, sigma, t[, z]): equalities, nu >= 0, the rows, t <= sigma, one cone per
        marginal."""
        import clarabel

        n, m, R, C = self.n, self.m, self.R, self.C
        y_ref, inv_w = reference.allocation, 1.0 / reference.marginals
        width = n + 2 * m + (rows is not None)
        n_eq, k = R.shape[0] + C.shape[0], 0 if rows is None else rows.shape[0]
        scaled_c = C.data * y_ref[C.col]
        top = np.zeros(C.shape[0])
        np.maximum.at(top, C.row, np.abs(scaled_c))
        eq = np.concatenate([R.data * y_ref[R.col], scaled_c / np.where(top > 0, top, 1.0)[C.row]])
        x = self.W.data * inv_w[self.W.row] * y_ref[self.W.col]
        soc = self._soc_sign * np.concatenate([x, x, np.ones(2 * m)])
        i = np.arange(m)
        parts_r = [self._eq_rows, n_eq + np.arange(n), n_eq + n + k + np.tile(i, 2), n_eq + n + k + m + self._soc_rows]
        parts_c = [self._eq_cols, np.arange(n), np.concatenate([n + m + i, n + i]), self._soc_cols]
        parts_v = [eq, -np.ones(n), np.repeat([1.0, -1.0], m), soc]
        q = np.zeros(width)
        if rows is not None:  # H diag(1 / w_ref) sigma - z <= 0
            rows = sp.coo_matrix(rows)
            parts_r += [n_eq + n + rows.row, n_eq + n + np.arange(k)]
            parts_c += [n + rows.col, np.full(k, width - 1)]
            parts_v += [rows.data * inv_w[rows.col], -np.ones(k)]
            q[-1] = 1.0
        else:
            q[n:n + m] = np.asarray(cost, dtype=float) * inv_w
        A = sp.csc_matrix((np.concatenate(parts_v), (np.concatenate(parts_r), np.concatenate(parts_c))),
                          shape=(n_eq + n + k + 4 * m, width))
        b = np.concatenate([np.ones(R.shape[0]), np.zeros(C.shape[0] + n + k + m), np.tile([0.0, 0.0, 2.0], m)])
        cones = [clarabel.ZeroConeT(n_eq), clarabel.NonnegativeConeT(n + k + m), *[clarabel.SecondOrderConeT(3)] * m]
        return q, A, b, cones
