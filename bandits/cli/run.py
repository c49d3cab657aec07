"""``bandits run``: one algorithm on one instance until it stops (or for T pulls), as a table or JSON."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from optdesign.errors import INTERRUPTED, InvalidInputError, exit_on_project_errors

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
    partial result, so there it aborts."""
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


RUN_HELP = f"Run one algorithm on one instance until it stops (or for T pulls).\n\n{catalogue()}"


@exit_on_project_errors
def run_command(
    algorithm: str = typer.Argument(..., help="algorithm name, optionally NAME:key=value,..."),
    instance: str = typer.Option(..., "--instance", "-i", help="instance NAME[:key=value,...]"),
    delta: str | None = typer.Option(None, "--delta", help="confidence level(s) in (0,1), comma-separated "
                                     "(fixed-confidence algorithms; 0.05 by default)"),
    budget: int | None = typer.Option(None, "--budget", "-T", help="budget T of a thresholding algorithm"),
    free_warmup: bool = typer.Option(False, "--free-warmup", help="APT's initial pulls before t = 0 (paper axis)"),
    stop: str | None = typer.Option(None, "--stop", help="stopping rule: own (default) or "
                                    "glr[:threshold=practical|theory|kk21|soare|package.module:Class,growth=G]"),
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
    experiment = Experiment(algorithm, instance, deltas=deltas, budget=budget, seed=seed, max_samples=max_samples,
                            free_warmup=free_warmup, stop=stop)
    records = execute_with_progress(experiment)
    if as_json:
        typer.echo(json.dumps(records, indent=2, default=str))
        return
    first = records[0]
    title = f"{first['algorithm']} on {first['instance']}, seed {seed}"
    if kind_of(experiment.kind).budgeted:
        table = Table(title=title, caption="E(t): fraction of judged arms misclassified; L_T = 1 if any is")
        columns: tuple[str, ...] = ("T", "samples", "E(T)", "L_T", "|S_hat|", "wall (s)")
        row: tuple[str, ...] = (f"{first['T']:,}", f"{first['samples']:,}", f"{first['error']:.4g}",
                                str(int(first["loss"])), str(first["superlevel_size"]), f"{first['wall_time']:.2f}")
        curve = first["error_curve"]
        picks = sorted({curve[round(i * (len(curve) - 1) / 5)][0] for i in range(6)})
        lookup = dict(curve)
        columns += tuple(f"E({t})" for t in picks)
        row += tuple(f"{lookup[t]:.4g}" for t in picks)
        rows = [row]
    else:
        table = Table(title=title, caption=kind_of(experiment.kind).caption)
        columns = ("delta", "samples", "rounds", "recommendation", "correct", "stopped by", "solve (s)", "other (s)")
        rows = [(f"{r['delta']:g}", f"{r['samples']:,}", f"{r['rounds']:,}", r["recommendation"], str(r["correct"]),
                 r["stopped_by"], f"{r['solve_time']:.3f}", f"{r['other_time']:.3f}") for r in records]
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*row)
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    if any(r.get("stopped_by") == "interrupted" for r in records):
        raise typer.Exit(INTERRUPTED)
