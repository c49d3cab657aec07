"""The power of a GLM design by Monte Carlo: simulate the responses under theta, fit, test each term, count.

At an exact design (n_k runs at x_k, N in all; equal rows of X are one point) and a parameter theta, S data sets are
drawn with a seeded numpy Generator (the totals of :mod:`optdesign.power.responses`, in the order of the sorted
distinct points, so a design given as counts or as its run matrix gives the same numbers), each is fitted by
maximum likelihood (Fisher scoring batched over the data sets: :mod:`optdesign.power.irls`), and the test of each
term T (H0: theta_T = 0) is made at level alpha:

* Wald: W = b_T^T (V_TT)^{-1} b_T, V = I(b)^{-1} the inverse Fisher information at the estimate b, against the
  chi^2(|T|) quantile; for the normal model (identity link) V = s^2 (X^T diag(n) X)^{-1} with s^2 the residual mean
  square on N - p degrees of freedom, and W / |T| against the F(|T|, N - p) quantile (the exact F test);
* likelihood ratio: 2 (l(b) - l(b_0)), b_0 the fit without the term's columns, against the same chi^2 quantile (for
  the normal model the F statistic of the two residual sums of squares).

The power is the fraction p of rejections, with its binomial standard error sqrt(p (1 - p) / S). A data set whose
fit does not converge (separation, under which the estimate does not exist) counts as not rejecting, and the
number of them is reported. Beside it stands the large-sample Wald power P(chi^2(|T|, lambda) > chi^2_{1-alpha}),
lambda = theta_T^T (C_TT)^{-1} theta_T with C the inverse Fisher information at theta.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from ..validation import as_count, as_tolerance, as_vector, check_array_size
from ..vocabulary import GLM_LINKS, GlmLink, check_option
from .ftest import _inverse_information, check_alpha, noncentral_f_power, run_counts
from .irls import Fits, fit
from .responses import score_weights, simulate
from .result import GlmPowerResult, GlmTermPower
from .terms import WHOLE_MODEL, ModelTerms, TermsLike, resolve_terms

__all__ = ["GLM_TESTS", "glm_power"]

#: the tests of :func:`glm_power`
GLM_TESTS: tuple[str, ...] = ("wald", "lr")
#: data sets fitted together (the batch's Fisher informations take CHUNK q^2 numbers)
CHUNK = 4096
#: Fisher-scoring steps of each fit, and the relative step below which a fit has converged
MAX_ITER, FIT_TOL = 50, 1e-8


def _sigma(sigma: float | None, link: GlmLink) -> float:
    if sigma is None:
        return 1.0
    if link != "identity":
        raise InvalidInputError(f"sigma is the noise standard deviation of the normal model (link='identity'); "
                                f"the {link} link's variance follows from its mean: leave sigma out")
    return as_tolerance(sigma, "sigma")


def _checked(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, theta: ArrayLike, link: object,
             terms: TermsLike, runs: int | None) -> tuple[ModelTerms, np.ndarray, np.ndarray, GlmLink]:
    """(the model and its terms, the runs per candidate, theta, the link), checked."""
    name = check_option(link, "link", GLM_LINKS)
    model = resolve_terms(X, terms)
    counts = run_counts(design, model.X.shape[0], runs)
    p = model.X.shape[1]
    beta = as_vector(theta, "theta", length=p)
    n = int(counts.sum())
    if n <= p:
        raise InvalidInputError(f"the design has N = {n} runs for p = {p} coefficients: the tests need N > p; add "
                                "runs or replicates")
    with np.errstate(over="ignore", invalid="ignore"):
        eta = model.X @ beta
    if not np.all(np.isfinite(eta)):
        raise InvalidInputError("the linear predictor X @ theta overflows; rescale the candidates or theta")
    return model, counts, beta, name


def _critical(df: int, df2: int, alpha: float, link: GlmLink) -> float:
    """The test's critical value: chi^2_{1-alpha}(df), or df F_{1-alpha}(df, N - p) for the normal model."""
    from scipy.stats import chi2, f

    return float(df * f.isf(alpha, df, df2)) if link == "identity" else float(chi2.isf(alpha, df))


def _wald(fits: Fits, columns: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """W_s = b_T^T (V_TT)^{-1} b_T with V = scale_s I_s^{-1}; inf-free: a singular block gives 0 (no rejection)."""
    b = fits.coef[:, columns]
    V = np.linalg.pinv(fits.info)[:, columns][:, :, columns] * scale[:, None, None]
    try:
        solved = np.linalg.solve(V, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        solved = (np.linalg.pinv(V) @ b[..., None])[..., 0]
    out: np.ndarray = np.nan_to_num(np.einsum("si,si->s", b, solved), nan=0.0, posinf=0.0, neginf=0.0)
    return out


def _chunk_statistics(tests: list[np.ndarray], X: np.ndarray, n: np.ndarray, y: np.ndarray, within: np.ndarray,
                      link: GlmLink, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The statistic of every test on the data sets ``y`` (tests x S), whether it may reject (its fits converged),
    and whether the full model's fit converged (S)."""
    full = fit(X, n, y, link, max_iter=MAX_ITER, tol=FIT_TOL)
    df2 = int(n.sum()) - X.shape[1]
    rss = within - 2.0 * full.loglik  # the normal model's residual sum of squares (its kernel is -RSS / 2)
    scale = rss / df2 if link == "identity" else np.ones(y.shape[0])
    stats = np.zeros((len(tests), y.shape[0]))
    valid = np.zeros((len(tests), y.shape[0]), dtype=bool)
    for i, columns in enumerate(tests):
        if kind == "wald":
            stats[i], valid[i] = _wald(full, columns, scale), full.converged
            continue
        reduced = fit(np.delete(X, columns, axis=1), n, y, link, max_iter=MAX_ITER, tol=FIT_TOL)
        drop = 2.0 * (full.loglik - reduced.loglik)
        stats[i] = drop / scale if link == "identity" else drop
        valid[i] = full.converged & reduced.converged
    return stats, valid, full.converged


def _asymptotic(model: ModelTerms, columns: np.ndarray, C: np.ndarray, theta: np.ndarray, df2: int, alpha: float,
                link: GlmLink) -> tuple[float, float]:
    """(lambda, the large-sample power) of the Wald test of ``columns`` (module doc)."""
    from scipy.stats import chi2, ncx2

    b = theta[columns]
    lam = max(float(b @ np.linalg.solve(C[np.ix_(columns, columns)], b)), 0.0) if b.any() else 0.0
    if link == "identity":
        return lam, noncentral_f_power(columns.size, df2, lam, alpha)[1]
    critical = float(chi2.isf(alpha, columns.size))
    power = alpha if lam == 0 else float(np.clip(ncx2.sf(critical, columns.size, lam), 0.0, 1.0))
    return lam, power


def glm_power(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, theta: ArrayLike, link: GlmLink, *,
              alpha: float = 0.05, n_sim: int = 1000, seed: int = 0, test: str = "wald", terms: TermsLike = None,
              sigma: float | None = None, runs: int | None = None) -> GlmPowerResult:
    """The Monte Carlo power of the Wald (or likelihood-ratio) test of each term of a GLM at an exact design.

    Module doc: ``n_sim`` data sets simulated at theta, each fitted by Fisher scoring (IRLS); the Wald statistic
    b_T^T (V_TT)^{-1} b_T with V the inverse Fisher information at the estimate; power = the fraction p of
    rejections, standard error sqrt(p (1 - p) / n_sim). A fit that does not converge counts as not rejecting.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates' model matrix (K x p), or :func:`optdesign.candidates`' result; with ``design=None`` the
        run matrix itself.
    design : array_like, ExactDesignResult, DesignResult or None
        Runs per candidate, as for :func:`optdesign.design_power` (an approximate design with ``runs``).
    theta : array_like
        The parameter the data are simulated at (the alternative), one coefficient per column of X.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"`` (Bernoulli responses), ``"log"`` (Poisson counts) or
        ``"identity"`` (normal responses with standard deviation ``sigma``).
    alpha : float
        The level of each test, in (0, 1).
    n_sim : int
        S, the number of simulated data sets (positive); the standard error falls as 1 / sqrt(S).
    seed : int
        The seed of the numpy Generator: the same seed gives the same powers.
    test : {"wald", "lr"}
        The Wald test (one fit per data set), or the likelihood-ratio test (also one fit without each term).
    terms : str or mapping, optional
        Which columns are tested together, as for :func:`optdesign.design_power` (one test per column by default).
    sigma : float, optional
        The normal model's noise standard deviation (1 by default); only with ``link="identity"``.
    runs : int, optional
        Round the design to this many runs first (efficient apportionment), as for :func:`optdesign.design_power`.

    Returns
    -------
    GlmPowerResult
        Per term (and for the whole model): the power, its standard error, rejections, failed fits, and the
        large-sample Wald power beside it; ``to_frame()`` gives the table.

    Raises
    ------
    InvalidInputError
        An unknown link, theta of the wrong length or with NaN or inf, alpha outside (0, 1), n_sim < 1, a negative
        seed, an unknown test, sigma with a link other than identity, what :func:`optdesign.design_power` refuses
        about X, design and terms, N <= p, or a design whose Fisher information at theta is singular.

    Examples
    --------
    The normal model's Wald test is the F test, so its Monte Carlo power estimates the exact one (0.5716):

    >>> import optdesign as od
    >>> from optdesign.power import glm_power
    >>> cs = od.candidates("~ a + b + c", od.cube(["a", "b", "c"], 2))  # the 8 runs of the 2^3 factorial
    >>> res = glm_power(cs, None, [0.0, 1.0, 1.0, 1.0], "identity", n_sim=4000, seed=1)
    >>> a = res.test("a")
    >>> round(a.asymptotic_power, 4), abs(a.power - a.asymptotic_power) < 4 * a.se
    (0.5716, True)
    """
    model, counts, beta, link = _checked(X, design, theta, link, terms, runs)
    alpha = check_alpha(alpha)
    n_sim, seed = as_count(n_sim, "n_sim"), as_count(seed, "seed", minimum=0)
    kind = check_option(test, "test", GLM_TESTS)
    noise = _sigma(sigma, link)
    support = np.flatnonzero(counts)
    Xs, where = np.unique(model.X[support], axis=0, return_inverse=True)  # a point listed twice is one point
    n = np.bincount(where.ravel(), weights=counts[support], minlength=Xs.shape[0])
    check_array_size(float(n_sim) * Xs.shape[0], "the simulated responses", instead="lower n_sim")
    # C = I(theta)^{-1}, I = sum_k n_k nu_k x_k x_k^T / sigma^2; raises when the design does not estimate theta
    C = _inverse_information(model, counts * score_weights(model.X @ beta, link)[2] / noise**2)
    eta = Xs @ beta
    names, columns = list(model.names), list(model.indices)
    if model.slopes.size:
        names.append(WHOLE_MODEL)
        columns.append(model.slopes)
    y, within = simulate(eta, n, link, noise, n_sim, np.random.default_rng(seed))
    chunks = [_chunk_statistics(columns, Xs, n, y[lo:lo + CHUNK], within[lo:lo + CHUNK], link, kind)
              for lo in range(0, n_sim, CHUNK)]
    stats, valid, converged = (np.concatenate(parts, axis=-1) for parts in zip(*chunks, strict=True))
    return _result(model, names, columns, stats, valid, C, beta, link, kind, alpha, noise, int(counts.sum()),
                   int(np.count_nonzero(~converged)), n_sim, seed)


def _result(model: ModelTerms, names: list[str], columns: list[np.ndarray], stats: np.ndarray, valid: np.ndarray,
            C: np.ndarray, theta: np.ndarray, link: GlmLink, kind: str, alpha: float, sigma: float, N: int,
            n_failed: int, n_sim: int, seed: int) -> GlmPowerResult:
    """The tests' rejections counted, with their standard errors and large-sample powers."""
    df2 = N - model.X.shape[1]
    out = []
    for i, (name, cols) in enumerate(zip(names, columns, strict=True)):
        rejections = int(np.count_nonzero(valid[i] & (stats[i] > _critical(cols.size, df2, alpha, link))))
        power = rejections / n_sim
        lam, asymptotic = _asymptotic(model, cols, C, theta, df2, alpha, link)
        out.append(GlmTermPower(name, tuple(model.columns[j] for j in cols), int(cols.size), power,
                                float(np.sqrt(power * (1.0 - power) / n_sim)), rejections,
                                int(np.count_nonzero(~valid[i])), lam, asymptotic))
    whole = out.pop() if len(out) > len(model.names) else None
    return GlmPowerResult(tuple(out), whole, link, kind, alpha, N, n_sim, seed, theta, model.columns,
                          sigma if link == "identity" else None, n_failed)
