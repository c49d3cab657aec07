"""The local worker pool of joblib studies: ``jobs - 1`` loky worker processes, reused across studies.

A worker's first task imports what a run needs: :mod:`bandits.studies.worker` (the run task) with the
experiment, the registries, optdesign, numpy and scipy. :func:`prestart` hands it that import as soon as the
command starts, so it overlaps the parent's own imports and the study file's validation instead of the
first runs. This module imports nothing heavy itself, and not the scheduler (:mod:`bandits.studies.execute`,
which imports this module).
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["available_cores", "cap_jobs", "local_pool", "prestart"]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one, else the CPU count).

    Returns
    -------
    int
        At least 1.
    """
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1))


def cap_jobs(jobs: int) -> int:
    """A local job count no larger than the cores available: more processes than cores only contend.

    Parameters
    ----------
    jobs : int
        The job count asked for (checked to be >= 1 by the caller).

    Returns
    -------
    int
        ``min(jobs, available_cores())``; a UserWarning says so when it lowers ``jobs``.
    """
    cores = available_cores()
    if jobs > cores:
        warnings.warn(f"--jobs {jobs} is more than the {cores} cores available: running {cores} job(s)",
                      UserWarning, stacklevel=2)
        return cores
    return jobs


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
        with warnings.catch_warnings():  # the study reports the cap once
            warnings.simplefilter("ignore")
            jobs = cap_jobs(jobs)
        if jobs > 1:
            local_pool(jobs).submit(_import_run_modules)
