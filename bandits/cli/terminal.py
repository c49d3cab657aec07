"""The width of what ``bandits`` prints: the terminal's, and at most 80 columns (the same rule as
``optdesign.cli.terminal``, which bandits may not import: only optdesign's public surface)."""

from __future__ import annotations

from rich.console import Console

__all__ = ["WIDTH", "narrow_console", "text_width"]

#: the widest line a command prints
WIDTH = 80


def text_width() -> int:
    """Columns for plain text: WIDTH, or the terminal's width when narrower (``COLUMNS`` when set)."""
    return min(WIDTH, Console().width)


def narrow_console(stderr: bool = False) -> Console:
    """A rich console :func:`text_width` columns wide, on stdout (or on stderr with ``stderr``)."""
    return Console(width=text_width(), stderr=stderr)
