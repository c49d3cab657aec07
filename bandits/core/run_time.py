"""The run-time rule of a run to a budget T known in advance (graph thresholding, fixed-budget runs of an anytime
rule): such a run is judged at T and keeps no partial result, so a budget it cannot finish within
:data:`MAX_RUN_SECONDS` (a year) is refused with :class:`~optdesign.errors.InvalidInputError` naming the estimate and
the largest T that fits, instead of running on.

* Before any pull, where one pull costs at least a step of the rule (:func:`check_run_time`): T above what
  :data:`MAX_PULLS_PER_SECOND` (faster than any rule here) allows in that time.
* Once the rate of pulls has been measured for :data:`RATE_SECONDS` (:class:`RunTime`, from the first pull): T - t
  pulls left that would take more than a year at the rate so far (:func:`check_rate`). The rule decides once; a run
  it lets go is never refused later.

A budget of at most ``MAX_RUN_SECONDS x MIN_PULLS_PER_SECOND`` pulls ends in time at any rate, so a run to it may
report progress at once; a larger one reports none until the rule has decided.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

__all__ = ["MAX_PULLS_PER_SECOND", "MAX_RUN_SECONDS", "MIN_PULLS_PER_SECOND", "RATE_SECONDS", "RunTime",
           "check_rate", "check_run_time"]

YEAR = 365.25 * 86400.0
#: the longest run a budget T may ask for, in seconds
MAX_RUN_SECONDS = YEAR
#: more pulls per second than any rule here makes one step at a time (random-laplacian's batched draws: about 1.5e8)
MAX_PULLS_PER_SECOND = 1e9
#: fewer pulls per second than any rule here makes on the papers' instances
MIN_PULLS_PER_SECOND = 1.0
#: seconds of pulls over which the rate is measured (GrAPL on the paper's SBM: 10,000 per second, steady over 30 s)
RATE_SECONDS = 2.0


def _years(seconds: float) -> str:
    """Seconds as years, for the messages of the rule (its refused estimates are long)."""
    return f"{seconds / YEAR:.2g} years"


def _limit() -> str:
    """MAX_RUN_SECONDS for the messages."""
    return f"{MAX_RUN_SECONDS / 86400:.0f} days"


def check_run_time(T: int) -> None:
    """Refuse a budget that no rule could pull within MAX_RUN_SECONDS, even at MAX_PULLS_PER_SECOND.

    Parameters
    ----------
    T : int
        The budget (pulls).

    Raises
    ------
    InvalidInputError
        T not a positive integer, or above MAX_RUN_SECONDS x MAX_PULLS_PER_SECOND.
    """
    T = as_count(T, "budget T", minimum=1, floats=True)
    fits = int(MAX_RUN_SECONDS * MAX_PULLS_PER_SECOND)
    if T > fits:
        raise InvalidInputError(f"T = {T:,} pulls would take {_years(T / MAX_PULLS_PER_SECOND)} even at "
                                f"{MAX_PULLS_PER_SECOND:.0e} pulls per second, more than the {_limit()} a run may "
                                f"take; choose T <= {fits:,}")


def check_rate(T: int, t: int, seconds: float, name: str) -> None:
    """Refuse a run whose T - t pulls left would take more than MAX_RUN_SECONDS at the rate t / seconds so far.

    Parameters
    ----------
    T : int
        The budget (pulls).
    t : int
        The pulls made in ``seconds``.
    seconds : float
        The time they took (the rule's measurement, RATE_SECONDS or more).
    name : str
        The rule, named in the message.

    Raises
    ------
    InvalidInputError
        T, t or seconds not valid (t a count up to T, seconds finite and not negative), or the rest of the run would
        take more than MAX_RUN_SECONDS (no pull made yet counts as a rate of 0).
    """
    T = as_count(T, "budget T", minimum=1, floats=True)
    t = as_count(t, "pulls made t", minimum=0, floats=True)
    seconds = float(seconds)
    if t > T or not (math.isfinite(seconds) and seconds >= 0):
        raise InvalidInputError(f"the rate needs pulls made t <= T = {T:,} and finite seconds >= 0, got t = {t:,}, "
                                f"seconds = {seconds}")
    rate = t / seconds if seconds > 0 else math.inf
    left = (T - t) / rate if rate > 0 else math.inf
    if left > MAX_RUN_SECONDS:
        raise InvalidInputError(
            f"T = {T:,} pulls would take about {_years(left)} at the {rate:,.0f} pulls per second {name} makes here, "
            f"more than the {_limit()} a run may take; choose T <= {int(rate * MAX_RUN_SECONDS):,}")


class RunTime:
    """The measured part of the rule (module docstring), timed from its creation: ``check(t)`` after every batch,
    with t the pulls of T made so far, decides once RATE_SECONDS have passed (or the run has ended).

    Parameters
    ----------
    T : int
        The budget (pulls).
    name : str
        The rule, named in a refusal.
    clock : callable
        Seconds (``time.perf_counter`` by default).

    Raises
    ------
    InvalidInputError
        T not a positive integer.
    """

    def __init__(self, T: int, name: str, clock: Callable[[], float] = time.perf_counter) -> None:
        self.T, self.name, self.clock = as_count(T, "budget T", minimum=1, floats=True), name, clock
        self.start = clock()
        self.decided = False
        # below this budget even MIN_PULLS_PER_SECOND finishes in time: progress need not wait for the rule
        self.quiet = self.T <= MAX_RUN_SECONDS * MIN_PULLS_PER_SECOND

    @property
    def reports(self) -> bool:
        """Whether progress may be reported now (the rule has decided, or cannot refuse this budget at the slowest
        rate expected)."""
        return self.decided or self.quiet

    def check(self, t: int) -> None:
        """After a batch, t pulls of T made: refuse the run once measured if the rest would take too long.

        Parameters
        ----------
        t : int
            The pulls made so far.

        Raises
        ------
        InvalidInputError
            The rest of the run would take more than MAX_RUN_SECONDS (:func:`check_rate`).
        """
        if self.decided:
            return
        since = self.clock() - self.start
        if t < self.T and since < RATE_SECONDS:
            return
        self.decided = True
        check_rate(self.T, t, since, self.name)
