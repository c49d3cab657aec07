"""``bandits run``: one algorithm on one instance until it stops (or for T pulls, or to every budget of a grid), as a
table or JSON."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import replace

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from optdesign.errors import INTERRUPTED, InvalidInputError, exit_on_project_errors
from optdesign.runtime.terminal import WIDTH, narrow_console

from ..experiment import Experiment
from ..kinds import kind_of
from ..run import DEFAULT_MAX_SAMPLES
from .listing import catalogue


class BudgetEstimate:
    """Progress callback of a fixed-budget run off a terminal: once ``after`` seconds have passed, one line on stderr
    with the time the whole budget will take at the rate so far, when that is more than ``quiet`` seconds.

    Parameters
    ----------
    budget : int
        The budget T (pulls).
    after : float
        Seconds of running before the rate is measured.
    quiet : float
        Estimates at or below this many seconds are not shown.
    clock : callable
        The time source (seconds).
    """

    def __init__(self, budget: int, *, after: float = 2.0, quiet: float = 60.0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.budget, self.after, self.quiet, self.clock = budget, after, quiet, clock
        self.start = clock()
        self.done = False

    def __call__(self, samples: int, batches: int) -> None:
        if self.done:
            return
        elapsed = self.clock() - self.start
        if elapsed < self.after or samples <= 0:
            return
        self.done = True
        left = (self.budget - samples) * elapsed / samples
        if left > self.quiet:
            typer.echo(f"budget T = {self.budget:,} pulls: about {_duration(left)} more at {samples / elapsed:,.0f} "
                       "pulls per second so far (Ctrl-C aborts)", err=True)


def _duration(seconds: float) -> str:
    """Seconds as the largest unit that reads well: '45 s', '12 min', '3.2 h', '41 days', '2.1e+06 years'."""
    for unit, size in (("years", 3.156e7), ("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            value = seconds / size
            return f"{value:.3g} {unit}" if value < 1e4 else f"{value:.2g} {unit}"
    return f"{seconds:.0f} s"


def execute_with_progress(experiment: Experiment) -> list[dict]:
    """Run the experiment; on a terminal a live line shows the samples and batches so far, off a terminal a
    fixed-budget run says once how long its budget will take when that is long. Ctrl-C ends a fixed-confidence run
    with what it has (``stopped by: interrupted``) instead of a traceback; a fixed-budget (thresholding) run has no
    partial result, so there it aborts, as does a run to a grid of budgets (which shows no progress)."""
    if experiment.budgets:
        return experiment.execute()
    if not sys.stderr.isatty():
        if kind_of(experiment.kind).budgeted and experiment.budget is not None:
            return experiment.execute(progress=BudgetEstimate(int(experiment.budget)), interruptible=True)
        return experiment.execute(interruptible=True)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        budgeted = kind_of(experiment.kind).budgeted
        task = bar.add_task("first pulls" if budgeted else "solving the first design", total=None)
        hint = "Ctrl-C aborts" if budgeted else "Ctrl-C stops with what it has"

        def show(samples: int, batches: int) -> None:
            bar.update(task, description=f"{samples:,} samples, {batches:,} batches ({hint})")

        return experiment.execute(progress=show, interruptible=True)


RUN_HELP = f"Run one algorithm on one instance until it stops (or for T pulls).\n\n{escape(catalogue(width=WIDTH - 2))}"
STOP_HELP = ("stopping rule: own (default) or glr[:threshold=T,growth=G], with T one of practical, theory, kk21, "
             "soare or package.module:Class")


@exit_on_project_errors
def run_command(
    algorithm: str = typer.Argument(..., help="algorithm name, optionally NAME:key=value,..."),
    instance: str = typer.Option(..., "--instance", "-i", help="instance NAME[:key=value,...]"),
    delta: str | None = typer.Option(None, "--delta", help="confidence level(s) in (0,1), comma-separated "
                                     "(fixed-confidence algorithms; 0.05 by default)"),
    budget: str | None = typer.Option(None, "--budget", "-T", help="budget T of a thresholding algorithm, or the "
                                      "budgets T1,T2,... of a fixed-budget run (successive-rejects, "
                                      "sequential-halving, a sampling rule run anytime, or a thresholding "
                                      "algorithm read at every budget)"),
    free_warmup: bool = typer.Option(False, "--free-warmup", help="APT's initial pulls before t = 0 (paper axis)"),
    stop: str | None = typer.Option(None, "--stop", help=STOP_HELP),
    seed: int = typer.Option(0, "--seed"),
    max_samples: int = typer.Option(DEFAULT_MAX_SAMPLES, "--max-samples", help="sample budget"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    try:
        deltas = () if delta is None else tuple(float(d) for d in delta.split(","))
    except ValueError:
        raise InvalidInputError(f"--delta must be numbers in (0, 1), comma-separated; got {delta!r}") from None
    if delta is None and budget is None:  # the default confidence level of a fixed-confidence run
        deltas = (0.05,)
    experiment = Experiment(algorithm, instance, deltas=deltas, seed=seed, max_samples=max_samples,
                            free_warmup=free_warmup, stop=stop)
    experiment = _with_budget(experiment, budget)
    records = execute_with_progress(experiment)
    if as_json:
        typer.echo(json.dumps(records, indent=2, default=str))
        return
    console = narrow_console()
    console.print(f"{records[0]['algorithm']} on {records[0]['instance']}, seed {seed}", style="bold", markup=False)
    if experiment.budgets:
        console.print(_fixed_budget_table(records))
    elif kind_of(experiment.kind).budgeted:
        console.print(_budget_table(records[0]))
        console.print("error along the run", style="bold")
        console.print(_error_curve_table(records[0]))
        console.print("E(t): fraction of judged arms misclassified; L_T = 1 if any is", markup=False)
    else:
        console.print(_confidence_table(records))
        caption = kind_of(experiment.kind).caption
        if caption:
            console.print(caption, markup=False)
    if any(r.get("stopped_by") == "interrupted" for r in records):
        raise typer.Exit(INTERRUPTED)


def _with_budget(experiment: Experiment, text: str | None) -> Experiment:
    """The experiment with ``--budget``: one budget T of a thresholding run, or the budgets of a fixed-budget run."""
    if text is None:
        return experiment
    from ..fixed_budget.schedules import check_budgets  # here: the rules load the sampling rules

    parts = [v.strip() for v in text.split(",")]
    if not all(re.fullmatch(r"[+-]?\d+", v) for v in parts):
        raise InvalidInputError(f"--budget must be integers, comma-separated; got {text!r}")
    values = [int(v) for v in parts]
    if kind_of(experiment.kind).budgeted and len(values) == 1:  # one budget, checked by the run as it always was
        return replace(experiment, budget=values[0])
    return replace(experiment, budgets=check_budgets(values))


#: the columns of a fixed-budget run: header, record field and format
BUDGET_COLUMNS = (("T", "T", "{:,}"), ("samples", "samples", "{:,}"), ("recommendation", "recommendation", "{}"),
                  ("correct", "correct", "{}"), ("simple\nregret", "simple_regret", "{:.4g}"),
                  ("wall\n(s)", "wall_time", "{:.3f}"))


def _fixed_budget_table(records: list[dict]) -> Table:
    """One row per budget: the pulls made, the recommendation, whether it is correct, its simple regret (or E(T), the
    fraction of misclassified arms of a graph-thresholding run), the time."""
    table = _table()
    columns = BUDGET_COLUMNS if "error" not in records[0] else tuple(
        ("E(T)", "error", "{:.4g}") if key == "simple_regret" else (header, key, fmt)
        for header, key, fmt in BUDGET_COLUMNS)
    for header, key, _ in columns:
        table.add_column(header, justify="left" if key == "recommendation" else "right", overflow="fold")
    for r in records:
        table.add_row(*(escape("" if r[key] is None else fmt.format(r[key])) for _, key, fmt in columns))
    return table


def _table() -> Table:
    """A borderless table (as the study summary) whose cells wrap at spaces, and fold only a word wider than
    its column: never cut."""
    return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))


#: the columns of a fixed-confidence run: header, record field and format (the times' headers on two lines)
CONFIDENCE_COLUMNS = (("delta", "delta", "{:g}"), ("samples", "samples", "{:,}"), ("rounds", "rounds", "{:,}"),
                      ("recommendation", "recommendation", "{}"), ("correct", "correct", "{}"),
                      ("stopped by", "stopped_by", "{}"), ("solve\n(s)", "solve_time", "{:.3f}"),
                      ("other\n(s)", "other_time", "{:.3f}"))


def _confidence_table(records: list[dict]) -> Table:
    """One row per delta: samples, rounds, recommendation, whether it is correct, what stopped it, seconds."""
    table = _table()
    for header, key, _ in CONFIDENCE_COLUMNS:
        table.add_column(header, justify="left" if key in ("recommendation", "stopped_by") else "right",
                         overflow="fold")
    for r in records:
        table.add_row(*(escape(fmt.format(r[key])) for _, key, fmt in CONFIDENCE_COLUMNS))
    return table


def _budget_table(record: dict) -> Table:
    """The fixed-budget result: T, samples, the error E(T), the loss L_T, |S_hat| and the wall time."""
    table = _table()
    for col in ("T", "samples", "E(T)", "L_T", "|S_hat|", "wall (s)"):
        table.add_column(col, justify="right", overflow="fold")
    table.add_row(f"{record['T']:,}", f"{record['samples']:,}", f"{record['error']:.4g}", str(int(record["loss"])),
                  str(record["superlevel_size"]), f"{record['wall_time']:.2f}")
    return table


def _error_curve_table(record: dict) -> Table:
    """The error E(t) at six pulls t evenly spread over the run, one column each."""
    curve = record["error_curve"]
    picks = sorted({curve[round(i * (len(curve) - 1) / 5)][0] for i in range(6)})
    lookup = dict(curve)
    table = _table()
    for t in picks:
        table.add_column(f"E({t})", justify="right", overflow="fold")
    table.add_row(*(f"{lookup[t]:.4g}" for t in picks))
    return table
