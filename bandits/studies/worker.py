"""One run of a study, the task the workers execute: :func:`execute_run` turns a :class:`~.spec.RunSpec`
into its store entry and never raises.

Every backend of :mod:`bandits.studies.execute` (the joblib parent process and its loky workers, Dask
workers) calls it; a worker process imports this module and what a run needs (the experiment, the
registries, optdesign), not the scheduling side (progress bar, pool, store).
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from threadpoolctl import threadpool_limits

from .spec import RunSpec

__all__ = ["execute_run"]

_PROCESS_BLAS: int | None = None  # the BLAS thread cap this worker process was given


def execute_run(spec: RunSpec, blas_threads: int | None = None) -> dict[str, Any]:
    """One run -> its store entry (never raises: a failure becomes ``status = "failed"`` with the error).

    Parameters
    ----------
    spec : RunSpec
        The run: instance, algorithm, delta(s) or budget, and seed.
    blas_threads : int, optional
        Caps the BLAS/OpenMP threads of this process (once per process; studies use one per run: two runs
        with two BLAS threads each on two cores made a GBB study 6x slower); None leaves them.

    Returns
    -------
    dict
        The run's identity and seed (key, cell, instance, family, params, algorithm, label, replicate, seed),
        ``status`` ("ok" or "failed"), ``records`` (one result record per delta) or ``error`` and
        ``traceback``, and ``seconds``.
    """
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


def entry_head(spec: RunSpec) -> dict[str, Any]:
    """The fields of a store entry that identify the run and its seed."""
    return {"key": spec.key, "cell": spec.cell, "instance": spec.instance, "family": spec.family,
            "params": spec.params, "algorithm": spec.algorithm, "label": spec.label, "replicate": spec.replicate,
            "seed": {"entropy": spec.entropy, "spawn_key": list(spec.spawn_key)}}
