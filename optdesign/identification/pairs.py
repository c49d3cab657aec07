"""The characteristic time of identification questions whose alternatives each swap the order of two arms.

On K arms of one exponential family (:mod:`optdesign.identification.families`), best-arm identification, top-m
identification (Kalyanakrishnan et al. 2012) and, for Gaussian arms, epsilon-good identification have alternative
sets that are unions of pieces {lambda : lambda_j >= lambda_i + s}, one per ordered pair (i, j) that the answer
needs in the order i above j. The least-cost move of such a piece at weights w is

    f_ij(w) = inf_{lambda_j - lambda_i >= s} w_i d(mu_i, lambda_i) + w_j d(mu_j, lambda_j),

0 when mu_i - mu_j <= s, and for s = 0 the family's closed form at the weighted mean (linear minus a perspective:
concave, disciplined convex). For Gaussian arms a shift s moves mu_j to mu_j - s; on Bernoulli, Poisson and
exponential arms the shifted pieces are 1-D minimisations with one stationary point
(:mod:`optdesign.identification.shifted`), which the cvxpy model below does not take.
The characteristic time (Garivier & Kaufmann 2016, Thm 1; E[tau] >= T* kl(delta, 1 - delta)) is

    1 / T* = max_{w in simplex} min_(i,j) f_ij(w),

the declarative model :class:`PairsModel` (cvxpy, the means as Parameters: built once per pair structure and
re-solved), certified by :func:`optdesign.identification.certificate.certified_bracket` with the model's dual
multipliers. :func:`best_arm_pairs` and :func:`top_m_pairs` list the pairs of the two questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._lazy import cp
from ..errors import InvalidInputError, SolverError
from ..runtime.solvers import solve
from ..validation import as_count
from .certificate import certified_bracket
from .families import Family, check_family, check_means, divergence, phi, phi_perspective
from .shifted import as_finite, check_shifted_family, scales_of, shifted_pieces

#: tighter solver tolerances than the defaults: the certificate reads the weights, whose error enters it at first order
#: (the objective is flat in them near the optimum, so an interior point method's weights are accurate to about the
#: square root of its tolerance)
TIGHT: dict[str, dict] = {"CLARABEL": {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9},
                          "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}}
#: the solvers tried in turn until the certified gap is within ``tol``
SOLVERS = ("CLARABEL", "SCS")

__all__ = ["IdentificationTime", "PairsModel", "best_arm_pairs", "pair_pieces", "pairwise_characteristic_time",
           "top_m_pairs"]


@dataclass(frozen=True)
class IdentificationTime:
    """The characteristic time of an identification question, certified.

    Parameters
    ----------
    value : float
        T* = 1 / min_p f_p(w) at the reported weights (an upper bound on the optimum, equal to it up to ``gap``).
    weights : numpy.ndarray, shape (K,)
        The optimal proportions w*.
    lower_bound : float
        A certified lower bound on T* (weak duality with the model's multipliers).
    gap : float
        (value - lower_bound) / value (inf when the weights leave some pair unseparated: value is then inf).
    active : numpy.ndarray of int, shape (J, 2)
        The pairs (i, j) whose pieces are within 1e-6 (relative) of the minimum at w*: the closest alternatives.
    status : str
        The solver's status.
    solver : str
        The solver that answered.
    solve_time : float
        Seconds in the solver.
    """

    value: float
    weights: np.ndarray
    lower_bound: float
    gap: float
    active: np.ndarray
    status: str
    solver: str
    solve_time: float


def best_arm_pairs(means: npt.ArrayLike) -> np.ndarray:
    """The pairs of best-arm identification: (best, j) for every other arm j.

    Parameters
    ----------
    means : array_like, shape (K,)
        The means, with a unique largest.

    Returns
    -------
    numpy.ndarray of int, shape (K - 1, 2)
        The pairs.

    Raises
    ------
    InvalidInputError
        Not a finite vector of two or more means, or a tie for the largest.
    """
    return top_m_pairs(means, 1)


def top_m_pairs(means: npt.ArrayLike, m: int) -> np.ndarray:
    """The pairs of top-m identification: (i, j) for every arm i of the m largest means and j outside them.

    Parameters
    ----------
    means : array_like, shape (K,)
        The means; the m-th and (m+1)-th largest must differ (else the answer is not unique).
    m : int
        The size of the answer, 1 <= m < K.

    Returns
    -------
    numpy.ndarray of int, shape (m (K - m), 2)
        The pairs, the top arms in increasing index, then the others.

    Raises
    ------
    InvalidInputError
        Not a finite vector of two or more means, m outside [1, K), or a tie at the m-th largest mean.
    """
    mu = np.asarray(means, dtype=float)
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise InvalidInputError("means must be a vector of at least two finite numbers")
    K = mu.size
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m < K:
        raise InvalidInputError(f"m must be an integer with 1 <= m < K = {K}, got {m!r}")
    order = np.argsort(-mu, kind="stable")
    if mu[order[m - 1]] == mu[order[m]]:
        raise InvalidInputError(f"the {m}-th and {m + 1}-th largest means are equal ({mu[order[m]]:g}): the top-{m} "
                                "set is not unique")
    top, rest = np.sort(order[:m]), np.sort(order[m:])
    return np.array([(i, j) for i in top for j in rest], dtype=np.int64)


def _check_pairs(pairs: npt.ArrayLike, K: int) -> np.ndarray:
    P = np.asarray(pairs)
    if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] == 0 or not np.issubdtype(P.dtype, np.integer):
        raise InvalidInputError(f"pairs must be an integer array of shape (J, 2) with J >= 1, got shape {P.shape}")
    if P.min() < 0 or P.max() >= K or np.any(P[:, 0] == P[:, 1]):
        raise InvalidInputError(f"pairs must name two different arms among 0 .. {K - 1}")
    return P.astype(np.int64)


def _check_shifts(shifts: npt.ArrayLike | None, J: int, family: Family, *, model: bool = False) -> np.ndarray:
    """The pairs' shifts as J finite numbers; beside Gaussian arms only the pieces take them (:mod:`.shifted`), not the
    cvxpy model (``model``)."""
    s = np.zeros(J) if shifts is None else as_finite(shifts, J, "shifts")
    if family != "gaussian" and np.any(s != 0):
        if model:
            raise InvalidInputError("the cvxpy model takes shifted pieces on Gaussian arms only; the epsilon-good "
                                    "time of other families is optdesign.epsilon_good_characteristic_time")
        check_shifted_family(family, s)
    return s


def pair_pieces(means: npt.ArrayLike, pairs: npt.ArrayLike, w: npt.ArrayLike, *, family: str = "gaussian",
                sigma: float = 1.0, shifts: npt.ArrayLike | None = None,
                scales: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The pieces' values f_ij(w) and gradients at weights w (module docstring): the closest alternative of a pair
    moves both arms to their weighted mean (shifted by s for Gaussian arms; a Newton root for other shifted pieces),
    and the gradient of f_ij in w is the pair of divergences to it (envelope theorem).

    Parameters
    ----------
    means : array_like, shape (K,)
        The means (estimates: the family's closed mean space).
    pairs : array_like of int, shape (J, 2)
        The ordered pairs (i, j): the answer needs mu_i above mu_j (by s).
    w : array_like, shape (K,)
        Nonnegative weights.
    family : str
        ``"gaussian"``, ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma.
    shifts : array_like, shape (J,), optional
        The shifts s of the pieces (default 0): any for Gaussian arms, s >= 0 for Bernoulli (s < 1), Poisson and
        exponential ones (:mod:`optdesign.identification.shifted`).
    scales : array_like, shape (J,), optional
        Scales c > 0 of the pieces {lambda_j >= c lambda_i + s} (default 1; multiplicative epsilon-good questions).

    Returns
    -------
    tuple of numpy.ndarray
        Values, shape (J,), and gradients, shape (J, K).

    Raises
    ------
    InvalidInputError
        An unknown family, means outside its mean space, bad pairs, shifts or scales, or weights that are not K
        nonnegative finite numbers.
    SolverError
        A shifted piece's root did not converge.
    """
    fam, sigma = check_family(family, sigma)
    mu = check_means(means, fam, closed=True)
    K = mu.size
    P = _check_pairs(pairs, K)
    s = _check_shifts(shifts, P.shape[0], fam)
    w = np.asarray(w, dtype=float)
    if w.shape != (K,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InvalidInputError(f"w must be {K} nonnegative finite numbers")
    c = scales_of(scales, P.shape[0])
    if np.any(c != 1) or (fam != "gaussian" and np.any(s != 0)):
        return shifted_pieces(mu, P, w, s, fam, sigma, c)
    i, j = P[:, 0], P[:, 1]
    xi, xj = mu[i], mu[j] - s
    wi, wj = w[i], w[j]
    total = wi + wj
    m = np.where(total > 0, (wi * xi + wj * xj) / np.where(total > 0, total, 1.0), 0.5 * (xi + xj))
    with np.errstate(divide="ignore", invalid="ignore"):  # a Bernoulli estimate on the boundary, weight 0 beside it
        di, dj = divergence(xi, m, fam, sigma), divergence(xj, m, fam, sigma)
        cost = np.where(wi > 0, wi * di, 0.0) + np.where(wj > 0, wj * dj, 0.0)  # 0 * inf is no cost
    apart = xi > xj
    G = np.zeros((P.shape[0], K))
    rows = np.arange(P.shape[0])
    G[rows, i] = np.where(apart, di, 0.0)
    G[rows, j] = np.where(apart, dj, 0.0)
    return np.where(apart, cost, 0.0), G


class PairsModel:
    """The cvxpy model of 1 / T* = max_w min_p f_p(w) for a fixed list of pairs, the means as Parameters.

    maximise t subject to  w_i phi(x_i) + w_j phi(x_j) - W phi(P / W) >= t  for every pair,  sum w = 1,  w >= 0,

    with x_i = mu_i, x_j = mu_j - s, P = w_i x_i + w_j x_j and W = w_i + w_j (the family's perspective of
    :func:`optdesign.identification.families.phi_perspective`; disciplined parametrised, so a re-solve skips
    compilation).

    Parameters
    ----------
    n_arms : int
        K.
    pairs : array_like of int, shape (J, 2)
        The ordered pairs.
    family : str
        The family.
    sigma : float
        The Gaussian sigma.

    Raises
    ------
    InvalidInputError
        An unknown family, fewer than two arms, or bad pairs.
    """

    def __init__(self, n_arms: int, pairs: npt.ArrayLike, *, family: str = "gaussian", sigma: float = 1.0) -> None:
        self.family, self.sigma = check_family(family, sigma)
        n_arms = as_count(n_arms, "n_arms", minimum=2)
        self.pairs = _check_pairs(pairs, n_arms)
        J = self.pairs.shape[0]
        self.K = n_arms
        self.w = cp.Variable(n_arms, nonneg=True)
        self.t = cp.Variable()
        self.x_top = cp.Parameter(J)  # x_i, one per pair
        self.x_low = cp.Parameter(J)  # x_j - s
        self.phi_top = cp.Parameter(J)
        self.phi_low = cp.Parameter(J)
        i, j = self.pairs[:, 0], self.pairs[:, 1]
        wi, wj = self.w[i], self.w[j]
        P = cp.multiply(self.x_top, wi) + cp.multiply(self.x_low, wj)
        f = cp.multiply(self.phi_top, wi) + cp.multiply(self.phi_low, wj) - phi_perspective(P, wi + wj, self.family,
                                                                                              self.sigma)
        self.constraints = [f >= self.t, cp.sum(self.w) == 1]
        self.problem = cp.Problem(cp.Maximize(self.t), self.constraints)

    def solve(self, means: npt.ArrayLike, *, shifts: npt.ArrayLike | None = None, solver: str | None = None,
              tol: float = 1e-6) -> IdentificationTime:
        """T*, w* at these means, certified.

        Parameters
        ----------
        means : array_like, shape (K,)
            The means; every pair's x_i must exceed its x_j (else a piece is 0 and T* infinite).
        shifts : array_like, shape (J,), optional
            The pairs' shifts s (Gaussian arms only).
        solver : str, optional
            A conic solver (with the exponential cone for non-Gaussian families); None: CLARABEL, then SCS when
            CLARABEL's certified gap exceeds ``tol`` (the smaller gap is kept).
        tol : float
            The relative gap at which a solver's answer is kept (default 1e-6).

        Returns
        -------
        IdentificationTime
            Value, weights, certified lower bound and gap.

        Raises
        ------
        InvalidInputError
            Means outside the family's space or of the wrong length, bad shifts, a tol that is not positive, or a
            pair not in its order.
        SolverError
            No solver answered.
        """
        mu = check_means(means, self.family)
        if mu.size != self.K:
            raise InvalidInputError(f"means must have {self.K} entries, got {mu.size}")
        s = _check_shifts(shifts, self.pairs.shape[0], self.family, model=True)
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (np.isfinite(tol) and tol > 0):
            raise InvalidInputError(f"tol must be a positive number, got {tol!r}")
        i, j = self.pairs[:, 0], self.pairs[:, 1]
        x_top, x_low = mu[i], mu[j] - s
        if np.any(x_top <= x_low):
            bad = self.pairs[np.argmax(x_top <= x_low)]
            raise InvalidInputError(f"arm {bad[0]} is not above arm {bad[1]} by its shift: no information separates "
                                    "the answer from an alternative (T* is infinite)")
        self.x_top.value, self.x_low.value = x_top, x_low
        self.phi_top.value = phi(x_top, self.family, self.sigma)
        self.phi_low.value = phi(x_low, self.family, self.sigma)
        best: IdentificationTime | None = None
        failures = []
        for name in (solver,) if solver is not None else SOLVERS:
            try:
                result = self._certified(mu, s, name)
            except SolverError as exc:
                failures.append(str(exc))
                continue
            if best is None or result.gap < best.gap:
                best = result
            if best.gap <= tol:
                break
        if best is None:
            raise SolverError("no solver answered: " + "; ".join(failures))
        return best

    def _certified(self, mu: np.ndarray, s: np.ndarray, solver: str) -> IdentificationTime:
        """One solve with ``solver`` and the certificate of its weights."""
        # an inaccurate answer is accepted quietly: the bracket below certifies whatever weights come back
        info = solve(self.problem, solver, solver_options=TIGHT, accept=lambda: True)
        if self.w.value is None:
            raise SolverError(f"{solver}: no weights (status {info.status})")
        w = np.clip(np.asarray(self.w.value, dtype=float), 0.0, None)
        w /= w.sum()
        values, G = pair_pieces(mu, self.pairs, w, family=self.family, sigma=self.sigma, shifts=s)
        dual = self.constraints[0].dual_value
        mixture = None
        if dual is not None and np.all(np.isfinite(dual)) and np.clip(dual, 0, None).sum() > 0:
            mixture = np.clip(np.asarray(dual, dtype=float), 0.0, None)
        lower, upper = certified_bracket(values, G, mixture)
        if mixture is not None and (upper - lower) > 1e-6 * upper:  # the duals were loose: the best mixture
            lower = max(lower, certified_bracket(values, G)[0])
        active = self.pairs[values <= values.min() * (1 + 1e-6)]
        gap = (upper - lower) / upper if np.isfinite(upper) else float("inf")  # weights that separate no pair
        return IdentificationTime(value=upper, weights=w, lower_bound=lower, gap=gap, active=active,
                                  status=info.status, solver=info.solver, solve_time=info.solve_time)


def pairwise_characteristic_time(means: npt.ArrayLike, pairs: npt.ArrayLike, *, family: str = "gaussian",
                                 sigma: float = 1.0, shifts: npt.ArrayLike | None = None, solver: str | None = None,
                                 tol: float = 1e-6) -> IdentificationTime:
    """T* and w* of the question whose alternatives are the given pairs (module docstring), certified.

    Parameters
    ----------
    means : array_like, shape (K,)
        The arms' means.
    pairs : array_like of int, shape (J, 2)
        The ordered pairs (:func:`best_arm_pairs`, :func:`top_m_pairs`, or a question's own).
    family : str
        ``"gaussian"`` (default), ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma (default 1).
    shifts : array_like, shape (J,), optional
        The pieces' shifts (Gaussian arms only; default 0).
    solver : str, optional
        A conic solver; None: CLARABEL, then SCS if CLARABEL's certified gap exceeds ``tol``.
    tol : float
        The relative gap at which a solver's answer is kept (default 1e-6).

    Returns
    -------
    IdentificationTime
        T* (Garivier & Kaufmann's convention: E[tau] >= T* kl(delta, 1 - delta)), w*, a certified lower bound, the
        gap and the closest pairs.

    Raises
    ------
    InvalidInputError
        An unknown family, means outside its space, bad pairs or shifts, or a pair whose arms are not in its order.
    SolverError
        No solver answered.

    Examples
    --------
    >>> import optdesign as od
    >>> means = [1.0, 0.5]
    >>> result = od.pairwise_characteristic_time(means, od.best_arm_pairs(means))
    >>> round(result.value, 4)  # two Gaussian arms: 8 sigma^2 / gap^2
    32.0
    """
    mu = np.asarray(means, dtype=float)
    P = _check_pairs(pairs, mu.size if mu.ndim == 1 else 0)
    return PairsModel(mu.size, P, family=family, sigma=sigma).solve(mu, shifts=shifts, solver=solver, tol=tol)
