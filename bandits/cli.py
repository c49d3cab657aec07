"""Command line of the bandit loops: ``bandits run``, ``bandits study``, ``bandits plot``, ``bandits list``
and ``bandits version``.

``bandits run ALGORITHM[:key=value,...] --instance NAME[:key=value,...] --delta D --seed S``
prints a table (or JSON with ``--json``); a comma-separated ``--delta`` records the stopping time
of every delta along one trajectory for algorithms whose sampling ignores delta. Thresholding
algorithms (grapl, apt, random-laplacian) take ``--budget T`` instead of ``--delta``. Bad input exits
with status 2 and one line on stderr.
"""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
from rich.table import Table

from optdesign.errors import InvalidInputError
from optdesign.exits import exit_on_project_errors

from .experiment import Experiment
from .instances import INSTANCES
from .registry import ALGORITHMS
from .run import DEFAULT_MAX_SAMPLES

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Pure-exploration bandit loops and studies.")


def _catalogue() -> str:
    algos = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in ALGORITHMS.items())
    insts = "\n".join(f"  {name:<18} [{spec.kind}] {spec.summary}" for name, spec in INSTANCES.items())
    return f"Algorithms:\n\n{algos}\n\nInstances:\n\n{insts}"


@app.callback()
def _group() -> None:
    """Pure-exploration bandit loops and studies."""


@app.command("run", help=f"Run one algorithm on one instance until it stops (or for T pulls).\n\n{_catalogue()}")
@exit_on_project_errors
def run_command(
    algorithm: str = typer.Argument(..., help="algorithm name, optionally NAME:key=value,..."),
    instance: str = typer.Option(..., "--instance", "-i", help="instance NAME[:key=value,...]"),
    delta: str = typer.Option("0.05", "--delta", help="confidence level(s) in (0,1), comma-separated"),
    budget: int | None = typer.Option(None, "--budget", "-T", help="budget T of a thresholding algorithm"),
    free_warmup: bool = typer.Option(False, "--free-warmup", help="APT's initial pulls before t = 0 (paper axis)"),
    seed: int = typer.Option(0, "--seed"),
    max_samples: int = typer.Option(DEFAULT_MAX_SAMPLES, "--max-samples", help="sample budget"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    try:
        deltas = tuple(float(d) for d in delta.split(","))
    except ValueError:
        raise InvalidInputError(f"--delta must be numbers in (0, 1), comma-separated; got {delta!r}") from None
    experiment = Experiment(algorithm, instance, deltas=deltas, budget=budget, seed=seed, max_samples=max_samples,
                            free_warmup=free_warmup)
    records = experiment.execute()
    if as_json:
        typer.echo(json.dumps(records, indent=2, default=str))
        return
    first = records[0]
    title = f"{first['algorithm']} on {first['instance']}, seed {seed}"
    if experiment.kind == "thresholding":
        table = Table(title=title, caption="E(t): fraction of judged arms misclassified; L_T = 1 if any is")
        columns = ("T", "samples", "E(T)", "L_T", "|S_hat|", "wall (s)")
        row = (f"{first['T']:,}", f"{first['samples']:,}", f"{first['error']:.4g}", str(int(first["loss"])),
               str(first["superlevel_size"]), f"{first['wall_time']:.2f}")
        curve = first["error_curve"]
        picks = sorted({curve[round(i * (len(curve) - 1) / 5)][0] for i in range(6)})
        lookup = dict(curve)
        columns += tuple(f"E({t})" for t in picks)
        row += tuple(f"{lookup[t]:.4g}" for t in picks)
        rows = [row]
    else:
        caption = {"factored": "samples: observations (rho per round); rounds: joint actions played",
                   "bilinear": "samples: edge observations; rounds: graph rounds"}.get(experiment.kind)
        table = Table(title=title, caption=caption)
        columns = ("delta", "samples", "rounds", "recommendation", "correct", "stopped by", "solve (s)", "other (s)")
        rows = [(f"{r['delta']:g}", f"{r['samples']:,}", f"{r['rounds']:,}", r["recommendation"], str(r["correct"]),
                 r["stopped_by"], f"{r['solve_time']:.3f}", f"{r['other_time']:.3f}") for r in records]
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*row)
    Console(width=None if sys.stdout.isatty() else 160).print(table)


@app.command("study")
@exit_on_project_errors
def study_command(
    file: str = typer.Argument(..., help="study file (TOML), e.g. benchmarks/studies/soare_fig4.toml"),
    runs: int | None = typer.Option(None, "--runs", "-r", help="replicates per cell (overrides the file)"),
    jobs: int = typer.Option(1, "--jobs", "-j", help="worker processes (or Dask LocalCluster workers)"),
    backend: str = typer.Option("joblib", "--backend", help="joblib | dask"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="tcp://HOST:PORT of a running Dask scheduler"),
    resume: bool = typer.Option(False, "--resume", help="continue a stopped study in --out, skipping its runs"),
    out: str | None = typer.Option(None, "--out", "-o", help="results directory (default results/NAME[-quick])"),
    quick: bool = typer.Option(False, "--quick", help="the file's \\[quick] preset (smoke-test size)"),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="draw plot.png when the study ends"),
) -> None:
    """Run a sample-complexity study; results are written as runs finish (see bandits.studies)."""
    if scheduler is not None and backend == "joblib":
        backend = "dask"
    if backend == "joblib":
        from .studies.pool import prestart

        prestart(jobs)  # the workers import numpy/cvxpy while this process validates the study file
    from .studies import load_study, plot_study, run_study, write_tables

    study = load_study(file, quick=quick, runs=runs)  # every check happens here, before any run
    out = out or f"results/{study.name}{'-quick' if quick else ''}"
    console = Console(stderr=True)
    console.print(f"{study.name}: {len(study.runs)} runs -> {out} ({backend}, {jobs} job(s))")
    try:
        report = run_study(study, out, jobs=jobs, backend=backend, scheduler=scheduler, resume=resume,
                           console=console, progress=sys.stderr.isatty())
    except KeyboardInterrupt:
        console.print(f"interrupted: the finished runs are saved in {out}; continue with --resume")
        raise typer.Exit(130) from None
    console.print(f"{report.done} runs done, {report.failed} failed, {report.skipped} skipped (stored before); "
                  f"wall {report.wall_time:.1f} s, run time {report.run_time:.1f} s")
    _print_summary(write_tables(out), out)
    if plot:
        typer.echo(f"plot: {plot_study(out)}")


@app.command("plot")
@exit_on_project_errors
def plot_command(
    directory: str = typer.Argument(..., help="results directory of a study"),
    output: str | None = typer.Option(None, "--output", help="image file (default DIR/plot.png)"),
) -> None:
    """Redraw a study's summary table and figure from its results directory."""
    from .studies import plot_study, write_tables

    _print_summary(write_tables(directory), directory)
    typer.echo(f"plot: {plot_study(directory, output)}")


def _print_summary(summary, out: str) -> None:
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


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value)


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
