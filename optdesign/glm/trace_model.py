"""The cvxpy model of the pseudo-Bayesian A- and I-optimal designs: min_w sum_s pi_s tr(B_s M_s(w)^{-1}).

Each term is a matrix fractional function, tr(C_s^T M_s(w)^{-1} C_s) with C_s C_s^T = B_s (``cp.matrix_frac``, one
semidefinite cone per draw), jointly convex in (C_s, M_s) and so convex in w. The draws' GLM weights are a Parameter
(:class:`optdesign.glm.model.DrawModel`, each draw's scaled by 1 / c_s to a largest entry of 1, which scales its
M_s by 1 / c_s), and so are the factors, C_s = (pi_s / (c_s r))^{1/2} times a factor of B_s, which undoes that
scaling (r normalises the largest term): a re-solve with new draws of the same number skips the compilation. The
solver's design is certified by :func:`optdesign.glm.trace_bound.certify_trace`, never trusted.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._lazy import cp
from ..result import DesignResult
from ..vocabulary import GlmLink
from .certificate import BayesianRun
from .model import DrawModel, _shared_doc
from .trace_bound import certify_trace, trace_result
from .trace_prior import moment_factors, trace_criterion, trace_problem

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["BayesianTraceModel"]


@_shared_doc
class BayesianTraceModel(DrawModel):
    """cvxpy model min_w sum_s pi_s tr(B_s M_s(w)^{-1}) over the simplex: the pseudo-Bayesian A- or I-optimal design.

    Parameters
    ----------
%(model)s
    criterion : {"A", "I"}
        B_s = I (A), or a region's moments (I: ``moments``, or the linearised candidates' of each draw).
    moments : array_like, optional
        I only: the region's moment matrix B (p x p), shared by every draw.
%(prior_weights)s
    solver : str, optional
        Forced conic solver (the matrix fractions need the PSD cone); CLARABEL then SCS otherwise.

    Raises
    ------
    InvalidInputError
        An unknown criterion, ``moments`` given for A, candidates that do not span R^p, NaN/inf, an unknown link, a
        bad ``n_draws`` or prior weights.
%(too_large)s
    """

    def __init__(self, X: ArrayLike | CandidateSet, n_draws: int, link: GlmLink, criterion: str = "A", *,
                 moments: ArrayLike | None = None, prior_weights: ArrayLike | None = None,
                 solver: str | None = None):
        name = trace_criterion(criterion, moments)
        entry = f"bayesian_{name.lower()}_optimal"
        super().__init__(X, n_draws, link, prior_weights=prior_weights, solver=solver, entry=entry)
        self.criterion, self.moments = name, moments
        p = self.X.shape[1]
        self.factors = [cp.Parameter((p, p), name=f"C{s}") for s in range(self.prior.size)]
        fractions = [cp.matrix_frac(C, M) for C, M in zip(self.factors, self.informations, strict=True)]
        self.problem = cp.Problem(cp.Minimize(cp.sum(cp.hstack(fractions))), [cp.sum(self.w) == 1])

    def solve(self, draws: ArrayLike) -> DesignResult:
        """Solve for the prior draws ``draws`` (:meth:`~optdesign.glm.model.DrawModel.solve`): the value and
        certificate of :func:`optdesign.glm.trace_bound.trace_result`; moments that are not a symmetric PSD nonzero
        p x p matrix are refused here too (InvalidInputError)."""
        problem = trace_problem(self.X, self.checked_draws(draws), self.link, self.criterion, moments=self.moments,
                                prior_weights=self.prior)
        start = time.perf_counter()
        base = problem.base
        scale = base.prior / base.nu.max(axis=0)  # pi_s / c_s: the weight of draw s's scaled term
        factors = np.broadcast_to(moment_factors(problem.moments), (base.n_draws, *problem.moments.shape[1:]))
        sizes = scale * np.einsum("sab,sab->s", factors, factors)  # pi_s / c_s tr(B_s)
        for parameter, factor, weight in zip(self.factors, factors, scale / sizes.max(), strict=True):
            parameter.value = np.sqrt(weight) * factor
        w, info = self.solve_weights(base)
        phi, ratio = certify_trace(problem, w)
        return trace_result(problem, BayesianRun(w, phi, ratio, 0, True), status=info.status, solver=info.solver,
                            method="cvxpy", seconds=time.perf_counter() - start)
