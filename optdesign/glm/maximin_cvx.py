"""The cvxpy model of the maximin D-optimal design: max t subject to (1/p) log det M_s(w) - c_s >= t, one per value.

M_s(w) = sum_i w_i nu_is x_i x_i^T is affine in w for fixed weights; the weights (S x K, nonnegative) and the
offsets c_s are cvxpy Parameters, so a re-solve with new parameter values of the same number skips the compilation.
Each value's weights are scaled to a largest entry of 1 and X to a largest |entry| of 1 before the solve, the
offsets shifted to match ((1/p) log det M moves by log of the scale), so t is the criterion itself. The multipliers
of the S epigraph constraints sum to 1 (stationarity in t) and are the least favourable prior q; the solver's design
is certified with them (:mod:`optdesign.glm.duality`): the model never trusts the solver's optimum.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._lazy import cp
from ..errors import InstanceTooLargeError, InvalidInputError
from ..linear.dispatch import DEFAULT_TOL
from ..result import DesignResult
from ..runtime import solvers
from ..validation import as_arms, as_count
from ..vocabulary import GlmLink
from .duality import maximin_result
from .model import MODEL_MAX_ENTRIES, MODEL_SOLVER_OPTIONS, bayesian_model_fits
from .standardise import MaximinProblem, check_standardised, maximin_problem
from .weights import candidate_matrix, check_link

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["MaximinDModel"]


class MaximinDModel:
    """cvxpy model of the maximin D-optimal design of a GLM over S parameter values: one log det cone per value.

    max t over w in the simplex subject to (1/p) log det M_s(w) - c_s >= t for every s, with c_s the local optimum
    at theta_s (standardised) or 0.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p; they must span R^p.
    n_values : int
        S, the number of parameter values each solve takes.
    link : str
        The GLM's link (:func:`optdesign.glm.glm_weights`).
    standardised : bool
        Efficiencies (True) or (1/p) log det M_s (False).
    solver : str, optional
        Forced conic solver (log det needs the PSD and exponential cones); CLARABEL then SCS otherwise.

    Raises
    ------
    InvalidInputError
        Candidates that do not span R^p, NaN/inf, an unknown link, a bad ``n_values`` or ``standardised``.
    InstanceTooLargeError
        S K p^2 above MODEL_MAX_ENTRIES (:func:`optdesign.glm.model.bayesian_model_fits`).
    """

    def __init__(self, X: ArrayLike | CandidateSet, n_values: int, link: GlmLink, *, standardised: bool = True,
                 solver: str | None = None):
        X = as_arms(candidate_matrix(X))
        K, p = X.shape
        S = as_count(n_values, "n_values")
        if not bayesian_model_fits(K, p, S):
            raise InstanceTooLargeError(
                f"MaximinDModel with K = {K:,} candidates in R^{p} and S = {S:,} values has {S * K * p * p:.2e} "
                f"coefficients (limit {MODEL_MAX_ENTRIES:.0e}): use od.maximin_d_optimal(..., method='fast') instead")
        self.X, self.link, self.solver, self.n_values = X, check_link(link), solver, S
        self.standardised = check_standardised(standardised)
        self.scale = float(np.max(np.abs(X)))  # the optimal w does not depend on the scale of X
        self.nu = cp.Parameter((S, K), nonneg=True, name="nu")
        self.offset = cp.Parameter(S, name="offset")
        self.w = cp.Variable(K, nonneg=True, name="w")
        self.t = cp.Variable(name="t")
        Xs = X / self.scale
        outer = np.einsum("ki,kj->kij", Xs, Xs).reshape(K, p * p)
        self.bounds = [cp.log_det(cp.reshape(outer.T @ cp.multiply(self.nu[s], self.w), (p, p), order="C")) / p
                       - self.offset[s] >= self.t for s in range(S)]
        self.problem = cp.Problem(cp.Maximize(self.t), [*self.bounds, cp.sum(self.w) == 1])

    def solve(self, thetas: ArrayLike, tol: float = DEFAULT_TOL) -> DesignResult:
        """Solve for the parameter values ``thetas`` (a second call re-uses the compilation).

        Parameters
        ----------
        thetas : array_like
            The values theta_s, S x p (S as given to the constructor).
        tol : float
            Sets the certified gap of the local designs (tol / 10, at most 1e-9) when standardised.

        Returns
        -------
        DesignResult
            ``method="cvxpy"``, the solver's status, and the value and certificate of
            :func:`optdesign.glm.duality.maximin_result`.

        Raises
        ------
        InvalidInputError
            Values of the wrong shape or not finite, a value under which the candidates' information is singular.
        SolverError
            Every conic solver of the chain failed.
        """
        problem = maximin_problem(self.X, thetas, self.link, standardised=self.standardised, tol=tol)
        return self.solve_problem(problem)

    def solve_problem(self, problem: MaximinProblem) -> DesignResult:
        """Solve a checked problem on the same candidates (its local optima already computed).

        Parameters
        ----------
        problem : MaximinProblem
            The problem (:func:`optdesign.glm.standardise.maximin_problem`).

        Returns
        -------
        DesignResult
            As :meth:`solve`.

        Raises
        ------
        InvalidInputError
            A problem with another number of values, or with other candidates or another link.
        SolverError
            Every conic solver of the chain failed.
        """
        base = problem.base
        if problem.n_values != self.n_values or base.X.shape != self.X.shape or base.link != self.link \
                or problem.standardised != self.standardised:
            raise InvalidInputError(f"the problem has {problem.n_values} values on {base.X.shape[0]} candidates "
                                    f"({base.link}); the model was built for {self.n_values} on {self.X.shape[0]} "
                                    f"({self.link}, standardised={self.standardised})")
        start = time.perf_counter()
        top = base.nu.max(axis=0)
        self.nu.value = (base.nu / top).T
        self.offset.value = problem.offset - np.log(top) - 2.0 * np.log(self.scale)
        info = solvers.solve(self.problem, self.solver, solver_options=MODEL_SOLVER_OPTIONS)
        w = np.clip(np.asarray(self.w.value, dtype=float), 0.0, None)
        w /= w.sum()
        return maximin_result(problem, w, self._multipliers(problem, w), status=info.status, solver=info.solver,
                              method="cvxpy", seconds=time.perf_counter() - start, rounds=0)

    def _multipliers(self, problem: MaximinProblem, w: np.ndarray) -> np.ndarray:
        """The constraints' multipliers, or the value of least criterion when the solver gave none usable."""
        duals = [b.dual_value for b in self.bounds]
        q = np.array([np.nan if d is None else float(np.asarray(d).reshape(-1)[0]) for d in duals])
        q = np.clip(q, 0.0, None)
        if np.all(np.isfinite(q)) and q.sum() > 0:
            out: np.ndarray = q / q.sum()
            return out
        X, nu, p = problem.base.X, problem.base.nu, problem.base.X.shape[1]
        g = np.array([np.linalg.slogdet((X * (w * nu[:, s])[:, None]).T @ X)[1] / p for s in range(nu.shape[1])])
        least = np.zeros(problem.n_values)
        least[int(np.argmin(g - problem.offset))] = 1.0
        return least
