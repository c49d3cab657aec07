"""``bandits list``: the algorithms and instances by name (also the help text of ``bandits run``)."""

from __future__ import annotations

import typer

from ..instances import INSTANCES
from ..registry import ALGORITHMS


def catalogue() -> str:
    """Every algorithm and instance with its kind and one-line summary."""
    algos = "\n".join(f"  {name:<18} [{'|'.join(spec.kinds)}] {spec.summary}" for name, spec in ALGORITHMS.items())
    insts = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in INSTANCES.items())
    return f"Algorithms:\n\n{algos}\n\nInstances:\n\n{insts}"


def list_command() -> None:
    """List the algorithms and instances by name."""
    typer.echo(catalogue())
