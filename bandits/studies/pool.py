"""The local worker pool of joblib studies: ``jobs - 1`` loky worker processes, reused across studies.

A worker's first task imports what a run needs: :mod:`bandits.studies.worker` (the run task) with the
experiment, the registries, optdesign, numpy and scipy. :func:`prestart` hands it that import as soon as the
command starts, so it overlaps the parent's own imports and the study file's validation instead of the
first runs. This module imports nothing heavy itself, and not the scheduler (:mod:`bandits.studies.execute`,
which imports this module).

The workers start with SIGINT blocked: a terminal's Ctrl-C reaches the whole process group, and a worker
still starting its interpreter would print a traceback of its own. The parent alone answers Ctrl-C
(:func:`ctrl_c_watch` keeps a record of it, so that library code catching the KeyboardInterrupt cannot lose it); it
stops the workers with :func:`stop_workers`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Executor
    from types import FrameType

__all__ = ["available_cores", "cap_jobs", "ctrl_c_watch", "local_pool", "prestart", "stop_workers"]


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
        joblib's reusable loky executor of ``jobs - 1`` workers (the same processes while ``jobs`` is unchanged),
        started with SIGINT blocked and handed the import of what a run needs.
    """
    from multiprocessing import resource_tracker

    from joblib.externals.loky import get_reusable_executor
    from joblib.externals.loky.backend import resource_tracker as loky_resource_tracker

    # Starting a resource tracker unblocks SIGINT in the calling thread: start both before the window.
    resource_tracker.ensure_running()
    loky_resource_tracker.ensure_running()
    with _sigint_blocked():  # the workers and the executor's threads started here inherit the mask
        pool = get_reusable_executor(max_workers=jobs - 1)
        pool.submit(_import_run_modules)  # starts the workers now, inside the window
    return pool


def stop_workers(pool: Executor) -> None:
    """End the workers of ``pool`` now, runs in hand included (after a Ctrl-C: they do not see it themselves).

    Parameters
    ----------
    pool : concurrent.futures.Executor
        An executor from :func:`local_pool`; the next :func:`local_pool` call starts fresh workers.
    """
    # wait=True: the executor's thread ends before the caller goes on, and with it its queues' semaphores are released
    # (else a Ctrl-C that ends the command raced it, and loky's resource tracker warned of a leaked semaphore)
    pool.shutdown(wait=True, kill_workers=True)  # type: ignore[call-arg]  # loky's executor takes kill_workers


@contextlib.contextmanager
def ctrl_c_watch() -> Iterator[threading.Event]:
    """A record of Ctrl-C for the block: SIGINT sets the event, then raises KeyboardInterrupt as usual.

    A KeyboardInterrupt raised inside library code that catches it (loky calls a future's callbacks under
    ``except BaseException``) would be lost; the caller checks the event at its own safe points and raises it
    again. SIGINT is unblocked in this thread for the block (a process started by a parent that blocked it, as
    these workers are, would not see Ctrl-C at all). Outside the main thread, or where SIGINT has a handler other
    than Python's default (ignored in a background job, or the caller's own), the block changes nothing.

    Returns
    -------
    contextlib.AbstractContextManager
        The block, giving the event; the previous handler and signal mask are restored on exit.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield interrupted
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread for the block (a Ctrl-C meanwhile is delivered at its end); threads and
    processes started inside inherit the blocked mask, through exec too."""
    if not hasattr(signal, "pthread_sigmask"):  # no POSIX signal masks (Windows): nothing to block
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
            local_pool(jobs)
