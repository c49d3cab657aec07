"""The response law of each GLM link, as the Monte Carlo power simulates and fits it.

A design puts n_k runs at the support point x_k, with linear predictor eta_k = x_k^T theta and mean mu_k =
g^{-1}(eta_k). The total y_k of the n_k responses is sufficient for theta, so it alone is simulated:

=========  ========================  ====================================  ========================================
link       law of one response       total y_k                             log-likelihood kernel
=========  ========================  ====================================  ========================================
logit      Bernoulli, expit(eta)     Binomial(n_k, mu_k)                   y log mu + (n - y) log(1 - mu)
probit     Bernoulli, Phi(eta)       Binomial(n_k, mu_k)                   as logit's
cloglog    Bernoulli, 1 - e^-e^eta   Binomial(n_k, mu_k)                   as logit's
log        Poisson, e^eta            Poisson(n_k mu_k)                     y eta - n e^eta
identity   normal, eta, sd sigma     n_k times N(mu_k, sigma^2 / n_k)      -(y - n eta)^2 / (2 n)
=========  ========================  ====================================  ========================================

The score of theta is sum_k (y_k - n_k mu_k) r_k x_k and the Fisher information sum_k n_k nu_k x_k x_k^T, with the
mean mu, the score factor r = mu'(eta) / V(mu) and the weight nu = mu'(eta)^2 / V(mu) of :mod:`optdesign.links`,
evaluated here at a linear predictor clipped to where the law is not degenerate in doubles (a fit running off to
infinity passes through there). For the normal model the spread within the support points, sigma^2 chi^2(N - m)
over m support points, is simulated as well: the residual sum of squares needs it. Every function here works
elementwise on arrays of any shape, in the stable forms (log_ndtr, log1p, expm1) where the tails need them.
"""

from __future__ import annotations

import numpy as np

from ..links import get_link
from ..vocabulary import GlmLink

__all__: list[str] = []  # internal: optdesign.power.montecarlo is the public entry point

#: the largest |eta| at which the binary links are evaluated (their means are 0 or 1 in doubles beyond)
BINARY_ETA = 40.0
#: the range of eta at which the log and cloglog links are evaluated: e^eta stays a normal double
EXP_ETA = (-700.0, 700.0)
#: a fitted probability (or Poisson mean) this close to 0 or 1 means the estimate ran off to infinity: 10 machine
#: epsilons, where R's glm.fit warns that fitted probabilities are numerically 0 or 1
BOUNDARY = 10.0 * float(np.finfo(float).eps)
#: binary links
BINARY: tuple[GlmLink, ...] = ("logit", "probit", "cloglog")


def _clipped(eta: np.ndarray, link: GlmLink) -> np.ndarray:
    low, high = {"logit": (-BINARY_ETA, BINARY_ETA), "probit": (-BINARY_ETA, BINARY_ETA),
                 "cloglog": (EXP_ETA[0], float(np.log(BINARY_ETA))),  # e^eta up to 40: 1 - mu = e^-40
                 "log": EXP_ETA}.get(link, (-np.inf, np.inf))
    out: np.ndarray = np.clip(eta, low, high)
    return out


def mean(eta: np.ndarray, link: GlmLink) -> np.ndarray:
    """mu = g^{-1}(eta), elementwise, at the clipped eta."""
    return get_link(link).mean(_clipped(eta, link))


def score_weights(eta: np.ndarray, link: GlmLink) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mu, r, nu) at the clipped eta: the mean, the score factor r = mu' / V(mu) and the Fisher weight
    nu = mu'^2 / V(mu)."""
    e, forms = _clipped(eta, link), get_link(link)
    return forms.mean(e), forms.score(e), forms.weight(e)


def at_boundary(eta: np.ndarray, n: np.ndarray, link: GlmLink) -> np.ndarray:
    """Whether a fit's means reach the edge of the law at some support point (last axis): a probability within
    BOUNDARY of 0 or 1, or a Poisson mean n mu below it, as under separation (R's glm.fit warns there too)."""
    from scipy.special import expit, ndtr

    e = _clipped(eta, link)
    if link in BINARY:
        complement = {"logit": lambda: expit(-e), "probit": lambda: ndtr(-e), "cloglog": lambda: np.exp(-np.exp(e))}
        edge = np.minimum(mean(e, link), complement[link]())
    elif link == "log":
        edge = n * mean(e, link)
    else:
        return np.zeros(e.shape[:-1], dtype=bool)
    out: np.ndarray = np.any(edge < BOUNDARY, axis=-1)
    return out


def log_likelihood(eta: np.ndarray, y: np.ndarray, n: np.ndarray, link: GlmLink) -> np.ndarray:
    """The log-likelihood kernel of the totals y (last axis: the support points), summed over them (module doc)."""
    from scipy.special import log_ndtr

    e = _clipped(eta, link)
    if link == "logit":
        terms = -y * np.logaddexp(0.0, -e) - (n - y) * np.logaddexp(0.0, e)
    elif link == "probit":
        terms = y * log_ndtr(e) + (n - y) * log_ndtr(-e)
    elif link == "cloglog":
        t = np.exp(e)
        terms = y * np.log(-np.expm1(-t)) - (n - y) * t
    elif link == "log":
        terms = y * e - n * np.exp(e)
    else:
        terms = -0.5 * (y - n * e) ** 2 / n
    out: np.ndarray = np.sum(terms, axis=-1)
    return out


def simulate(eta: np.ndarray, n: np.ndarray, link: GlmLink, sigma: float, n_sim: int,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n_sim`` draws of the totals y (n_sim x m) at the support points (eta, n), and of the normal model's
    within-point sum of squares (zeros for the other links)."""
    mu = mean(eta, link)
    if link in BINARY:
        y = rng.binomial(n.astype(np.int64), mu, size=(n_sim, mu.size)).astype(float)
    elif link == "log":
        y = rng.poisson(n * mu, size=(n_sim, mu.size)).astype(float)
    else:
        y = n * mu + sigma * np.sqrt(n) * rng.standard_normal((n_sim, mu.size))
    within = np.zeros(n_sim)
    spare = int(n.sum()) - mu.size
    if link == "identity" and spare > 0:
        within = sigma**2 * rng.chisquare(spare, size=n_sim)
    return y, within


def start(y: np.ndarray, n: np.ndarray, link: GlmLink) -> np.ndarray:
    """The starting linear predictor of the fit: g at the totals' means, pulled inside the law's range (as R's
    glm.fit starts: (y + 1/2) / (n + 1) for the binary links, (y + 1/2) / n for the log link)."""
    if link in BINARY:
        return get_link(link).predictor((y + 0.5) / (n + 1.0))
    if link == "log":
        return get_link(link).predictor((y + 0.5) / n)
    out: np.ndarray = y / n
    return out
