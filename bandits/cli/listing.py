"""``bandits list``: the algorithms, instances and questions by name (also the help text of ``bandits run``),
wrapped to the terminal (at most 80 columns) under their own column."""

from __future__ import annotations

import textwrap

import typer

from optdesign.errors import InvalidInputError
from optdesign.runtime.terminal import text_width

from ..instances import INSTANCES
from ..plugins import INSTANCE_GROUP, entry_point_plugins
from ..pure_exploration.question_table import QUESTIONS
from ..registry import ALGORITHMS, algorithm_spec

#: columns of the name column of a catalogue line
NAME_WIDTH = 18


def catalogue(plugins: bool = False, width: int | None = None) -> str:
    """Every algorithm, instance and question with its kinds and one-line summary, each wrapped to ``width`` columns
    (:func:`optdesign.runtime.terminal.text_width` by default) under its own column; with ``plugins``, also the
    entry-point plug-ins (which imports them: ``bandits list`` does, the help text of ``bandits run`` does not)."""
    width = width or text_width()
    algos = "\n".join(_entry(name, f"[{'|'.join(spec.kinds)}] {spec.summary}", width)
                      for name, spec in ALGORITHMS.items())
    insts = "\n".join(_entry(name, f"[{spec.kind}] {spec.summary}", width) for name, spec in INSTANCES.items())
    asked = "\n".join(_entry(name, f"[{'|'.join(question.classes)}] {question.summary}", width)
                      for name, question in QUESTIONS.items())
    text = (f"Algorithms:\n\n{algos}\n\nInstances:\n\n{insts}\n\n"
            f"Questions (problem=NAME:options of a rule run under the GLR stop):\n\n{asked}")
    found = entry_point_plugins() if plugins else {}
    if found:
        text += f"\n\nPlug-ins (entry points bandits.samplers):\n\n{plugin_lines(found, width)}"
    families = entry_point_plugins(INSTANCE_GROUP) if plugins else {}
    if families:
        lines = "\n".join(_entry(name, f"{target} (from {origin})", width)
                           for name, (target, origin) in families.items())
        text += f"\n\nInstance plug-ins (entry points {INSTANCE_GROUP}):\n\n{lines}"
    last = ("Any Sampler or Algorithm subclass also runs by its path, package.module:Class, and any instance family "
            "(a function of keyword options returning an environment) by package.module:function.")
    return f"{text}\n\n{_wrap(last, width)}"


def _entry(name: str, text: str, width: int) -> str:
    """One catalogue entry: the name in its column, ``text`` wrapped beside it (below a name wider than the
    column, so that every text starts in the same column)."""
    if len(name) > NAME_WIDTH:
        return f"  {name}\n" + _wrap(text, width, first=" " * (NAME_WIDTH + 3), indent=NAME_WIDTH + 3)
    return _wrap(text, width, first=f"  {name:<{NAME_WIDTH}} ", indent=NAME_WIDTH + 3)


def _wrap(text: str, width: int, *, first: str = "", indent: int = 0) -> str:
    """``text`` wrapped at spaces to ``width`` columns after the prefix ``first``, its other lines indented by
    ``indent`` spaces; a word longer than a line stays whole (never cut)."""
    return textwrap.fill(text, width, initial_indent=first, subsequent_indent=" " * indent, break_long_words=False,
                         break_on_hyphens=False)


def plugin_lines(plugins: dict[str, tuple[str, str]], width: int | None = None) -> str:
    """One entry per entry-point plug-in: name, kinds, summary and origin (or why it does not load), wrapped to
    ``width`` columns (:func:`optdesign.runtime.terminal.text_width` by default)."""
    width = width or text_width()
    lines = []
    for name, (target, origin) in plugins.items():
        if name in ALGORITHMS:
            lines.append(_entry(name, f"shadowed by the built-in name ({target}, from {origin})", width))
            continue
        try:
            spec = algorithm_spec(name)
            lines.append(_entry(name, f"[{'|'.join(spec.kinds)}] {spec.summary} ({target}, from {origin})", width))
        except InvalidInputError as exc:
            lines.append(_entry(name, f"does not load: {exc} (from {origin})", width))
    return "\n".join(lines)


def list_command() -> None:
    """List the algorithms, instances and questions by name."""
    typer.echo(catalogue(plugins=True))
