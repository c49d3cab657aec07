"""The links of the generalised linear models, elementwise and in numerically stable forms.

An observation y at x has the linear predictor eta = x^T theta, the mean mu = g^{-1}(eta) and the variance V(mu)
(times sigma^2 for the normal model). Its score is (y - mu) r(eta) x and its Fisher information nu(eta) x x^T,

    r = mu'(eta) / V(mu),    nu = mu'(eta)^2 / V(mu) = mu'(eta) r.

:mod:`optdesign.glm` weighs its candidates by nu (:func:`optdesign.glm.glm_weights`); :mod:`optdesign.power`
simulates responses with mean mu and fits them by Fisher scoring with r and nu. Both take the link's functions
from here (:func:`get_link`: one :class:`Link` per link), the one place the package computes them:

=========  =========  ===================  =================  ===========  ===========================
link       response   mu = g^{-1}(eta)     mu'(eta)           V(mu)        r(eta)
=========  =========  ===================  =================  ===========  ===========================
logit      Bernoulli  1 / (1 + e^{-eta})   mu (1 - mu)        mu (1 - mu)  1
probit     Bernoulli  Phi(eta)             phi(eta)           mu (1 - mu)  phi / (Phi(eta) Phi(-eta))
cloglog    Bernoulli  1 - exp(-e^eta)      e^eta exp(-e^eta)  mu (1 - mu)  e^eta / mu
log        Poisson    e^eta                e^eta              mu           1
identity   normal     eta                  1                  1            1
=========  =========  ===================  =================  ===========  ===========================

The weight is computed as a / (1 + a)^2 with a = e^{-|eta|} (logit), phi(eta)^2 / (Phi(eta) Phi(-eta)) in logs with
``log_ndtr`` (probit), e^{2 eta} / (exp(e^eta) - 1) in logs (cloglog), e^eta (log) and 1 (identity). It is positive
and accurate to about 1e-13 relative wherever it is a normal double: logit and Poisson for eta down to -708, probit
for |eta| up to 37, cloglog for eta from -708 to 6.5 (it decays as exp(-e^eta) above 0: 6e-284 at eta = 6.5).
Beyond, it loses digits as a subnormal, then is 0 (below 5e-324: an observation there carries no information). The
Poisson weight and mean overflow above eta = LOG_MAX = 709.78. The score factor r is as accurate over the same
ranges. The module imports numpy, scipy.special and the vocabulary only: it sits below every package that needs
a link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import ArrayLike

from .vocabulary import GLM_LINKS, GlmLink, check_option

__all__ = ["LOG_MAX", "Link", "get_link"]

#: the largest eta whose Poisson weight e^eta is a finite double
LOG_MAX = float(np.log(np.finfo(float).max))
#: above t = e^eta, the cloglog weight takes log(e^t - 1) = t + log1p(-e^{-t}); below, log(expm1(t) / t) + eta
CLOGLOG_SWITCH = 20.0
#: |eta| beyond which the probit weight (0 in doubles) is computed at this value: no inf - inf
PROBIT_CLIP = 1e10
_LOG_2PI = float(np.log(2.0 * np.pi))
_TINY = float(np.finfo(float).tiny)

#: a function of a link: an array in, the array of its values (the same shape) out
Form = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Link:
    """The functions of one link (a row of the module doc's table), each elementwise: an array of floats in (any
    array_like is converted), a numpy array of the same shape out (a numpy scalar for a scalar).

    Examples
    --------
    At eta = 0 the probit mean is 1/2 and its weight phi(0)^2 / (1/4) = 2 / pi:

    >>> import numpy as np
    >>> from optdesign.links import get_link
    >>> probit = get_link("probit")
    >>> print(probit.mean(0.0), round(float(probit.weight(0.0)), 6), round(2 / np.pi, 6))
    0.5 0.63662 0.63662
    """

    #: the link's name, one of GLM_LINKS
    name: GlmLink
    #: mu = g^{-1}(eta): in [0, 1] for the binary links (0 or 1 where a tail is below the doubles' resolution),
    #: positive for the log link
    mean: Callable[[np.ndarray], np.ndarray]
    #: mu'(eta), the derivative of the mean in the linear predictor (0 where it underflows)
    derivative: Callable[[np.ndarray], np.ndarray]
    #: V(mu), the variance of one observation with mean mu (over sigma^2 for the normal model)
    variance: Callable[[np.ndarray], np.ndarray]
    #: nu(eta) = mu'(eta)^2 / V(mu), the Fisher information per unit of x x^T: positive, or 0 where it underflows
    weight: Callable[[np.ndarray], np.ndarray]
    #: r(eta) = mu'(eta) / V(mu): the score of an observation y is (y - mu) r x (1 for the canonical links logit,
    #: log and identity)
    score: Callable[[np.ndarray], np.ndarray]
    #: eta = g(mu), the inverse of ``mean`` (mu inside the response's range: its ends give -inf or inf)
    predictor: Callable[[np.ndarray], np.ndarray]


def get_link(link: object) -> Link:
    """The functions of a GLM link (module doc).

    Parameters
    ----------
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"`` (Bernoulli), ``"log"`` (Poisson) or ``"identity"`` (normal).

    Returns
    -------
    Link
        Its mean, derivative, variance function, Fisher weight, score factor and link function.

    Raises
    ------
    InvalidInputError
        An unknown link (the message lists them).
    """
    return _links()[check_option(link, "link", GLM_LINKS)]


def _elementwise(form: Form) -> Form:
    """``form`` taking any array_like: the values as a float array first."""
    def apply(x: ArrayLike) -> np.ndarray:
        return form(np.asarray(x, dtype=float))

    return apply


@cache
def _links() -> dict[str, Link]:
    """The table of the module doc (built on first use: scipy.special loads then)."""
    from scipy.special import expit, logit, ndtr, ndtri

    # mean, derivative, variance, weight, score, predictor; for the canonical links (logit, log, identity) the
    # derivative is the weight and the score factor 1
    rows: dict[GlmLink, tuple[Form, ...]] = {
        "logit": (expit, _logit_weight, _binary_variance, _logit_weight, np.ones_like, logit),
        "probit": (ndtr, _normal_density, _binary_variance, _probit_weight, _probit_score, ndtri),
        "cloglog": (_cloglog_mean, _cloglog_derivative, _binary_variance, _cloglog_weight, _cloglog_score,
                    _cloglog_predictor),
        "log": (np.exp, np.exp, _copy, np.exp, np.ones_like, np.log),
        "identity": (_copy, np.ones_like, np.ones_like, np.ones_like, np.ones_like, _copy),
    }
    return {name: Link(name, *map(_elementwise, forms)) for name, forms in rows.items()}


def _logit_weight(eta: np.ndarray) -> np.ndarray:
    a = np.exp(-np.abs(eta))
    out: np.ndarray = a / (1.0 + a) ** 2
    return out


def _probit_weight(eta: np.ndarray) -> np.ndarray:
    from scipy.special import log_ndtr

    eta = np.minimum(np.abs(eta), PROBIT_CLIP)
    log_tail = log_ndtr(-eta)  # log Phi(-|eta|): accurate in the far tail
    out: np.ndarray = np.exp(-eta * eta - _LOG_2PI - log_tail - np.log1p(-np.exp(log_tail)))
    return out


def _cloglog_weight(eta: np.ndarray) -> np.ndarray:
    t = np.exp(np.minimum(eta, LOG_MAX))
    low = t <= CLOGLOG_SWITCH
    out = np.empty_like(eta)
    # log nu = 2 eta - log(e^t - 1) = eta - log(expm1(t) / t): no 0/0 where t underflows (the ratio is then 1)
    tl = np.maximum(t[low], np.finfo(float).tiny)
    out[low] = np.exp(eta[low] - np.log(np.expm1(tl) / tl))
    th = t[~low]
    out[~low] = np.exp(2.0 * eta[~low] - th - np.log1p(-np.exp(-th)))
    return out


def _probit_score(eta: np.ndarray) -> np.ndarray:
    from scipy.special import log_ndtr

    out: np.ndarray = np.exp(-0.5 * eta * eta - 0.5 * _LOG_2PI - log_ndtr(eta) - log_ndtr(-eta))
    return out


def _cloglog_score(eta: np.ndarray) -> np.ndarray:
    t = np.maximum(np.exp(np.minimum(eta, LOG_MAX)), _TINY)  # where e^eta underflows, r = t / mu tends to 1
    out: np.ndarray = t / -np.expm1(-t)
    return out


def _cloglog_mean(eta: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.expm1(-np.exp(np.minimum(eta, LOG_MAX)))
    return out


def _cloglog_derivative(eta: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.exp(eta - np.exp(np.minimum(eta, LOG_MAX)))
    return out


def _cloglog_predictor(mu: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.log(-np.log1p(-mu))
    return out


def _normal_density(eta: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.exp(-0.5 * eta * eta - 0.5 * _LOG_2PI)
    return out


def _binary_variance(mu: np.ndarray) -> np.ndarray:
    out: np.ndarray = mu * (1.0 - mu)
    return out


def _copy(x: np.ndarray) -> np.ndarray:
    return np.array(x, dtype=float)
