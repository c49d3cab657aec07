"""The results directory of a study, written as runs finish so an interrupted study loses nothing.

    DIR/study.toml     a copy of the study file
    DIR/meta.json      provenance: package and solver versions, study file hash, root seed, preset, times
    DIR/runs.jsonl     one JSON line per finished run (its key, seed, status, records or error), appended and
                       flushed as each run finishes (synced to disk at least every second); a line cut short
                       by a kill is ignored on reading

``--resume`` skips the runs stored with status "ok" (failed runs are retried); it refuses a directory
written from a different study file or preset, so a table never mixes two studies.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

from optdesign.errors import InvalidInputError

from .spec import Study

RUNS_FILE, META_FILE, STUDY_FILE = "runs.jsonl", "meta.json", "study.toml"
SYNC_SECONDS = 1.0
VERSIONED = ("optdesign-bandits", "numpy", "scipy", "cvxpy", "clarabel", "scs", "networkx", "pandas", "joblib",
             "distributed")


def provenance() -> dict:
    """Versions of the package, the solvers and the numerical stack, and the platform."""
    versions = {}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"versions": versions, "python": sys.version.split()[0], "platform": platform.platform()}


def read_entries(out: str | Path) -> list[dict]:
    """Every complete line of ``runs.jsonl`` (a later entry of the same key replaces an earlier one)."""
    path = Path(out) / RUNS_FILE
    if not path.exists():
        return []
    latest: dict[str, dict] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a kill
                continue
            latest[entry["key"]] = entry
    return list(latest.values())


def read_meta(out: str | Path) -> dict:
    path = Path(out) / META_FILE
    if not path.exists():
        raise InvalidInputError(f"{out} holds no study results ({META_FILE} missing)")
    return json.loads(path.read_text(encoding="utf-8"))


class ResultStore:
    """Append-only store of finished runs in ``out`` (see the module docstring)."""

    def __init__(self, out: str | Path, study: Study, *, resume: bool = False):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        meta_path = self.out / META_FILE
        if meta_path.exists():
            meta = read_meta(self.out)
            if not resume:
                raise InvalidInputError(f"{self.out} already holds results of study {meta['study']['name']!r}; "
                                        "pass --resume to continue it, or choose another --out")
            if meta["study"]["sha256"] != study.sha256 or meta["study"]["quick"] != study.quick:
                raise InvalidInputError(f"{self.out} holds results of another study file or preset "
                                        f"(sha256 {meta['study']['sha256'][:12]}, quick={meta['study']['quick']}); "
                                        "resume it with the same file and preset, or choose another --out")
            meta.setdefault("resumed", []).append(time.strftime("%Y-%m-%dT%H:%M:%S"))
        else:
            meta = {"study": {"name": study.name, "path": study.path, "sha256": study.sha256, "quick": study.quick,
                              "seed": study.seed, "runs": study.replicates, "x": study.x, "series": study.series,
                              "y": study.y,
                              "log_x": study.log_x, "log_y": study.log_y, "n_runs": len(study.runs),
                              "algorithms": list(study.labels)},
                    "seeding": "SeedSequence(seed, spawn_key=(crc32(instance), replicate))",
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "command": sys.argv, **provenance()}
            if Path(study.path).is_file():
                shutil.copyfile(study.path, self.out / STUDY_FILE)
        meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        self.meta = meta
        self.done = {e["key"] for e in read_entries(self.out) if e["status"] == "ok"}
        self._fh = (self.out / RUNS_FILE).open("a", encoding="utf-8")
        self._synced = time.monotonic()

    def append(self, entry: dict) -> None:
        """Write one finished run now: flushed to the OS at once (a killed process loses nothing), synced to
        the disk at most once per ``SYNC_SECONDS`` and on close (a power cut loses at most that much)."""
        self._fh.write(json.dumps(entry, default=_plain) + "\n")
        self._fh.flush()
        if time.monotonic() - self._synced >= SYNC_SECONDS:
            os.fsync(self._fh.fileno())
            self._synced = time.monotonic()
        if entry["status"] == "ok":
            self.done.add(entry["key"])

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _plain(value):
    """numpy scalars and arrays in JSON."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
