"""Power curves: the power of each test as the anticipated coefficients grow.

Scaling beta by s scales every noncentrality by s^2 (lambda is a quadratic form in beta), so one evaluation of the
design gives the whole curve; at s = 0 every power is alpha.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from ..validation import as_vector
from .ftest import design_power, noncentral_f_power
from .terms import TermsLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["power_curve"]


def power_curve(X: ArrayLike | CandidateSet, design: ArrayLike | Any | None, effects: ArrayLike | float,
                scales: ArrayLike, *, alpha: float = 0.05, sigma: float = 1.0, terms: TermsLike = None) -> pd.DataFrame:
    """The power of each test at the coefficients s * beta, for each scale s: lambda(s) = s^2 lambda(1).

    Parameters
    ----------
    X : array_like or CandidateSet
        As for :func:`optdesign.design_power`.
    design : array_like, ExactDesignResult or None
        As for :func:`optdesign.design_power`.
    effects : array_like or float
        The coefficients beta at scale 1, as for :func:`optdesign.design_power`.
    scales : array_like
        The scales s, nonnegative (e.g. ``numpy.linspace(0, 2, 21)``).
    alpha : float
        The level of each test.
    sigma : float
        The noise standard deviation.
    terms : str or mapping, optional
        As for :func:`optdesign.design_power`.

    Returns
    -------
    pandas.DataFrame
        One row per scale (the index, named ``"scale"``), one column per test (the terms, then ``"whole model"``):
        the powers. ``.plot()`` draws the curves.

    Raises
    ------
    InvalidInputError
        Scales that are not a nonempty 1-D array of finite nonnegative numbers, and what
        :func:`optdesign.design_power` refuses.
    """
    import pandas as pd

    s = as_vector(scales, "scales")
    if np.any(s < 0):
        raise InvalidInputError("scales must be nonnegative (a negative scale has the power of its absolute value)")
    base = design_power(X, design, effects, alpha=alpha, sigma=sigma, terms=terms)
    table = {t.term: [noncentral_f_power(t.df1, t.df2, v**2 * t.noncentrality, base.alpha)[1] for v in s]
             for t in base.tests}
    return pd.DataFrame(table, index=pd.Index(s, name="scale"))
