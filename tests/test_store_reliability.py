"""The study result store survives crashes and refuses a second writer.

A crash can only cut the last line of runs.jsonl short: reopening drops it with a warning and the run is
run again; a damaged line in the middle is reported; the directory lock names its holder and dies with it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
from test_studies import STUDY, stable, write
from typer.testing import CliRunner

from bandits.cli import app
from bandits.studies import ResultStore, load_study, read_entries, run_study, summarize
from optdesign.errors import InvalidInputError

BANDITS = [sys.executable, "-c", "from bandits.cli import main; main()"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    """A tiny study run to the end without interruption (16 runs, 4 per cell), and its summary."""
    tmp = tmp_path_factory.mktemp("finished")
    run_study(load_study(write(tmp)), tmp / "res", progress=False)
    return tmp / "res", stable(summarize(tmp / "res"))


@pytest.fixture
def results(finished, tmp_path) -> Path:
    """A copy of the finished study's directory, with its study file beside it (``tmp_path / tiny.toml``)."""
    write(tmp_path)
    return Path(shutil.copytree(finished[0], tmp_path / "res"))


def lines(out: Path) -> list[bytes]:
    return (out / "runs.jsonl").read_bytes().splitlines(keepends=True)


def test_the_command_line_warns_of_a_torn_record_once_on_one_line(results):
    """``bandits plot`` reads the store several times (table, figure, error curves): one ``warning:`` line, without
    the Python source line that raised it."""
    stored = lines(results)
    (results / "runs.jsonl").write_bytes(b"".join(stored[:-1]) + stored[-1][:10])
    out = subprocess.run([*BANDITS, "plot", str(results)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [line for line in out.stderr.splitlines() if line.startswith("warning: ")]
    assert len(out.stderr.splitlines()) == 1 and "a record cut short by a crash" in out.stderr


@pytest.mark.parametrize("damage", ["cut", "zeros"])
def test_a_damaged_last_record_is_dropped_with_a_warning_and_run_again(finished, results, tmp_path, damage):
    """A crash during a write (a cut line) or a power cut (the last record's bytes left as zeros)."""
    stored = lines(results)
    last = stored[-1]
    key = json.loads(last)["key"]
    tail = last[: len(last) // 2] if damage == "cut" else b"\0" * len(last)
    (results / "runs.jsonl").write_bytes(b"".join(stored[:-1]) + tail)
    with pytest.warns(UserWarning, match=r"ignoring .* line 16"):  # a reader leaves the file alone
        assert len(read_entries(results)) == 15
    assert (results / "runs.jsonl").stat().st_size == sum(map(len, stored[:-1])) + len(tail)
    named = f"run {key!r}" if damage == "cut" else r"b'\\x00"
    with pytest.warns(UserWarning, match=rf"dropped {len(tail)} bytes from line 16 \({named}"):
        report = run_study(load_study(tmp_path / "tiny.toml"), results, resume=True, progress=False)
    assert (report.done, report.failed, report.skipped) == (1, 0, 15)
    assert [json.loads(line)["key"] for line in lines(results)][-1] == key and len(lines(results)) == 16
    pd.testing.assert_frame_equal(stable(summarize(results)), finished[1])


def test_a_damaged_line_in_the_middle_is_reported_not_skipped(results, tmp_path):
    stored = lines(results)
    damaged = [*stored[:4], stored[4][:40] + b"\n", *stored[5:]]
    (results / "runs.jsonl").write_bytes(b"".join(damaged))
    for attempt in (lambda: read_entries(results),
                    lambda: run_study(load_study(tmp_path / "tiny.toml"), results, resume=True, progress=False)):
        with pytest.raises(InvalidInputError, match=r"runs\.jsonl: line 5 is not a readable run record .* line 6"):
            attempt()
    assert (results / "runs.jsonl").read_bytes() == b"".join(damaged)  # nothing dropped
    out = CliRunner().invoke(app, ["plot", str(results)])
    assert out.exit_code == 2 and out.output.count("\n") == 1 and "line 5" in out.output, out.output
    (results / "runs.jsonl").write_bytes(b"".join(stored[:4] + stored[5:]))  # the fix the message asks for
    report = run_study(load_study(tmp_path / "tiny.toml"), results, resume=True, progress=False)  # lock released
    assert (report.done, report.skipped) == (1, 15)


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    path = write(tmp_path)
    study = load_study(path, quick=True)
    holder = rf"{tmp_path / 'res'} is in use by another study \(pid {os.getpid()} on {socket.gethostname()}, since "
    with ResultStore(tmp_path / "res", study):
        with pytest.raises(InvalidInputError, match=holder):
            ResultStore(tmp_path / "res", study, resume=True)
        out = CliRunner().invoke(app, ["study", str(path), "--quick", "--out", str(tmp_path / "res"), "--resume"])
        assert out.exit_code == 2 and out.output.splitlines()[-1].startswith("error: "), out.output
        assert f"pid {os.getpid()}" in out.output
    report = run_study(study, tmp_path / "res", resume=True, progress=False)  # released on closing
    assert (report.done, report.skipped) == (2, 0)


def test_the_lock_of_a_killed_process_does_not_block(tmp_path):
    path = write(tmp_path)
    hold = ("import sys; from bandits.studies import ResultStore, load_study; "
            "store = ResultStore(sys.argv[1], load_study(sys.argv[2], quick=True)); print('open', flush=True); "
            "sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path / "res"), str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "open\n"
        with pytest.raises(InvalidInputError, match=f"pid {child.pid} on {socket.gethostname()}"):
            ResultStore(tmp_path / "res", load_study(path, quick=True), resume=True)
    finally:
        child.kill()  # SIGKILL: no cleanup in the child
        child.wait()
    report = run_study(load_study(path, quick=True), tmp_path / "res", resume=True, progress=False)
    assert (report.done, report.skipped) == (2, 0)


def test_out_naming_a_file_is_one_error_line(tmp_path):
    path, taken = write(tmp_path), tmp_path / "taken.txt"
    taken.write_text("mine")
    out = CliRunner().invoke(app, ["study", str(path), "--quick", "--out", str(taken), "--no-plot"])
    assert out.exit_code == 2 and out.output == f"error: --out must be a directory, {taken} is a file\n"
    with pytest.raises(InvalidInputError, match="--out must be a directory"):
        ResultStore(taken, load_study(path, quick=True))
    assert taken.read_text() == "mine"


def test_a_failed_write_leaves_no_partial_record(tmp_path, monkeypatch):
    """A write or sync that fails (a full disk) is rolled back: the file keeps only complete records."""

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    with ResultStore(tmp_path / "res", load_study(write(tmp_path), quick=True)) as store:
        store.append({"key": "a", "status": "ok"})
        with monkeypatch.context() as patch:
            patch.setattr(os, "fsync", full)
            with pytest.raises(OSError, match="No space left"):
                store.append({"key": "b", "status": "ok"})
        store.append({"key": "c", "status": "ok"})
    assert [json.loads(line)["key"] for line in lines(tmp_path / "res")] == ["a", "c"]
    assert store.done == {"a", "c"}


def test_killed_at_random_points_and_resumed_loses_and_repeats_nothing(tmp_path):
    """SIGKILL the command at seeded random points (during its start, then a few runs after each resume, at a
    random moment of a run or of its write), and after every other kill cut its last record short as a kill
    inside the write would; resume until done. Every run stored before a kill is kept as it was, no run is stored
    twice, and the summary equals an uninterrupted run's."""
    path = write(tmp_path, STUDY.replace("runs = 4", "runs = 6").replace("omega = 0.3", "omega = 0.1"))
    study, out, runs_file = load_study(path), tmp_path / "cut", tmp_path / "cut" / "runs.jsonl"
    rng = random.Random(14)
    kept: dict[str, dict] = {}
    kills = 0
    for round_ in range(4):
        proc = subprocess.Popen([*BANDITS, "study", str(path), "--out", str(out), "--resume", "--no-plot"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if round_ == 0:  # somewhere in the start: imports, the lock, meta.json
            time.sleep(rng.uniform(0.2, 2.0))
        else:
            target = min(len(kept) + rng.randint(1, 4), len(study.runs) - 1)
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if runs_file.exists() and runs_file.read_bytes().count(b"\n") >= target:
                    break
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.08))
        kills += proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if round_ % 2:  # as if the kill had come inside the write
            tear_last_new_record(runs_file, kept, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a record cut short by this kill
            now = {e["key"]: e for e in read_entries(out)} if (out / "meta.json").exists() else {}
        assert all(now[key] == entry for key, entry in kept.items()), "a stored run was lost or changed"
        kept = now
    assert kills >= 3 and len(kept) < len(study.runs), "the kills came too late; make the study longer"
    done = subprocess.run([*BANDITS, "study", str(path), "--out", str(out), "--resume", "--no-plot"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{len(kept)} skipped" in done.stderr
    keys = [json.loads(line)["key"] for line in runs_file.read_bytes().splitlines()]
    assert sorted(keys) == sorted(r.key for r in study.runs)  # each run exactly once
    assert all(entry in read_entries(out) for entry in kept.values())
    run_study(study, tmp_path / "whole", progress=False)
    pd.testing.assert_frame_equal(stable(summarize(out)), stable(summarize(tmp_path / "whole")))


def tear_last_new_record(runs_file: Path, kept: dict[str, dict], rng: random.Random) -> None:
    """Cut the last line of ``runs_file`` at a random byte, if it holds a run stored since ``kept`` was read."""
    stored = runs_file.read_bytes() if runs_file.exists() else b""
    start = stored.rfind(b"\n", 0, len(stored) - 1) + 1
    if stored.endswith(b"\n") and json.loads(stored[start:])["key"] not in kept:
        with runs_file.open("r+b") as fh:
            fh.truncate(rng.randrange(start + 1, len(stored)))


def test_ctrl_c_with_two_jobs_is_one_line_and_keeps_the_finished_runs(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group, the pool's worker included: the command ends with exit
    status 130 and the one "interrupted ... --resume" line, no worker-pool traceback; the stored runs resume."""
    path = write(tmp_path, STUDY.replace("runs = 4", "runs = 12").replace("omega = 0.3", "omega = 0.1"))
    out = tmp_path / "res"
    proc = subprocess.Popen([*BANDITS, "study", str(path), "--out", str(out), "--jobs", "2", "--no-plot"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if (out / "runs.jsonl").exists() and (out / "runs.jsonl").read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the study finished before it could be interrupted; make it longer"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "exception calling callback" not in err, err
    assert "interrupted: the finished runs are saved" in err and err.rstrip().endswith("--resume"), err
    stored = len(read_entries(out))
    done = subprocess.run([*BANDITS, "study", str(path), "--out", str(out), "--resume", "--no-plot"],
                          capture_output=True, text=True)
    assert done.returncode == 0 and f"{stored} skipped" in done.stderr, done.stderr



def _blocked_signals() -> set[int]:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks only")
def test_pool_workers_start_with_sigint_blocked_and_the_parent_does_not():
    """A terminal's Ctrl-C reaches the workers too; one still starting its interpreter would print a traceback
    of its own, so workers start with SIGINT blocked (inherited through exec) and only the parent answers it."""
    from bandits.studies.pool import local_pool, stop_workers

    pool = local_pool(2)
    try:
        assert signal.SIGINT in pool.submit(_blocked_signals).result(timeout=60)
        assert signal.SIGINT not in _blocked_signals()
    finally:
        stop_workers(pool)


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler for the test (a pytest-xdist worker may run with another), restored after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _swallowed_ctrl_c() -> None:
    """A Ctrl-C that arrives inside library code which catches the KeyboardInterrupt (as loky's callbacks do)."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        pass


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks only")
def test_ctrl_c_watch_keeps_a_record_of_a_swallowed_interrupt_and_restores_the_signal_state(default_sigint):
    from bandits.studies.pool import ctrl_c_watch

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # as a worker's child would inherit it
    try:
        with ctrl_c_watch() as interrupted:
            assert signal.SIGINT not in _blocked_signals()
            _swallowed_ctrl_c()
            assert interrupted.is_set()
        assert signal.SIGINT in _blocked_signals()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job's: left alone
    with ctrl_c_watch() as interrupted:
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert not interrupted.is_set()


def test_a_study_stops_on_a_ctrl_c_that_library_code_swallowed(tmp_path, monkeypatch, default_sigint):
    """The parent's second run meets a Ctrl-C that code inside it catches: the study still ends with
    KeyboardInterrupt, its workers stopped, the finished runs stored, and a resume completes it."""
    import bandits.studies.execute as execute

    real, parent, calls = execute.execute_run, os.getpid(), []

    def run_then_interrupt(spec, *blas):
        if os.getpid() == parent:
            calls.append(spec.key)
            if len(calls) == 2:
                _swallowed_ctrl_c()
        return real(spec, *blas)

    monkeypatch.setattr(execute, "execute_run", run_then_interrupt)
    study = load_study(write(tmp_path, STUDY.replace("runs = 4", "runs = 12")))
    with pytest.raises(KeyboardInterrupt):
        run_study(study, tmp_path / "res", jobs=2, progress=False)
    stored = len(read_entries(tmp_path / "res"))
    assert 1 <= stored < len(study.runs)
    monkeypatch.setattr(execute, "execute_run", real)
    report = run_study(study, tmp_path / "res", resume=True, progress=False)
    assert report.skipped == stored and report.done == len(study.runs) - stored
