"""The ``optdesign`` command line: ``solve`` (:mod:`optdesign.cli.solve`; the problems it knows in
:mod:`optdesign.cli.problems`, the designs on candidates alone, from arms or a formula, in
:mod:`optdesign.cli.designs`, its tables in :mod:`optdesign.cli.solve_report`, its input files in
:mod:`optdesign.cli.inputs`), ``compare`` (:mod:`optdesign.cli.compare`, its tables and figures in
:mod:`optdesign.cli.compare_report`), ``version``. :mod:`optdesign.runtime.terminal` keeps what they print within
80 columns.

Prints tables by default and JSON with ``--json``; bad input exits with status 2 and a one-line message on
stderr (:func:`optdesign.errors.exit_on_project_errors`).
"""

from __future__ import annotations

import typer

from ..errors import run_command_line
from ..runtime.terminal import reflow
from .compare import compare
from .solve import solve

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="rich",
    help="Optimal experimental design and bandit lower bounds (cvxpy models with certified fast paths).",
)
app.command(help=reflow(solve.__doc__))(solve)  # the docstrings' paragraphs reflow to the terminal
app.command(help=reflow(compare.__doc__))(compare)


@app.command("version")
def show_version() -> None:
    """Print the package version and the usable solvers."""
    from .. import __version__
    from ..runtime.solvers import available_solvers

    typer.echo(f"optdesign {__version__}; solvers: {', '.join(available_solvers())}")


def main() -> None:
    """Console entry point (``optdesign``): usage errors on one line (:func:`optdesign.errors.run_command_line`)."""
    run_command_line(app)


__all__ = ["app", "main"]
