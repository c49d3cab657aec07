"""What ``optdesign`` prints fits the terminal and at most 80 columns: the console the tables go to, help text that
reflows, and plain text wrapped at word boundaries (never cut, never an ellipsis). ``bandits.cli.terminal`` holds
the same width for ``bandits``, which imports only optdesign's public surface."""

from __future__ import annotations

import inspect
import textwrap

from rich.console import Console

__all__ = ["WIDTH", "narrow_console", "reflow", "text_width", "wrap"]

#: the widest line a command prints
WIDTH = 80


def text_width() -> int:
    """Columns for plain text: WIDTH, or the terminal's width when narrower (``COLUMNS`` when set)."""
    return min(WIDTH, Console().width)


def narrow_console(stderr: bool = False) -> Console:
    """A rich console :func:`text_width` columns wide, on stdout (or on stderr with ``stderr``)."""
    return Console(width=text_width(), stderr=stderr)


def reflow(doc: str | None) -> str:
    """A command's docstring as its ``--help`` text: each paragraph on one line, the paragraphs apart, so the help
    formatter wraps them to the terminal instead of keeping the docstring's line breaks."""
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def wrap(text: str, width: int | None = None, *, first: str = "", indent: int = 0) -> str:
    """``text`` wrapped at spaces to ``width`` columns (:func:`text_width` by default) after the prefix ``first``,
    its other lines indented by ``indent`` spaces; a word longer than a line stays whole."""
    return textwrap.fill(text, width or text_width(), initial_indent=first, subsequent_indent=" " * indent,
                         break_long_words=False, break_on_hyphens=False)
