"""Command line of the bandit loops: ``bandits run``, ``bandits list`` and ``bandits version``.

``bandits run ALGORITHM[:key=value,...] --instance NAME[:key=value,...] --delta D --seed S``
prints a table (or JSON with ``--json``); a comma-separated ``--delta`` records the stopping time
of every delta along one trajectory for algorithms whose sampling ignores delta. Bad input exits
with status 2 and one line on stderr.
"""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
from rich.table import Table

from optdesign.cli import exit_on_project_errors
from optdesign.errors import InvalidInputError

from .instances import INSTANCES, parse_instance, split_options
from .registry import ALGORITHMS, make_algorithm
from .run import DEFAULT_MAX_SAMPLES, run

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Pure-exploration bandit loops and studies.")


def _catalogue() -> str:
    algos = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in ALGORITHMS.items())
    insts = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in INSTANCES.items())
    return f"Algorithms:\n\n{algos}\n\nInstances:\n\n{insts}"


@app.callback()
def _group() -> None:
    """Pure-exploration bandit loops and studies."""


@app.command("run", help=f"Run one algorithm on one instance until it stops.\n\n{_catalogue()}")
@exit_on_project_errors
def run_command(
    algorithm: str = typer.Argument(..., help="algorithm name, optionally NAME:key=value,..."),
    instance: str = typer.Option(..., "--instance", "-i", help="instance NAME[:key=value,...]"),
    delta: str = typer.Option("0.05", "--delta", help="confidence level(s) in (0,1), comma-separated"),
    seed: int = typer.Option(0, "--seed"),
    max_samples: int = typer.Option(DEFAULT_MAX_SAMPLES, "--max-samples", help="sample budget"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    algo = make_algorithm(algorithm)
    env = parse_instance(instance)
    wanted, got = ALGORITHMS[split_options(algorithm)[0]].kind, INSTANCES[split_options(instance)[0]].kind
    if wanted != got:
        raise InvalidInputError(f"algorithm {algo.name} runs on {wanted} instances; {instance!r} is {got}")
    try:
        deltas = [float(d) for d in delta.split(",")]
    except ValueError:
        raise InvalidInputError(f"--delta must be numbers in (0, 1), comma-separated; got {delta!r}") from None
    results = run(algo, env, deltas if len(deltas) > 1 else deltas[0], seed=seed, max_samples=max_samples)
    results = results if isinstance(results, list) else [results]
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=2, default=str))
        return
    table = Table(title=f"{algo.name} on {env.name}, seed {seed}")
    for col in ("delta", "samples", "rounds", "recommendation", "correct", "stopped by", "solve [s]", "other [s]"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(f"{r.delta:g}", f"{r.samples:,}", f"{r.rounds:,}", str(r.recommendation), str(r.correct),
                      r.stopped_by, f"{r.solve_time:.3f}", f"{r.other_time:.3f}")
    Console(width=None if sys.stdout.isatty() else 160).print(table)


@app.command("list")
def list_command() -> None:
    """List the algorithms and instances by name."""
    typer.echo(_catalogue())


@app.command("version")
def show_version() -> None:
    """Print the package version."""
    from optdesign import __version__

    typer.echo(f"bandits {__version__}")


def main() -> None:
    app()
