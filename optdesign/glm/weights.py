"""The GLM weight nu(eta) = (dmu/deta)^2 / Var(y | eta) of each link, and ``glm_weights(X, theta0, link)``.

A GLM with linear predictor eta = x^T theta, mean mu = g^{-1}(eta) and variance function V(mu) has Fisher
information nu(eta) x x^T per observation at x. The weights of the logit, probit and cloglog links (Bernoulli), the
log link (Poisson) and the identity link (normal, unit variance: nu = 1) are those of :mod:`optdesign.links`, with
their numerically stable forms and accuracy: positive wherever they are a normal double, 0 below 5e-324 (the
candidate carries no information there). Here the link is checked and the Poisson weight, which overflows above
eta = 709.78, is refused there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..links import LOG_MAX, get_link
from ..validation import as_matrix, as_vector
from ..vocabulary import GLM_LINKS, GlmLink, check_option

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["LOG_MAX", "candidate_matrix", "check_link", "glm_weights", "link_weights"]


def check_link(link: object) -> GlmLink:
    """``link`` if it is one of GLM_LINKS, else InvalidInputError listing them.

    Parameters
    ----------
    link : object
        The link as passed.

    Returns
    -------
    str
        The link.
    """
    return check_option(link, "link", GLM_LINKS)


def link_weights(eta: ArrayLike, link: GlmLink) -> np.ndarray:
    """nu(eta) of ``link``, elementwise (:attr:`optdesign.links.Link.weight`), the Poisson overflow refused.

    Parameters
    ----------
    eta : array_like
        Values of the linear predictor, finite.
    link : str
        One of GLM_LINKS.

    Returns
    -------
    numpy.ndarray
        nu(eta), the shape of ``eta``: positive, or 0 where the true weight underflows.

    Raises
    ------
    InvalidInputError
        An unknown link, or ``link="log"`` with an eta above LOG_MAX (e^eta overflows).
    """
    link = check_link(link)
    eta = np.asarray(eta, dtype=float)
    if link == "log":
        top = float(eta.max()) if eta.size else 0.0
        if top > LOG_MAX:
            raise InvalidInputError(f"the Poisson weight e^eta overflows at eta = {top:.6g} (above {LOG_MAX:.2f}); "
                                    "rescale the candidates or theta so that the expected counts are finite")
    return get_link(link).weight(eta)


def glm_weights(X: ArrayLike | CandidateSet, theta0: ArrayLike, link: GlmLink) -> np.ndarray:
    """The GLM weights nu_i = nu(x_i^T theta0) = (dmu/deta)^2 / Var(y | x_i) of the candidates at theta0.

    The information of a design w is M(w) = sum_i w_i nu_i x_i x_i^T, that of a linear model in the rescaled
    candidates sqrt(nu_i) x_i (:func:`optdesign.glm.glm_model_matrix`).

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p, one per row (a model matrix).
    theta0 : array_like
        The parameter the design is local to, length p.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"`` (binary response), ``"log"`` (Poisson counts) or ``"identity"``
        (the normal linear model: nu = 1).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The weights: positive, or 0 where the true weight is below the smallest double (module doc).

    Raises
    ------
    InvalidInputError
        An unknown link (the message lists them), NaN/inf entries, theta0 of the wrong length, a linear predictor
        that overflows, a Poisson weight that overflows (eta above 709.78).

    Examples
    --------
    At eta = 0 the logit weight is 1/4 and the probit weight 2/pi:

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [1.0, 2.0]])
    >>> np.round(od.glm_weights(X, [0.0, 1.0], "logit"), 4)
    array([0.25 , 0.105])
    >>> round(float(od.glm_weights(X, [0.0, 1.0], "probit")[0]), 6) == round(2 / np.pi, 6)
    True
    """
    link = check_link(link)
    X = as_matrix(candidate_matrix(X), "X")
    theta = as_vector(theta0, "theta0", length=X.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        eta = X @ theta
    if not np.all(np.isfinite(eta)):
        raise InvalidInputError("the linear predictor X @ theta0 overflows; rescale the candidates or theta0")
    return link_weights(eta, link)


def candidate_matrix(X: ArrayLike | CandidateSet) -> ArrayLike:
    """The model matrix of a :class:`~optdesign.formulas.CandidateSet` (its ``X``), or ``X`` itself.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates.

    Returns
    -------
    array_like
        ``X.X`` for a CandidateSet (recognised without importing pandas), else ``X``.
    """
    if isinstance(X, tuple) and all(hasattr(X, name) for name in ("X", "points", "columns")):
        return cast("CandidateSet", X).X
    return cast(ArrayLike, X)
