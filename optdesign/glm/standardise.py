"""A maximin design problem: candidates, parameter values theta_1..theta_S, their GLM weights, and the local optima.

Under theta_s a design w has the information M_s(w) = sum_i w_i nu_is x_i x_i^T (nu_is = nu(x_i^T theta_s)) and
the criterion g_s(w) = (1/p) log det M_s(w). The standardised maximin problem compares g_s with its optimum
c_s = max_w g_s(w), reached by the locally D-optimal design at theta_s. That optimum is only known to the
certified precision of the local solver (:func:`optdesign.d_optimal` on the rows sqrt(nu_is) x_i, method
``"exchange"``): its design w_s gives c_s >= g_s(w_s) and, by the Kiefer–Wolfowitz bound,
c_s <= g_s(w_s) + log(max_i h_i / p) (h_i = nu_is x_i^T M_s(w_s)^{-1} x_i). So
c_s lies in [offset_s, offset_s + slack_s], offset_s = g_s(w_s), slack_s = log(max_i h_i / p) >= 0. The
non-standardised problem takes c_s = 0 (offset 0, slack 0).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..linear import d_optimal
from ..validation import as_arms, as_matrix, check_array_size
from ..vocabulary import GlmLink
from .certificate import certify
from .prior import BLOCK_ENTRIES, BayesianProblem, weights_table
from .variances import singular_draws
from .weights import candidate_matrix, check_link

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["LOCAL_TOL", "MaximinProblem", "check_standardised", "local_optima", "maximin_problem"]

#: the certified relative gap of each local D-optimal design, at most (and at most a tenth of the caller's tol);
#: the exchange reaches 1e-9 in a few milliseconds on a few thousand candidates, and its gap enters the certificate
LOCAL_TOL = 1e-9


@dataclass(frozen=True)
class MaximinProblem:
    """Candidates, weights nu_is at each parameter value, and the bracket of each local optimum c_s.

    The criterion of a design w is min_s (g_s(w) - c_s), g_s(w) = (1/p) log det M_s(w), with
    c_s in [offset_s, offset_s + slack_s] (module doc).
    """

    #: the candidates x_i (``X``), parameter values (``theta``, S x p), weights nu_is (``nu``, K x S), the link;
    #: its ``prior`` is uniform and unused
    base: BayesianProblem
    #: g_s of the local designs, a lower bound on c_s (zeros when not standardised)
    offset: np.ndarray
    #: log(max_i h_i / p) of the local designs: c_s <= offset_s + slack_s (zeros when not standardised)
    slack: np.ndarray
    #: whether the criterion is the efficiency (c_s the local optimum) or (1/p) log det M_s (c_s = 0)
    standardised: bool

    @property
    def n_values(self) -> int:
        """S, the number of parameter values."""
        return int(self.base.theta.shape[0])


def maximin_problem(X: ArrayLike | CandidateSet, thetas: ArrayLike, link: GlmLink, *, standardised: bool = True,
                    tol: float = 1e-4) -> MaximinProblem:
    """The checked problem, with the local optima of a standardised one (certified to min(tol / 10, LOCAL_TOL)).

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p; they must span R^p.
    thetas : array_like
        The parameter values theta_s, S x p, one per row.
    link : str
        The link (:data:`optdesign.vocabulary.GLM_LINKS`).
    standardised : bool
        Compare each g_s with its local optimum (True) or take c_s = 0.
    tol : float
        The caller's tolerance; the local designs are certified to a tenth of it (LOCAL_TOL at most).

    Returns
    -------
    MaximinProblem
        The problem.

    Raises
    ------
    InvalidInputError
        An unknown link, candidates that do not span R^p, NaN/inf entries, no parameter value, values of the wrong
        width, a linear predictor or Poisson weight that overflows, a value under which the candidates'
        information is singular.
    InstanceTooLargeError
        The K x S weights above the memory limit.
    """
    link = check_link(link)
    X = as_arms(candidate_matrix(X))
    K, p = X.shape
    if np.size(thetas) == 0:
        raise InvalidInputError("thetas is empty: give at least one parameter value (a row of length p)")
    theta = as_matrix(thetas, "thetas", n_cols=p)
    S = theta.shape[0]
    check_array_size(2.0 * K * S + float(K) * p * p + 4.0 * S * p * p + BLOCK_ENTRIES,
                     f"the maximin design on {K:,} candidates and {S:,} parameter values (their K x S weights nu)",
                     instead="use fewer parameter values or fewer candidates")
    nu = weights_table(X, theta, link, "parameter value")
    bad = singular_draws(X, nu, np.full(K, 1.0 / K))
    if bad.size:
        raise InvalidInputError(f"under the parameter values thetas[{bad[:5].tolist()}] ({bad.size} in all) the "
                                "candidates' information sum_i nu_is x_i x_i^T is singular: the GLM weights underflow "
                                "on all but a subspace (theta far too large for the candidates)")
    base = BayesianProblem(X, theta, nu, np.full(S, 1.0 / S), link)
    if not standardised:
        return MaximinProblem(base, np.zeros(S), np.zeros(S), False)
    offset, slack = local_optima(base, min(0.1 * tol, LOCAL_TOL))
    return MaximinProblem(base, offset, slack, True)


def local_optima(base: BayesianProblem, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The bracket [offset_s, offset_s + slack_s] of each c_s = max_w (1/p) log det M_s(w) (module doc).

    Each local design is :func:`optdesign.d_optimal` of the rows sqrt(nu_is) x_i by the certified exchange; its
    bracket is recomputed here from its weights (:func:`optdesign.glm.certificate.certify` with one draw).

    Parameters
    ----------
    base : BayesianProblem
        Candidates, parameter values and weights.
    tol : float
        Certified relative gap of each local design.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        offset and slack, S each (slack >= 0).
    """
    X, nu = base.X, base.nu
    p = X.shape[1]
    S = nu.shape[1]
    offset, slack = np.empty(S), np.empty(S)
    for s in range(S):
        with warnings.catch_warnings():  # a local design cut short by the time limit widens its bracket, certified
            warnings.filterwarnings("ignore", message=".*stopped at", category=RuntimeWarning)
            w = d_optimal(np.sqrt(nu[:, s])[:, None] * X, method="exchange", tol=tol).weights
        one = BayesianProblem(X, base.theta[s:s + 1], nu[:, s:s + 1], np.ones(1), base.link)
        log_det, ratio = certify(one, w)
        offset[s], slack[s] = log_det / p, max(0.0, float(np.log(ratio)))
    return offset, slack


def check_standardised(standardised: object) -> bool:
    """``standardised`` if it is a bool, else InvalidInputError.

    Parameters
    ----------
    standardised : object
        The argument as passed.

    Returns
    -------
    bool
        The flag.

    Raises
    ------
    InvalidInputError
        Anything but True or False.
    """
    if not isinstance(standardised, (bool, np.bool_)):
        raise InvalidInputError(f"standardised must be True or False, got {standardised!r}")
    return bool(standardised)
