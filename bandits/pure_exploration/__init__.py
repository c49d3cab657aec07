"""Pure exploration at the field's standard: problems x sampling rules x one GLR stopping rule.

===================  ======================================================================================
problem              the interface: answers, estimate, the pieces of the alternative (GLR, best response, gradients),
                     the oracle T*(mu), w*(mu), the scoring of an answer
oracle               what an oracle reports: T*, w* and a certified lower bound
pieces               the alternative's pieces at (mu, w): values, gradients, the best response
capabilities         the optional problem methods a rule may ask for (optimism, pair costs, posterior draws, ...)
requirements         the refusal, before a run, of a problem lacking a capability the rule needs
optimism             LinGame's optimistic gains at a best response (what the optimism capability gives)
clock                a problem's time: samples or rounds, the grid of checks
values               the value of an answer that is one arm or item (the simple regret of a recommendation)
pulls                what one pull observes, the first pass, a learner over the pulls, the pull that best follows a
                     target
adahedge             AdaHedge, the scale-free exponential-weights learner (LinGame's)
games                the exact zero-sum matrix game of Frank-Wolfe steps over several pieces (both players)
fw_directions        Frank-Wolfe directions of batched FWS: the near-tied pieces at w = N / t, the game over the
                     pulls, the forced schedule (arms as pulls; a factored problem gives its own)
allocation_tracker   how Track-and-Stop follows its plug-in target over the pulls (arms: C- or D-tracking of the
                     oracle's weights; a factored problem gives its own)
design_inverse       the design inverse along a Frank-Wolfe path of a linear problem (FWS's fast path)
certificate          a certified bracket on T* from any proportions
families             one-parameter exponential families (Gaussian with known sigma, Bernoulli, Poisson, exponential):
                     kl, reward sums, confidence intervals, posteriors
karmed               K-armed best-arm identification in an exponential family (GK16's oracle)
questions            what the K-armed questions beyond the best arm share: set answers as bit masks, no BAI capabilities
top_m                top-m identification on K-armed instances (answers: sets of m arms; oracle: optdesign's model)
epsilon_good         epsilon-good identification on K-armed instances (several correct answers)
threshold            thresholding with a confidence level: the arms above a level (answers: sets of arms)
arm_pairs            best-arm identification whose pieces are pairs of arms without a closed form: the answers, the
                     pairwise GLR statistic and the Top-Two capabilities from one function
arm_questions        what the questions beyond the best arm share on those arms: the arms' model they delegate to
arm_levels           thresholding with a confidence level on bounded arms and on arms of unknown variances
arm_top_m            top-m identification on bounded arms and on arms of unknown variances (pieces: pairs of arms)
arm_epsilon_good     epsilon-good identification on bounded arms and on arms of unknown variances (pieces: the pairs
                     with the other arm put epsilon above the answer)
cap_bounds           thresholds from one cap per arm, read piece by piece (a pair: the sum of its two arms' caps)
heteroscedastic      Gaussian arms of unequal variances, known or not: sums of squares, the EV-GLR and plug-in
                     statistics, the known-variance baseline (oracles: optdesign.identification.variances)
variance_bounds      the delta-correct pairwise threshold of unknown variances (a time-uniform cap on every arm's t
                     statistic: the t-test martingale)
bounded              arms with rewards in [0, 1], nothing else known: empirical distributions, KL_inf pieces
                     (oracles: optdesign.identification.bounded)
betting_bounds       the delta-correct pairwise threshold of bounded arms (Cover's universal portfolio over every
                     arm's betting martingales)
linear               linear and transductive best-arm identification (oracle: optdesign.transductive)
linear_sets          top m and thresholding on linear instances (answers: sets of items; pieces: halfspaces)
linear_epsilon_good  epsilon-good identification on linear instances (answers: items; pieces: shifted halfspaces)
environment          K-armed instances simulated through sufficient statistics (reward sums; sums of squares too for
                     Gaussian arms of unequal variances; counts on the support for bounded arms)
instances            the named K-armed instances (``gaussian:...``, ``bernoulli:...``; GK16's two experiments;
                     ``heteroscedastic:...``; ``bounded:...``)
sampler              the sampling-rule plug-in interface (configuration, state, batches)
samplers/            the sampling rules, one module each
stop                 the GLR stopping rule and its threshold (by name, object or plug-in path)
policy               the statistics and GLR stop of a run, and the policy of a sampler's run (several deltas from one
                     trajectory)
algorithm            PureExploration = a sampler under the GLR stopping rule (the instance's problem or another
                     question asked of it, ``problem="top-m:m=3"``)
question_table       the questions asked by name (top-m, epsilon-good, threshold, ...) and their problem classes per
                     instance kind, by path (``bandits list`` reads it without loading them)
with_stop            any fixed-confidence algorithm under the GLR stop (``--stop glr``)
compiled/            the compiled fast path of K-armed runs (the same runs as the policy, numba)
===================  ======================================================================================
"""

from typing import TYPE_CHECKING

from optdesign.runtime.exports import lazy_exports

if TYPE_CHECKING:  # type checkers see the imports; at run time each name loads its module on first use
    from .algorithm import PureExploration
    from .bounded import BoundedProblem
    from .certificate import certified_bracket
    from .environment import BoundedBandit, HeteroscedasticBandit, KArmedBandit
    from .families import Bernoulli, Exponential, ExponentialFamily, Gaussian, Poisson
    from .heteroscedastic import HeteroscedasticProblem
    from .karmed import KArmedProblem
    from .linear import LinearProblem
    from .oracle import Oracle
    from .pieces import Pieces
    from .policy import problem_of
    from .problem import Problem
    from .sampler import Observations, Sampler, SamplerState, SequentialState
    from .stop import GLRStop

# ``import bandits.pure_exploration.X`` stays light: the package loads a module when one of its names is first used
_EXPORTS = {
    ".algorithm": ("PureExploration",),
    ".bounded": ("BoundedProblem",),
    ".certificate": ("certified_bracket",),
    ".environment": ("BoundedBandit", "HeteroscedasticBandit", "KArmedBandit"),
    ".families": ("Bernoulli", "Exponential", "ExponentialFamily", "Gaussian", "Poisson"),
    ".heteroscedastic": ("HeteroscedasticProblem",),
    ".karmed": ("KArmedProblem",),
    ".linear": ("LinearProblem",),
    ".oracle": ("Oracle",),
    ".pieces": ("Pieces",),
    ".policy": ("problem_of",),
    ".problem": ("Problem",),
    ".sampler": ("Observations", "Sampler", "SamplerState", "SequentialState"),
    ".stop": ("GLRStop",),
}
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Bernoulli",
    "BoundedBandit",
    "BoundedProblem",
    "Exponential",
    "ExponentialFamily",
    "GLRStop",
    "Gaussian",
    "HeteroscedasticBandit",
    "HeteroscedasticProblem",
    "KArmedBandit",
    "KArmedProblem",
    "LinearProblem",
    "Observations",
    "Oracle",
    "Pieces",
    "Poisson",
    "Problem",
    "PureExploration",
    "Sampler",
    "SamplerState",
    "SequentialState",
    "certified_bracket",
    "problem_of",
]
