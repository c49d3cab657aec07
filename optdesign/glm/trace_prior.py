"""A pseudo-Bayesian A- or I-design problem: the draws' GLM weights and the matrix B_s each draw's trace weighs.

The criterion of a design w is Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}), M_s(w) = sum_i w_i nu_is x_i x_i^T. B_s is
I for A; for I it is a region's moment matrix B, the same for every draw when given, and by default the moments of
the linearised candidates under draw s, B_s = sum_i nu_is x_i x_i^T / K: the region of the locally I-optimal design
(:func:`optdesign.glm.glm_design`, R OptimalDesign's convention), so that one draw gives that design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..linear.classical.linear import LinearCriterion
from ..linear.classical.problems import i_problem
from ..vocabulary import GlmLink
from .prior import BayesianProblem, _shared_doc, bayesian_problem
from .variances import information

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["TRACE_CRITERIA", "TraceCriterion", "TraceProblem", "moment_factors", "trace_criterion", "trace_problem"]

#: the criteria of the trace family: A (B = I) and I (B a region's moments)
TraceCriterion = Literal["A", "I"]
TRACE_CRITERIA: tuple[str, ...] = ("A", "I")


@dataclass(frozen=True)
class TraceProblem:
    """A pseudo-Bayesian design problem of the criterion Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}).

    ``moments`` holds one B_s per draw (S x p x p) for the default I region, else one B for all (1 x p x p).
    """

    #: the candidates, draws, GLM weights nu_is and prior weights pi_s
    base: BayesianProblem
    #: B_s, S x p x p, or one B shared by every draw, 1 x p x p
    moments: np.ndarray
    #: ``"A"`` or ``"I"``
    criterion: str
    #: the region's moment matrix B as given (I), None for A and the default region
    region: np.ndarray | None = None


@_shared_doc
def trace_problem(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, criterion: str, *,
                  moments: ArrayLike | None = None, prior_weights: ArrayLike | None = None) -> TraceProblem:
    """The checked problem: the pseudo-Bayesian problem of the draws and the matrices B_s of the criterion.

    Parameters
    ----------
%(problem)s
    criterion : {"A", "I"}
        The criterion (case-insensitive).
    moments : array_like, optional
        I only: the region's moment matrix B (p x p, symmetric positive semidefinite, nonzero), shared by every
        draw; the linearised candidates' moments B_s of each draw by default.
    prior_weights : array_like, optional
        Nonnegative weights of the draws (normalised); equal by default.

    Returns
    -------
    TraceProblem
        The problem.

    Raises
    ------
    InvalidInputError
        An unknown criterion, ``moments`` with criterion A or not a symmetric PSD nonzero p x p matrix, and what
        :func:`optdesign.glm.prior.bayesian_problem` refuses (draws empty, of the wrong shape or not finite, bad
        prior weights, candidates that do not span R^p, ...).
    """
    name = trace_criterion(criterion, moments)
    base = bayesian_problem(X, draws, link, prior_weights)
    K, p = base.X.shape
    if moments is not None:  # checked as od.i_optimal checks it: C^T C = B, its PSD part
        criterion_of = i_problem(base.X, None, None, moments).criterion
        assert isinstance(criterion_of, LinearCriterion)
        region = criterion_of.C.T @ criterion_of.C
        return TraceProblem(base, region[None], "I", region)
    B = np.eye(p)[None] if name == "A" else information(base.X, base.nu, np.full(K, 1.0 / K))
    return TraceProblem(base, B, name)


def trace_criterion(criterion: object, moments: object = None) -> str:
    """The letter of a criterion of the trace family, checked: ``"A"`` or ``"I"``, case-insensitive.

    Parameters
    ----------
    criterion : str
        The criterion.
    moments : object, optional
        The region's moment matrix, if given: only the I-criterion takes one.

    Returns
    -------
    str
        ``"A"`` or ``"I"``.

    Raises
    ------
    InvalidInputError
        An unknown criterion, or ``moments`` given with criterion A.
    """
    name = criterion.upper() if isinstance(criterion, str) else criterion
    if name not in TRACE_CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(TRACE_CRITERIA)}, got {criterion!r}")
    if moments is not None and name != "I":
        raise InvalidInputError(f"moments= is the region of the I-criterion; criterion={criterion!r} takes none")
    return str(name)


def moment_factors(moments: np.ndarray) -> np.ndarray:
    """C_s with C_s C_s^T = B_s for a stack of symmetric PSD matrices (eigen-factors, negative rounding dropped).

    Parameters
    ----------
    moments : numpy.ndarray, shape (S, p, p)
        The matrices B_s.

    Returns
    -------
    numpy.ndarray, shape (S, p, p)
        The factors U_s diag(lambda_s)^{1/2}, so that tr(B_s M^{-1}) = tr(C_s^T M^{-1} C_s).
    """
    lam, U = np.linalg.eigh((moments + moments.transpose(0, 2, 1)) / 2)
    factors: np.ndarray = U * np.sqrt(np.clip(lam, 0.0, None))[:, None, :]
    return factors
