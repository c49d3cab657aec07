"""The summary table that ``bandits study`` and ``bandits plot`` print (from
:func:`bandits.studies.write_tables`), with a visible warning for cells whose error rate exceeds delta.

By default the table keeps the columns a reader needs and fits an 80-column terminal: the instance (its
options that vary across the study; the common ones are named above the table), the algorithm, delta (or the
budget T), runs, the mean samples and their standard error, the ratio to c kl(delta, 1 - delta), the error
rate (in fixed-budget mode: P(error) with its 95 % interval and the mean simple regret, or E(T)) and a flag
(``!`` error rate significantly above delta, ``cap`` some runs stopped by the sample cap, ``tail`` a heavy tail: the
mean stopping time at least 1.5 times the median);
what every row shares (common options, a single delta, the number of runs) is named in the title.
``--wide`` prints every column of ``summary.csv`` at its natural width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from optdesign.runtime.terminal import narrow_console

from ..studies.labels import short_cells

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BUDGET_COLUMNS", "CONFIDENCE_COLUMNS", "FIXED_BUDGET_COLUMNS", "compact_table", "print_summary",
           "wide_table"]

#: (summary column, header, significant digits) of the default table in fixed-confidence mode
CONFIDENCE_COLUMNS = [("cell", "instance", 0), ("algorithm", "algorithm", 0), ("delta", "delta", 3),
                      ("runs", "runs", 0), ("mean", "samples", 3), ("se", "se", 2), ("ratio", "ratio", 3),
                      ("error_rate", "err", 2)]
#: the same for graph-thresholding studies (a budget T instead of delta)
BUDGET_COLUMNS = [("cell", "instance", 0), ("algorithm", "algorithm", 0), ("T", "T", 0), ("runs", "runs", 0),
                  ("mean_error", "E(T)", 3), ("se_error", "se", 2), ("loss_rate", "P(loss)", 2),
                  ("mean_superlevel", "|S|", 3)]
#: the same in fixed-budget mode (a budget T; the error rate with its 95 % interval, the simple regret)
FIXED_BUDGET_COLUMNS = [("cell", "instance", 0), ("algorithm", "algorithm", 0), ("T", "T", 0), ("runs", "runs", 0),
                        ("error_rate", "P(err)", 2), ("error_ci_low", "low", 2), ("error_ci_high", "high", 2),
                        ("mean_regret", "regret", 2), ("mean_error", "E(T)", 3)]
#: columns of the default table left out when no row has a value (the simple regret of set answers, E(T) of runs
#: that are not graph thresholding)
OPTIONAL = ("mean_regret", "mean_error")
FLAGS = ("flags: ! error rate significantly above delta, cap: some runs hit the sample cap, tail: heavy tail "
         "(mean >= 1.5 x median)")


def print_summary(summary: pd.DataFrame, out: str, wide: bool = False) -> None:
    """The summary table (compact by default, every column with ``wide``), then where the file is. Each instance's
    rows run from the largest delta to the smallest, as the figure's panels do.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`bandits.studies.summarize`.
    out : str
        The results directory (named under the table).
    wide : bool
        Print every column at its natural width instead of the 80-column table.
    """
    if summary.empty:
        typer.echo("no finished runs")
        return
    if "delta" in summary.columns:  # easy to hard, as the figure (summary.csv keeps the summary's own order)
        summary = summary.sort_values("delta", ascending=False, kind="stable").sort_values("cell", kind="stable")
    console = narrow_console()
    table = wide_table(summary) if wide else compact_table(summary)
    if wide:  # its natural width: the terminal wraps long lines, nothing is cut
        natural = Measurement.get(console, console.options.update_width(10**6), table).maximum
        console = Console(width=max(Console().width, natural))
    console.print(table)
    warned = "warning" in summary.columns and (summary["warning"] != "").any()
    if not wide and (warned or ("capped" in summary.columns and (summary["capped"] > 0).any())):
        console.print(FLAGS)
    console.print(f"all columns: {out}/summary.csv" + ("" if wide else " (or --wide)"), soft_wrap=True)
    if warned:
        bad = summary[summary["warning"] != ""]
        cells = "; ".join(f"{r.algorithm} on {r.cell} (delta {r.delta:g}: {r.errors}/{r.runs} wrong)"
                          for r in bad.itertuples())
        console.print(f"[bold red]WARNING[/]: error rate significantly above delta for {cells}")


def compact_table(summary: pd.DataFrame) -> Table:
    """The default table: the columns of :data:`CONFIDENCE_COLUMNS` (or :data:`BUDGET_COLUMNS`, or
    :data:`FIXED_BUDGET_COLUMNS` in fixed-budget mode) and the flags.

    What every row shares moves to the title: the common instance options, and delta (or T) and the number of
    runs when they take one value; the flag column appears when some row is flagged.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`bandits.studies.summarize`.

    Returns
    -------
    rich.table.Table
        Borderless, the instances shortened by :func:`short_cells`; long words fold onto a second line
        rather than being cut.
    """
    spec = CONFIDENCE_COLUMNS if "T" not in summary.columns else \
        FIXED_BUDGET_COLUMNS if "error_ci_low" in summary.columns else BUDGET_COLUMNS
    spec = [c for c in spec if c[0] in summary.columns and not (c[0] in OPTIONAL and summary[c[0]].isna().all())]
    labels, common = short_cells(list(summary["cell"]))
    shared = [common] if common else []
    for col, name, digits in (("delta", "delta={}", 3), ("T", "T={}", 0), ("runs", "{} runs", 0)):
        if col in summary.columns and len(summary) > 1 and summary[col].nunique(dropna=False) == 1:
            shared.append(name.format(_short(summary[col].iloc[0], digits)))
            spec = [c for c in spec if c[0] != col]
    flags = [" ".join(f for f, on in (("!", bool(row.get("warning"))), ("cap", row.get("capped", 0) > 0),
                                      ("tail", bool(row.get("heavy_tail", False)))) if on)
             for _, row in summary.iterrows()]
    table = Table(title="summary" + (f" ({'; '.join(shared)})" if shared else ""), box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), title_justify="left")
    for col, header, _ in spec:
        text = col in ("cell", "algorithm")
        table.add_column(header, justify="left" if text else "right", overflow="fold", no_wrap=not text)
    if any(flags):
        table.add_column("flag", no_wrap=True)
    for (_, row), flag in zip(summary.iterrows(), flags, strict=True):
        values = [labels[row["cell"]] if col == "cell" else _short(row[col], digits) for col, _, digits in spec]
        table.add_row(*values, *([flag] if any(flags) else []), style="bold red" if row.get("warning") else None)
    return table


def wide_table(summary: pd.DataFrame) -> Table:
    """Every column of the summary (4 significant digits), as ``summary.csv`` holds them.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`bandits.studies.summarize`.

    Returns
    -------
    rich.table.Table
        One column per summary column, never shrunk below its content.
    """
    table = Table(title="summary", title_justify="left")
    for col in summary.columns:
        table.add_column(col, justify="right" if summary[col].dtype.kind in "iuf" else "left", no_wrap=True)
    for _, row in summary.iterrows():
        table.add_row(*(_cell(v) for v in row), style="bold red" if row.get("warning") else None)
    return table


def _short(value: Any, digits: int) -> str:
    """A number in at most ``digits`` significant digits, exponents without ``+`` and leading zeros."""
    if not digits or isinstance(value, str):
        return str(value)
    if value != value:  # NaN
        return ""
    if float(value).is_integer() and abs(value) < 10**digits:
        return str(int(value))
    text = f"{float(value):.{digits}g}"
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value)
