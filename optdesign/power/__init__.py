"""Power of an exact design: the F test of each term of a linear model, as R skpr's ``eval_design`` reports it, and
the Wald or likelihood-ratio test of each term of a GLM by Monte Carlo.

For y = X beta + eps, eps ~ N(0, sigma^2 I), over the N runs of a design, the F test of a term T (H0: beta_T = 0) has
df1 = |T|, df2 = N - p and, under the anticipated beta, noncentrality beta_T^T (C_TT)^{-1} beta_T / sigma^2 with
C = (X^T diag(n) X)^{-1}; its power is the noncentral F's mass above the central F's 1 - alpha quantile. With runs
in random groups (blocks, whole plots; Var(y) = sigma^2 V, V = I + sum_l eta_l Z_l Z_l^T), C = (X^T V^{-1} X)^{-1}
and df2 is that of the term's error stratum; with fixed group effects (y = X beta + Z gamma + eps, OLS), C is the
inverse of X^T (I - P_Z) X without the intercept, which the groups absorb, and df2 = N - rank([X, Z]).

A GLM's power is estimated from S data sets simulated at theta (seeded), each fitted by maximum likelihood; the
power p of a test is its fraction of rejections, with the standard error sqrt(p (1 - p) / S).

==========  =================================================================================================
ftest       public entry point ``design_power(X, design, effects)``: every term's test and the whole model's
result      ``PowerResult``, ``TermPower`` (df1, df2, noncentrality, critical value, power); ``GlmPowerResult``,
            ``GlmTermPower`` (power, standard error, failed fits, large-sample power); each with ``to_frame()``
terms       which columns each test covers: one per column, a formula's terms (formulaic), or a mapping; the
            intercept
strata      runs in random groups: the groupings and their etas, the GLS information X^T V^{-1} X, each test's
            error stratum and its degrees of freedom (between-within, skpr's, or residual)
grouped     runs in groups from ``groups=`` or a BlockedDesignResult, random or fixed effects; the OLS analysis
            with fixed group effects: X^T (I - P_Z) X, the intercept absorbed, df2 = N - rank([X, Z])
effects     ``anticipated_coefficients``: skpr's coefficients from an effect size (low-to-high change of the
            response)
curves      ``power_curve``: the F powers as the coefficients scale (lambda grows as the square of the scale) or
            as N grows; ``glm_power_curve``: the Monte Carlo powers over the same axes
plots       ``power_curve_plot``: a curve as a matplotlib Figure, with +-2 SE bands for a Monte Carlo curve
montecarlo  public entry point ``glm_power(X, design, theta, link)``: the Monte Carlo power of each term's Wald
            (or likelihood-ratio) test
responses   the response law of each link: simulated totals, log-likelihoods, starting values, separation
            (the means, score factors and Fisher weights of :mod:`optdesign.links`)
irls        Fisher scoring (IRLS) batched over the simulated data sets, with separation detected
==========  =================================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .curves import glm_power_curve, power_curve
    from .effects import anticipated_coefficients
    from .ftest import design_power, noncentral_f_power
    from .montecarlo import glm_power
    from .plots import power_curve_plot
    from .result import GlmPowerResult, GlmTermPower, PowerResult, TermPower

# scipy.stats, pandas, formulaic and matplotlib load on first use of a name
_EXPORTS = {
    ".curves": ("glm_power_curve", "power_curve"),
    ".effects": ("anticipated_coefficients",),
    ".ftest": ("design_power", "noncentral_f_power"),
    ".montecarlo": ("glm_power",),
    ".plots": ("power_curve_plot",),
    ".result": ("GlmPowerResult", "GlmTermPower", "PowerResult", "TermPower"),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["GlmPowerResult", "GlmTermPower", "PowerResult", "TermPower", "anticipated_coefficients", "design_power",
           "glm_power", "glm_power_curve", "noncentral_f_power", "power_curve", "power_curve_plot"]
