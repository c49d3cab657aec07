"""The lines of a study's ``runs.jsonl``: reading every run record, and finding (or cutting off) the damaged tail
that a crash during a write can leave (:mod:`bandits.studies.store` explains the crash consistency)."""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from optdesign.errors import InvalidInputError

__all__ = ["PREVIEW", "Scan", "repair_tail", "scan_runs"]

PREVIEW = 60  # bytes of a damaged line quoted in messages
_KEY = re.compile(rb'"key": ("(?:[^"\\]|\\.)*")')


@dataclass
class Scan:
    """``runs.jsonl`` read once: the readable records, and the damaged tail after them (if any).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    entries : dict
        Run key -> its latest entry.
    end : int
        Bytes of the readable records at the start of the file.
    size : int
        Bytes in the file.
    tail_line : int
        Line number where the damaged tail starts (0 without one).
    tail : bytes
        The tail's first bytes.
    """

    path: Path
    entries: dict[str, dict]
    end: int
    size: int
    tail_line: int
    tail: bytes

    @property
    def damaged(self) -> bool:
        """Whether bytes follow the last readable record."""
        return self.size > self.end

    def describe_tail(self) -> str:
        """The damaged tail for a message: its size, line and, when it shows, the run it held.

        Returns
        -------
        str
            ``"N bytes from line L (run 'key')"``, or the tail's first bytes in place of the run.
        """
        what = repr(self.tail[:PREVIEW])
        found = _KEY.search(self.tail)
        if found:
            try:
                what = f"run {json.loads(found.group(1))!r}"
            except ValueError:  # a key cut inside an escape
                pass
        return f"{self.size - self.end} bytes from line {self.tail_line} ({what})"


def _record(line: bytes) -> dict | None:
    """The run entry on one line of ``runs.jsonl``, or None if the line is cut short or not an entry."""
    if not line.endswith(b"\n"):
        return None
    try:
        record = json.loads(line)
    except ValueError:  # not JSON, or not UTF-8
        return None
    return record if isinstance(record, dict) and "key" in record and "status" in record else None


def scan_runs(path: Path) -> Scan:
    """Read ``runs.jsonl``: every record up to the damaged tail (the unreadable lines at the end, if any).

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    Scan
        The records and the tail.

    Raises
    ------
    InvalidInputError
        An unreadable line followed by a readable one (damage from outside the store), naming both lines.
    """
    entries: dict[str, dict] = {}
    end = offset = 0
    first_bad: tuple[int, bytes] | None = None  # (line number, start) of the first unreadable line after `end`
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            record = _record(line)
            if record is None:
                first_bad = first_bad or (number, line[:PREVIEW])
            elif first_bad is not None:
                raise InvalidInputError(
                    f"{path}: line {first_bad[0]} is not a readable run record ({first_bad[1]!r}) but line {number} "
                    f"is, so the file was damaged, not cut short by a crash; remove line {first_bad[0]} "
                    "(--resume then runs its run again)")
            else:
                entries[record["key"]] = record
                end = offset + len(line)
            offset += len(line)
        fh.seek(end)
        tail = fh.read(4096)
    tail_line = first_bad[0] if first_bad else 0
    return Scan(path, entries, end, offset, tail_line, tail)


def repair_tail(path: Path) -> dict[str, dict]:
    """The stored entries of ``runs.jsonl``, after cutting the file back to the end of its last readable record
    (synced, with a warning naming what was dropped) so the next append starts a fresh line.

    Parameters
    ----------
    path : pathlib.Path
        The file (missing: no entries).

    Returns
    -------
    dict
        Run key -> its latest entry.
    """
    if not path.exists():
        return {}
    scan = scan_runs(path)
    if scan.damaged:
        with path.open("r+b") as fh:
            fh.truncate(scan.end)
            os.fsync(fh.fileno())
        warnings.warn(f"{path}: dropped {scan.describe_tail()}, a record cut short by a crash; its run will be run "
                      "again", stacklevel=3)
    return scan.entries
