"""PowerResult: the F test of each model term at a design, with its degrees of freedom, noncentrality and power."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PowerResult", "TermPower"]

#: the columns of :meth:`PowerResult.to_frame`, in order
FRAME_COLUMNS = ("term", "df1", "df2", "noncentrality", "critical_value", "power")


@dataclass(frozen=True)
class TermPower:
    """The F test of one term, H0: beta_T = 0, at level alpha.

    Under the anticipated coefficients the statistic follows a noncentral F(df1, df2, noncentrality), and the test
    rejects when it exceeds ``critical_value``, the 1 - alpha quantile of the central F(df1, df2).
    """

    #: the term's name (a formula's term, a column's name, or ``"whole model"``)
    term: str
    #: the names of its columns
    columns: tuple[str, ...]
    #: numerator degrees of freedom: the number of its columns
    df1: int
    #: denominator degrees of freedom: N - p, the runs less the model's coefficients
    df2: int
    #: lambda = beta_T^T (C_TT)^{-1} beta_T / sigma^2, C = (X^T diag(n) X)^{-1}
    noncentrality: float
    #: the 1 - alpha quantile of the central F(df1, df2)
    critical_value: float
    #: P(F > critical_value) under the noncentral F: the probability of detecting the term
    power: float


@dataclass(frozen=True)
class PowerResult:
    """The power of the F test of each term of a linear model at an exact design (:func:`optdesign.design_power`).

    y = X beta + eps with eps ~ N(0, sigma^2 I) over the N runs; each term's test is a :class:`TermPower`, and
    ``model`` tests every coefficient but the intercept's at once (the regression's overall F test).
    """

    #: one test per term, in the model's order (the intercept's included when the model has one)
    terms: tuple[TermPower, ...]
    #: the whole-model test (all columns but the intercept); None for a model of the intercept alone
    model: TermPower | None
    #: the level of every test
    alpha: float
    #: the noise standard deviation sigma
    sigma: float
    #: N, the number of runs
    n: int
    #: the anticipated coefficients beta (one per column of X)
    coefficients: np.ndarray
    #: the names of the columns of X
    columns: tuple[str, ...]

    @property
    def power(self) -> dict[str, float]:
        """Term name to the power of its test (the whole model last, when there is one)."""
        return {t.term: t.power for t in self.tests}

    @property
    def tests(self) -> tuple[TermPower, ...]:
        """The term tests, then the whole-model test when there is one."""
        return self.terms if self.model is None else (*self.terms, self.model)

    def test(self, term: str) -> TermPower:
        """The test of one term, by name.

        Parameters
        ----------
        term : str
            A term's name, or ``"whole model"``.

        Returns
        -------
        TermPower
            Its test.

        Raises
        ------
        InvalidInputError
            No test has that name.
        """
        for t in self.tests:
            if t.term == term:
                return t
        raise InvalidInputError(f"no term {term!r}; the terms are {[t.term for t in self.tests]}")

    def to_frame(self) -> pd.DataFrame:
        """The tests as a table, one row per term and the whole model last.

        Returns
        -------
        pandas.DataFrame
            Columns ``term``, ``df1``, ``df2``, ``noncentrality``, ``critical_value``, ``power``.
        """
        import pandas as pd

        return pd.DataFrame([[getattr(t, c) for c in FRAME_COLUMNS] for t in self.tests], columns=list(FRAME_COLUMNS))

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``alpha``, ``sigma``, ``n``, ``coefficients`` (a list) and ``tests``: one dictionary per test (term,
            columns, df1, df2, noncentrality, critical_value, power), the whole model last.
        """
        return {"alpha": self.alpha, "sigma": self.sigma, "n": self.n, "coefficients": self.coefficients.tolist(),
                "tests": [{"term": t.term, "columns": list(t.columns), "df1": t.df1, "df2": t.df2,
                           "noncentrality": t.noncentrality, "critical_value": t.critical_value, "power": t.power}
                          for t in self.tests]}
