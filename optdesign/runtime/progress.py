"""Progress of long solves: iterative paths report one short line (iteration, certified gap), a caller shows it.

Inside ``reporting(callback)`` every :func:`report` calls ``callback(line)``; outside, :func:`listening` is False
and a report costs one context-variable lookup. ``optdesign solve`` shows the latest line beside its spinner.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from ..errors import InvalidInputError

__all__ = ["listening", "report", "reporting"]

_callback: ContextVar[Callable[[str], None] | None] = ContextVar("optdesign_progress", default=None)


def listening() -> bool:
    """True inside :func:`reporting` (guard the formatting of a report with it in hot loops).

    Returns
    -------
    bool
        Whether a callback is installed in the current context.
    """
    return _callback.get() is not None


def report(line: str) -> None:
    """Pass ``line`` to the caller's callback, if any.

    Parameters
    ----------
    line : str
        One short progress line, e.g. ``"barrier: iteration 40, gap 3.2e-03"``.
    """
    callback = _callback.get()
    if callback is not None:
        callback(line)


@contextlib.contextmanager
def reporting(callback: Callable[[str], None]) -> Iterator[None]:
    """Send every :func:`report` inside the block to ``callback``.

    Parameters
    ----------
    callback : callable
        ``callback(line)`` with the progress line (str); it should return quickly.

    Returns
    -------
    contextlib.AbstractContextManager
        The block (``with reporting(print): ...``); the previous callback is restored on exit.

    Raises
    ------
    InvalidInputError
        ``callback`` is not callable.
    """
    if not callable(callback):
        raise InvalidInputError(f"callback must be callable, got {callback!r}")
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)
