"""The project's exception types, and the exit policy of the command lines built on them.

Every error raised on purpose by :mod:`optdesign` (and :mod:`bandits`) derives from
:class:`OptDesignError`, so callers can catch one type; the subclasses also derive
from the matching built-in so that ``except ValueError`` keeps working.

:func:`exit_on_project_errors` is how a command line turns these errors into an exit status: a project error
becomes one line ``error: ...`` on stderr and exit status ``USAGE_ERROR`` (2); Ctrl-C that a command does not
handle itself becomes ``interrupted`` and ``INTERRUPTED`` (130, the shell's convention for SIGINT); anything else
is a bug and keeps its traceback. It lives here, next to the types it maps, because both the ``optdesign`` and
the ``bandits`` command lines need it and this module is shared ground both may import; typer is imported only
when an error is reported, so importing the error types stays free of it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = [
    "INTERRUPTED",
    "USAGE_ERROR",
    "InstanceTooLargeError",
    "InvalidInputError",
    "OptDesignError",
    "SolverError",
    "TimeLimitReached",
    "exit_on_project_errors",
    "run_command_line",
]

P = ParamSpec("P")
R = TypeVar("R")

#: the exit status of every refused input, as for a typer/click usage error
USAGE_ERROR = 2
#: the exit status after an unhandled Ctrl-C (128 + SIGINT)
INTERRUPTED = 130


class OptDesignError(Exception):
    """Base class of every error this project raises on purpose."""


class InvalidInputError(OptDesignError, ValueError):
    """An argument has the wrong shape, type or value; the message names it."""


class SolverError(OptDesignError, RuntimeError):
    """A convex solver failed; the message names the solver and its status.

    Parameters
    ----------
    message : str
        What failed, with every solver tried and its status or exception.
    solver : str, optional
        The (last) solver that failed, e.g. ``"CLARABEL"``; kept as ``self.solver``.
    status : str, optional
        Its cvxpy status (``"infeasible"``, ``"time_limit"``, ...); kept as ``self.status``.
    """

    def __init__(self, message: str, *, solver: str | None = None, status: str | None = None):
        super().__init__(message)
        self.solver = solver
        self.status = status


class TimeLimitReached(SolverError):
    """The enclosing time budget ran out, or a stop was requested, before a computation finished.

    Raised by :func:`optdesign.runtime.deadline.check_budget` inside long loops and by
    :func:`optdesign.runtime.solvers.solve`
    before or after a conic solve (``status`` is ``"time_limit"``). A function with a ``time_limit`` catches it
    and returns its best certified result so far: callers of such functions never see it.

    Parameters
    ----------
    message : str
        Where the time ran out.
    solver : str, optional
        The solver that was stopped or refused, if any.
    """

    def __init__(self, message: str, *, solver: str | None = None):
        super().__init__(message, solver=solver, status="time_limit")


class InstanceTooLargeError(OptDesignError):
    """An exact method was asked to solve an instance above its documented size limit."""


def exit_on_project_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Decorator for CLI commands: a project error becomes ``error: ...`` on stderr and exit status 2.

    Ctrl-C that the command does not handle becomes ``interrupted`` on stderr and exit status 130; any other
    exception propagates with its traceback.

    Parameters
    ----------
    command : callable
        A typer command function.

    Returns
    -------
    callable
        The wrapped command, with the same signature and ``--help`` text (``functools.wraps``).
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except OptDesignError as exc:
            import typer

            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(USAGE_ERROR) from None
        except KeyboardInterrupt:
            import typer

            typer.echo("interrupted", err=True)
            raise typer.Exit(INTERRUPTED) from None

    return wrapper


def run_command_line(app: Callable[..., object]) -> None:
    """Run a typer application as a console script, with its usage errors on one line.

    A usage error (a missing argument, an option without its value, a value of the wrong type, an unknown
    command) prints ``error: <message> (see '<command> --help')`` on stderr and exits with status 2, as every
    refused input of the project does, instead of click's boxed message; ``--help``, the commands' own exit
    statuses and Ctrl-C (``interrupted``, 130) behave as in a standalone typer application.

    Parameters
    ----------
    app : typer.Typer
        The application (called with click's ``standalone_mode=False``).

    Raises
    ------
    SystemExit
        With the command's exit status, 2 for a usage error, 130 after Ctrl-C.
    """
    import sys

    import typer

    _warnings_on_one_line()
    aborts: tuple[type[BaseException], ...] = (typer.Abort,)
    try:  # typer before 0.16 raises click's own exceptions
        import click

        aborts += (click.Abort,)
    except ImportError:  # pragma: no cover - typer vendors click
        pass
    try:
        code = app(standalone_mode=False)
    except aborts:
        typer.echo("interrupted", err=True)
        sys.exit(INTERRUPTED)
    except Exception as exc:
        if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):  # not a click error: a bug
            raise
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group called without a command: its help
            exc.show()  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = " ".join(str(exc.format_message()).split())  # click lists choices on several lines
        typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(exc.exit_code)
    if isinstance(code, int) and code != 0:
        sys.exit(code)


def _warnings_on_one_line() -> None:
    """Warnings as ``warning: <message>`` on one line of stderr, each text once per process (not the source line
    that raised it, nor once per place that read the same damaged file)."""
    import sys
    import warnings

    shown: set[str] = set()  # warnings' own "once" registry is reset by every catch_warnings block (pandas, ...)

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
             line: str | None = None) -> None:
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            print(f"warning: {text}", file=sys.stderr)

    warnings.showwarning = show
