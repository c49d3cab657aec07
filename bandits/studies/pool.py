"""The local worker pool of joblib studies: ``jobs - 1`` loky worker processes, reused across studies.

A worker's first task imports what a run needs: :mod:`bandits.studies.worker` (the run task) with the
experiment, the registries, optdesign, numpy and scipy. :func:`prestart` hands it that import as soon as the
command starts, so it overlaps the parent's own imports and the study file's validation instead of the
first runs. This module imports nothing heavy itself, and not the scheduler (:mod:`bandits.studies.execute`,
which imports this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["local_pool", "prestart"]


def local_pool(jobs: int) -> Executor:
    """The reusable loky executor with ``jobs - 1`` workers (the parent process is the jobs-th).

    Parameters
    ----------
    jobs : int
        The study's job count, at least 2 (the parent process runs too).

    Returns
    -------
    concurrent.futures.Executor
        joblib's reusable loky executor of ``jobs - 1`` workers (the same processes while ``jobs`` is unchanged).
    """
    from joblib.externals.loky import get_reusable_executor

    return get_reusable_executor(max_workers=jobs - 1)


def _import_run_modules() -> None:
    import bandits.studies.worker  # noqa: F401  (the run task: the experiment, the registries, optdesign)


def prestart(jobs: int) -> None:
    """Start the workers of a ``--jobs jobs`` study now and let them import what a run needs (nothing
    for jobs <= 1; the study itself reports a bad job count).

    Parameters
    ----------
    jobs : int
        The study's ``--jobs``; anything but an int above 1 does nothing.
    """
    if isinstance(jobs, int) and jobs > 1:
        local_pool(jobs).submit(_import_run_modules)
