"""PowerResult: the F test of each model term at a design, with its degrees of freedom, noncentrality and power;
GlmPowerResult: the Monte Carlo power of the Wald or likelihood-ratio test of each term of a GLM. Both look their
tests up and tabulate them the same way (PowerTests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

import numpy as np

from ..errors import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GlmPowerResult", "GlmTermPower", "PowerResult", "PowerTests", "TermPower"]

#: the columns of :meth:`PowerResult.to_frame`, in order
FRAME_COLUMNS = ("term", "df1", "df2", "noncentrality", "critical_value", "power")
#: the columns of :meth:`GlmPowerResult.to_frame`, in order
GLM_FRAME_COLUMNS = ("term", "df", "power", "se", "rejections", "failed", "noncentrality", "asymptotic_power")


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
    #: denominator degrees of freedom: N - p, the runs less the model's coefficients; with random groups, those of
    #: the term's error stratum (:mod:`optdesign.power.strata`; 0 or less: none left); with fixed group effects,
    #: N - rank([X, Z]) (:mod:`optdesign.power.grouped`)
    df2: int
    #: lambda = beta_T^T (C_TT)^{-1} beta_T / sigma^2, C = (X^T diag(n) X)^{-1} (with random groups,
    #: (X^T V^{-1} X)^{-1}; with fixed group effects, the inverse of X^T (I - P_Z) X without the intercept)
    noncentrality: float
    #: the 1 - alpha quantile of the central F(df1, df2) (NaN when df2 <= 0)
    critical_value: float
    #: P(F > critical_value) under the noncentral F: the probability of detecting the term (NaN when df2 <= 0)
    power: float


@dataclass(frozen=True)
class GlmTermPower:
    """The Monte Carlo power of the test of one term of a GLM, H0: theta_T = 0, at level alpha.

    ``power`` is the fraction p of the S simulated data sets in which the test rejected, with the binomial standard
    error sqrt(p (1 - p) / S); a data set whose fit failed (no convergence, as under separation) counts as not
    rejecting and is counted in ``failed``.
    """

    #: the term's name (a formula's term, a column's name, or ``"whole model"``)
    term: str
    #: the names of its columns
    columns: tuple[str, ...]
    #: the test's degrees of freedom: the number of its columns
    df: int
    #: the fraction of the simulated data sets in which the test rejected
    power: float
    #: its binomial standard error sqrt(power (1 - power) / n_sim)
    se: float
    #: the number of simulated data sets in which the test rejected
    rejections: int
    #: the number of simulated data sets counted as not rejecting because a fit failed (the full model's, or for
    #: the likelihood-ratio test this term's reduced model's)
    failed: int
    #: the large-sample Wald noncentrality lambda = theta_T^T (C_TT)^{-1} theta_T, C the inverse of the Fisher
    #: information at theta (over sigma^2 for the normal model)
    noncentrality: float
    #: the large-sample power P(chi^2(df, lambda) > chi^2_{1-alpha}(df)) (for the normal model the exact noncentral
    #: F power of :func:`optdesign.design_power`)
    asymptotic_power: float


#: the test a result holds: an F test, or a Monte Carlo one
Test = TypeVar("Test", bound="TermPower | GlmTermPower")


class PowerTests(Generic[Test]):
    """The tests of a power result, one per term and one for the whole model: looked up by name, tabulated.

    The base of :class:`PowerResult` (F tests, :class:`TermPower`) and :class:`GlmPowerResult` (Monte Carlo,
    :class:`GlmTermPower`); each names the fields of its tests that make the columns of its table.
    """

    #: one test per term, in the model's order
    terms: tuple[Test, ...]
    #: the whole-model test (all columns but the intercept); None for a model of the intercept alone
    model: Test | None
    #: the fields of a test that make the table's columns, ``"term"`` first
    frame_columns: ClassVar[tuple[str, ...]]

    @property
    def power(self) -> dict[str, float]:
        """Term name to the power of its test (the whole model last, when there is one)."""
        return {t.term: t.power for t in self.tests}

    @property
    def tests(self) -> tuple[Test, ...]:
        """The term tests, then the whole-model test when there is one."""
        return self.terms if self.model is None else (*self.terms, self.model)

    def test(self, term: str) -> Test:
        """The test of one term, by name.

        Parameters
        ----------
        term : str
            A term's name, or ``"whole model"``.

        Returns
        -------
        TermPower or GlmTermPower
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
            One column per name of ``frame_columns``: ``term``, ``df1``, ``df2``, ``noncentrality``,
            ``critical_value``, ``power`` for the F tests; ``term``, ``df``, ``power``, ``se``, ``rejections``,
            ``failed``, ``noncentrality``, ``asymptotic_power`` for the Monte Carlo ones.
        """
        import pandas as pd

        columns = list(self.frame_columns)
        return pd.DataFrame([[getattr(t, c) for c in columns] for t in self.tests], columns=columns)

    def _test_dicts(self) -> list[dict]:
        """One JSON-ready dictionary per test: its term, columns and the other fields of the table."""
        return [{"term": t.term, "columns": list(t.columns), **{c: getattr(t, c) for c in self.frame_columns[1:]}}
                for t in self.tests]


@dataclass(frozen=True)
class PowerResult(PowerTests[TermPower]):
    """The power of the F test of each term of a linear model at an exact design (:func:`optdesign.design_power`).

    y = X beta + eps with eps ~ N(0, sigma^2 I) over the N runs (with random groups, N(0, sigma^2 V) and the GLS
    information; with fixed group effects, y = X beta + Z gamma + eps fitted by OLS, the intercept absorbed by the
    groups and its test left out); each term's test is a :class:`TermPower`, and ``model`` tests every coefficient
    but the intercept's at once (the regression's overall F test).
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
    #: runs in random groups: grouping name to its variance ratio eta (coarsest grouping first); None for
    #: independent runs (V = I)
    eta: dict[str, float] | None = None
    #: runs in random groups: the rule of the denominator degrees of freedom (``"between-within"``, ``"skpr"``,
    #: ``"residual"``; :mod:`optdesign.power.strata`); None for independent runs (df2 = N - p) and fixed group
    #: effects (df2 = N - rank([X, Z]))
    df_method: str | None = None
    #: runs in groups: ``"random"`` (GLS) or ``"fixed"`` (OLS with the groups' indicators); None for independent runs
    block_effects: str | None = None
    #: fixed group effects: the columns they absorb (the intercept), whose test is left out; empty otherwise
    absorbed: tuple[str, ...] = ()
    #: the fields of a :class:`TermPower` that make the table's columns
    frame_columns: ClassVar[tuple[str, ...]] = FRAME_COLUMNS

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``alpha``, ``sigma``, ``n``, ``coefficients`` (a list) and ``tests``: one dictionary per test (term,
            columns, df1, df2, noncentrality, critical_value, power), the whole model last; with random groups
            also ``eta`` and ``df_method``, with groups ``block_effects``, with fixed ones ``absorbed``.
        """
        out = {"alpha": self.alpha, "sigma": self.sigma, "n": self.n, "coefficients": self.coefficients.tolist(),
               "tests": self._test_dicts()}
        if self.eta is not None:
            out.update(eta=dict(self.eta), df_method=self.df_method)
        if self.block_effects is not None:
            out["block_effects"] = self.block_effects
        if self.block_effects == "fixed":
            out["absorbed"] = list(self.absorbed)
        return out


@dataclass(frozen=True)
class GlmPowerResult(PowerTests[GlmTermPower]):
    """The Monte Carlo power of the Wald (or likelihood-ratio) test of each term of a GLM at an exact design
    (:func:`optdesign.power.glm_power`).

    Each of ``n_sim`` data sets is simulated at the design under ``theta`` (seeded: the same seed gives the same
    numbers) and fitted by maximum likelihood; each term's test is a :class:`GlmTermPower`, and ``model`` tests
    every coefficient but the intercept's at once.
    """

    #: one test per term, in the model's order
    terms: tuple[GlmTermPower, ...]
    #: the whole-model test (all columns but the intercept); None for a model of the intercept alone
    model: GlmTermPower | None
    #: the link (which fixes the response's law)
    link: str
    #: ``"wald"`` or ``"lr"`` (likelihood ratio)
    test_statistic: str
    #: the level of every test
    alpha: float
    #: N, the number of runs
    n: int
    #: S, the number of simulated data sets
    n_sim: int
    #: the seed of the simulation
    seed: int
    #: the parameter theta the data are simulated at (one per column of X)
    theta: np.ndarray
    #: the names of the columns of X
    columns: tuple[str, ...]
    #: the normal model's noise standard deviation (None for the other links)
    sigma: float | None
    #: the simulated data sets whose full-model fit failed (counted as not rejecting in every test)
    n_failed: int
    #: the fields of a :class:`GlmTermPower` that make the table's columns
    frame_columns: ClassVar[tuple[str, ...]] = GLM_FRAME_COLUMNS

    def to_dict(self) -> dict:
        """JSON-ready dictionary.

        Returns
        -------
        dict
            ``link``, ``test_statistic``, ``alpha``, ``n``, ``n_sim``, ``seed``, ``theta`` (a list), ``sigma``,
            ``n_failed`` and ``tests``: one dictionary per test (the fields of :class:`GlmTermPower`), the whole
            model last.
        """
        return {"link": self.link, "test_statistic": self.test_statistic, "alpha": self.alpha, "n": self.n,
                "n_sim": self.n_sim, "seed": self.seed, "theta": self.theta.tolist(), "sigma": self.sigma,
                "n_failed": self.n_failed, "tests": self._test_dicts()}
