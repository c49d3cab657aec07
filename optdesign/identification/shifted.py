"""Shifted and scaled pair pieces (epsilon-good identification, additive or multiplicative) and their characteristic
time.

The piece {lambda : lambda_j >= c lambda_i + s} (c > 0, s >= 0; additive epsilon: c = 1, s = epsilon; multiplicative:
c = 1 / (1 - epsilon), s = 0) of an alternative set has, at weights w, the least-cost move

    f_ij(w) = min_x  w_i d(mu_i, x) + w_j d(mu_j, c x + s),   x in [a, b],

[a, b] = [max((mu_j - s) / c, lo, (lo - s) / c), min(mu_i, (hi - s) / c)] with [lo, hi] the family's mean space, and
f_ij = 0 when c mu_i + s <= mu_j. For Gaussian arms with c = 1 the shift only moves mu_j
(:func:`optdesign.identification.pair_pieces` has the closed form); otherwise x is the root of
w_i d'(mu_i, x) + c w_j d'(mu_j, c x + s) = 0, with d'(mu, l) = (l - mu) / V(l) the derivative in the second mean,
found here by safeguarded Newton steps. The root is unique on every family: d(mu, .) is convex on Gaussian,
Bernoulli and Poisson arms; on exponential arms (V(l) = l^2) it is concave past l = 2 mu, yet with v = c x + s the
condition reads w_i (mu_i - x) / x^2 = c w_j (v - mu_j) / v^2, and the log of the ratio of its sides has derivative
-1 / (mu_i - x) - 2 / x - c / (v - mu_j) + 2 c / v < 0 on (a, b) (2 c / v <= 2 / x as s >= 0): one crossing, the
global minimum. The gradient of f_ij is (d(mu_i, x), d(mu_j, c x + s)) (envelope theorem).

The characteristic time of epsilon-good identification, which has several correct answers (Degenne & Koolen,
NeurIPS 2019), is

    1 / T* = max over the epsilon-good arms i of  max_w min_{j != i} f_ij(w).

Each anchor i is solved by Garivier & Kaufmann's (2016, Thm 5) equalisation written in x: at the optimum the binding
pieces all equal y w_i; for pair j, r_j = w_j / w_i = -d'(mu_i, x_j) / (c d'(mu_j, c x_j + s)) and
y = d(mu_i, x_j) + r_j d(mu_j, c x_j + s) fix x_j(y) (a pair with d(mu_i, b_j) >= y is slack, r_j = 0: a Bernoulli
arm near 1 bounds lambda_i by (1 - s) / c without a pull of j), and y* is the root of
sum_j d(mu_i, x_j) / d(mu_j, c x_j + s) = 1 (r_j is decreasing in x_j on every family, by the same derivative on
exponential arms, so x_j(y) is unique). Each answer is certified by weak duality with GK's multipliers
p_j ~ 1 / d(mu_j, c x_j + s) (:func:`optdesign.identification.certificate.certified_bracket`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq

from ..errors import InvalidInputError, SolverError
from .certificate import certified_bracket
from .families import Family, divergence

__all__ = ["anchored_time", "as_finite", "check_shifted_family", "scales_of", "shifted_pieces"]

#: families the shifted pieces cover (module docstring: each piece's Newton root is unique)
SHIFTED_FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")
#: Newton steps of a root before giving up, the relative size of a step that counts as converged, and of the value
#: (against its terms) that a converged step must have
MAX_STEPS = 200
CONVERGED = 1e-10
RESIDUAL = 1e-6
#: an anchor whose least gap c mu_i + s - mu_j is below this (relative) gets a bracket without equalisation
DEGENERATE = 1e-9


def _upper(family: Family) -> float:
    return 1.0 if family == "bernoulli" else np.inf


def _lower(family: Family) -> float:
    return -np.inf if family == "gaussian" else 0.0


def _slope(mu: np.ndarray, lam: np.ndarray, family: Family, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """d'(mu, lam) = (lam - mu) / V(lam) and d''(mu, lam), the derivatives of d(mu, .) at lam (NaN at a boundary mean
    0 / 0: the Newton steps then bisect). Callers silence numpy's floating-point warnings."""
    if family == "gaussian":
        return (lam - mu) / sigma**2, np.full(np.shape(lam), 1.0 / sigma**2)
    if family == "poisson":
        return (lam - mu) / lam, mu / lam**2
    if family == "exponential":
        return (lam - mu) / lam**2, (2.0 * mu - lam) / lam**3
    return (lam - mu) / (lam * (1.0 - lam)), mu / lam**2 + (1.0 - mu) / (1.0 - lam) ** 2


def _newton(fun: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]], x: np.ndarray, lo: np.ndarray,
            hi: np.ndarray, what: str) -> np.ndarray:
    """Roots of a function on [lo, hi] that crosses 0 once, upwards (fun gives its value, slope and the size of the
    terms it sums), by Newton steps kept inside the bracket (its midpoint where a step would leave it, is not finite,
    or follows a slope that is not positive), elementwise from x. An entry has converged when its bracket is below
    CONVERGED of its point, or when its step is and its value is below RESIDUAL of its terms (a tiny step next to a
    pole of the function, where the value is huge, is not a root); one more step (quadratic convergence) then reaches
    the rounding of the root."""
    x = np.clip(x, lo, hi)
    width = np.where(np.isfinite(hi - lo), hi - lo, 1.0)
    for _ in range(MAX_STEPS):
        g, slope, size = fun(x)
        lo, hi = np.where(g < 0, x, lo), np.where(g > 0, x, hi)
        new = x - g / slope
        inside = np.isfinite(new) & (slope > 0) & (new >= lo) & (new <= hi)
        new = np.where(g == 0, x, np.where(inside, new, 0.5 * (lo + hi)))
        step, previous = np.abs(new - x), x
        x = new
        tol = CONVERGED * np.maximum(np.abs(x), width)  # a root at 0 (a boundary) is read against the bracket
        small = np.abs(g) <= RESIDUAL * size
        if np.all((hi - lo <= tol) | ((step <= tol) & small)):
            g, slope, _ = fun(x)
            last = x - g / slope
            return np.where(np.isfinite(last) & (last >= lo) & (last <= hi), last, x)
        # a step below tol at a value that is not small (cancellation in the terms, or a pole beside x): step over the
        # root by tol (or to the bracket's midpoint, if that leaves it), so that the bracket closes on the root
        over = previous - np.sign(g) * tol
        over = np.where((over > lo) & (over < hi), over, 0.5 * (lo + hi))
        x = np.where((step <= tol) & ~small & (g != 0), over, x)
    raise SolverError(f"the Newton steps of {what} did not converge")


def _bracket(mi: np.ndarray, mj: np.ndarray, c: np.ndarray, s: np.ndarray,
             family: Family) -> tuple[np.ndarray, np.ndarray]:
    """[a, b], where lambda_i = x of the closest alternative lies (module docstring)."""
    lo, hi = _lower(family), _upper(family)
    return np.maximum(np.maximum((mj - s) / c, lo), (lo - s) / c), np.minimum(mi, (hi - s) / c)


def _closest(mi: np.ndarray, mj: np.ndarray, c: np.ndarray, s: np.ndarray, wi: np.ndarray, wj: np.ndarray,
             family: Family, sigma: float) -> np.ndarray:
    """x minimising w_i d(mu_i, x) + w_j d(mu_j, c x + s) on [a, b] (pairs with c mu_i + s > mu_j), from the
    Gaussian solution."""
    a, b = _bracket(mi, mj, c, s, family)
    total = wi + wj * c**2
    guess = np.where(total > 0, (wi * mi + wj * c * (mj - s)) / np.where(total > 0, total, 1.0), 0.5 * (a + b))

    def foc(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        di, di2 = _slope(mi, x, family, sigma)
        dj, dj2 = _slope(mj, c * x + s, family, sigma)
        left, right = wi * di, c * wj * dj
        return left + right, wi * di2 + c**2 * wj * dj2, np.abs(left) + np.abs(right)

    with np.errstate(all="ignore"):  # a boundary mean's 0 / 0, or 0 * inf: those entries bisect, or are replaced
        x = _newton(foc, guess, a, b, "a shifted piece's closest alternative")
    return np.where(wj <= 0, b, np.where(wi <= 0, a, x))


def shifted_pieces(means: np.ndarray, pairs: np.ndarray, w: np.ndarray, shifts: np.ndarray, family: Family,
                   sigma: float = 1.0, scales: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The values f_ij(w) and gradients of shifted pieces (module docstring), for checked inputs.

    Parameters
    ----------
    means : numpy.ndarray, shape (K,)
        The means, in the family's closed mean space.
    pairs : numpy.ndarray of int, shape (J, 2)
        The ordered pairs (i, j): the answer needs c mu_i + s above mu_j.
    w : numpy.ndarray, shape (K,)
        Nonnegative weights.
    shifts : numpy.ndarray, shape (J,)
        The shifts s >= 0 (below 1 for Bernoulli arms).
    family : str
        ``"gaussian"``, ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma.
    scales : numpy.ndarray, shape (J,), optional
        The scales c > 0 (default 1).

    Returns
    -------
    tuple of numpy.ndarray
        Values, shape (J,), and gradients, shape (J, K).

    Raises
    ------
    InvalidInputError
        An unknown family, a negative shift, a Bernoulli shift of 1 or more, or a scale that is not positive.
    SolverError
        A root did not converge.
    """
    scales = np.ones(pairs.shape[0]) if scales is None else scales
    check_shifted_family(family, shifts, scales)
    values, G = np.zeros(pairs.shape[0]), np.zeros((pairs.shape[0], means.size))
    rows = np.flatnonzero(scales * means[pairs[:, 0]] + shifts > means[pairs[:, 1]])  # the others are 0, flat
    i, j, c, s = pairs[rows, 0], pairs[rows, 1], scales[rows], shifts[rows]
    mi, mj, wi, wj = means[i], means[j], w[i], w[j]
    x = _closest(mi, mj, c, s, wi, wj, family, sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        di, dj = divergence(mi, x, family, sigma), divergence(mj, c * x + s, family, sigma)
        values[rows] = np.where(wi > 0, wi * di, 0.0) + np.where(wj > 0, wj * dj, 0.0)  # 0 * inf is no cost
    G[rows, i], G[rows, j] = di, dj
    return values, G


def as_finite(values: npt.ArrayLike, J: int, name: str) -> np.ndarray:
    """``values`` broadcast to J finite numbers.

    Parameters
    ----------
    values : array_like
        A number or J numbers.
    J : int
        How many.
    name : str
        What they are, for the error.

    Returns
    -------
    numpy.ndarray, shape (J,)
        The numbers as floats.

    Raises
    ------
    InvalidInputError
        A value that is not finite, or a shape that does not broadcast to (J,).
    """
    try:
        out: np.ndarray = np.array(np.broadcast_to(np.asarray(values, dtype=float), (J,)))
    except (ValueError, TypeError):
        raise InvalidInputError(f"{name} must be a number or {J} numbers") from None
    if not np.all(np.isfinite(out)):
        raise InvalidInputError(f"{name} must be finite numbers")
    return out


def scales_of(scales: npt.ArrayLike | None, J: int) -> np.ndarray:
    """The pairs' scales c as J finite numbers (ones when None); :func:`check_shifted_family` checks their sign.

    Parameters
    ----------
    scales : array_like or None
        A number or J numbers.
    J : int
        The number of pairs.

    Returns
    -------
    numpy.ndarray, shape (J,)
        The scales.

    Raises
    ------
    InvalidInputError
        As :func:`as_finite`.
    """
    return np.ones(J) if scales is None else as_finite(scales, J, "scales")


def check_shifted_family(family: Family, shifts: npt.ArrayLike, scales: npt.ArrayLike = 1.0) -> None:
    """Refuse what the shifted pieces do not cover: a family they do not know, negative shifts, a Bernoulli shift >= 1,
    scales that are not positive.

    Parameters
    ----------
    family : str
        The family.
    shifts : array_like
        The shifts.
    scales : array_like
        The scales.

    Raises
    ------
    InvalidInputError
        One of the cases above.
    """
    s = np.asarray(shifts, dtype=float)
    if not np.all(np.asarray(scales, dtype=float) > 0):
        raise InvalidInputError("scales must be positive")
    if family not in SHIFTED_FAMILIES:
        raise InvalidInputError(f"shifted pieces (epsilon-good questions) are given for the families "
                                f"{', '.join(SHIFTED_FAMILIES)}, not {family}")
    if np.any(s < 0):
        raise InvalidInputError("shifts must be >= 0")
    if family == "bernoulli" and np.any(s >= 1):
        raise InvalidInputError("a Bernoulli shift must be below 1 (at 1 or more every arm is epsilon-good)")


def anchored_time(means: np.ndarray, anchor: int, shift: float, family: Family, sigma: float = 1.0,
                  scale: float = 1.0) -> tuple[float, float, np.ndarray]:
    """max_w min_{j != i} f_ij(w) for the anchor i by the equalisation (module docstring), certified.

    Parameters
    ----------
    means : numpy.ndarray, shape (K,)
        The means, inside the family's open mean space.
    anchor : int
        The arm i the answer keeps above every other arm j: c mu_i + s >= mu_j.
    shift : float
        s >= 0.
    family : str
        ``"gaussian"``, ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma.
    scale : float
        c > 0 (default 1).

    Returns
    -------
    tuple
        ``(upper, lower, w)``: T_i = 1 / min_j f_ij(w) at the weights w, and a certified lower bound on T_i
        (inf and inf when some piece is 0: the anchor cannot be told apart from an alternative).

    Raises
    ------
    InvalidInputError
        As :func:`check_shifted_family`.
    SolverError
        A root did not converge.
    """
    check_shifted_family(family, shift, scale)
    K = means.size
    others = np.delete(np.arange(K), anchor)
    mi, mj = np.full(others.size, means[anchor]), means[others]
    c, s = np.full(others.size, float(scale)), np.full(others.size, float(shift))
    if np.any(c * mi + s <= mj):
        return np.inf, np.inf, np.full(K, 1.0 / K)
    pairs = np.column_stack([np.full(others.size, anchor), others])
    if np.min(c * mi + s - mj) <= DEGENERATE * max(1.0, float(np.abs(means).max())):
        return _degenerate(means, pairs, c, s, family, sigma)
    ratios, x = _equalised(mi, mj, c, s, family, sigma)
    w = np.zeros(K)
    w[anchor] = 1.0 / (1.0 + ratios.sum())
    w[others] = ratios * w[anchor]
    values, G = shifted_pieces(means, pairs, w, s, family, sigma, c)
    with np.errstate(divide="ignore"):
        mixture = np.where(ratios > 0, 1.0 / divergence(mj, c * x + s, family, sigma), 0.0)
    ok = bool(np.all(np.isfinite(mixture)) and mixture.sum() > 0)
    lower, upper = certified_bracket(values, G, mixture / mixture.sum() if ok else None)
    return upper, min(lower, upper), w


def _degenerate(means: np.ndarray, pairs: np.ndarray, c: np.ndarray, s: np.ndarray, family: Family,
                sigma: float) -> tuple[float, float, np.ndarray]:
    """An anchor on the edge of the epsilon-good set (a pair apart by rounding only): T_i <= 1 / min_j f_ij at the
    uniform design, and T_i >= max_j 1 / max(d(mu_i, x_j), d(mu_j, c x_j + s)) at the middle x_j of each pair's
    interval (f_ij(w) is at most w_i d(mu_i, x) + w_j d(mu_j, c x + s) for every x, so max_w f_ij <= that max)."""
    w = np.full(means.size, 1.0 / means.size)
    values, _ = shifted_pieces(means, pairs, w, s, family, sigma, c)
    mi, mj = means[pairs[:, 0]], means[pairs[:, 1]]
    a, b = _bracket(mi, mj, c, s, family)
    x = 0.5 * (a + b)
    with np.errstate(divide="ignore"):  # a piece or both divergences 0 to rounding: no separation, T_i infinite
        upper = float(np.divide(1.0, values.min()))
        lower = float(np.max(np.divide(1.0, np.maximum(divergence(mi, x, family, sigma),
                                                       divergence(mj, c * x + s, family, sigma)))))
    return upper, min(lower, upper), w


def _equalised(mi: np.ndarray, mj: np.ndarray, c: np.ndarray, s: np.ndarray, family: Family,
               sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The ratios r_j = w_j / w_i and the points x_j at the root y* of sum_j d(mu_i, x_j) / d(mu_j, c x_j + s) = 1."""
    a, b = _bracket(mi, mj, c, s, family)
    with np.errstate(divide="ignore"):
        floor = divergence(mi, b, family, sigma)  # y at r_j = 0: pair j is slack below it
        cap = divergence(mi, a, family, sigma)  # the limit of y as r_j grows (inf at a boundary of infinite cost)

    def points(y: float) -> tuple[np.ndarray, np.ndarray]:
        def level(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            di, di2 = _slope(mi, x, family, sigma)
            dj, dj2 = _slope(mj, c * x + s, family, sigma)
            r = np.where(dj > 0, -di / (c * dj), np.inf)
            value = divergence(mi, x, family, sigma) + np.where(r > 0, r * divergence(mj, c * x + s, family, sigma),
                                                                 0.0)
            dr = -(di2 * dj - c * di * dj2) / (c * dj**2)
            # increasing in x; the size has a floor: at a tiny y the divergences' rounding is larger than y itself
            return y - value, -divergence(mj, c * x + s, family, sigma) * dr, y + np.abs(value) + 1e-9

        slack = floor >= y
        with np.errstate(all="ignore"):  # the ends of [a, b]: infinite or 0 / 0 terms, where the steps bisect
            x = np.where(slack, b, _newton(level, 0.5 * (a + b), a, b, "an equalised pair"))
            di, dj = _slope(mi, x, family, sigma)[0], _slope(mj, c * x + s, family, sigma)[0]
            r = np.where(slack, 0.0, np.where(dj > 0, -di / (c * dj), np.inf))  # inf: x_j at the cap
        return x, r

    def excess(log_y: float) -> float:
        x, r = points(float(np.exp(log_y)))
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(r > 0, divergence(mi, x, family, sigma) / divergence(mj, c * x + s, family, sigma), 0.0)
            terms = np.where(np.isinf(r), np.inf, terms)
        return float(np.log(max(float(terms.sum()), 1e-300)))

    top, start = float(cap.min()), float(floor.min())
    lo = np.log(start) if start > 0 else np.log(1e-12 * min(top, 1.0))  # S = 0 at the least floor, ~ y^2 near 0
    # S grows without bound towards the cap; closer than about 1e-6 the divergences d(mu_j, c x_j + s) lose their
    # digits to cancellation, so the cap is approached in steps
    margins = iter((1e-6, 1e-9, 1e-12)) if np.isfinite(top) else iter(())
    hi = lo + 1.0
    while not excess(hi) >= 0:
        margin = next(margins, None)
        if margin is None and np.isfinite(top):
            raise SolverError("the equalisation's sum stays below 1 up to its cap (divergences at the limit of "
                              "floating point)")
        hi = np.log(top) + np.log1p(-margin) if margin is not None else hi + 1.0
    log_y = brentq(excess, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    x, r = points(float(np.exp(log_y)))
    return r, x
