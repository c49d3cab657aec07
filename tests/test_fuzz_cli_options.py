"""Property-based tests (hypothesis) of the command lines' options: seeds, budgets, solver names, job counts, output
paths and repeated keys. Whatever the value, a command ends with a result (exit 0) or with exit status 2 and one
``error:`` line (or click's usage message), never a traceback; and each option's rule holds where it applies:

* a seed is an integer in [0, 2^63): any other value is refused, an accepted one gives the same run twice;
* a budget is an integer >= 1 and only for fixed-budget algorithms; a delta only for fixed-confidence ones;
* a solver name is accepted exactly when it names an installed solver (any case), and is then used;
* ``--jobs`` is an integer >= 1, checked before the header line and before any directory is made;
* ``--out`` creates that directory and nothing else: no write outside it, a file named by it is one error line;
* an option key given twice in an instance or algorithm string is refused, naming the key.

Examples per test follow the hypothesis profile of tests/conftest.py; runs stay tiny (Soare's instance with
d = 2, an SBM of 40 nodes, budgets up to 60).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import assert_clean_exit
from test_studies import STUDY
from typer.testing import CliRunner

from bandits.cli import app as bandits_app
from optdesign.cli import app as optdesign_app
from optdesign.runtime.solvers import available_solvers

runner = CliRunner()

INTEGERS = st.one_of(st.integers(-3, 5), st.integers(-(10**25), 10**25), st.sampled_from([2**63 - 1, 2**63]))
NOT_INTEGERS = st.sampled_from(["abc", "", "1.5", "1e3", "nan", "inf", "-", "0x10", "3 4"])


def error_line(out) -> str:
    """The one ``error:`` line of a refused command (after :func:`assert_clean_exit`)."""
    assert out.exit_code == 2, out.output
    return out.stderr.strip()


@given(seed=st.one_of(INTEGERS, NOT_INTEGERS))
def test_seeds(seed):
    args = ["run", "xy-oracle", "-i", "soare:d=2,omega=0.3", "--delta", "0.1", "--seed", str(seed), "--json"]
    first = runner.invoke(bandits_app, args)
    assert_clean_exit(first)
    valid = isinstance(seed, int) and 0 <= seed < 2**63
    assert (first.exit_code == 0) == valid, first.output
    if valid:  # the same seed, the same run
        again = runner.invoke(bandits_app, args)
        assert json.loads(again.stdout)[0]["samples"] == json.loads(first.stdout)[0]["samples"]


@given(budget=st.one_of(st.integers(-5, 0), st.integers(40, 60), st.integers(-(10**25), 0), NOT_INTEGERS),
       algorithm=st.sampled_from(["grapl", "apt:init_pulls=1", "xy-oracle"]), with_delta=st.booleans())
def test_budgets(budget, algorithm, with_delta):
    instance = "soare:d=2,omega=0.3" if algorithm == "xy-oracle" else "sbm:n=20"
    args = ["run", algorithm, "-i", instance, "--budget", str(budget), "--json"]
    args += ["--delta", "0.1"] if with_delta else []
    out = runner.invoke(bandits_app, args)
    assert_clean_exit(out)
    valid = isinstance(budget, int) and budget >= 1 and algorithm != "xy-oracle" and not with_delta
    assert (out.exit_code == 0) == valid, out.output
    if valid:
        assert json.loads(out.stdout)[0]["samples"] == budget  # a fixed budget is spent in full
    elif algorithm == "xy-oracle" and not isinstance(budget, str):
        assert "budget" in error_line(out)


SOLVERS = st.one_of(st.sampled_from(["CLARABEL", "clarabel", "Scs", "SCS", "MOSEK", "ECOS", "GUROBI", ""]),
                    st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=8))


@settings(max_examples=10)
@given(solver=SOLVERS, method=st.sampled_from(["auto", "cvxpy"]))
def test_solver_names(solver, method):
    with tempfile.TemporaryDirectory() as tmp:
        arms = Path(tmp) / "arms.csv"
        arms.write_text("1,0\n0,1\n1,1\n")
        out = runner.invoke(optdesign_app, ["solve", "g-optimal", "--arms", str(arms), "--solver", solver,
                                            "--method", method, "--json"])
    assert_clean_exit(out)
    usable = solver.upper() in available_solvers()
    assert (out.exit_code == 0) == usable, out.output
    if usable:
        result = json.loads(out.stdout)
        assert abs(result["value"] - 2.0) <= 1e-3 * 2  # Kiefer–Wolfowitz: the G-optimal value is d
        if method == "cvxpy":
            assert result["solver"] == solver.upper()  # a forced solver is the one used


@settings(max_examples=8)
@given(jobs=st.one_of(st.integers(-3, 0), st.integers(10**6, 10**30), NOT_INTEGERS))
def test_job_counts_refused_before_anything_starts(jobs):
    with tempfile.TemporaryDirectory() as tmp:
        study, out_dir = Path(tmp) / "tiny.toml", Path(tmp) / "out"
        study.write_text(STUDY)
        out = runner.invoke(bandits_app, ["study", str(study), "--quick", "--jobs", str(jobs), "--out", str(out_dir),
                                          "--no-plot"])
        assert_clean_exit(out)
        if out.exit_code == 2:
            assert "runs ->" not in out.stderr  # refused before the header line
            assert not out_dir.exists()
        else:  # one job, or a huge count capped at the cores with a warning
            assert isinstance(jobs, int) and (jobs == 1 or "more than the" in out.stderr)


NAMES = st.sampled_from(["res", "a/b/c", ".", "..", "../escape", "a/../../escape", "", " ", "x" * 300, "file.txt",
                         "sub/file.txt/inner", "nul\x00byte"])


@settings(max_examples=12)
@given(name=NAMES)
def test_output_paths_create_nothing_but_the_directory_asked_for(name):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        (root / "sub").mkdir(parents=True)
        (root / "file.txt").write_text("not a directory")
        (root / "sub" / "file.txt").write_text("not a directory")
        study = root / "tiny.toml"
        study.write_text(STUDY)
        before = {p for p in Path(tmp).rglob("*")}
        out = runner.invoke(bandits_app, ["study", str(study), "--quick", "--out", str(root / name), "--no-plot"])
        assert_clean_exit(out)
        made = {p for p in Path(tmp).rglob("*")} - before
        if out.exit_code == 0:
            target = (root / name).resolve()
            assert target.is_dir() and (target / "meta.json").exists()
            inside = [p for p in made if p.resolve() != target and target not in p.resolve().parents]
            assert all(p.is_dir() and p.resolve() in target.parents for p in inside), made  # mkdir -p's parents
            assert target == Path(tmp).resolve() or Path(tmp).resolve() in target.parents
        else:
            assert not any(p.is_file() for p in made), made


KEYS = {"soare": ["d", "omega", "sigma"], "sbm": ["n", "sigma", "seed"]}


@given(family=st.sampled_from(sorted(KEYS)), data=st.data())
def test_repeated_keys_are_refused_naming_the_key(family, data):
    key = data.draw(st.sampled_from(KEYS[family]))
    first, second = data.draw(st.sampled_from(["2", "3"])), data.draw(st.sampled_from(["2", "3"]))
    others = data.draw(st.lists(st.sampled_from(KEYS[family]), max_size=2, unique=True).map(
        lambda keys: [f"{k}=2" for k in keys if k != key]))
    text = f"{family}:" + ",".join([f"{key}={first}", *others, f"{key}={second}"])
    algorithm = "xy-oracle" if family == "soare" else "apt"
    args = ["run", algorithm, "-i", text, *(["--delta", "0.1"] if family == "soare" else ["--budget", "10"])]
    out = runner.invoke(bandits_app, args)
    assert_clean_exit(out)
    assert f"'{key}'" in error_line(out) and "twice" in out.stderr
    out = runner.invoke(bandits_app, ["run", "xy-oracle:threshold=practical,threshold=theory", "-i", "soare:d=2",
                                      "--delta", "0.1"])
    assert "'threshold'" in error_line(out) and "twice" in out.stderr
