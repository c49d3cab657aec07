"""Lower bounds of identification questions on K arms of one exponential family: which arm is best, which m arms are
the best, which arms are epsilon-good, which arms are above a level (Garivier & Kaufmann 2016's characteristic time
T*, E[tau] >= T* kl(delta, 1 - delta), as a declarative cvxpy model or its closed form, certified); the top m and
thresholding questions on linear arms too; the best (and the top m) of Gaussian arms of unequal variances, known
or not, and of arms with rewards in [0, 1] and nothing else known.

================  ======================================================================================
families          the divergences of the Gaussian, Bernoulli, Poisson and exponential families and the
                  cvxpy form (linear minus a perspective) of the closest alternative of two arms
pairs             questions whose alternatives swap the order of two arms: the model of 1 / T* =
                  max_w min_(i,j) f_ij(w), its pieces, and the pairs of best-arm and top-m identification
shifted           pieces {lambda_j >= c lambda_i + s} on Gaussian, Bernoulli, Poisson and exponential arms (a
                  Newton root each) and one answer's max-min by Garivier & Kaufmann's equalisation, certified
epsilon_good      epsilon-good identification (additive or multiplicative): T* over the easiest correct answer
levels            thresholding (which arms are above a level): one piece per arm, T* in closed form
linear_arms       top m, thresholding and epsilon-good on linear arms: the min-max design on the
                  question's halfspaces
bounded           the best (the top m, an epsilon-good arm, additively or as a fraction of the best) of arms
                  with rewards in [0, 1], nothing else known: KL_inf, the pieces and T*, certified
bounded_programs  the cvxpy primals of KL_inf and of a pair's cost on [0, 1]: the references of the duals
bounded_kernels   KL_inf, the pieces' closest common means and the equalisation of bounded arms, compiled
cutting_planes    T* of questions whose pieces are pairs of arms (the best arm, the top m) from any concave
                  pieces: Kelley's cutting planes on a linear program, and the certificate of a fast path
variances         the best of Gaussian arms of unequal variances, known or unknown to the learner: the
                  pieces (a cubic's roots) and T* by cutting planes on a linear program, certified
variance_kernels  the pieces' closest common means, compiled (numba): every root of the stationarity cubic
                  in the interval, by bisection on its monotone pieces
certificate       a certified bracket on T* from any weights and any mixture of the pieces (weak duality)
================  ======================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .bounded import (
        bounded_characteristic_time,
        bounded_pieces,
        check_bounded_arms,
        check_shift,
        kl_inf,
        kl_inf_rows,
    )
    from .bounded_programs import kl_inf_program, pair_cost_program
    from .certificate import best_mixture, certified_bracket
    from .cutting_planes import pieces_of_pairs
    from .epsilon_good import EPSILON_KINDS, epsilon_ends, epsilon_good_characteristic_time
    from .families import FAMILIES, divergence
    from .levels import level_pieces, threshold_characteristic_time
    from .linear_arms import (
        linear_epsilon_good_characteristic_time,
        linear_threshold_characteristic_time,
        linear_top_m_characteristic_time,
    )
    from .pairs import (
        IdentificationTime,
        PairsModel,
        best_arm_pairs,
        pair_pieces,
        pairwise_characteristic_time,
        top_m_pairs,
    )
    from .variances import heteroscedastic_characteristic_time, heteroscedastic_pieces, variance_divergence

# each name is imported from its module on first access (``import optdesign`` loads no cvxpy)
_EXPORTS = {
    ".bounded": ("bounded_characteristic_time", "bounded_pieces", "check_bounded_arms", "check_shift", "kl_inf",
                 "kl_inf_rows"),
    ".bounded_programs": ("kl_inf_program", "pair_cost_program"),
    ".certificate": ("best_mixture", "certified_bracket"),
    ".cutting_planes": ("pieces_of_pairs",),
    ".epsilon_good": ("EPSILON_KINDS", "epsilon_ends", "epsilon_good_characteristic_time"),
    ".families": ("FAMILIES", "divergence"),
    ".levels": ("level_pieces", "threshold_characteristic_time"),
    ".linear_arms": ("linear_epsilon_good_characteristic_time", "linear_threshold_characteristic_time",
                     "linear_top_m_characteristic_time"),
    ".pairs": ("IdentificationTime", "PairsModel", "best_arm_pairs", "pair_pieces", "pairwise_characteristic_time",
               "top_m_pairs"),
    ".variances": ("heteroscedastic_characteristic_time", "heteroscedastic_pieces", "variance_divergence"),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "EPSILON_KINDS",
    "FAMILIES",
    "IdentificationTime",
    "PairsModel",
    "best_arm_pairs",
    "best_mixture",
    "bounded_characteristic_time",
    "bounded_pieces",
    "certified_bracket",
    "check_bounded_arms",
    "check_shift",
    "divergence",
    "epsilon_ends",
    "epsilon_good_characteristic_time",
    "heteroscedastic_characteristic_time",
    "heteroscedastic_pieces",
    "kl_inf",
    "kl_inf_program",
    "kl_inf_rows",
    "level_pieces",
    "linear_epsilon_good_characteristic_time",
    "linear_threshold_characteristic_time",
    "linear_top_m_characteristic_time",
    "pair_cost_program",
    "pair_pieces",
    "pairwise_characteristic_time",
    "pieces_of_pairs",
    "threshold_characteristic_time",
    "top_m_pairs",
    "variance_divergence",
]
