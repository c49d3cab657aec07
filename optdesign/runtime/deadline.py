"""When an iterative solve must stop: its own time limit, the caller's overall budget, or Ctrl-C.

Every iterative fast path (Frank–Wolfe, the exchange, the barrier, constraint generation) keeps its best
certified iterate and checks one :class:`Deadline` between iterations. Two things end a deadline early:

* ``time_budget(seconds)``: a caller's budget for a whole call (``g_optimal(X, time_limit=...)``); every
  deadline created inside the block ends no later than the budget, however deeply the solves nest.
* ``graceful_interrupt()``: inside this block the first Ctrl-C (SIGINT) only requests a stop, so each running
  solve returns its best design with status ``"interrupted"``; a second Ctrl-C raises KeyboardInterrupt as usual.
  A conic (cvxpy) solve cannot be stopped between iterations: it finishes, or the second Ctrl-C aborts it.

Loops that are not solves (variable elimination, separation, model construction) call :func:`check_budget`, which
raises :class:`~optdesign.errors.TimeLimitReached` once either has happened; the function owning the budget catches
it and returns its best certified result.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from types import FrameType
from typing import Literal

from ..errors import InvalidInputError, TimeLimitReached

__all__ = [
    "CERTIFY_SECONDS",
    "Deadline",
    "as_time_limit",
    "budget_expired",
    "check_budget",
    "clear_stop",
    "graceful_interrupt",
    "overtime",
    "remaining_budget",
    "request_stop",
    "stop_reason",
    "stop_requested",
    "time_budget",
]

_budget_end: ContextVar[float] = ContextVar("optdesign_budget_end", default=math.inf)
_stop = threading.Event()


def stop_requested() -> bool:
    """True once a Ctrl-C was caught by :func:`graceful_interrupt` (or :func:`request_stop` was called).

    Returns
    -------
    bool
        Whether a stop is requested (process-wide, shared by every thread).
    """
    return _stop.is_set()


def request_stop() -> None:
    """Ask every running solve to return its best iterate, as the first Ctrl-C does."""
    _stop.set()


def clear_stop() -> None:
    """Withdraw a stop request (:func:`graceful_interrupt` does it on entry and on exit)."""
    _stop.clear()


def as_time_limit(value: object, name: str = "time_limit") -> float | None:
    """A time limit in seconds: None (no limit) or a positive finite number; booleans are refused.

    Parameters
    ----------
    value : object
        The caller's ``time_limit``.
    name : str
        The argument's name in the error message.

    Returns
    -------
    float or None
        ``value`` as a float, or None for no limit.

    Raises
    ------
    InvalidInputError
        ``value`` is a bool, not a number, not finite, or not positive.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{name} must be a positive number of seconds or None, got {value!r}")
    return float(value)


def _seconds(value: object) -> float | None:
    """None or a number of seconds (0 and negative mean "already spent"); anything else is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InvalidInputError(f"seconds must be a number or None, got {value!r}")
    return float(value)


@contextlib.contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Cap every :class:`Deadline` created inside the block at ``seconds`` from now (None: no cap).

    Budgets nest: inside an enclosing budget the earlier end wins.

    Parameters
    ----------
    seconds : float or None
        Wall-clock seconds from now; 0 or negative means already spent, None adds no cap.

    Returns
    -------
    contextlib.AbstractContextManager
        The block (``with time_budget(10): ...``); the enclosing budget is restored on exit.

    Raises
    ------
    InvalidInputError
        ``seconds`` is neither None nor a number (or is NaN or a bool).
    """
    seconds = _seconds(seconds)
    if seconds is None:
        yield
        return
    end = min(_budget_end.get(), time.perf_counter() + seconds)
    token = _budget_end.set(end)
    try:
        yield
    finally:
        _budget_end.reset(token)


#: seconds past a time budget that :func:`overtime` grants by default: bracketing one point already computed
CERTIFY_SECONDS = 1.0


@contextlib.contextmanager
def overtime(seconds: float = CERTIFY_SECONDS) -> Iterator[None]:
    """Inside the block the enclosing budget ends no earlier than ``seconds`` from now (no budget: no change).

    For the certificate of a point already computed (the bracket at a solve the budget cut short): a little more
    time turns that point into a result. Stop requests still stop.

    Parameters
    ----------
    seconds : float
        The extension, in seconds from now (default :data:`CERTIFY_SECONDS`).

    Returns
    -------
    contextlib.AbstractContextManager
        The block; the enclosing budget is restored on exit.

    Raises
    ------
    InvalidInputError
        ``seconds`` is neither None nor a number (or is NaN or a bool).
    """
    extra = _seconds(seconds)
    end = _budget_end.get()
    if end == math.inf or extra is None:
        yield
        return
    token = _budget_end.set(max(end, time.perf_counter() + extra))
    try:
        yield
    finally:
        _budget_end.reset(token)


def remaining_budget() -> float | None:
    """Seconds left in the enclosing :func:`time_budget`, or None outside any budget.

    Returns
    -------
    float or None
        Seconds left (0 once spent), or None when no budget encloses the call.
    """
    end = _budget_end.get()
    return None if end == math.inf else max(0.0, end - time.perf_counter())


def budget_expired() -> bool:
    """True when the enclosing :func:`time_budget` is spent or a stop was requested.

    Returns
    -------
    bool
        Whether the caller should return its best result now.
    """
    return stop_requested() or time.perf_counter() > _budget_end.get()


def check_budget(where: str = "a long computation") -> None:
    """Raise :class:`~optdesign.errors.TimeLimitReached` once the enclosing budget is spent or a stop was requested.

    Long loops (elimination steps, separation passes, model construction) call it between iterations; the function
    that owns the budget catches the exception and returns its best certified result.

    Parameters
    ----------
    where : str
        What was running, for the message.

    Raises
    ------
    TimeLimitReached
        :func:`budget_expired` is True.
    """
    if budget_expired():
        raise TimeLimitReached(f"the time budget ran out during {where}")


class Deadline:
    """``seconds`` of wall time from now, capped by the enclosing budget, or until a stop is requested.

    An iterative solver creates one at its start and checks :meth:`expired` between iterations.

    Parameters
    ----------
    seconds : float, optional
        Own time limit in seconds (0 or negative: already expired); None keeps only the enclosing
        :func:`time_budget`, if any.

    Raises
    ------
    InvalidInputError
        ``seconds`` is neither None nor a number (or is NaN or a bool).
    """

    def __init__(self, seconds: float | None = None):
        seconds = _seconds(seconds)
        own = math.inf if seconds is None else time.perf_counter() + max(0.0, seconds)
        self.end = min(own, _budget_end.get())

    def expired(self) -> bool:
        """Whether the time is up or a stop was requested.

        Returns
        -------
        bool
            True once the deadline has passed or after :func:`request_stop` (or a caught Ctrl-C).
        """
        return stop_requested() or time.perf_counter() > self.end

    def remaining(self) -> float:
        """Seconds left (0 when a stop was requested; inf without any limit).

        Returns
        -------
        float
            Nonnegative seconds, to pass on as the time limit of a nested solve.
        """
        return 0.0 if stop_requested() else max(0.0, self.end - time.perf_counter())

    def time_left(self) -> float:
        """Seconds left on the clock alone (a stop request does not count; inf without any limit).

        Returns
        -------
        float
            Nonnegative seconds until the end of the deadline.
        """
        return max(0.0, self.end - time.perf_counter())


def stop_reason() -> Literal["interrupted", "not_converged"]:
    """The status of a solve cut short: ``"interrupted"`` after Ctrl-C, else ``"not_converged"``.

    Returns
    -------
    str
        ``"interrupted"`` when a stop was requested, else ``"not_converged"`` (a time or iteration limit).
    """
    return "interrupted" if stop_requested() else "not_converged"


@contextlib.contextmanager
def graceful_interrupt(on_first: Callable[[], None] | None = None) -> Iterator[None]:
    """First Ctrl-C inside the block requests a stop (and calls ``on_first``); the second raises as usual.

    Only the main thread can own signal handlers; elsewhere the block changes nothing. The stop request is
    cleared on entry and on exit.

    Parameters
    ----------
    on_first : callable, optional
        Called without arguments at the first Ctrl-C (e.g. to tell the user that a second one aborts).

    Returns
    -------
    contextlib.AbstractContextManager
        The block (``with graceful_interrupt(): res = od.g_optimal(X)``); the previous SIGINT handler is
        restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if _stop.is_set():
            raise KeyboardInterrupt
        _stop.set()
        if on_first is not None:
            on_first()

    previous = signal.signal(signal.SIGINT, handler)
    clear_stop()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        clear_stop()
