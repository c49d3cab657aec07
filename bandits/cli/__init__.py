"""Command line of the bandit loops: ``bandits run``, ``bandits study``, ``bandits plot``, ``bandits list``
and ``bandits version``.

``bandits run ALGORITHM[:key=value,...] --instance NAME[:key=value,...] --delta D --seed S``
prints a table (or JSON with ``--json``); a comma-separated ``--delta`` records the stopping time
of every delta along one trajectory for algorithms whose sampling ignores delta. Thresholding
algorithms (grapl, apt, random-laplacian) take ``--budget T`` instead of ``--delta``. Bad input exits
with status 2 and one line on stderr.

One module per command, plus the summary table two of them share (the width: :mod:`optdesign.runtime.terminal`);
this one holds the
typer ``app``, registers the commands and defines ``bandits version`` (``show_version``):

    run       run_command: one algorithm on one instance (table or JSON)
    study     study_command: a TOML study on worker processes or Dask (heavy imports inside the command)
    plot      plot_command: redraw a study's summary table and figure
    listing   list_command and catalogue(): the algorithms and instances by name
    summary   print_summary: the summary table that ``study`` and ``plot`` print
"""

from __future__ import annotations

import typer

from optdesign.errors import run_command_line

from .listing import list_command
from .plot import plot_command
from .run import RUN_HELP, run_command
from .study import study_command

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode="rich",
                  help="Pure-exploration bandit loops and studies.")


@app.callback()
def _group() -> None:
    """Pure-exploration bandit loops and studies."""


app.command("run", help=RUN_HELP)(run_command)  # the catalogue, wrapped to 80 columns by bandits.cli.listing
app.command("study")(study_command)
app.command("plot")(plot_command)
app.command("list")(list_command)


@app.command("version")
def show_version() -> None:
    """Print the package version."""
    from optdesign import __version__

    typer.echo(f"bandits {__version__}")


def main() -> None:
    """Console entry point (``bandits``): usage errors on one line (:func:`optdesign.errors.run_command_line`)."""
    run_command_line(app)


__all__ = ["app", "main"]
