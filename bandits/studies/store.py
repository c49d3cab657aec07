"""The results directory of a study, written as runs finish so an interrupted study loses nothing.

Its files::

    DIR/study.toml     a copy of the study file
    DIR/meta.json      provenance: package and solver versions, study file hash, root seed, preset, times
                       (replaced atomically: a crash leaves the old or the new version, never a part)
    DIR/runs.jsonl     one JSON line per finished run (its key, seed, status, records or error)
    DIR/.lock          held (``flock``) by the one process writing DIR; names its pid and host

Crash consistency: each finished run is appended as one complete line by a single write, then synced to the
disk before :meth:`ResultStore.append` returns. A crash can therefore damage only the last line (cut short,
or garbage left by a power cut); opening the store again drops that tail with a warning, so the run is simply
run again. A line that cannot be read *followed by* readable ones is damage from outside the store: it is
reported (:class:`~optdesign.errors.InvalidInputError` naming the line), never skipped.

Single writer: a :class:`ResultStore` holds an exclusive, non-blocking ``flock`` on ``DIR/.lock`` from its
opening to its closing (:mod:`bandits.studies.directory_lock`); a second writer is refused with the holder's
pid and host. The operating system
releases the lock when the holder dies, so a killed study never leaves a stale lock. Readers
(:func:`read_entries`, :func:`read_meta`) take no lock.

``--resume`` skips the runs stored with status "ok" (failed runs are retried); it refuses a directory
written from a different study file or preset, so a table never mixes two studies. Without it, a directory that holds
results is refused; one set up by the same study file and preset but holding no run at all (a start that failed
before its first run finished) is started afresh, as if it did not exist: nothing in it can be lost.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

from optdesign.errors import InvalidInputError

from .directory_lock import _lock, _unlock
from .run_records import repair_tail, scan_runs
from .spec import Study

__all__ = ["ResultStore", "check_store", "provenance", "read_entries", "read_meta"]

RUNS_FILE, META_FILE, STUDY_FILE = "runs.jsonl", "meta.json", "study.toml"
VERSIONED = ("optdesign-bandits", "numpy", "scipy", "cvxpy", "clarabel", "scs", "networkx", "pandas", "joblib",
             "distributed")


def provenance() -> dict[str, Any]:
    """Versions of the package, the solvers and the numerical stack, and the platform.

    Returns
    -------
    dict
        ``versions`` (distribution name to version, None when not installed), ``python`` and ``platform``.
    """
    versions: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"versions": versions, "python": sys.version.split()[0], "platform": platform.platform()}


def check_out(out: str | Path) -> Path:
    """``out`` as a path with ".." resolved by name, or :class:`InvalidInputError` if it or its nearest
    existing ancestor is not a directory, or the name cannot be used (the directory itself may not exist yet)."""
    if not str(out).strip() or "\x00" in str(out):
        raise InvalidInputError(f"--out must name a directory, got {str(out)!r}")
    path = Path(os.path.normpath(out))  # ".." taken by name: "a/../../b" makes b, not a stray a
    try:
        existing = next(p for p in (path, *path.absolute().parents) if p.exists())
        is_dir = existing.is_dir()
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL byte
        raise InvalidInputError(f"--out cannot be used as a directory name: {getattr(exc, 'strerror', None) or exc}") \
            from None
    if not is_dir:
        raise InvalidInputError(f"--out must be a directory, {out} is a file" if existing == path else
                                f"--out {out} cannot be made: {existing} is a file")
    return path


def check_store(out: str | Path, study: Study, *, resume: bool = False) -> None:
    """Refuse, without creating or locking anything, an ``out`` that :class:`ResultStore` would refuse for its
    content: results without ``resume``, or another study's (the store checks again when it opens).

    Parameters
    ----------
    out : str or Path
        The results directory (it need not exist).
    study : Study
        The study about to be run.
    resume : bool
        Whether stored results of ``study`` are to be continued.

    Raises
    ------
    InvalidInputError
        ``out`` unusable as a directory (``check_out``), or refused as :class:`ResultStore` would.
    """
    path = check_out(out)
    if path.is_dir():
        _checked_meta(path, study, resume)


def read_entries(out: str | Path) -> list[dict[str, Any]]:
    """The stored runs of ``out``, the latest entry of each key (a retried run replaces its failure).

    Reads every complete line of ``runs.jsonl``. A damaged tail (what a crash during a write leaves) is
    ignored with a warning; a damaged line followed by readable ones raises :class:`InvalidInputError`
    naming the line. Never modifies the file (the next writer repairs the tail).

    Parameters
    ----------
    out : str or Path
        The results directory holding ``runs.jsonl``.

    Returns
    -------
    list of dict
        One store entry per run key (none when ``runs.jsonl`` does not exist yet).

    Raises
    ------
    InvalidInputError
        A damaged line followed by readable ones.
    """
    path = Path(out) / RUNS_FILE
    if not path.exists():
        return []
    scan = scan_runs(path)
    if scan.damaged:
        warnings.warn(f"{path}: ignoring {scan.describe_tail()}: a record cut short by a crash (or being written "
                      "now); the next --resume removes it and runs its run again", stacklevel=2)
    return list(scan.entries.values())


def read_meta(out: str | Path) -> dict[str, Any]:
    """The provenance of ``out`` (``meta.json``), or :class:`InvalidInputError` if it is missing or unreadable.

    Parameters
    ----------
    out : str or Path
        The results directory holding ``meta.json``.

    Returns
    -------
    dict
        ``study`` (name, path, sha256, preset, seed, axes, algorithms), ``seeding``, ``started``, ``command``,
        the versions and platform of :func:`provenance`, and ``resumed`` times and ``resume_commands`` if any
        (``runs`` is the number of runs per cell the last resumption asked for).

    Raises
    ------
    InvalidInputError
        ``meta.json`` missing (no study results in ``out``) or not valid JSON.
    """
    path = Path(out) / META_FILE
    if not path.exists():
        raise InvalidInputError(f"{out} holds no study results ({META_FILE} missing)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InvalidInputError(f"{path} is not valid JSON ({exc})") from None


class ResultStore:
    """Append-only store of finished runs in ``out``, its only writer while open (see the module docstring).

    Opening it creates ``out`` if needed, takes the directory lock (:class:`InvalidInputError` naming the
    holder if another process has it), checks ``meta.json`` against ``study`` and ``resume`` (:func:`check_store`;
    a directory of this study holding no run is started afresh), and removes
    a damaged tail of ``runs.jsonl`` (with a warning). ``done`` is the set of keys stored with status "ok".
    Use it as a context manager, or call :meth:`close`; the lock is released on closing or when the
    process dies, whichever comes first.

    Parameters
    ----------
    out : str or Path
        The results directory (created if needed; it must not be a file).
    study : Study
        The study whose runs are stored; a directory holding another study (file hash or preset) is refused.
    resume : bool
        Continue a directory that already holds results of this study; without it such a directory is refused.

    Raises
    ------
    InvalidInputError
        ``out`` a file or not creatable, held by another writer, holding results without ``resume`` or of
        another study, or damaged (see :func:`read_entries`).
    """

    def __init__(self, out: str | Path, study: Study, *, resume: bool = False):
        self.out = check_out(out)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(f"cannot create the --out directory {out}: {exc.strerror}") from None
        self._lock: BinaryIO | None = _lock(self.out)
        try:
            meta = _checked_meta(self.out, study, resume)
            entries = repair_tail(self.out / RUNS_FILE)
            fresh = not (self.out / META_FILE).exists() or not entries  # a start afresh (module docstring)
            if fresh and Path(study.path).is_file():
                shutil.copyfile(study.path, self.out / STUDY_FILE)
            _write_atomic(self.out / META_FILE, json.dumps(meta, indent=2))
            self.meta = meta
            self.done = {key for key, e in entries.items() if e["status"] == "ok"}
            self._runs: BinaryIO | None = open(self.out / RUNS_FILE, "ab", buffering=0)
        except BaseException:
            _unlock(self._lock)
            self._lock = None
            raise

    def append(self, entry: dict[str, Any]) -> None:
        """Store one finished run durably before returning: one complete line, written by a single write
        call and synced to the disk. If the write fails (disk full), the file is cut back to its previous
        end, so it never holds a partial record, and the error is raised.

        Parameters
        ----------
        entry : dict
            A store entry (:func:`bandits.studies.worker.execute_run`): at least ``key`` and ``status``; numpy
            values are written as lists or numbers.

        Raises
        ------
        InvalidInputError
            The store is closed.
        OSError
            The write or the sync failed (also a short write); the file is cut back first.
        """
        if self._runs is None:
            raise InvalidInputError(f"the result store of {self.out} is closed")
        data = (json.dumps(entry, default=_plain) + "\n").encode("utf-8")
        end = os.fstat(self._runs.fileno()).st_size
        try:
            written = self._runs.write(data)
            if written != len(data):
                raise OSError(f"short write to {self.out / RUNS_FILE}: {written} of {len(data)} bytes")
            os.fsync(self._runs.fileno())
        except OSError:
            self._runs.truncate(end)
            raise
        if entry["status"] == "ok":
            self.done.add(entry["key"])

    def close(self) -> None:
        """Sync and close ``runs.jsonl``, then release the directory lock; closing twice does nothing."""
        if self._runs is not None:
            try:
                os.fsync(self._runs.fileno())
            finally:
                self._runs.close()
                self._runs = None
        if self._lock is not None:
            _unlock(self._lock)
            self._lock = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- meta.json ------------------------------------------------------------------------------------------------


def _holds_runs(out: Path) -> bool:
    """Whether ``runs.jsonl`` in ``out`` holds at least one readable run record."""
    path = out / RUNS_FILE
    return path.exists() and bool(scan_runs(path).entries)


def _checked_meta(out: Path, study: Study, resume: bool) -> dict:
    """The provenance to write for ``study`` in ``out``: a new one (also for a directory of this study that holds no
    run, module docstring), or the stored one with this resumption added; :class:`InvalidInputError` if ``out``
    holds results and ``resume`` is off, or was set up for another study. Reads only."""
    if (out / META_FILE).exists():
        meta = read_meta(out)
        same = meta["study"]["sha256"] == study.sha256 and meta["study"]["quick"] == study.quick
        holds_runs = _holds_runs(out)
        if same and not holds_runs and not resume:  # a start that stopped before its first run: start afresh
            return _new_meta(study)
        if not resume and holds_runs:
            raise InvalidInputError(f"{out} already holds results of study {meta['study']['name']!r}; "
                                    "pass --resume to continue it, or choose another --out")
        if not same:
            held = "results of" if holds_runs else "no runs yet, set up for"
            raise InvalidInputError(f"{out} holds {held} another study file or preset "
                                    f"(sha256 {meta['study']['sha256'][:12]}, quick={meta['study']['quick']}); "
                                    "run it with the same file and preset, or choose another --out")
        meta.setdefault("resumed", []).append(time.strftime("%Y-%m-%dT%H:%M:%S"))
        meta["study"].update(runs=study.replicates, n_runs=len(study.runs))  # a resume may ask for more runs
        meta.setdefault("resume_commands", []).append(sys.argv)
        return meta
    return _new_meta(study)


def _new_meta(study: Study) -> dict:
    """The provenance of a fresh start of ``study``: the study's identity and axes, the seeding, the command, the
    versions and the platform."""
    return {"study": {"name": study.name, "path": study.path, "sha256": study.sha256, "quick": study.quick,
                      "seed": study.seed, "runs": study.replicates, "x": study.x, "series": study.series,
                      "y": study.y, "log_x": study.log_x, "log_y": study.log_y, "n_runs": len(study.runs),
                      "algorithms": list(study.labels)},
            "seeding": "SeedSequence(seed, spawn_key=(crc32(instance), replicate))",
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "command": sys.argv, **provenance()}


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` all at once (temporary file, sync, rename, sync of the directory): after a
    crash, ``path`` holds the old text or the new one, never a part. Only the lock holder calls it."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _plain(value: object) -> object:
    """numpy scalars and arrays in JSON (anything else as its text)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
