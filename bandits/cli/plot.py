"""``bandits plot``: redraw a study's summary table and figure from its results directory."""

from __future__ import annotations

import typer

from optdesign.errors import exit_on_project_errors
from optdesign.validation import check_image_path

from .summary import print_summary


@exit_on_project_errors
def plot_command(
    directory: str = typer.Argument(..., help="results directory of a study"),
    output: str | None = typer.Option(None, "--output", help="image file (default DIR/plot.png)"),
    wide: bool = typer.Option(False, "--wide", help="print every summary column (default: an 80-column table)"),
) -> None:
    """Redraw a study's summary table and figure from its results directory."""
    from ..studies import plot_study, write_tables
    if output is not None:
        check_image_path(output, "--output")  # before the table: a bad path is the only line printed
    print_summary(write_tables(directory), directory, wide=wide)
    typer.echo(f"plot: {plot_study(directory, output)}")
