"""Command line of the bandit loops: ``bandits version`` (run, study and plot commands build on it)."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Pure-exploration bandit loops and studies.")


@app.callback()
def _group() -> None:
    """Pure-exploration bandit loops and studies."""


@app.command("version")
def show_version() -> None:
    """Print the package version."""
    from optdesign import __version__

    typer.echo(f"bandits {__version__}")


def main() -> None:
    app()
