"""Run a study's runs on worker processes (joblib) or a Dask cluster, storing each as it finishes.

Backends:
* ``joblib``: ``jobs`` local worker processes (loky; ``jobs = 1`` runs in this process);
* ``dask``: a ``dask.distributed`` cluster, the one at ``scheduler`` (``tcp://host:port``; its workers
  need this package installed) or, without it, a LocalCluster of ``jobs`` single-threaded worker processes.

Results do not depend on the backend, the job count or the order: each run's seed is fixed by the study
(:mod:`bandits.studies.spec`). A run that raises is stored with status "failed" and its error, and the study
goes on. Ctrl-C stops the study; every run finished before it is already on disk.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from optdesign.errors import InvalidInputError

from ..validation import check_choice, check_int
from .spec import RunSpec, Study
from .store import ResultStore

BACKENDS = ("joblib", "dask")


def execute_run(spec: RunSpec) -> dict:
    """One run -> its store entry (never raises: a failure becomes ``status = "failed"`` with the error)."""
    start = time.perf_counter()
    entry = entry_head(spec)
    try:
        entry["records"] = spec.experiment().execute()
        entry["status"] = "ok"
    except Exception as exc:
        entry.update(status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=6))
    entry["seconds"] = time.perf_counter() - start
    return entry


def entry_head(spec: RunSpec) -> dict:
    """The fields of a store entry that identify the run and its seed."""
    return {"key": spec.key, "cell": spec.cell, "instance": spec.instance, "family": spec.family,
            "params": spec.params, "algorithm": spec.algorithm, "label": spec.label, "replicate": spec.replicate,
            "seed": {"entropy": spec.entropy, "spawn_key": list(spec.spawn_key)}}


@dataclass
class StudyReport:
    """What one call of :func:`run_study` did: runs finished ok / failed now, skipped (stored before)."""

    out: Path
    done: int
    failed: int
    skipped: int
    wall_time: float
    run_time: float  # sum of the runs' own times (for the overhead of the machinery)


def run_study(study: Study, out: str | Path, *, jobs: int = 1, backend: str = "joblib", scheduler: str | None = None,
              resume: bool = False, progress: bool = True, console: Console | None = None) -> StudyReport:
    """Run every run of ``study`` not yet stored in ``out`` (see the module docstring)."""
    jobs = check_int(jobs, "jobs", 1)
    check_choice(backend, "backend", BACKENDS)
    if scheduler is not None and backend != "dask":
        raise InvalidInputError("--scheduler needs --backend dask")
    start = time.perf_counter()
    with ResultStore(out, study, resume=resume) as store:
        todo = [r for r in study.runs if r.key not in store.done]
        skipped = len(study.runs) - len(todo)
        done = failed = 0
        run_time = 0.0
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("failed {task.fields[failed]} · running {task.fields[running]}"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
            task = bar.add_task(study.name, total=len(todo), failed=0, running=min(jobs, len(todo)))
            source = _dask(todo, jobs, scheduler) if backend == "dask" else _joblib(todo, jobs)
            for entry in source:
                store.append(entry)
                run_time += entry["seconds"]
                done += entry["status"] == "ok"
                failed += entry["status"] != "ok"
                left = len(todo) - done - failed
                bar.update(task, advance=1, failed=failed, running=min(jobs, left))
    return StudyReport(Path(out), done, failed, skipped, time.perf_counter() - start, run_time)


def _joblib(todo: list[RunSpec], jobs: int) -> Iterator[dict]:
    if jobs == 1:
        yield from map(execute_run, todo)
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")
    yield from parallel(delayed(execute_run)(r) for r in todo)


def _dask(todo: list[RunSpec], jobs: int, scheduler: str | None) -> Iterator[dict]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InvalidInputError("the dask backend needs dask.distributed: pip install 'dask[distributed]'") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        client = Client(cluster if cluster is not None else scheduler, timeout="20s")
    except OSError as exc:
        if cluster is not None:
            cluster.close()
        raise InvalidInputError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
    try:
        futures = client.map(execute_run, todo, pure=False)
        by_future = dict(zip(futures, todo, strict=True))
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:
                yield {**entry_head(by_future[future]), "status": "failed", "seconds": 0.0,
                       "error": f"{type(exc).__name__}: {exc}"}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
