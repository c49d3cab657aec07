"""Sample-complexity studies: a TOML grid of instances x algorithms x seeds, run in parallel, resumable.

    spec        load_study(path) -> Study: the validated RunSpec list (per-run seeds), fixed confidence or budget
    document    the checks and sweep expansion of a study's TOML tables and values (used by spec)
    store       ResultStore: results directory (meta.json provenance, runs.jsonl appended as runs finish)
    run_records the lines of runs.jsonl: every run record read, the damaged tail a crash leaves found or cut off
    directory_lock  the store's single-writer lock (an exclusive flock on DIR/.lock, released if the holder dies)
    execute     run_study(study, out, jobs, backend="joblib"|"dask") with a rich progress bar
    worker      execute_run(spec): one run -> its store entry (the task the workers import and run)
    pool        the reusable local joblib (loky) workers; prestart() warms them before the study is read
    bounds      characteristic times c (E[tau] >= c kl(delta, 1 - delta)); practical bound t* = c beta(t*, delta)
    aggregate   summarize(out) -> pandas table; write_tables(out): summary.csv / .parquet, runs.csv
    labels      short_cells: the short names of the cells (the options that vary) in tables and figures
    plots       plot_study(out): samples per rule or against a sweep; E(t); P(error) against the budget T
"""

import importlib
from typing import Any

# Attributes load their module on first use: a worker process that only runs ``worker.execute_run``
# does not import pandas' statistics or matplotlib (about 0.4 s per worker start).
_HOMES = {
    "error_curves": "aggregate", "records_frame": "aggregate", "summarize": "aggregate", "write_tables": "aggregate",
    "characteristic_time": "bounds", "kl_delta": "bounds", "practical_bound": "bounds",
    "StudyReport": "execute", "execute_run": "worker", "run_study": "execute",
    "plot_study": "plots",
    "RunSpec": "spec", "Study": "spec", "load_study": "spec", "parse_study": "spec",
    "ResultStore": "store", "provenance": "store", "read_entries": "store", "read_meta": "store",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
