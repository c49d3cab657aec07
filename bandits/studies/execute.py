"""Run a study's runs on worker processes (joblib) or a Dask cluster, storing each as it finishes.

Backends:

* ``joblib``: this process and ``jobs - 1`` local worker processes (loky) share the runs;
* ``dask``: a ``dask.distributed`` cluster, the one at ``scheduler`` (``tcp://host:port``; its workers
  need this package installed) or, without it, a LocalCluster of ``jobs`` single-threaded worker processes.

Results do not depend on the backend, the job count or the order: each run's seed is fixed by the study
(:mod:`bandits.studies.spec`). A run that raises is stored with status "failed" and its error, and the study
goes on. Ctrl-C stops the study; every run finished before it is already on disk. Each run uses one
BLAS thread (the parallelism is across runs), so parallel runs never oversubscribe the cores.

This module schedules the runs; a run itself is :func:`bandits.studies.worker.execute_run` (re-exported
here), and the local worker processes come from :mod:`bandits.studies.pool`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from threadpoolctl import threadpool_limits

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.validation import check_choice
from .pool import cap_jobs, ctrl_c_watch, local_pool, stop_workers
from .spec import RunSpec, Study
from .store import ResultStore, check_store
from .worker import entry_head, execute_run

__all__ = ["StudyReport", "check_execution", "run_study"]

BACKENDS = ("joblib", "dask")
#: what the scheduler does with a finished run's store entry (store it, count it)
Sink = Callable[[dict[str, Any]], None]


#: BLAS threads per run: runs, not BLAS calls, are the unit of parallelism (the matrices are small)
RUN_BLAS_THREADS = 1
#: seconds to wait for the Dask scheduler given by ``scheduler`` to answer before the study is refused
SCHEDULER_TIMEOUT = 20.0


@dataclass
class StudyReport:
    """What one call of :func:`run_study` did: runs finished ok / failed now, skipped (stored before)."""

    #: the results directory
    out: Path
    #: runs finished with status "ok" in this call
    done: int
    #: runs that failed in this call (stored with their error)
    failed: int
    #: runs skipped because they were stored before (``resume``)
    skipped: int
    #: seconds of the call
    wall_time: float
    #: sum of the runs' own times (for the overhead of the machinery)
    run_time: float


def run_study(study: Study, out: str | Path, *, jobs: int = 1, backend: str = "joblib", scheduler: str | None = None,
              resume: bool = False, progress: bool = True, console: Console | None = None,
              on_ready: Callable[[], None] | None = None) -> StudyReport:
    """Run every run of ``study`` not yet stored in ``out`` (see the module docstring).

    Nothing is written before the backend is ready: ``out`` is checked first (read only), then the Dask scheduler is
    reached (or the local cluster started), and only then is ``out`` created and locked; a scheduler that cannot be
    reached leaves no trace in ``out``.

    Parameters
    ----------
    study : Study
        The parsed study (:func:`bandits.studies.spec.load_study`): instances x algorithms x runs, each with its seed.
    out : str or Path
        The results directory: written run by run, locked against a second writer, resumable.
    jobs : int
        Worker processes (joblib) or single-threaded workers of a local Dask cluster; at most the cores available
        (:func:`bandits.studies.pool.cap_jobs` lowers it, with a warning).
    backend : str
        ``"joblib"`` (default) or ``"dask"``.
    scheduler : str, optional
        ``tcp://host:port`` of a running Dask scheduler (``backend="dask"`` only).
    resume : bool
        Keep the runs already stored in ``out`` (a torn last record is repaired) and run the rest.
    progress : bool
        Show a rich progress bar.
    console : rich.console.Console, optional
        Where the progress bar is drawn.
    on_ready : callable, optional
        Called without arguments once the backend is ready and ``out`` is open, before the first run (the command
        line prints its header there).

    Returns
    -------
    StudyReport
        Runs done and failed, wall time and run time; the records are in ``out``.

    Raises
    ------
    InvalidInputError
        Bad jobs/backend/scheduler, ``out`` being a file, ``out`` holding results without ``resume``, another
        study's results in ``out``, ``out`` held by another writer, or a Dask scheduler that does not answer
        within SCHEDULER_TIMEOUT seconds.
    """
    jobs = check_execution(jobs, backend, scheduler)
    if scheduler is None:  # local processes: no more than the cores (a remote cluster has its own)
        jobs = cap_jobs(jobs)
    start = time.perf_counter()
    check_store(out, study, resume=resume)  # refused before a cluster is started for nothing
    with _dask_client(jobs, scheduler) if backend == "dask" else contextlib.nullcontext() as client, \
            ResultStore(out, study, resume=resume) as store:
        if on_ready is not None:
            on_ready()
        todo = [r for r in study.runs if r.key not in store.done]
        counts = {"ok": 0, "failed": 0}
        run_time = [0.0]  # the runs' own seconds, summed by the sink below
        lock = threading.Lock()
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("failed {task.fields[failed]} · running {task.fields[running]}"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
            task = bar.add_task(study.name, total=len(todo), failed=0, running=min(jobs, len(todo)))

            def sink(entry: dict[str, Any]) -> None:  # called from worker-result threads too: one writer at a time
                with lock:
                    store.append(entry)
                    counts["ok" if entry["status"] == "ok" else "failed"] += 1
                    run_time[0] += entry["seconds"]
                    left = len(todo) - counts["ok"] - counts["failed"]
                    bar.update(task, advance=1, failed=counts["failed"], running=min(jobs, left))

            if client is not None:
                _dask(client, todo, scheduler, sink, RUN_BLAS_THREADS)
            else:
                with threadpool_limits(RUN_BLAS_THREADS):  # this process runs too; restored afterwards
                    _joblib(todo, jobs, sink, RUN_BLAS_THREADS)
    return StudyReport(Path(out), counts["ok"], counts["failed"], len(study.runs) - len(todo),
                       time.perf_counter() - start, run_time[0])


def check_execution(jobs: object, backend: object, scheduler: str | None) -> int:
    """The job count of a study run, checked with its backend and scheduler before anything starts.

    Parameters
    ----------
    jobs : int
        Worker processes (>= 1; capped at the cores later, for local workers).
    backend : str
        One of BACKENDS.
    scheduler : str or None
        A Dask scheduler's address; only with the dask backend.

    Returns
    -------
    int
        ``jobs`` as an int.

    Raises
    ------
    InvalidInputError
        jobs below 1 or not an integer, an unknown backend, a scheduler without the dask backend.
    """
    count = as_count(jobs, "jobs", minimum=1, floats=True)
    check_choice(backend, "backend", BACKENDS)
    if scheduler is not None and backend != "dask":
        raise InvalidInputError("--scheduler needs --backend dask")
    return count


def _joblib(todo: list[RunSpec], jobs: int, sink: Sink, blas: int) -> None:
    """This process plus ``jobs - 1`` joblib (loky) worker processes take runs from one queue; a worker's
    result is stored the moment it arrives (from the executor's result thread). The parent is warm (its
    imports are done), so it works while the workers start."""
    queue = deque(todo)
    if jobs == 1 or len(todo) <= 1:
        while queue:
            sink(execute_run(queue.popleft()))
        return
    pool = local_pool(jobs)
    pending: set[Future[dict[str, Any]]] = set()
    finished = threading.Condition()
    errors: list[BaseException] = []
    stopping = threading.Event()  # set on Ctrl-C or a storage error: the killed workers' runs are not entries

    specs: dict[Future[dict[str, Any]], RunSpec] = {}

    def feed() -> None:  # keep each worker busy: one run in hand per worker
        with finished:
            while queue and len(pending) < jobs - 1:
                spec = queue.popleft()
                future = pool.submit(execute_run, spec, blas)
                specs[future] = spec
                pending.add(future)
                future.add_done_callback(collect)

    def collect(future: Future[dict[str, Any]]) -> None:
        if future.cancelled() or stopping.is_set():
            return
        try:
            sink(_finished_entry(future, specs[future]))
        except BaseException as exc:  # the worker's Ctrl-C, or a storage error: re-raised in the parent below
            errors.append(exc)
        with finished:
            pending.discard(future)
            finished.notify_all()
        if not errors:
            feed()

    try:
        with ctrl_c_watch() as interrupted:
            feed()
            while not interrupted.is_set():
                with finished:
                    spec = queue.popleft() if queue else None
                if spec is not None:
                    sink(execute_run(spec))
                    continue
                with finished:
                    finished.wait_for(lambda: not pending or errors or interrupted.is_set(), timeout=1.0)
                    if errors:
                        raise errors[0]
                    if not pending and not queue:
                        return
            raise KeyboardInterrupt  # a Ctrl-C whose KeyboardInterrupt library code caught
    except BaseException:
        stopping.set()
        queue.clear()  # Ctrl-C or a storage error: hand out no more runs
        for future in list(pending):
            future.cancel()
        stop_workers(pool)  # a run in a worker's hand is not finished: it is not stored
        raise


def _finished_entry(future: Future[dict[str, Any]], spec: RunSpec) -> dict[str, Any]:
    """The store entry of a finished worker run; a worker that died under it gives a failed entry (the study goes
    on); a KeyboardInterrupt from the worker is raised (workers block SIGINT, so only an explicit one)."""
    try:
        return future.result()
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        return {**entry_head(spec), "status": "failed", "seconds": 0.0, "error": f"{type(exc).__name__}: {exc}"}


@contextlib.contextmanager
def _dask_client(jobs: int, scheduler: str | None) -> Iterator[Any]:
    """A ``dask.distributed`` client of the cluster at ``scheduler``, or of a LocalCluster of ``jobs`` single-threaded
    worker processes, closed (with the local cluster) on exit; InvalidInputError if the scheduler does not answer
    within SCHEDULER_TIMEOUT seconds."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise InvalidInputError("the dask backend needs dask.distributed: pip install 'dask[distributed]'") from None
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        client = Client(cluster if cluster is not None else scheduler, timeout=SCHEDULER_TIMEOUT)
    except OSError as exc:
        if cluster is not None:
            cluster.close()
        raise InvalidInputError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask(client: Any, todo: list[RunSpec], scheduler: str | None, sink: Sink, blas: int) -> None:
    """Run ``todo`` on the cluster of ``client`` (:func:`_dask_client`), storing each entry (through ``sink``) as it
    completes; the BLAS threads of a remote ``scheduler``'s workers are left as they are."""
    from dask.distributed import as_completed

    futures = client.map(execute_run, todo, blas_threads=blas if scheduler is None else None, pure=False)
    by_future = dict(zip(futures, todo, strict=True))
    for future in as_completed(futures):
        sink(_finished_entry(future, by_future[future]))  # a worker that died under a run: a failed entry
