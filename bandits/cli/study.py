"""``bandits study``: run a sample-complexity study file (:mod:`bandits.studies`), then print its summary.

The study machinery is imported inside the command, after :func:`bandits.studies.pool.prestart` has
started the joblib workers, so their imports overlap this process's validation of the study file.
"""

from __future__ import annotations

import sys

import typer

from optdesign.errors import exit_on_project_errors
from optdesign.runtime.terminal import narrow_console

from .summary import print_summary


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
    wide: bool = typer.Option(False, "--wide", help="print every summary column (default: an 80-column table)"),
) -> None:
    """Run a sample-complexity study; results are written as runs finish (see bandits.studies)."""
    if scheduler is not None and backend == "joblib":
        backend = "dask"
    if backend == "joblib":
        from ..studies.pool import prestart

        prestart(jobs)  # the workers import numpy/cvxpy while this process validates the study file
    from ..studies import load_study, plot_study, run_study, write_tables
    from ..studies.execute import check_execution
    from ..studies.pool import available_cores
    from ..studies.store import check_out

    study = load_study(file, quick=quick, runs=runs)  # every check happens here, before any run
    jobs = check_execution(jobs, backend, scheduler)
    out = out or f"results/{study.name}{'-quick' if quick else ''}"
    out = str(check_out(out))  # a file named by --out: one error line, before the header below
    console = narrow_console(stderr=True)
    if scheduler is None and isinstance(jobs, int) and jobs > available_cores():
        console.print(f"warning: --jobs {jobs} is more than the {available_cores()} cores available: running "
                      f"{available_cores()} job(s)")
        jobs = available_cores()
    header = f"{study.name}: {len(study.runs)} runs -> {out} ({backend}, {jobs} job(s))"
    try:  # the header once the backend is ready and out is open: an error before it is the only line
        report = run_study(study, out, jobs=jobs, backend=backend, scheduler=scheduler, resume=resume,
                           console=console, progress=sys.stderr.isatty(), on_ready=lambda: console.print(header))
    except KeyboardInterrupt:
        console.print(f"interrupted: the finished runs are saved in {out}; continue with --resume")
        raise typer.Exit(130) from None
    console.print(f"{report.done} runs done, {report.failed} failed, {report.skipped} skipped (stored before); "
                  f"wall {report.wall_time:.1f} s, run time {report.run_time:.1f} s")
    print_summary(write_tables(out), out, wide=wide)
    if plot:
        typer.echo(f"plot: {plot_study(out)}")
