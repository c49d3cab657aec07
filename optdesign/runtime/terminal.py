"""What the command lines (``optdesign`` and ``bandits``) print fits the terminal and at most 80 columns: the console
the tables go to, help text that reflows, and plain text wrapped at word boundaries (never cut, never an ellipsis)."""

from __future__ import annotations

import inspect
import textwrap

from rich.console import Console

__all__ = ["WIDTH", "narrow_console", "reflow", "text_width", "wrap"]

#: the widest line a command prints
WIDTH = 80


def text_width() -> int:
    """Columns for plain text: WIDTH, or the terminal's width when narrower (``COLUMNS`` when set).

    Returns
    -------
    int
        The width in columns.
    """
    return min(WIDTH, Console().width)


def narrow_console(stderr: bool = False) -> Console:
    """A rich console :func:`text_width` columns wide, on stdout (or on stderr with ``stderr``).

    Parameters
    ----------
    stderr : bool
        Print on stderr instead of stdout.

    Returns
    -------
    rich.console.Console
        The console.
    """
    return Console(width=text_width(), stderr=stderr)


def reflow(doc: str | None) -> str:
    """A command's docstring as its ``--help`` text: each paragraph on one line, the paragraphs apart, so the help
    formatter wraps them to the terminal instead of keeping the docstring's line breaks.

    Parameters
    ----------
    doc : str or None
        The docstring (None gives an empty text).

    Returns
    -------
    str
        The help text.
    """
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def wrap(text: str, width: int | None = None, *, first: str = "", indent: int = 0) -> str:
    """``text`` wrapped at spaces to ``width`` columns after the prefix ``first``, its other lines indented; a word
    longer than a line stays whole.

    Parameters
    ----------
    text : str
        The text (its own line breaks and runs of spaces are not kept).
    width : int, optional
        Columns (default: :func:`text_width`).
    first : str
        A prefix of the first line (a name, a bullet).
    indent : int
        Spaces before every other line.

    Returns
    -------
    str
        The lines, joined by newlines.
    """
    return textwrap.fill(text, width or text_width(), initial_indent=first, subsequent_indent=" " * indent,
                         break_long_words=False, break_on_hyphens=False)
