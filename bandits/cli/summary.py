"""The summary table that ``bandits study`` and ``bandits plot`` print (from
:func:`bandits.studies.write_tables`), with a visible warning for cells whose error rate exceeds delta."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    import pandas as pd


def print_summary(summary: pd.DataFrame, out: str) -> None:
    """The summary table (rounded), then where the files are."""
    if summary.empty:
        typer.echo("no finished runs")
        return
    shown = [c for c in ("cell", "algorithm", "delta", "T", "runs", "failed", "mean", "se", "median", "mean_rounds",
                         "error_rate", "error_ci_high", "lower_bound", "ratio", "mean_error", "se_error",
                         "loss_rate", "mean_superlevel", "warning") if c in summary.columns]
    table = Table(title=f"summary ({out}/summary.csv)")
    for col in shown:
        table.add_column(col, justify="left" if col in ("cell", "algorithm", "warning") else "right")
    for _, row in summary[shown].iterrows():
        table.add_row(*(_cell(v) for v in row), style="bold red" if row.get("warning") else None)
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    if "warning" in summary.columns and (summary["warning"] != "").any():
        bad = summary[summary["warning"] != ""]
        cells = "; ".join(f"{r.algorithm} on {r.cell} (delta {r.delta:g}: {r.errors}/{r.runs} wrong)"
                          for r in bad.itertuples())
        console.print(f"[bold red]WARNING[/]: error rate significantly above delta for {cells}")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value)
