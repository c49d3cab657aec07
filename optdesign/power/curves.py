"""Power curves: the power of each test as the anticipated effects grow, or as the number of runs grows.

F tests (:func:`power_curve`): scaling beta by s scales every noncentrality by s^2 (lambda is a quadratic form in
beta), so one evaluation of the design gives the whole curve over s; at s = 0 every power is alpha. Over N, the
design (weights, or counts taken as weights) is rounded to each N by efficient apportionment and evaluated.

GLM tests by Monte Carlo (:func:`glm_power_curve`): at scale s the data are simulated at theta with every
coefficient but the intercept's multiplied by s (the baseline response stays), so at s = 0 every slope's power is
alpha up to the Monte Carlo error and the large-sample approximation. Every point uses the same seed (common random
numbers), so the curve is smoother than its standard errors suggest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from ..validation import as_vector
from ..vocabulary import GlmLink
from .ftest import design_power, noncentral_f_power
from .grouped import GroupEffects
from .montecarlo import glm_power
from .strata import DfMethod, GroupsLike
from .terms import TermsLike, resolve_terms

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["glm_power_curve", "power_curve"]


def _axis(scales: ArrayLike | None, runs: ArrayLike | None) -> tuple[str, np.ndarray]:
    """("scale", the scales) or ("runs", the run totals), checked: exactly one of them, a nonempty 1-D array of
    finite nonnegative scales or of positive whole numbers of runs."""
    if (scales is None) == (runs is None):
        raise InvalidInputError("give the curve's axis: scales (of the effects) or runs (numbers of runs N), "
                                "exactly one of them")
    if scales is not None:
        s = as_vector(scales, "scales")
        if np.any(s < 0):
            raise InvalidInputError("scales must be nonnegative (a negative scale has the power of its absolute "
                                    "value)")
        return "scale", s
    n = as_vector(cast(ArrayLike, runs), "runs")
    if np.any(n < 1) or np.any(n != np.round(n)):
        raise InvalidInputError(f"runs must be positive whole numbers of runs, got {n.tolist()}")
    return "runs", n.astype(np.int64)


def power_curve(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, effects: ArrayLike | float,
                scales: ArrayLike | None = None, *, runs: ArrayLike | None = None, alpha: float = 0.05,
                sigma: float = 1.0, terms: TermsLike = None, groups: GroupsLike | None = None,
                eta: float | Sequence[float] | Mapping[str, float] | None = None,
                df_method: DfMethod = "between-within", block_effects: GroupEffects | None = None) -> pd.DataFrame:
    """The power of each F test at the coefficients s * beta for each scale s (lambda(s) = s^2 lambda(1)), or at
    the design rounded to each number of runs N.

    Parameters
    ----------
    X : array_like or CandidateSet
        As for :func:`optdesign.design_power`.
    design : array_like, ExactDesignResult, DesignResult or None
        As for :func:`optdesign.design_power`; over ``runs``, weights or counts (taken as weights) or a result,
        rounded to each N (None: the rows of X, uniformly).
    effects : array_like or float
        The coefficients beta at scale 1, as for :func:`optdesign.design_power`.
    scales : array_like, optional
        The scales s, nonnegative (e.g. ``numpy.linspace(0, 2, 21)``).
    runs : array_like, optional
        Instead of ``scales``: the numbers of runs N (positive integers), each above p.
    alpha : float
        The level of each test.
    sigma : float
        The noise standard deviation.
    terms : str or mapping, optional
        As for :func:`optdesign.design_power`.
    groups : array_like, sequence of array_like or mapping, optional
        The runs' random groups, as for :func:`optdesign.design_power` (over ``scales`` only: a design in groups
        is not rounded to other numbers of runs).
    eta : float, sequence of float or mapping, optional
        The groupings' variance ratios, as for :func:`optdesign.design_power`.
    df_method : {"between-within", "skpr", "residual"}
        The denominator degrees of freedom with groups, as for :func:`optdesign.design_power`.
    block_effects : {"random", "fixed"}, optional
        How the groups enter the model, as for :func:`optdesign.design_power`.

    Returns
    -------
    pandas.DataFrame
        One row per scale (the index, named ``"scale"``) or per N (named ``"runs"``), one column per test (the
        terms, then ``"whole model"``): the powers. ``.plot()`` draws the curves, as does
        :func:`optdesign.power.power_curve_plot`; ``attrs["alpha"]`` holds the level.

    Raises
    ------
    InvalidInputError
        Neither or both of scales and runs, scales that are not a nonempty 1-D array of finite nonnegative numbers,
        runs that are not positive integers, and what :func:`optdesign.design_power` refuses (at any N; groups
        or a BlockedDesignResult with ``runs``).
    """
    import pandas as pd

    name, axis = _axis(scales, runs)
    if name == "runs":
        rows = [design_power(X, design, effects, alpha=alpha, sigma=sigma, terms=terms, runs=int(N), groups=groups,
                             eta=eta, df_method=df_method, block_effects=block_effects).power for N in axis]
        frame = pd.DataFrame(rows, index=pd.Index(axis, name="runs"))
    else:
        base = design_power(X, design, effects, alpha=alpha, sigma=sigma, terms=terms, groups=groups, eta=eta,
                            df_method=df_method, block_effects=block_effects)
        table = {t.term: [noncentral_f_power(t.df1, t.df2, v**2 * t.noncentrality, base.alpha)[1] if t.df2 > 0
                          else np.nan for v in axis]
                 for t in base.tests}
        frame = pd.DataFrame(table, index=pd.Index(axis, name="scale"))
    frame.attrs["alpha"] = float(alpha)
    return frame


def glm_power_curve(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, theta: ArrayLike, link: GlmLink,
                    scales: ArrayLike | None = None, *, runs: ArrayLike | None = None, alpha: float = 0.05,
                    n_sim: int = 1000, seed: int = 0, test: str = "wald", terms: TermsLike = None,
                    sigma: float | None = None) -> pd.DataFrame:
    """The Monte Carlo power of each test of a GLM (:func:`optdesign.power.glm_power`) as the slopes of theta
    scale by s (the intercept kept), or as the design is rounded to each number of runs N.

    Every point simulates ``n_sim`` data sets from the same ``seed``; each power has the binomial standard error
    sqrt(p (1 - p) / n_sim).

    Parameters
    ----------
    X : array_like or CandidateSet
        As for :func:`optdesign.power.glm_power`.
    design : array_like, ExactDesignResult, DesignResult or None
        As for :func:`optdesign.power.glm_power`; over ``runs``, weights or counts (taken as weights) or a result,
        rounded to each N (None: the rows of X, uniformly).
    theta : array_like
        The parameter at scale 1.
    link : str
        The link, as for :func:`optdesign.power.glm_power`.
    scales : array_like, optional
        The scales s of every coefficient but the intercept's, nonnegative.
    runs : array_like, optional
        Instead of ``scales``: the numbers of runs N (positive integers), each above p.
    alpha : float
        The level of each test.
    n_sim : int
        Simulated data sets per point.
    seed : int
        The seed of every point.
    test : {"wald", "lr"}
        The test.
    terms : str or mapping, optional
        As for :func:`optdesign.design_power`.
    sigma : float, optional
        The normal model's noise standard deviation (``link="identity"`` only).

    Returns
    -------
    pandas.DataFrame
        One row per scale (index ``"scale"``) or per N (index ``"runs"``); two column groups, ``"power"`` and
        ``"se"`` (``curve["power"]`` has one column per test, the whole model last); ``attrs["alpha"]`` holds the
        level. :func:`optdesign.power.power_curve_plot` draws it with +-2 standard error bands.

    Raises
    ------
    InvalidInputError
        Neither or both of scales and runs, bad scales or runs, and what :func:`optdesign.power.glm_power`
        refuses.
    """
    import pandas as pd

    name, axis = _axis(scales, runs)
    model = resolve_terms(X, terms)
    beta = as_vector(theta, "theta", length=model.X.shape[1])
    slopes = np.ones(beta.size, dtype=bool)
    slopes[model.intercept] = False
    results = []
    for v in axis:
        point = np.where(slopes, v * beta, beta) if name == "scale" else beta
        results.append(glm_power(X, design, point, link, alpha=alpha, n_sim=n_sim, seed=seed, test=test,
                                 terms=terms, sigma=sigma, runs=int(v) if name == "runs" else None))
    tests = [t.term for t in results[0].tests]
    columns = pd.MultiIndex.from_product([["power", "se"], tests])
    values = [[t.power for t in r.tests] + [t.se for t in r.tests] for r in results]
    frame = pd.DataFrame(values, index=pd.Index(axis, name=name), columns=columns)
    frame.attrs["alpha"] = float(alpha)
    return frame
