"""Diagnostics of a design, as R OptimalDesign's od_print: criteria values, eigenvalues, certified efficiencies and
the variance function.

For a design w over the candidates X (K x d), normalised, M(w) = sum_k w_k x_k x_k^T is its information matrix and
d(x, w) = x^T M(w)^- x the standardised variance of the fitted response at x (N var(x^T theta_hat) / sigma^2 for N
runs; Atkinson, Donev & Tobias 2007). Every criterion is minimised and homogeneous of degree -1 in M (its own
units, a variance), so the efficiency of w is Phi* / Phi(w) in [0, 1] (Pukelsheim 1993, ch. 5). The optimum Phi*
is bracketed by the criterion's own solver, L <= Phi* <= U (L its certified lower bound, U the value its design
attains), hence L / Phi(w) <= efficiency <= U / Phi(w): :class:`Efficiency` holds both ends, and ``exact`` says
that they agree (G: Phi* = d exactly, Kiefer & Wolfowitz 1960).

The two D numbers:

* ``values["d"]`` = det M(w)^(-1/d), the D-criterion in variance units (``criterion_value(X, w, "d")``); the
  D-efficiency is (det M(w) / det M*)^(1/d) = D* / ``values["d"]``;
* ``values["g"]`` = max_k d(x_k, w), the G-value; this is the ``g_value`` of every design result (the ``value`` of
  :func:`optdesign.g_optimal`; d at the D-optimal design, Kiefer–Wolfowitz), and d / ``values["g"]`` is the
  G-efficiency, exactly. It also bounds the D-efficiency: (det M(w) / det M*)^(1/d) >= d / ``values["g"]``
  (Atwood 1969), which certifies D* from the D-optimal design.

The optima are those over all designs on the candidates (no constraints): the efficiencies of a constrained
design say what the constraints cost. Given anticipated coefficients (``effects``), the diagnostics also hold the
power of each term's F test at the design's runs (:func:`optdesign.design_power`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InvalidInputError
from ...formulas import CandidateSet
from ...result import DesignResult
from ...validation import as_matrix, check_weights
from .criteria import RANGE_TOL, spectrum
from .designs import a_optimal, c_optimal, ds_optimal, e_optimal, i_optimal
from .dg_designs import d_optimal
from .values import criterion_value

if TYPE_CHECKING:
    from ...power import PowerResult
    from ...power.terms import TermsLike

__all__ = ["DesignDiagnostics", "Efficiency", "design_diagnostics", "design_weights", "variance_function"]

#: certified relative gap of the optimal designs behind the efficiencies
DIAGNOSTICS_TOL = 1e-6
#: two ends of an efficiency closer than this (relative) make it exact
EXACT_RTOL = 1e-12


@dataclass(frozen=True)
class Efficiency:
    """The efficiency of a design under one criterion Phi (minimised): Phi* / Phi(w), bracketed.

    ``lower_bound <= Phi* <= optimum``, so ``efficiency = lower_bound / value`` is a certified lower bound on the
    efficiency and ``efficiency_upper = min(1, optimum / value)`` an upper one.
    """

    #: ``"d"``, ``"g"``, ``"a"``, ``"i"``, ``"e"``, ``"c"`` or ``"ds"`` (the names of :func:`criterion_value`)
    criterion: str
    #: Phi(w), the criterion at the design (inf when M(w) does not estimate what it needs)
    value: float
    #: certified lower bound L on the optimum Phi*
    lower_bound: float
    #: the value U >= Phi* attained by the criterion's optimal design (as computed)
    optimum: float

    @property
    def efficiency(self) -> float:
        """Certified lower bound ``lower_bound / value`` on the efficiency (0 when ``value`` is inf)."""
        return 0.0 if not np.isfinite(self.value) else min(1.0, self.lower_bound / self.value)

    @property
    def efficiency_upper(self) -> float:
        """Upper bound ``min(1, optimum / value)`` on the efficiency (0 when ``value`` is inf)."""
        return 0.0 if not np.isfinite(self.value) else min(1.0, self.optimum / self.value)

    @property
    def exact(self) -> bool:
        """Whether the efficiency is known exactly (both ends agree), rather than bounded."""
        return bool(self.efficiency_upper - self.efficiency <= EXACT_RTOL * max(self.efficiency_upper, 1e-300))


@dataclass(frozen=True)
class DesignDiagnostics:
    """What :func:`design_diagnostics` finds about a design (module doc: conventions and the two D numbers)."""

    #: the design, normalised to sum to one
    weights: np.ndarray
    #: the eigenvalues of M(w), largest first (zeros for a singular M)
    eigenvalues: np.ndarray
    #: criterion name to its :class:`Efficiency` (value at the design, bounds on the optimum)
    efficiencies: dict[str, Efficiency]
    #: the variance function d(x_k, w) at each candidate (inf where x_k is not estimable)
    variance: np.ndarray
    #: the power of each term's F test at the design's runs, when effects were given (None otherwise)
    power: PowerResult | None = None

    @property
    def values(self) -> dict[str, float]:
        """Criterion name to its value at the design (``values["d"]`` = det M^(-1/d), ``values["g"]`` = max d(x, w))."""
        return {name: e.value for name, e in self.efficiencies.items()}

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``eigenvalues``, ``max_variance`` and, per criterion, its value, certified efficiency, upper efficiency
            and whether it is exact (inf values as None); ``power`` (:meth:`optdesign.PowerResult.to_dict`) when
            effects were given.
        """
        def num(v: float) -> float | None:
            return float(v) if np.isfinite(v) else None

        return {
            "eigenvalues": self.eigenvalues.tolist(),
            "max_variance": num(float(self.variance.max())),
            "criteria": {name: {"value": num(e.value), "efficiency": e.efficiency, "efficiency_upper":
                                e.efficiency_upper, "exact": e.exact} for name, e in self.efficiencies.items()},
            **({} if self.power is None else {"power": self.power.to_dict()}),
        }


def design_weights(design: ArrayLike | DesignResult | Any, n: int) -> np.ndarray:
    """The weights of a design on n candidates, normalised: an array, a DesignResult or an ExactDesignResult.

    Parameters
    ----------
    design : array_like or DesignResult or ExactDesignResult
        Weights or run counts per candidate, or a result (its ``weights``).
    n : int
        The number of candidates.

    Returns
    -------
    numpy.ndarray
        Nonnegative weights summing to one.

    Raises
    ------
    InvalidInputError
        Negative, non-finite or all-zero entries, or not one per candidate.
    """
    raw: Any = design.weights if hasattr(design, "weights") else design
    weights = check_weights(raw, "design")
    if weights.size != n:
        raise InvalidInputError(f"the design has {weights.size} weights for {n} candidates")
    out: np.ndarray = weights / weights.sum()
    return out


def variance_function(X: ArrayLike, design: ArrayLike | DesignResult | Any,
                      points: ArrayLike | None = None) -> np.ndarray:
    """The variance function d(x, w) = x^T M(w)^- x at the candidates (or at ``points``).

    M(w) = X^T diag(w) X. When M(w) is singular, M^- is its pseudo-inverse and d(x, w) is inf at every x outside the
    range of M(w) (x^T theta is then not estimable); x in the range (relative residual below 1e-8) gets the
    pseudo-inverse's value, which is the same for every generalised inverse. At the D-optimal design max_k d(x_k, w)
    = d (Kiefer & Wolfowitz 1960).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The candidates.
    design : array_like or DesignResult or ExactDesignResult
        Weights (or counts) per candidate, normalised here.
    points : array_like, shape (m, d), optional
        Where to evaluate it; the candidates by default.

    Returns
    -------
    numpy.ndarray
        d(x, w) at each point (inf where not estimable).

    Raises
    ------
    InvalidInputError
        NaN/inf entries, wrong shapes, a design that is not one nonnegative weight per candidate.
    """
    Xa = as_matrix(X, "X")
    w = design_weights(design, Xa.shape[0])
    Z = Xa if points is None else as_matrix(points, "points", n_cols=Xa.shape[1])
    sigma, V_range, V_null = spectrum(Xa, w)
    out: np.ndarray = np.sum((Z @ V_range / sigma) ** 2, axis=1)
    outside = np.linalg.norm(Z @ V_null, axis=1) > RANGE_TOL * np.linalg.norm(Z, axis=1)
    out[outside] = np.inf
    return out


def _optimum(name: str, X: np.ndarray, kw: dict, tol: float, solver: str | None) -> tuple[float, float]:
    """(L, U) with L <= Phi* <= U for one criterion: its certified bound and the value its design attains."""
    d = X.shape[1]
    if name == "g":
        return float(d), float(d)  # Kiefer–Wolfowitz
    if name == "d":
        res = d_optimal(X, tol=tol, solver=solver)
        return float(res.lower_bound or 0.0), res.value  # Atwood's bound: D-efficiency >= d / G-value
    solve: dict[str, Callable[..., DesignResult]] = {
        "a": a_optimal, "i": i_optimal, "e": e_optimal, "c": c_optimal, "ds": ds_optimal}
    res = solve[name](X, **kw, tol=tol, solver=solver)
    return float(res.lower_bound if res.lower_bound is not None else 0.0), res.value


def design_diagnostics(X: ArrayLike | CandidateSet, design: ArrayLike | DesignResult | Any, *,
                       c: ArrayLike | None = None, subset: ArrayLike | None = None, region: ArrayLike | None = None,
                       region_weights: ArrayLike | None = None, tol: float = DIAGNOSTICS_TOL,
                       solver: str | None = None, effects: ArrayLike | float | None = None, alpha: float = 0.05,
                       sigma: float = 1.0, terms: TermsLike = None, runs: int | None = None) -> DesignDiagnostics:
    """A design's efficiency under every criterion (D, G, A, I, E, and c, Ds when asked), its eigenvalues and
    variance function, as R OptimalDesign's od_print reports them.

    Efficiency Phi* / Phi(w) for criteria minimised in variance units (Pukelsheim 1993, ch. 5): D is
    (det M(w) / det M*)^(1/d), G d / max_k d(x_k, w), A tr M*^{-1} / tr M(w)^{-1}, I its region's average variance
    ratio, E lambda_min(M(w)) / lambda_min(M*). Each optimum comes from this package's solver of that criterion, with
    its certificate (module doc), so each efficiency is a certified interval; G's is exact. With ``effects``, also
    the power of each term's F test, P(F(df1, N - p, lambda_T) > f_{1-alpha}) with lambda_T = beta_T^T (C_TT)^{-1}
    beta_T / sigma^2 (:func:`optdesign.design_power`), at the design's runs.

    Parameters
    ----------
    X : array_like, shape (K, d), or CandidateSet
        The candidates (or :func:`optdesign.candidates`' result, whose column names then name the power's terms).
        If they do not span R^d only c (and Ds, if estimable) are reported.
    design : array_like or DesignResult or ExactDesignResult
        Weights (or counts) per candidate, normalised here.
    c : array_like, optional
        Also the c-criterion c^T M^- c (a vector, or rows of C for L).
    subset : array_like of int, optional
        Also the Ds-criterion of these parameters.
    region : array_like, optional
        The region of the I-criterion (points in the coordinates of X); the candidates, uniformly, by default.
    region_weights : array_like, optional
        The weights of the region's points.
    tol : float
        Certified relative gap of the optimal designs (the width of each efficiency's interval).
    solver : str, optional
        Conic solver of the optimal designs' cvxpy paths.
    effects : array_like or float, optional
        The anticipated coefficients beta (one per column, or one number for every coefficient but the
        intercept's): the diagnostics then hold the power of each term's F test. The design must then have runs
        (counts, an exact design) or ``runs`` be given.
    alpha : float
        The level of the F tests (with ``effects``).
    sigma : float
        The noise standard deviation (with ``effects``).
    terms : str or mapping, optional
        The terms tested, as for :func:`optdesign.design_power` (with ``effects``).
    runs : int, optional
        The number of runs N an approximate design is rounded to for the power (with ``effects``).

    Returns
    -------
    DesignDiagnostics
        ``efficiencies`` (per criterion: value at the design, certified and upper efficiency), ``values``,
        ``eigenvalues`` of M(w), ``variance`` d(x_k, w), and ``power`` with ``effects``.

    Raises
    ------
    InvalidInputError
        Bad candidates or design, whatever the criteria refuse (c not estimable, a bad subset or region), and with
        ``effects`` what :func:`optdesign.design_power` refuses (weights without ``runs``, N <= p, ...).

    Examples
    --------
    Quadratic regression on {-1, 0, 1}: the uniform design is D-optimal, its G-value is d = 3.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> X = np.column_stack([np.ones(3), x, x**2])
    >>> diag = od.design_diagnostics(X, np.ones(3))
    >>> print(round(diag.values["g"], 6), diag.efficiencies["g"].efficiency, diag.efficiencies["g"].exact)
    3.0 1.0 True
    >>> print(round(diag.efficiencies["a"].efficiency, 4))  # tr M*^-1 / tr M^-1 = 8 / 9
    0.8889
    """
    Xa = as_matrix(X.X if isinstance(X, CandidateSet) else X, "X")
    w = design_weights(design, Xa.shape[0])
    power = None
    if effects is not None:
        from ...power import design_power

        power = design_power(X, design, effects, alpha=alpha, sigma=sigma, terms=terms, runs=runs)
    singular, _, _ = spectrum(Xa, w)
    eigenvalues = np.concatenate([singular**2, np.zeros(Xa.shape[1] - singular.size)])
    spans = spectrum(Xa, np.ones(Xa.shape[0]))[0].size == Xa.shape[1]
    args: dict[str, dict] = {}
    if spans:
        args = {"d": {}, "g": {}, "a": {}, "i": {"region": region, "region_weights": region_weights}, "e": {}}
    elif region is not None or region_weights is not None:
        raise InvalidInputError("the I-criterion needs candidates that span R^d")
    if c is not None:
        args["c"] = {"c": c}
    if subset is not None:
        args["ds"] = {"subset": subset}
    if not args:
        raise InvalidInputError("the candidates do not span R^d: give c (or a subset) to evaluate the design")
    efficiencies = {}
    for name, kw in args.items():
        lower, upper = _optimum(name, Xa, kw, tol, solver)
        efficiencies[name] = Efficiency(name, criterion_value(Xa, w, name, **kw), lower, upper)  # type: ignore[arg-type]
    return DesignDiagnostics(w, eigenvalues, efficiencies, variance_function(Xa, w), power)
