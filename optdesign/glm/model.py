"""The cvxpy model of the pseudo-Bayesian D-optimal design: max_w sum_s pi_s log det M_s(w), one log det per draw.

M_s(w) = sum_i w_i nu_is x_i x_i^T is affine in w for fixed weights nu_is; the weights are a cvxpy Parameter
(S x K, nonnegative), so a re-solve with new draws of the same number (a prior updated in a sequential design)
skips the compilation. Each draw's weights are scaled to a largest entry of 1 before the solve (log det M_s moves by
a constant, the optimal w does not), and the solver's design is certified as the fast path's is
(:func:`optdesign.glm.certificate.certify`): the model never trusts the solver's optimum.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._lazy import cp
from ..docstrings import shared_doc
from ..errors import InstanceTooLargeError, InvalidInputError
from ..result import DesignResult, SolveInfo
from ..runtime import solvers
from ..validation import as_arms, as_count, as_matrix
from ..vocabulary import GlmLink
from .certificate import BayesianRun, certify, design_result
from .prior import BayesianProblem, bayesian_problem, normalised_prior
from .weights import candidate_matrix, check_link

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["MODEL_MAX_ENTRIES", "MODEL_SOLVER_OPTIONS", "BayesianDModel", "DrawModel", "bayesian_model_fits"]

#: S K p^2 coefficients of the S affine maps w -> M_s(w) above which the model is refused (80 MB of them; the
#: conic solver's S log det cones and cvxpy's parameter tensor grow with it)
MODEL_MAX_ENTRIES = 10_000_000
#: CLARABEL's tolerances: at its defaults (1e-8) the design's weights are accurate to about 1e-5 only (certified gap
#: 1e-5 where the fast path reaches 1e-12), at 1e-10 to about 1e-7
MODEL_SOLVER_OPTIONS = {"CLARABEL": {"tol_feas": 1e-10, "tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}}

# the parameter and error descriptions the models of the draws share (substituted by _shared_doc)
_DOC = {
    "model": """    X : array_like or CandidateSet
        The candidates, K x p; they must span R^p.
    n_draws : int
        S, the number of prior draws each solve takes.
    link : str
        The GLM's link (:func:`optdesign.glm.glm_weights`).""",
    "prior_weights": """    prior_weights : array_like, optional
        The weights pi_s of the draws (normalised); equal by default.""",
    "too_large": """    InstanceTooLargeError
        S K p^2 above MODEL_MAX_ENTRIES (:func:`optdesign.glm.model.bayesian_model_fits`).""",
}
_DOC["raises"] = """    InvalidInputError
        Candidates that do not span R^p, NaN/inf, an unknown link, a bad ``n_draws`` or prior weights.
""" + _DOC["too_large"]

_shared_doc = shared_doc(_DOC)


def bayesian_model_fits(n_candidates: int, dim: int, n_draws: int) -> bool:
    """Whether :class:`BayesianDModel` accepts K candidates in R^p and S draws: S K p^2 <= MODEL_MAX_ENTRIES.

    Parameters
    ----------
    n_candidates : int
        K.
    dim : int
        p.
    n_draws : int
        S.

    Returns
    -------
    bool
        Whether the model fits.
    """
    return n_draws * n_candidates * dim * dim <= MODEL_MAX_ENTRIES


@_shared_doc
class DrawModel:
    """What the cvxpy models of the pseudo-Bayesian designs share: the candidates, the draws' GLM weights as a
    Parameter (S x K, each draw's scaled to a largest entry of 1), the design w and the affine maps w -> M_s(w).

    A subclass sets ``problem`` (its objective over ``informations``) and implements :meth:`solve` with
    :meth:`solve_weights`.

    Parameters
    ----------
%(model)s
%(prior_weights)s
    solver : str, optional
        Forced conic solver; CLARABEL then SCS otherwise.
    entry : str
        The public design function, named in the message of a model too large.

    Raises
    ------
%(raises)s
    """

    #: the conic problem, built by the subclass over ``informations``
    problem: cp.Problem

    def __init__(self, X: ArrayLike | CandidateSet, n_draws: int, link: GlmLink, *,
                 prior_weights: ArrayLike | None = None, solver: str | None = None, entry: str):
        X = as_arms(candidate_matrix(X))
        K, p = X.shape
        S = as_count(n_draws, "n_draws")
        if not bayesian_model_fits(K, p, S):
            raise InstanceTooLargeError(
                f"{type(self).__name__} with K = {K:,} candidates in R^{p} and S = {S:,} draws has "
                f"{S * K * p * p:.2e} coefficients (limit {MODEL_MAX_ENTRIES:.0e}): use od.{entry}(..., "
                "method='fast') instead")
        self.X, self.link, self.solver = X, check_link(link), solver
        self.prior = normalised_prior(prior_weights, S)
        self.nu = cp.Parameter((S, K), nonneg=True, name="nu")
        self.w = cp.Variable(K, nonneg=True, name="w")
        Xs = X / np.max(np.abs(X))  # the optimal w does not depend on the scale of X
        outer = np.einsum("ki,kj->kij", Xs, Xs).reshape(K, p * p)
        #: M_s(w) of the scaled candidates and weights, one p x p affine expression per draw
        self.informations = [cp.reshape(outer.T @ cp.multiply(self.nu[s], self.w), (p, p), order="C")
                             for s in range(S)]

    def solve(self, draws: ArrayLike) -> DesignResult:
        """Solve for the prior draws ``draws`` (a second call re-uses the compilation); the subclass certifies the
        solver's design.

        Parameters
        ----------
        draws : array_like
            The draws theta_s, S x p (S as given to the constructor).

        Returns
        -------
        DesignResult
            ``method="cvxpy"``, the solver's status, and the value and certificate of the subclass's criterion.

        Raises
        ------
        InvalidInputError
            Draws of the wrong shape or not finite, a draw under which the candidates' information is singular.
        SolverError
            Every conic solver of the chain failed.
        """
        raise NotImplementedError

    def checked_draws(self, draws: ArrayLike) -> np.ndarray:
        """The draws as an S x p array, S as the model was built for.

        Parameters
        ----------
        draws : array_like
            The draws theta_s.

        Returns
        -------
        numpy.ndarray
            The draws.

        Raises
        ------
        InvalidInputError
            Draws of the wrong shape or not finite.
        """
        theta = as_matrix(draws, "draws", n_cols=self.X.shape[1])
        if theta.shape[0] != self.prior.size:
            raise InvalidInputError(f"draws has {theta.shape[0]} rows; the model was built for {self.prior.size}")
        return theta

    def solve_weights(self, problem: BayesianProblem) -> tuple[np.ndarray, SolveInfo]:
        """Set the weights Parameter to the problem's (each draw's scaled to a largest entry of 1), solve, and return
        the design (clipped to w >= 0, normalised) with the solve's record.

        Parameters
        ----------
        problem : BayesianProblem
            The problem of the draws.

        Returns
        -------
        tuple of (numpy.ndarray, SolveInfo)
            The design over the K candidates and the solve.
        """
        self.nu.value = (problem.nu / problem.nu.max(axis=0)).T
        info = solvers.solve(self.problem, self.solver, solver_options=MODEL_SOLVER_OPTIONS)
        w = np.clip(np.asarray(self.w.value, dtype=float), 0.0, None)
        return w / w.sum(), info


@_shared_doc
class BayesianDModel(DrawModel):
    """cvxpy model max_w sum_s pi_s log det M_s(w) over the simplex, for S prior draws of a GLM's parameter.

    Parameters
    ----------
%(model)s
%(prior_weights)s
    solver : str, optional
        Forced conic solver (log det needs the PSD and exponential cones); CLARABEL then SCS otherwise.

    Raises
    ------
%(raises)s
    """

    def __init__(self, X: ArrayLike | CandidateSet, n_draws: int, link: GlmLink, *,
                 prior_weights: ArrayLike | None = None, solver: str | None = None):
        super().__init__(X, n_draws, link, prior_weights=prior_weights, solver=solver, entry="bayesian_d_optimal")
        log_dets = [cp.log_det(M) for M in self.informations]
        self.problem = cp.Problem(cp.Maximize(self.prior @ cp.hstack(log_dets)), [cp.sum(self.w) == 1])

    def solve(self, draws: ArrayLike) -> DesignResult:
        """Solve for the prior draws ``draws`` (:meth:`~optdesign.glm.model.DrawModel.solve`): the value and
        certificate of :func:`optdesign.glm.certificate.design_result`."""
        problem = bayesian_problem(self.X, self.checked_draws(draws), self.link, self.prior)
        start = time.perf_counter()
        w, info = self.solve_weights(problem)
        log_det, ratio = certify(problem, w)
        run = BayesianRun(w, log_det, ratio, 0, True)
        return design_result(problem, run, status=info.status, solver=info.solver, method="cvxpy",
                             seconds=time.perf_counter() - start)
