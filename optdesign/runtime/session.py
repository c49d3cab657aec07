"""A CLARABEL solver kept alive across re-solves of one parameterised cvxpy problem.

Used by the design models of :mod:`optdesign.linear` when CLARABEL heads the solver chain: a
bandit loop re-solves the same model with new parameter values every few rounds, and at small
sizes cvxpy's per-call machinery costs as much as the interior-point solve itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .._lazy import cp
from . import solvers

__all__ = ["ClarabelSession"]


class ClarabelSession:
    """CLARABEL kept alive on the data cvxpy compiled for one problem: the re-solve path.

    ``problem.solve`` re-derives the solver data through cvxpy's cached solving chain on every
    call. Here the first solve compiles once (``problem.get_problem_data``); a
    re-solve evaluates the compiled DPP program's parameter-to-data map directly (one sparse
    matrix-vector product) and passes the new constraint values to clarabel's ``update``, which
    keeps the symbolic factorisation and the equilibration of the first solve, as cvxpy's
    warm-started re-solve does: the iterates, and so the results, are bit-for-bit those of
    ``problem.solve(solver="CLARABEL")``. cvxpy's inverse chain then writes the solution into
    the problem's variables, duals, status and ``solver_stats``. The objective must not depend
    on parameters (true of every model here). If cvxpy's internal parameter map does not
    reproduce the data it returns (another cvxpy version), a re-solve takes its data from
    ``get_problem_data`` instead.

    Parameters
    ----------
    problem : cvxpy.Problem
        A DPP problem whose Parameters may enter the constraints only; it is compiled for CLARABEL at once.

    Raises
    ------
    ValueError
        The objective depends on parameters.
    """

    def __init__(self, problem: cp.Problem):
        import clarabel

        if problem.objective.parameters():
            raise ValueError("the objective depends on parameters")
        self.problem = problem
        data, self._chain, self._inverse = problem.get_problem_data("CLARABEL", solver_opts={})
        self._settings = clarabel.DefaultSettings()
        self._settings.verbose = False
        for key, value in solvers.SOLVER_OPTIONS.get("CLARABEL", {}).items():
            setattr(self._settings, key, value)
        self._solver = self._new_solver(data)
        self._updatable = hasattr(self._solver, "update") and (
            not hasattr(self._solver, "is_data_update_allowed") or self._solver.is_data_update_allowed()
        )
        self._has_parameters = bool(problem.parameters())
        self._map = _parameter_map(data, problem) if self._has_parameters else None
        self._loaded = True  # the solver holds the data of the current parameter values

    def _new_solver(self, data: dict) -> Any:
        import clarabel
        import scipy.sparse as sp
        from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import dims_to_solver_cones

        n = data["c"].size
        cones = dims_to_solver_cones(data["dims"])
        return clarabel.DefaultSolver(sp.csc_array((n, n)), data["c"], data["A"], data["b"], cones, self._settings)

    def solve(self) -> str:
        """Solve at the parameters' current values; returns clarabel's status.

        ``solver_seconds`` is set to the wall time of clarabel's solve.

        Returns
        -------
        str
            Clarabel's status (``"Solved"``, ``"AlmostSolved"``, ``"MaxIterations"``, ...); only on ``"Solved"`` is
            the solution unpacked into the problem's variables, duals and status.
        """
        if not self._loaded and self._has_parameters:
            if self._updatable and self._map is not None:
                values, b = self._map()
                self._solver.update(A=values, b=b)
            else:
                data = self.problem.get_problem_data("CLARABEL", solver_opts={})[0]
                if self._updatable:
                    self._solver.update(A=data["A"].data, b=data["b"])
                else:
                    self._solver = self._new_solver(data)
        self._loaded = False
        start = time.perf_counter()
        solution = self._solver.solve()
        self.solver_seconds = time.perf_counter() - start  # clarabel's own solve_time reads ~7 % above wall time
        status = str(solution.status)
        if status == "Solved":
            self.problem.unpack_results(solution, self._chain, self._inverse)
        return status


def _parameter_map(data: dict, problem: cp.Problem) -> Callable[[], tuple[np.ndarray, np.ndarray]] | None:
    """Closure returning (A values, b) of the compiled program at the current parameter values,
    from cvxpy's reduced parameter tensor; None if it does not reproduce ``data`` exactly."""
    from cvxpy.cvxcore.python import canonInterface

    try:
        prog = data["param_prob"]
        reduced = prog.reduced_A
        indices, indptr, shape = reduced.problem_data_index
        matrix = reduced.reduced_mat
        params = {p.id: p for p in problem.parameters()}
        if set(prog.param_id_to_col) - set(params) != {canonInterface.lo.CONSTANT_ID}:
            return None  # a reduction replaced a parameter: its values would be stale here
        n_vars = shape[1] - 1
        nnz_a = int(indptr[n_vars])
        b_rows = np.asarray(indices[nnz_a:])
        A = data["A"]
        if not (np.array_equal(A.indptr, indptr[: n_vars + 1]) and np.array_equal(A.indices, indices[:nnz_a])):
            return None

        def current() -> tuple[np.ndarray, np.ndarray]:
            vec = canonInterface.get_parameter_vector(
                prog.total_param_size, prog.param_id_to_col, prog.param_id_to_size,
                lambda pid: np.asarray(params[pid].value),
            )
            flat = matrix @ vec
            b = np.zeros(shape[0])
            b[b_rows] = flat[nnz_a:]
            return -flat[:nnz_a], b

        values, b = current()
        if not (np.array_equal(values, A.data) and np.array_equal(b, data["b"])):
            return None
        return current
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
