"""Cost of the study machinery: scheduling, storage and aggregation against the runs themselves.

    python benchmarks/bench_studies.py                                   # soare_fig4 quick preset
    python benchmarks/bench_studies.py --study benchmarks/studies/mftas_synthetic.toml --runs 4

Everything is measured in this process, one after the other:
* direct: every run of the study executed in a plain loop (``Experiment.execute``, one BLAS thread as in a
  study), no storage: the baseline;
* study --jobs 1: ``run_study`` in this process (store, fsync per run, progress off); overhead = its wall
  time over the direct loop's, minus one;
* study --jobs 2 (this process and one joblib worker) and the Dask LocalCluster with 2 workers: wall-time
  ratios to --jobs 1 (they include starting the workers, which import numpy/cvxpy); a second --jobs 2
  study reuses the started worker, so the difference of the two is the start-up cost;
* aggregation: ``write_tables`` (summary, runs.csv, characteristic times) and ``plot_study``;
* the command as a user types it, ``bandits study FILE [--quick] --jobs 1`` and ``--jobs 2``, each in a
  fresh process (imports, validation, worker start, runs, tables and plot): wall-time ratio of the two.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_limits

from bandits.studies import load_study, plot_study, run_study, write_tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", default="benchmarks/studies/soare_fig4.toml")
    parser.add_argument("--runs", type=int, default=None, help="replicates per cell (default: the quick preset's)")
    parser.add_argument("--full", action="store_true", help="the full preset instead of --quick")
    args = parser.parse_args()
    study = load_study(args.study, quick=not args.full, runs=args.runs)
    work = Path(tempfile.mkdtemp(prefix="bench_studies_"))
    rows = []

    start = time.perf_counter()
    with threadpool_limits(1):  # as the study runs them (one BLAS thread per run)
        for spec in study.runs:
            spec.experiment().execute()
    direct = time.perf_counter() - start
    rows.append(("direct loop (baseline)", direct, "", ""))

    one = run_study(study, work / "jobs1", progress=False)
    rows.append(("study --jobs 1", one.wall_time, f"{one.wall_time / direct - 1:+.1%}", "1"))
    two = run_study(study, work / "jobs2", jobs=2, progress=False)
    rows.append(("study --jobs 2 (joblib)", two.wall_time, "", f"{two.wall_time / one.wall_time:.2f}"))
    warm = run_study(study, work / "jobs2-warm", jobs=2, progress=False)  # loky keeps its worker alive
    rows.append(("study --jobs 2 again (worker already started)", warm.wall_time, "",
                 f"{warm.wall_time / one.wall_time:.2f}"))
    dask = run_study(study, work / "dask", jobs=2, backend="dask", progress=False)
    rows.append(("study --backend dask, 2 workers", dask.wall_time, "", f"{dask.wall_time / one.wall_time:.2f}"))
    start = time.perf_counter()
    write_tables(work / "jobs1")
    plot_study(work / "jobs1")
    rows.append(("tables + plot", time.perf_counter() - start, "", ""))

    for jobs in (1, 2):
        command = [sys.executable, "-c", "from bandits.cli import main; main()", "study", args.study,
                   "--jobs", str(jobs), "--out", str(work / f"cli{jobs}"), *([] if args.full else ["--quick"])]
        if args.runs is not None:
            command += ["--runs", str(args.runs)]
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        rows.append((f"command line, --jobs {jobs} (fresh process)", time.perf_counter() - start, "", ""))
    cli_one, cli_two = rows[-2][1], rows[-1][1]
    rows[-1] = (*rows[-1][:3], f"{cli_two / cli_one:.2f} (to the command with --jobs 1)")

    table = Table(title=f"{study.name}{' (quick)' if study.quick else ''}: {len(study.runs)} runs, "
                        f"mean run {direct / len(study.runs) * 1000:.0f} ms")
    for col in ("what", "wall (s)", "overhead vs direct", "ratio to --jobs 1"):
        table.add_column(col, justify="left" if col == "what" else "right")
    for what, wall, overhead, ratio in rows:
        table.add_row(what, f"{wall:.2f}", overhead, ratio)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
