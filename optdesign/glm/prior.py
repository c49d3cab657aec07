"""A pseudo-Bayesian design problem: candidates, prior draws, their GLM weights nu_is and the prior weights pi_s.

Draw s of the prior gives the information M_s(w) = sum_i w_i nu_is x_i x_i^T with nu_is = nu(x_i^T theta_s). The
K x S matrix of the weights is computed once, a block of candidates at a time, after a size check; the problem is
refused when some draw leaves the candidates' information singular (no design could estimate theta there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..docstrings import shared_doc
from ..errors import InvalidInputError
from ..validation import as_arms, as_matrix, check_array_size, check_weights
from ..vocabulary import GlmLink
from .weights import candidate_matrix, check_link, link_weights

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["BLOCK_ENTRIES", "BayesianProblem", "bayesian_problem", "normalised_prior"]

BLOCK_ENTRIES = 1 << 21  # entries of one block of the K x S weights (or of one pricing block: 16 MiB)

# the parameters the checked problems of the pseudo-Bayesian designs share (substituted by _shared_doc)
_DOC = {
    "problem": """    X : array_like or CandidateSet
        The candidates, K x p.
    draws : array_like
        The prior draws theta_s, S x p, one per row.
    link : str
        The link (:data:`optdesign.vocabulary.GLM_LINKS`).""",
}

_shared_doc = shared_doc(_DOC)


@dataclass(frozen=True)
class BayesianProblem:
    """Candidates, GLM weights at every prior draw, and the prior weights of the draws.

    The pseudo-Bayesian D-criterion of a design w is Phi(w) = sum_s pi_s log det M_s(w),
    M_s(w) = sum_i w_i nu_is x_i x_i^T.
    """

    #: the candidates x_i, K x p
    X: np.ndarray
    #: the prior draws theta_s, S x p
    theta: np.ndarray
    #: the GLM weights nu_is = nu(x_i^T theta_s), K x S
    nu: np.ndarray
    #: the prior weights pi_s of the draws, summing to 1
    prior: np.ndarray
    #: the link
    link: GlmLink

    @property
    def n_draws(self) -> int:
        """S, the number of prior draws."""
        return int(self.theta.shape[0])


@_shared_doc
def bayesian_problem(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink,
                     prior_weights: ArrayLike | None = None) -> BayesianProblem:
    """The checked problem: candidates spanning R^p, draws S x p, weights nu (K x S), prior weights summing to 1.

    Parameters
    ----------
%(problem)s
    prior_weights : array_like, optional
        Nonnegative weights of the draws (normalised here); equal by default.

    Returns
    -------
    BayesianProblem
        The problem.

    Raises
    ------
    InvalidInputError
        An unknown link, candidates that do not span R^p, NaN/inf entries, draws with the wrong number of columns,
        prior weights of the wrong length, negative or summing to 0, a linear predictor or Poisson weight that
        overflows, a draw under which the candidates' information is singular (every weight underflows but on a
        subspace).
    InstanceTooLargeError
        The K x S weights, with the pricing blocks and the S information matrices, above the memory limit.
    """
    link = check_link(link)
    X = as_arms(candidate_matrix(X))
    K, p = X.shape
    theta = as_matrix(draws, "draws", n_cols=p)
    S = theta.shape[0]
    check_array_size(float(K) * S + float(K) * p * p + 4.0 * S * p * p + BLOCK_ENTRIES,
                     f"the pseudo-Bayesian design on {K:,} candidates and {S:,} prior draws (its K x S weights nu)",
                     instead="use fewer prior draws or fewer candidates")
    prior = normalised_prior(prior_weights, S)
    nu = weights_table(X, theta, link, "draw")
    _check_estimable(X, nu)
    return BayesianProblem(X, theta, nu, prior, link)


def normalised_prior(prior_weights: ArrayLike | None, n_draws: int) -> np.ndarray:
    """The prior weights pi_s of ``n_draws`` draws, summing to 1 (equal when None).

    Parameters
    ----------
    prior_weights : array_like, optional
        Nonnegative weights, one per draw, with a positive sum.
    n_draws : int
        S.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The normalised weights.

    Raises
    ------
    InvalidInputError
        Weights that are not finite, negative, sum to 0, or number other than S.
    """
    if prior_weights is None:
        return np.full(n_draws, 1.0 / n_draws)
    prior = check_weights(prior_weights, "prior_weights")
    if prior.size != n_draws:
        raise InvalidInputError(f"prior_weights has {prior.size} entries for {n_draws} draws")
    out: np.ndarray = prior / prior.sum()
    return out


def _check_estimable(X: np.ndarray, nu: np.ndarray) -> None:
    """Refuse a draw s whose information sum_i nu_is x_i x_i^T (all candidates) is numerically singular."""
    K, p = X.shape
    outer = (X[:, :, None] * X[:, None, :]).reshape(K, p * p)
    bad: list[int] = []
    step = max(1, BLOCK_ENTRIES // (p * p))
    for start in range(0, nu.shape[1], step):
        eig = np.linalg.eigvalsh((nu[:, start:start + step].T @ outer).reshape(-1, p, p))
        bad += (start + np.flatnonzero(eig[:, 0] <= eig[:, -1] * K * p * np.finfo(float).eps)).tolist()
    if bad:
        raise InvalidInputError(f"under the prior draws {bad[:5]} ({len(bad)} in all) the candidates' information "
                                "sum_i nu_is x_i x_i^T is singular: the GLM weights underflow on all but a subspace "
                                "(the draws are far too large for the candidates)")


def weights_table(X: np.ndarray, theta: np.ndarray, link: GlmLink, what: str) -> np.ndarray:
    """nu_is = nu(x_i^T theta_s) for every candidate i and parameter value s, in row blocks of ``BLOCK_ENTRIES``.

    Parameters
    ----------
    X : numpy.ndarray, shape (K, p)
        The candidates.
    theta : numpy.ndarray, shape (S, p)
        The parameter values (prior draws, or the values of a maximin design).
    link : str
        The link.
    what : str
        What a row of ``theta`` is, for the message (``"draw"``, ``"parameter value"``).

    Returns
    -------
    numpy.ndarray, shape (K, S)
        The GLM weights.

    Raises
    ------
    InvalidInputError
        The linear predictor overflows for some value.
    """
    K, S = X.shape[0], theta.shape[0]
    nu = np.empty((K, S))
    step = max(1, BLOCK_ENTRIES // S)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, K, step):
            eta = X[start:start + step] @ theta.T
            if not np.all(np.isfinite(eta)):
                raise InvalidInputError(f"the linear predictor X @ theta_s overflows for some {what}; rescale the "
                                        "candidates or the values")
            nu[start:start + step] = link_weights(eta, link)
    return nu
