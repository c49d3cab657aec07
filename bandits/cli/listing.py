"""``bandits list``: the algorithms and instances by name (also the help text of ``bandits run``)."""

from __future__ import annotations

import typer

from optdesign.errors import InvalidInputError

from ..instances import INSTANCES
from ..plugins import entry_point_plugins
from ..registry import ALGORITHMS, algorithm_spec


def catalogue(plugins: bool = False) -> str:
    """Every algorithm and instance with its kind and one-line summary; with ``plugins``, also the entry-point
    plug-ins (which imports them: ``bandits list`` does, the help text of ``bandits run`` does not)."""
    algos = "\n".join(f"  {name:<18} [{'|'.join(spec.kinds)}] {spec.summary}" for name, spec in ALGORITHMS.items())
    insts = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in INSTANCES.items())
    text = f"Algorithms:\n\n{algos}\n\nInstances:\n\n{insts}"
    found = entry_point_plugins() if plugins else {}
    if found:
        text += f"\n\nPlug-ins (entry points bandits.samplers):\n\n{plugin_lines(found)}"
    return text + "\n\nAny Sampler or Algorithm subclass also runs by its path, package.module:Class."


def plugin_lines(plugins: dict[str, tuple[str, str]]) -> str:
    """One line per entry-point plug-in: name, kinds, summary and origin (or why it does not load)."""
    lines = []
    for name, (target, origin) in plugins.items():
        if name in ALGORITHMS:
            lines.append(f"  {name:<18} shadowed by the built-in name ({target}, from {origin})")
            continue
        try:
            spec = algorithm_spec(name)
            lines.append(f"  {name:<18} [{'|'.join(spec.kinds)}] {spec.summary} ({target}, from {origin})")
        except InvalidInputError as exc:
            lines.append(f"  {name:<18} does not load: {exc} (from {origin})")
    return "\n".join(lines)


def list_command() -> None:
    """List the algorithms and instances by name."""
    typer.echo(catalogue(plugins=True))
