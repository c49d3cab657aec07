"""Fitting a GLM to many simulated responses at once: Fisher scoring (IRLS) batched over the replicates.

Every replicate s has its own totals y_s at the same m support points (X, m x q, n_k runs each); its coefficients
move by the Fisher-scoring step (IRLS)

    beta_s <- beta_s + H_s^{-1} g_s,  g_s = X^T ((y_s - n mu_s) r_s),  H_s = X^T diag(n nu_s) X

(r = mu' / V, nu = mu'^2 / V: :mod:`optdesign.links`), all replicates in one array operation: H_s is the
product of the S x m weights with the m x q^2 outer products x_k x_k^T, and the S systems are solved together. The
start is the weighted least-squares fit of g(mu0) at the start mu0 of R's glm.fit. A step that lowers the
log-likelihood is halved (at most HALVINGS times); a replicate has converged when its full step is below tol
(1 + max |beta_s|) and then stops moving. One that has not converged after ``max_iter`` steps, whose H is singular,
or whose fitted means reach the edge of the law (a probability within 10 machine epsilons of 0 or 1, a Poisson mean
below it: ``optdesign.power.responses.at_boundary``) is reported as not converged: under separation the
maximum-likelihood estimate does not exist and beta runs off to infinity by about one unit a step. The normal
model's fit is one weighted least-squares solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..vocabulary import GlmLink
from .responses import at_boundary, log_likelihood, score_weights, start

__all__: list[str] = []  # internal: optdesign.power.montecarlo is the public entry point

#: halvings of a step that lowers the log-likelihood
HALVINGS = 20
#: a step counts as lowering the log-likelihood by more than this, relative to |log-likelihood| + 1
DESCENT_RTOL = 1e-12


@dataclass(frozen=True)
class Fits:
    """The fits of S replicates: coefficients, log-likelihood kernels, Fisher information and convergence."""

    #: S x q coefficients
    coef: np.ndarray
    #: the log-likelihood kernel at ``coef``, per replicate
    loglik: np.ndarray
    #: S x q x q Fisher information X^T diag(n nu) X at ``coef`` (for the normal model, over sigma^2 = 1)
    info: np.ndarray
    #: whether each replicate's fit converged
    converged: np.ndarray


def _solve(H: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """H_s^{-1} g_s for every s, and whether H_s was nonsingular (its solution then finite); zeros where not."""
    try:
        x = np.linalg.solve(H, g[..., None])[..., 0]
        ok = np.ones(H.shape[0], dtype=bool)
    except np.linalg.LinAlgError:  # one singular system fails the batch: solve them one by one
        x = np.zeros_like(g)
        ok = np.zeros(H.shape[0], dtype=bool)
        for s in range(H.shape[0]):
            try:
                x[s] = np.linalg.solve(H[s], g[s])
                ok[s] = True
            except np.linalg.LinAlgError:
                pass
    ok &= np.all(np.isfinite(x), axis=1)
    x[~ok] = 0.0
    return x, ok


def _information(X: np.ndarray, outer: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """X^T diag(w_s) X for each row w_s of ``weights`` (S x m), as S x q x q."""
    q = X.shape[1]
    out: np.ndarray = (weights @ outer).reshape(-1, q, q)
    return out


def _halve(beta: np.ndarray, step: np.ndarray, old: np.ndarray, X: np.ndarray, y: np.ndarray, n: np.ndarray,
           link: GlmLink) -> tuple[np.ndarray, np.ndarray]:
    """beta + t step with t = 1, 1/2, 1/4, ... until the log-likelihood does not fall: (new beta, its value)."""
    new = beta + step
    value = log_likelihood(new @ X.T, y, n, link)
    t = np.ones(beta.shape[0])
    for _ in range(HALVINGS):
        worse = ~(value >= old - DESCENT_RTOL * (np.abs(old) + 1.0))  # NaN too
        if not worse.any():
            break
        t[worse] /= 2.0
        new[worse] = beta[worse] + t[worse, None] * step[worse]
        value[worse] = log_likelihood(new[worse] @ X.T, y[worse], n, link)
    return new, value


def fit(X: np.ndarray, n: np.ndarray, y: np.ndarray, link: GlmLink, *, max_iter: int, tol: float) -> Fits:
    """The maximum-likelihood fits of the S replicates ``y`` (S x m totals) at the support points X (m x q) with
    ``n`` runs each (module doc). With q = 0 (the empty model, eta = 0) nothing is fitted."""
    S, q = y.shape[0], X.shape[1]
    outer = (X[:, :, None] * X[:, None, :]).reshape(X.shape[0], q * q)
    if q == 0:
        zero = np.zeros((S, X.shape[0]))
        return Fits(np.zeros((S, 0)), log_likelihood(zero, y, n, link), np.zeros((S, 0, 0)), np.ones(S, dtype=bool))
    eta0 = start(y, n, link)
    weights = n * score_weights(eta0, link)[2]
    beta, ok = _solve(_information(X, outer, weights), (weights * eta0) @ X)
    converged = np.zeros(S, dtype=bool) if link != "identity" else ok.copy()
    failed = ~ok
    loglik = log_likelihood(beta @ X.T, y, n, link)
    for _ in range(max_iter if link != "identity" else 0):
        active = np.flatnonzero(~converged & ~failed)
        if not active.size:
            break
        B, Y = beta[active], y[active]
        mu, r, nu = score_weights(B @ X.T, link)
        step, ok = _solve(_information(X, outer, n * nu), ((Y - n * mu) * r) @ X)
        new, value = _halve(B, step, loglik[active], X, Y, n, link)
        beta[active], loglik[active] = new, value
        small = np.max(np.abs(step), axis=1) <= tol * (1.0 + np.max(np.abs(B), axis=1))
        converged[active[ok & small]] = True
        failed[active[~ok]] = True
    eta = beta @ X.T
    info = _information(X, outer, n * score_weights(eta, link)[2])
    return Fits(beta, loglik, info, converged & ~failed & ~at_boundary(eta, n, link))
