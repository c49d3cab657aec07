"""Exit policy shared by the ``optdesign`` and ``bandits`` command lines.

A project error (:class:`~optdesign.errors.OptDesignError`) becomes one line ``error: ...`` on stderr and exit
status 2; Ctrl-C that a command does not handle itself becomes ``interrupted`` and exit status 130 (the shell's
convention for SIGINT); anything else is a bug and keeps its traceback. Both command lines import this module,
so neither depends on the other.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from .errors import OptDesignError

__all__ = ["INTERRUPTED", "USAGE_ERROR", "exit_on_project_errors"]

P = ParamSpec("P")
R = TypeVar("R")

USAGE_ERROR = 2  # the exit status of every refused input, as for a typer/click usage error
INTERRUPTED = 130


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
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(USAGE_ERROR) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(INTERRUPTED) from None

    return wrapper
