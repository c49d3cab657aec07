"""One run of a study, the task the workers execute: :func:`execute_run` turns a :class:`~.spec.RunSpec`
into its store entry and never raises.

Every backend of :mod:`bandits.studies.execute` (the joblib parent process and its loky workers, Dask
workers) calls it; a worker process imports this module and what a run needs (the experiment, the
registries, optdesign), not the scheduling side (progress bar, pool, store).
"""

from __future__ import annotations

import time
import traceback

from threadpoolctl import threadpool_limits

from .spec import RunSpec

_PROCESS_BLAS: int | None = None  # the BLAS thread cap this worker process was given


def execute_run(spec: RunSpec, blas_threads: int | None = None) -> dict:
    """One run -> its store entry (never raises: a failure becomes ``status = "failed"`` with the error).
    ``blas_threads`` caps the BLAS/OpenMP threads of the process (studies use one per run: two runs with
    two BLAS threads each on two cores made a GBB study 6x slower)."""
    global _PROCESS_BLAS
    start = time.perf_counter()
    entry = entry_head(spec)
    if blas_threads is not None and blas_threads != _PROCESS_BLAS:  # once per worker process (a call costs ms)
        threadpool_limits(blas_threads)
        _PROCESS_BLAS = blas_threads
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
