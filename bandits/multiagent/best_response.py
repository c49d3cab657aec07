"""The exact best response of the factored GLR: the alternative joint action a != a_hat of smallest
D(a)^2 / (2 sigma^2 H(a)) at the estimate and the counts (:mod:`bandits.multiagent.glrt` defines D and H).

Two exact methods, the cheaper first:

* the GLRT's best-first search in nondecreasing D with Lagrangian cuts, which usually closes after listing one
  to a few alternatives; it is given :data:`LISTED_FIRST` listings;
* otherwise the bi-objective (Pareto) variable elimination that separates exact T*
  (:func:`optdesign.factored.most_violated`, the largest H(a) / D(a)^2), with the GLR's h (counts
  in place of marginals) and the local gaps theta_hat_e(a_hat_e) - theta_hat_e(b). Its cost is polynomial in the
  number of agents for a bounded tree width, where the search can list thousands of near-tied alternatives (a
  planted line of 200 agents after a few hundred Top-Two rounds).

When the elimination would exceed its state cap, the search's certified lower bound and its best listed
alternative are returned (``exact=False``).

The stopping rule's test Lambda_t > beta (:func:`glr_exceeds`) takes the same two steps, the elimination pruned at
the threshold: H(a) / D(a)^2 >= 1 / (2 sigma^2 beta) holds exactly for the alternatives with a ratio <= beta, so the
elimination either finds the minimiser (Lambda_t <= beta) or proves that none is that close (Lambda_t > beta). On a
planted line of 200 agents the search alone listed 3.6e6 alternatives over 515 stop checks of one Top-Two run.
:class:`FactoredGLR` is that test as the GLR stopping rule reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.factored import Separation, most_violated
from optdesign.validation import as_count

from ..pure_exploration.cap_bounds import CapBounds
from ..pure_exploration.pieces import GLRStatistic
from .glrt import GLRState
from .joint_actions import encode_joint

__all__ = ["LISTED_FIRST", "BestResponse", "FactoredGLR", "exact_best_response", "glr_exceeds"]

#: alternatives the best-first search may list before the Pareto elimination takes over
LISTED_FIRST = 32


@dataclass(frozen=True)
class BestResponse:
    """The most confusing alternative at (theta, w) and its value.

    Parameters
    ----------
    value : float
        min over a != a_hat of f_a(w) (the GLR statistic when w are counts); exact when ``exact``, else a certified
        lower bound.
    action : numpy.ndarray of int or None
        The minimising joint action (None when there is no alternative).
    exact : bool
        Whether ``value`` is the minimum itself and ``action`` a minimiser.
    """

    value: float
    action: np.ndarray | None
    exact: bool


def exact_best_response(state: GLRState, listed: int = LISTED_FIRST) -> BestResponse:
    """The best response at a GLR state: the search for ``listed`` alternatives, then the Pareto elimination.

    Parameters
    ----------
    state : GLRState
        The factored GLRT at (theta_hat, N); its search is advanced and the minimiser recorded in it.
    listed : int
        Alternatives (at least 1) the best-first search may list before the elimination runs; the first listing
        settles an empirical tie (Lambda = 0).

    Returns
    -------
    BestResponse
        The minimum, its joint action and whether both are exact.

    Raises
    ------
    InvalidInputError
        ``state`` is not a GLRState, or ``listed`` is not an integer >= 1.
    """
    if not isinstance(state, GLRState):
        raise InvalidInputError(f"state must be a factored GLRState, got {type(state).__name__}")
    if not state.advance(as_count(listed, "listed", minimum=1)):
        sep = _separate(state, 0.0)
        if sep is not None and sep.exact and sep.actions.shape[0]:
            state.settle(sep.actions[0])
    value = state.exact()  # exact now, unless the elimination failed: then the capped search's certified bound
    return BestResponse(value.value, state.argmin_action, value.exact)


def glr_exceeds(state: GLRState, beta: float, listed: int = LISTED_FIRST) -> bool:
    """The stopping test Lambda_t > beta: the search for ``listed`` alternatives, then the elimination pruned at beta.

    Parameters
    ----------
    state : GLRState
        The factored GLRT at (theta_hat, N); a minimiser found on the way is recorded in it.
    beta : float
        The threshold beta(t, delta).
    listed : int
        Alternatives (at least 1) the search may list before the elimination decides.

    Returns
    -------
    bool
        Whether Lambda_t > beta is certified (as :meth:`~bandits.multiagent.glrt.GLRState.exceeds`, which decides
        when the elimination exceeds its state cap).

    Raises
    ------
    InvalidInputError
        ``state`` is not a GLRState, ``beta`` is not a real number (or is NaN), or ``listed`` is not an integer >= 1.
    """
    if not isinstance(state, GLRState):
        raise InvalidInputError(f"state must be a factored GLRState, got {type(state).__name__}")
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating, np.integer)) or np.isnan(beta):
        raise InvalidInputError(f"beta must be a real threshold, got {beta!r}")
    if state.found <= beta:
        return False
    if state.advance(as_count(listed, "listed", minimum=1)) or state.found <= beta or not beta > 0:
        return state.exceeds(beta)  # decided by the search (or a threshold the pruning cannot use)
    # a threshold a hair below 1 / (2 sigma^2 beta): "none at or above it" then proves Lambda_t > beta strictly
    threshold = (1.0 - 1e-9) / (2.0 * state.glrt.sigma2 * beta)
    sep = _separate(state, threshold)
    if sep is not None and sep.actions.shape[0] and sep.exact:
        state.settle(sep.actions[0])  # the minimiser itself: the search's answer is now exact
    elif sep is not None and not sep.actions.shape[0] and sep.upper_bound <= threshold:
        return True  # every alternative has H / D^2 <= threshold
    return state.exceeds(beta)


def _separate(state: GLRState, threshold: float) -> Separation | None:
    """The Pareto elimination's largest H / D^2 (at least ``threshold``) at the state, or None past its state cap."""
    known = None if state.argmin_action is None else state.argmin_action[None, :]
    try:
        return most_violated(state.glrt.plan, state.h, state.gap, candidates=known, threshold=threshold)
    except InstanceTooLargeError:
        return None


class FactoredGLR(GLRStatistic):
    """The factored GLRT as the GLR stopping rule reads it: a_hat by max-sum and Lambda_t > beta decided by the
    exact search with as little enumeration as possible (:func:`bandits.multiagent.best_response.glr_exceeds`), or
    by its conservative lower bound.

    Parameters
    ----------
    state : GLRState
        The resumable search at (theta_hat, N).
    radices : sequence of int
        The agents' action counts (to encode a_hat).
    conservative : bool
        Decide by the lower bound D_min^2 / (2 sigma^2 H_max).
    """

    def __init__(self, state: GLRState, radices: Any, conservative: bool) -> None:
        self.state, self.radices, self.conservative = state, radices, conservative

    @property
    def answer(self) -> int:
        """The code of a_hat."""
        return encode_joint(self.state.best, self.radices)

    @property
    def value(self) -> float:
        """Lambda_t (its certified lower bound past the enumeration cap), or the conservative bound."""
        return self.state.conservative() if self.conservative else self.state.exact().value

    def exceeds(self, beta: float | CapBounds) -> bool:
        """The stopping test Lambda_t > beta (the conservative bound's when asked).

        Parameters
        ----------
        beta : float
            The threshold beta(t, delta).

        Returns
        -------
        bool
            Whether the statistic exceeds it.

        Raises
        ------
        InvalidInputError
            A pairwise threshold (its bounds are for pairs of arms).
        """
        if isinstance(beta, CapBounds):
            raise InvalidInputError("a pairwise threshold bounds pairs of arms; a joint action's GLR takes one number")
        return bool(self.state.conservative() > beta) if self.conservative else glr_exceeds(self.state, beta)

    def describe(self) -> dict[str, float | int]:
        """``{"glr_conservative": D_min^2 / (2 sigma^2 H_max), "glr_found": the smallest ratio listed}``."""
        return {"glr_conservative": self.state.conservative(), "glr_found": self.state.found}
