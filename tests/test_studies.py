"""Studies: validation before any run, seeds independent of backend and order, resumable storage, aggregation."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.experiment import Experiment
from bandits.studies import load_study, parse_study, read_entries, run_study, summarize, write_tables
from bandits.studies.bounds import kl_delta
from optdesign.errors import InvalidInputError

STUDY = """
[study]
name = "tiny"
seed = 7
runs = 4
delta = [0.1, 0.01]
x = "d"

[[instances]]
family = "soare"
d = [2, 3]
omega = 0.3

[[algorithms]]
name = "xy-oracle"
threshold = "practical"
label = "oracle"

[[algorithms]]
name = "g-static"
threshold = "practical"

[quick]
runs = 2
algorithms = ["oracle"]
[quick.instances]
d = [2]
"""

TIMING = ["run_seconds", "solve_time", "other_time", "wall_time", "us_per_sample"]


def write(tmp_path: Path, text: str = STUDY, name: str = "tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def stable(frame: pd.DataFrame) -> pd.DataFrame:
    """A results table without its timing columns (which differ from run to run)."""
    return frame.drop(columns=[c for c in TIMING if c in frame.columns]).reset_index(drop=True)


def test_grid_seeds_and_quick_preset(tmp_path):
    study = load_study(write(tmp_path))
    assert len(study.runs) == 2 * 2 * 4 and study.sha256 == hashlib.sha256(STUDY.encode()).hexdigest()
    keys = {(r.instance, r.replicate): r.spawn_key for r in study.runs if r.label == "oracle"}
    for r in study.runs:  # common random numbers: every algorithm sees the same seed on (instance, replicate)
        assert keys[(r.instance, r.replicate)] == r.spawn_key
    assert len(set(keys.values())) == len(keys)
    quick = load_study(write(tmp_path), quick=True)
    assert [(r.instance, r.label) for r in quick.runs] == [("soare:d=2,omega=0.3", "oracle")] * 2
    assert load_study(write(tmp_path), runs=1).replicates == 1


def test_the_compiled_key_and_the_quick_preset_choose_the_runs_path(tmp_path, monkeypatch):
    """``compiled`` (default true, [quick] may override it) reaches every run's experiment; a run whose experiment
    says false never enters the compiled loop, fixed confidence or fixed budget."""
    def compiled_of(text: str, quick: bool) -> set[bool]:
        return {r.experiment().compiled for r in load_study(write(tmp_path, text), quick=quick).runs}

    assert compiled_of(STUDY, False) == compiled_of(STUDY, True) == {True}
    assert compiled_of(STUDY.replace("runs = 2", "runs = 2\ncompiled = false"), True) == {False}
    assert compiled_of(STUDY.replace('x = "d"', 'x = "d"\ncompiled = false'), False) == {False}
    import bandits.run

    entered = []
    monkeypatch.setattr(bandits.run, "_run_compiled", lambda *args: entered.append(args) or False)
    for compiled in (False, True):
        Experiment("top-two", "gaussian:means=1/0.5/0", deltas=(0.1,), compiled=compiled).execute()
        assert len(entered) == int(compiled)
    import bandits.pure_exploration.compiled as compiled_path

    planned = []  # a fixed-budget run asks for its compiled plan only when its experiment says true
    monkeypatch.setattr(compiled_path, "compiled_budget_run_of", lambda *args: planned.append(args))
    for compiled in (False, True):
        Experiment("top-two", "gaussian:means=1/0.5/0", budgets=(50, 100), compiled=compiled).execute()
        assert len(planned) == int(compiled)
    with pytest.raises(InvalidInputError, match="compiled must be true or false"):
        Experiment("top-two", "gaussian:means=1/0.5/0", deltas=(0.1,), compiled="yes").check()  # type: ignore[arg-type]


def test_seed_run_draws_one_instance_per_replicate():
    doc = {"study": {"budget": 50, "runs": 3}, "instances": [{"family": "sbm", "n": 20, "seed": "run"}],
           "algorithms": [{"name": "apt", "init_pulls": 1}]}
    study = parse_study(doc)
    assert [r.instance for r in study.runs] == [f"sbm:n=20,seed={r}" for r in range(3)]
    assert {r.cell for r in study.runs} == {"sbm:n=20,seed=run"}


def test_a_problem_with_two_options_is_grouped_and_runs(tmp_path):
    """A study's ``problem = "top-m:m=2,known=true"`` reaches the algorithm as one grouped value: the question asked
    in the arms' known-variance model, and the runs are scored by it."""
    doc = {"study": {"runs": 2, "delta": 0.1},
           "instances": [{"family": "heteroscedastic", "means": "1/0.8/0.3/0", "sigmas": "0.5/1/1/0.5"}],
           "algorithms": [{"name": "top-two", "problem": "top-m:m=2,known=true", "label": "known"}]}
    study = parse_study(doc)
    assert {r.algorithm for r in study.runs} == {"top-two:problem=(top-m:m=2,known=true)"}
    run_study(study, tmp_path / "res", progress=False)
    entries = read_entries(tmp_path / "res")
    records = [record for entry in entries for record in entry["records"]]
    assert len(records) == 2 and all(r["correct"] and r["recommendation"] == "{0,1}" for r in records)
    assert {r["config"]["problem"] for r in records} == {"top-m:m=2,known=true"}


@pytest.mark.parametrize("text, message", [
    ("[study\nname = 1", "not valid TOML"),
    (STUDY.replace('name = "g-static"', 'name = "nope"'), "unknown algorithm 'nope'"),
    (STUDY.replace('family = "soare"', 'family = "nope"'), "unknown instance 'nope'"),
    (STUDY.replace("d = [2, 3]", "d = [2, 0]"), "soare:d=0,omega=0.3: d must be an integer"),
    (STUDY.replace("omega = 0.3", "omega = -1"), "omega must be a positive number"),
    (STUDY.replace('threshold = "practical"\nlabel', 'threshold = "fast"\nlabel'), "threshold must be one of"),
    (STUDY.replace("delta = [0.1, 0.01]", "delta = 2"), "delta"),
    (STUDY.replace("runs = 4", "runs = 0"), "runs must be an integer >= 1"),
    (STUDY.replace('x = "d"', 'x = "m"'), "plot axis x = 'm'"),
    (STUDY.replace('x = "d"', 'x = "d"\nseries = "graph"'), "plot series = 'graph'"),
    (STUDY.replace('seed = 7', 'sed = 7'), "unknown key(s) ['sed']"),
    (STUDY.replace('algorithms = ["oracle"]', 'algorithms = ["G"]'), "not labels"),
    (STUDY.replace('label = "oracle"', 'label = "g-static"'), "share a label"),
    (STUDY.replace('family = "soare"', 'family = "sbm"').replace("omega = 0.3", ""), "runs on linear instances"),
    (STUDY.replace('x = "d"', 'x = "d"\ncompiled = "no"'), "compiled must be true or false, got 'no'"),
    (STUDY.replace('x = "d"', 'x = "d"\nlog_x = 1'), "log_x must be true or false, got 1"),
])
def test_bad_study_files_fail_before_any_run(tmp_path, text, message):
    path = write(tmp_path, text)
    quick = message == "not labels"  # a [quick] preset is only read with --quick
    with pytest.raises(InvalidInputError) as err:
        load_study(path, quick=quick)
    assert message in str(err.value)
    args = ["study", str(path), "--out", str(tmp_path / "res"), "--no-plot"] + ["--quick"] * quick
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert not (tmp_path / "res").exists()


def test_study_rows_equal_direct_runs_and_provenance(tmp_path):
    study = load_study(write(tmp_path))
    report = run_study(study, tmp_path / "res", progress=False)
    assert (report.done, report.failed, report.skipped) == (16, 0, 0)
    summary = write_tables(tmp_path / "res")
    spec = next(r for r in study.runs if r.label == "g-static" and r.replicate == 3 and "d=3" in r.instance)
    direct = Experiment(spec.algorithm, spec.instance, deltas=(0.1, 0.01),
                        seed=np.random.SeedSequence(7, spawn_key=spec.spawn_key)).execute()
    stored = next(e for e in read_entries(tmp_path / "res") if e["key"] == spec.key)
    assert [r["samples"] for r in stored["records"]] == [r["samples"] for r in direct]
    row = summary[(summary["cell"] == "soare:d=3,omega=0.3") & (summary["algorithm"] == "g-static")
                  & (summary["delta"] == 0.01)].iloc[0]
    runs = pd.read_csv(tmp_path / "res" / "runs.csv")
    cell = runs[(runs["cell"] == "soare:d=3,omega=0.3") & (runs["label"] == "g-static") & (runs["delta"] == 0.01)]
    assert row["runs"] == 4 and row["mean"] == pytest.approx(cell["samples"].mean())
    assert row["se"] == pytest.approx(cell["samples"].std(ddof=1) / 2)
    assert row["lower_bound"] == pytest.approx(row["c"] * kl_delta(0.01)) and row["ratio"] > 1
    meta = json.loads((tmp_path / "res" / "meta.json").read_text())
    assert meta["study"]["sha256"] == study.sha256 and meta["study"]["seed"] == 7
    assert meta["versions"]["cvxpy"] and meta["versions"]["clarabel"] and meta["versions"]["optdesign-bandits"]
    header = [line for line in (tmp_path / "res" / "summary.csv").read_text().splitlines() if line.startswith("#")]
    assert study.sha256 in header[0] and "cvxpy" in header[2]
    assert stable(pd.read_csv(tmp_path / "res" / "summary.csv", comment="#")).shape == stable(summary).shape
    assert stored["seed"] == {"entropy": 7, "spawn_key": list(spec.spawn_key)}
    assert (tmp_path / "res" / "study.toml").read_text() == STUDY


def test_same_results_whatever_the_job_count_and_a_real_dask_cluster(tmp_path):
    from dask.distributed import LocalCluster

    study = load_study(write(tmp_path))
    run_study(study, tmp_path / "one", jobs=1, progress=False)
    run_study(study, tmp_path / "two", jobs=2, progress=False)
    # the command line starts its workers before validating the file (bandits.studies.pool.prestart)
    out = CliRunner().invoke(app, ["study", str(write(tmp_path)), "--jobs", "2", "--out", str(tmp_path / "cli"),
                                   "--no-plot"])
    assert out.exit_code == 0, out.output
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        report = run_study(study, tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address,
                           progress=False)
    assert report.done == len(study.runs)
    base = stable(summarize(tmp_path / "one"))
    pd.testing.assert_frame_equal(stable(summarize(tmp_path / "two")), base)
    pd.testing.assert_frame_equal(stable(summarize(tmp_path / "dask")), base)
    pd.testing.assert_frame_equal(stable(summarize(tmp_path / "cli")), base)


def test_a_failing_run_is_recorded_and_the_study_goes_on(tmp_path, monkeypatch):
    original = Experiment.execute

    def flaky(self):
        if "d=3" in self.instance and self.algorithm.startswith("g-static"):
            raise RuntimeError("solver exploded")
        return original(self)

    monkeypatch.setattr(Experiment, "execute", flaky)
    report = run_study(load_study(write(tmp_path)), tmp_path / "res", progress=False)
    assert (report.done, report.failed) == (12, 4)
    summary = write_tables(tmp_path / "res")
    failures = pd.read_csv(tmp_path / "res" / "failures.csv")
    assert len(failures) == 4 and failures["error"].str.contains("RuntimeError: solver exploded").all()
    assert set(summary["cell"] + summary["algorithm"]) == {
        "soare:d=2,omega=0.3oracle", "soare:d=2,omega=0.3g-static", "soare:d=3,omega=0.3oracle"}
    monkeypatch.setattr(Experiment, "execute", original)
    again = run_study(load_study(write(tmp_path)), tmp_path / "res", resume=True, progress=False)
    assert (again.done, again.failed, again.skipped) == (4, 0, 12)  # resume retries the failed runs


def test_resume_refuses_other_studies_and_plain_reruns(tmp_path):
    study = load_study(write(tmp_path), quick=True)
    run_study(study, tmp_path / "res", progress=False)
    with pytest.raises(InvalidInputError, match="pass --resume"):
        run_study(study, tmp_path / "res", progress=False)
    with pytest.raises(InvalidInputError, match="another study file or preset"):
        run_study(load_study(write(tmp_path)), tmp_path / "res", resume=True, progress=False)
    report = run_study(study, tmp_path / "res", resume=True, progress=False)
    assert (report.done, report.skipped) == (0, 2)


def test_resume_with_more_runs_records_the_new_count(tmp_path):
    """A study resumed with a larger ``runs`` says so in meta.json and in the summary's header."""
    run_study(load_study(write(tmp_path), runs=1), tmp_path / "res", progress=False)
    report = run_study(load_study(write(tmp_path), runs=2), tmp_path / "res", resume=True, progress=False)
    assert report.skipped > 0
    meta = json.loads((tmp_path / "res" / "meta.json").read_text())
    assert meta["study"]["runs"] == 2 and len(meta["resumed"]) == len(meta["resume_commands"]) == 1
    write_tables(tmp_path / "res")
    assert "2 runs per cell" in (tmp_path / "res" / "summary.csv").read_text().splitlines()[1]


def test_killed_study_resumes_to_the_uninterrupted_result(tmp_path):
    """Kill a study (SIGKILL, so a line may be cut short) once some runs are stored, resume it, and compare."""
    text = STUDY.replace("runs = 4", "runs = 12").replace("omega = 0.3", "omega = 0.1")
    path = write(tmp_path, text)
    bandits = [sys.executable, "-c", "from bandits.cli import main; main()"]
    proc = subprocess.Popen([*bandits, "study", str(path), "--out", str(tmp_path / "cut"), "--no-plot"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs_file = tmp_path / "cut" / "runs.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if runs_file.exists() and runs_file.read_text().count("\n") >= 5:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before it could be interrupted; make it longer"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(read_entries(tmp_path / "cut"))
    assert 5 <= stored < 96
    resumed = subprocess.run([*bandits, "study", str(path), "--out", str(tmp_path / "cut"), "--resume", "--no-plot"],
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{stored} skipped" in resumed.stderr
    run_study(load_study(path), tmp_path / "whole", progress=False)
    pd.testing.assert_frame_equal(stable(summarize(tmp_path / "cut")), stable(summarize(tmp_path / "whole")))


def test_error_rate_warning_and_interval(tmp_path):
    """Aggregation on stored entries with a known error count: 6 wrong of 20 at delta = 0.05 is flagged."""
    study = load_study(write(tmp_path), quick=True)
    run_study(study, tmp_path / "res", progress=False)
    entries = read_entries(tmp_path / "res")
    template = entries[0]
    lines = []
    for i in range(20):
        records = [{**r, "correct": i >= 6 if r["delta"] == 0.01 else True, "samples": 100 + i}
                   for r in template["records"]]
        lines.append(json.dumps({**template, "key": f"fake|{i}", "replicate": i, "records": records}))
    (tmp_path / "res" / "runs.jsonl").write_text("\n".join(lines) + "\n")
    summary = summarize(tmp_path / "res").set_index("delta")
    assert summary.loc[0.01, "errors"] == 6 and summary.loc[0.01, "warning"]
    assert summary.loc[0.01, "error_ci_low"] == pytest.approx(0.1189, abs=1e-3)  # Clopper–Pearson, 6 of 20
    assert summary.loc[0.1, "errors"] == 0 and not summary.loc[0.1, "warning"]
    assert summary.loc[0.1, "mean"] == pytest.approx(109.5) and summary.loc[0.1, "median"] == pytest.approx(109.5)


def test_thresholding_study_table_and_plot(tmp_path):
    text = """
[study]
name = "thr"
budget = 300
runs = 2

[[instances]]
family = "sbm"
n = 30
seed = "run"

[[algorithms]]
name = "grapl"

[[algorithms]]
name = "apt"
init_pulls = 1
"""
    out = CliRunner().invoke(app, ["study", str(write(tmp_path, text)), "--out", str(tmp_path / "res")])
    assert out.exit_code == 0, out.output
    summary = pd.read_csv(tmp_path / "res" / "summary.csv", comment="#")
    assert list(summary["algorithm"]) == ["grapl", "apt"] and (summary["runs"] == 2).all()
    assert summary["mean_error"].between(0, 1).all() and (summary["T"] == 300).all()
    assert (tmp_path / "res" / "plot.png").stat().st_size > 10_000


def test_cli_plot_redraws(tmp_path):
    run_study(load_study(write(tmp_path)), tmp_path / "res", progress=False)
    out = CliRunner().invoke(app, ["plot", str(tmp_path / "res"), "--output", str(tmp_path / "fig.png")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "fig.png").stat().st_size > 10_000 and "summary" in out.output
    missing = CliRunner().invoke(app, ["plot", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "holds no study results" in missing.output
    from bandits.studies import ResultStore, plot_study

    ResultStore(tmp_path / "empty", load_study(write(tmp_path))).close()  # started, no run finished
    with pytest.raises(InvalidInputError, match="no finished runs"):
        plot_study(tmp_path / "empty")
    for target, message in ((tmp_path / "nowhere" / "p.png", "directory not found"),
                            (tmp_path / "x.xyz", "must be an image format"), (tmp_path / "res", "is a directory")):
        bad = CliRunner().invoke(app, ["plot", str(tmp_path / "res"), "--output", str(target)])
        assert bad.exit_code == 2 and message in bad.output
        assert len(bad.output.strip().splitlines()) == 1, bad.output
    assert not (tmp_path / "x.xyz").exists()


def test_parquet_summary_carries_the_provenance(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    study = load_study(write(tmp_path, STUDY.replace("omega = 0.3", 'omega = [0.3, "pi/2"]')), quick=True)
    run_study(study, tmp_path / "res", progress=False)
    summary = write_tables(tmp_path / "res")  # a parameter column mixing numbers and text
    table = pq.read_table(tmp_path / "res" / "summary.parquet")
    assert table.num_rows == len(summary)
    assert json.loads(table.schema.metadata[b"provenance"])["study"]["sha256"] == study.sha256


def test_cli_prints_a_visible_warning_when_the_error_rate_is_above_delta(tmp_path):
    """Runs cut by a 3-sample cap recommend nearly at random, far more often wrong than delta = 0.01."""
    text = STUDY.replace("delta = [0.1, 0.01]", "delta = 0.01\nmax_samples = 3").replace("runs = 4", "runs = 30")
    text = text.replace("omega = 0.3", "omega = 0.02")
    out = CliRunner().invoke(app, ["study", str(write(tmp_path, text)), "--out", str(tmp_path / "res"), "--no-plot"])
    assert out.exit_code == 0, out.output
    summary = pd.read_csv(tmp_path / "res" / "summary.csv", comment="#")
    flagged = summary[summary["warning"].notna()]
    assert len(flagged) >= 1 and (flagged["error_ci_low"] > 0.01).all() and (summary["capped"] == 30).all()
    assert "WARNING" in out.output and "above delta" in out.output


STUDY_FILES = sorted((Path(__file__).resolve().parents[1] / "benchmarks" / "studies").glob("*.toml"))


@pytest.mark.parametrize("path", STUDY_FILES, ids=[p.stem for p in STUDY_FILES])
def test_every_reproduction_file_validates_in_both_presets(path):
    full, quick = load_study(path), load_study(path, quick=True)
    assert 0 < len(quick.runs) < len(full.runs)


@pytest.mark.slow
@pytest.mark.parametrize("path", STUDY_FILES, ids=[p.stem for p in STUDY_FILES])
def test_every_quick_preset_runs_without_failures(path, tmp_path):
    report = run_study(load_study(path, quick=True), tmp_path / "res", progress=False)
    assert report.failed == 0 and report.done > 0
    write_tables(tmp_path / "res")


PER_DELTA = """
[study]
name = "per-delta"
seed = 3
runs = 2
delta = [0.1, 0.01]

[[instances]]
family = "soare"
d = 2
omega = 0.5

[[algorithms]]
name = "xy-adaptive"

[[algorithms]]
name = "round-robin"
"""


def test_an_algorithm_that_samples_by_delta_gets_one_run_per_delta(tmp_path):
    study = load_study(write(tmp_path, PER_DELTA))
    adaptive = [r for r in study.runs if r.label == "xy-adaptive"]
    uniform = [r for r in study.runs if r.label == "round-robin"]
    assert [r.deltas for r in adaptive] == [(0.1,), (0.01,)] * 2 and all(r.per_delta for r in adaptive)
    assert [r.deltas for r in uniform] == [(0.1, 0.01)] * 2 and not any(r.per_delta for r in uniform)
    assert len({r.key for r in study.runs}) == len(study.runs) == 6
    for r in adaptive:  # the same noise stream for every delta of a replicate (common random numbers)
        assert r.spawn_key == next(u.spawn_key for u in uniform if u.replicate == r.replicate)
    report = run_study(study, tmp_path / "res", progress=False)
    assert report.failed == 0 and report.done == 6
    rows = read_entries(tmp_path / "res")
    deltas = sorted(r["delta"] for e in rows for r in e.get("records", []) if r["algorithm"] == "xy-adaptive")
    assert deltas == [0.01, 0.01, 0.1, 0.1]


@pytest.mark.parametrize("name", ["../../../../escaped", "", ".", "..", "a/b", "a\\\\b", "x..y", "-rf", "a" * 101])
def test_a_study_name_must_be_a_plain_directory_name(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, STUDY.replace('name = "tiny"', f'name = "{name}"'))
    result = CliRunner().invoke(app, ["study", str(path), "--quick", "--no-plot"])
    assert result.exit_code == 2, result.output
    assert "must be a plain directory name" in result.output and len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]  # nothing created, inside or outside
    assert not (tmp_path.parent / "escaped").exists()


def test_jobs_above_the_cores_are_capped_with_one_warning_line(tmp_path, monkeypatch):
    from bandits.studies import pool

    monkeypatch.setattr(pool, "available_cores", lambda: 1)
    result = CliRunner().invoke(app, ["study", str(write(tmp_path)), "--quick", "--no-plot", "--jobs", "12",
                                      "--out", str(tmp_path / "res")])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # the console wraps long lines
    assert "warning: --jobs 12 is more than the 1 cores available: running 1 job(s)" in text
    assert "(joblib, 1 job(s))" in text
    with pytest.warns(UserWarning, match="--jobs 3 is more than the 1 cores"):
        run_study(load_study(write(tmp_path), quick=True), tmp_path / "res2", jobs=3, progress=False)


def test_an_unreachable_scheduler_leaves_no_folder_behind_and_no_header(tmp_path, monkeypatch):
    """The issue's command: --scheduler tcp://127.0.0.1:1 used to create --out (meta.json, an empty runs.jsonl,
    .lock) and print its header before failing, so the same command without --scheduler was refused."""
    from bandits.studies import execute

    monkeypatch.setattr(execute, "SCHEDULER_TIMEOUT", 1.0)  # a refused connection is retried until the timeout
    path, out = write(tmp_path), tmp_path / "res"
    failed = CliRunner().invoke(app, ["study", str(path), "--quick", "--no-plot", "--scheduler", "tcp://127.0.0.1:1",
                                      "--out", str(out)])
    assert failed.exit_code == 2, failed.output
    lines = failed.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach the Dask scheduler tcp://127.0.0.1:1"), lines
    assert not out.exists()
    again = CliRunner().invoke(app, ["study", str(path), "--quick", "--no-plot", "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "tiny: 2 runs -> " in again.output and len(read_entries(out)) == 2


def test_a_folder_set_up_without_any_run_starts_afresh_without_resume(tmp_path):
    """A start that stopped before its first run (killed, or from an older version) leaves meta.json and an empty
    runs.jsonl: nothing to lose, so the same study starts afresh there; another study's such folder stays refused
    and untouched, and a folder holding a run still needs --resume."""
    from bandits.studies.store import ResultStore

    study = load_study(write(tmp_path), quick=True)
    ResultStore(tmp_path / "res", study).close()
    report = run_study(study, tmp_path / "res", progress=False)
    assert (report.done, report.skipped) == (len(study.runs), 0) and len(read_entries(tmp_path / "res")) == 2
    meta = json.loads((tmp_path / "res" / "meta.json").read_text())
    assert "resumed" not in meta and (tmp_path / "res" / "study.toml").read_text() == STUDY
    with pytest.raises(InvalidInputError, match="pass --resume"):
        run_study(study, tmp_path / "res", progress=False)

    ResultStore(tmp_path / "other", load_study(write(tmp_path))).close()  # the full preset: another study
    before = {p.name: p.read_bytes() for p in (tmp_path / "other").iterdir()}
    with pytest.raises(InvalidInputError, match="no runs yet, set up for another study file or preset"):
        run_study(study, tmp_path / "other", progress=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "other").iterdir()} == before
