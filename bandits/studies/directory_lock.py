"""The single-writer lock of a results directory: an exclusive, non-blocking ``flock`` on ``DIR/.lock``.

A :class:`~bandits.studies.store.ResultStore` takes it when it opens and releases it when it closes; the lock
file names the holder (pid, host, since), so a second writer is refused with a message naming it. The
operating system releases the lock when the holder dies, so a killed study never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import BinaryIO

from optdesign.errors import InvalidInputError

__all__: list[str] = []  # the store's machinery: used through ResultStore

LOCK_FILE = ".lock"


def _lock(out: Path) -> BinaryIO:
    """The open ``out/.lock``, holding its exclusive ``flock`` and naming this process (pid, host, since).
    Never waits: :class:`InvalidInputError` naming the holder and ``out`` if another process holds it."""
    fh = open(out / LOCK_FILE, "a+b", buffering=0)  # open for the lifetime of the store
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fh)
        fh.close()
        raise InvalidInputError(f"{out} is in use by another study ({holder}): wait for it to finish or stop "
                                "it, or choose another --out") from None
    except OSError as exc:
        fh.close()
        raise InvalidInputError(f"cannot lock {out / LOCK_FILE}: {exc.strerror}") from None
    fh.truncate(0)
    fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "since": time.strftime("%Y-%m-%dT%H:%M:%S")}).encode("utf-8") + b"\n")
    return fh


def _holder(fh: BinaryIO, attempts: int = 20) -> str:
    """Who holds the lock, as written in the lock file (``pid 123 on host, since ...``); waits up to
    ``attempts`` x 10 ms for a holder that has the lock but has not written its name yet."""
    for _ in range(attempts):
        fh.seek(0)
        try:
            who = json.loads(fh.read())
            return f"pid {who['pid']} on {who['host']}, since {who['since']}"
        except (ValueError, KeyError, TypeError):
            time.sleep(0.01)
    return "pid unknown"


def _unlock(fh: BinaryIO) -> None:
    """Erase this process's name from the lock file, release the lock and close the file."""
    try:
        fh.truncate(0)
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    finally:
        fh.close()
