"""Power of an exact design: the F test of each term of a linear model, as R skpr's ``eval_design`` reports it.

For y = X beta + eps, eps ~ N(0, sigma^2 I), over the N runs of a design, the F test of a term T (H0: beta_T = 0) has
df1 = |T|, df2 = N - p and, under the anticipated beta, noncentrality beta_T^T (C_TT)^{-1} beta_T / sigma^2 with
C = (X^T diag(n) X)^{-1}; its power is the noncentral F's mass above the central F's 1 - alpha quantile.

=======  ====================================================================================================
ftest    public entry point ``design_power(X, design, effects)``: every term's test and the whole model's
result   ``PowerResult`` (with ``to_frame()``), ``TermPower``: df1, df2, noncentrality, critical value, power
terms    which columns each test covers: one per column, a formula's terms (formulaic), or a mapping; the intercept
effects  ``anticipated_coefficients``: skpr's coefficients from an effect size (low-to-high change of the response)
curves   ``power_curve``: the powers as the coefficients scale (lambda grows as the square of the scale)
=======  ====================================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .curves import power_curve
    from .effects import anticipated_coefficients
    from .ftest import design_power, noncentral_f_power
    from .result import PowerResult, TermPower

# scipy.stats, pandas and formulaic load on first use of a name
_EXPORTS = {
    ".curves": ("power_curve",),
    ".effects": ("anticipated_coefficients",),
    ".ftest": ("design_power", "noncentral_f_power"),
    ".result": ("PowerResult", "TermPower"),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["PowerResult", "TermPower", "anticipated_coefficients", "design_power", "noncentral_f_power",
           "power_curve"]
