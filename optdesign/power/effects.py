"""Anticipated coefficients from an effect size, by the convention of R's skpr (``eval_design``'s ``effectsize``).

The effect size is the change of the mean response from a factor's low level to its high level. For a column coded
-1/+1 (a numeric factor scaled to [-1, 1], a two-level factor, a sum-coded categorical factor ``C(x, contr.sum)``,
skpr's default contrasts) that change is twice the coefficient, so each coefficient is +-effect_size / 2. Within a
term of several columns the signs alternate (+, -, +, ...): a sum-coded factor's level effects are then
+-effect_size / 2, so its levels again differ by at most effect_size. The intercept's coefficient is
+effect_size / 2 as well. In other codings (formulaic's default treatment coding: 0/1 columns) the same numbers are
coefficients but no longer half of a low-to-high change.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..formulas import CandidateSet
from .terms import TermsLike, resolve_terms

__all__ = ["anticipated_coefficients"]


def anticipated_coefficients(X: ArrayLike | CandidateSet, effect_size: float = 2.0, *,
                             terms: TermsLike = None) -> np.ndarray:
    """skpr's default anticipated coefficients: +-effect_size / 2, alternating in sign within each term (module doc).

    Parameters
    ----------
    X : array_like or CandidateSet
        The model matrix (K x p) or the candidates of a formula, as for :func:`optdesign.design_power`.
    effect_size : float
        The change of the response from low to high level (skpr's ``effectsize``, 2 by default: coefficients
        +-1).
    terms : str or mapping, optional
        The terms, as for :func:`optdesign.design_power` (the alternation runs over each term's columns; with
        None every column is its own term, so every sign is +).

    Returns
    -------
    numpy.ndarray
        One coefficient per column of X, for ``effects=`` of :func:`optdesign.design_power`.

    Raises
    ------
    InvalidInputError
        ``effect_size`` not a finite number, and what :func:`optdesign.design_power` refuses about X and terms.

    Examples
    --------
    A three-level sum-coded factor has the signs (+, -):

    >>> import optdesign as od
    >>> from optdesign.power import anticipated_coefficients
    >>> f = "~ x + C(c, contr.sum)"
    >>> cs = od.candidates(f, {"x": [-1, 1], "c": ["a", "b", "c"]})
    >>> anticipated_coefficients(cs, 2.0, terms=f).tolist()
    [1.0, 1.0, 1.0, -1.0]
    """
    if isinstance(effect_size, bool) or not isinstance(effect_size, (int, float, np.integer, np.floating)) \
            or not np.isfinite(effect_size):
        raise InvalidInputError(f"effect_size must be a finite number, got {effect_size!r}")
    model = resolve_terms(X, terms)
    signs = np.ones(model.X.shape[1])
    for columns in model.indices:
        signs[columns] = np.where(np.arange(columns.size) % 2 == 0, 1.0, -1.0)
    out: np.ndarray = signs * (float(effect_size) / 2.0)
    return out
