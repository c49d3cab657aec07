"""`optdesign solve` end to end, through the installed console entry point's main()."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args):
    code = "from optdesign.cli import main; import sys; sys.argv = ['optdesign', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_xy_oracle_json_from_csv():
    out = run("solve", "xy-oracle", "--arms", str(EXAMPLES / "soare_d5_arms.csv"),
              "--theta", str(EXAMPLES / "soare_d5_theta.csv"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["problem"] == "xy-oracle"
    assert data["best_arm"] == 0
    assert data["gap"] <= 1e-4
    assert len(data["weights"]) == 6 and abs(sum(data["weights"]) - 1) < 1e-9


def test_g_optimal_table_from_npy(tmp_path):
    X = np.random.default_rng(0).standard_normal((40, 3))
    np.save(tmp_path / "X.npy", X)
    out = run("solve", "g-optimal", "--arms", str(tmp_path / "X.npy"), "--method", "cvxpy")
    assert out.returncode == 0, out.stderr
    assert "g-optimal design" in out.stdout and "CLARABEL" in out.stdout


def test_transductive_and_bilinear(tmp_path):
    np.savetxt(tmp_path / "X.csv", np.eye(3), delimiter=",")
    np.savetxt(tmp_path / "Z.csv", np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0]]), delimiter=",")
    out = run("solve", "transductive", "--arms", str(tmp_path / "X.csv"), "--items", str(tmp_path / "Z.csv"), "--json")
    assert out.returncode == 0, out.stderr
    out = run("solve", "bilinear", "--arms", str(tmp_path / "X.csv"), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["value"] == pytest.approx(9, rel=1e-3)


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "g-optimal", "--arms", "missing.csv"], "file not found"),
        (["solve", "xy-oracle", "--arms", "{arms}"], "needs --theta"),
        (["solve", "g-optimal", "--arms", "{rank1}"], "rank 1"),
        (["solve", "g-optimal", "--arms", "{arms}", "--method", "magic"], "method must be one of"),
        (["solve", "xy-oracle", "--arms", "{arms}", "--theta", "{badtheta}"], "theta must have length 5"),
        (["solve", "g-optimal", "--arms", "{arms}", "--solver", "BOGUS"], "solver='BOGUS' is not installed"),
        (["solve", "g-optimal", "--arms", "/dev/zero"], "/dev/zero is not a regular file"),
        (["solve", "g-optimal", "--arms", "{tmp}"], "is not a regular file"),
        (["solve", "g-optimal", "--arms", "{dates}"], "entries must be numbers, got datetime64[D] values"),
        (["solve", "char-time", "--instance", "{nested}"], "nested too deeply"),
        (["solve", "g-optimal", "--arms", "{empty}"], "holds no numbers"),
        (["solve", "g-optimal", "--arms", "{comments}"], "holds no numbers"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    np.savetxt(tmp_path / "rank1.csv", np.array([[1.0, 0.0], [2.0, 0.0]]), delimiter=",")
    np.savetxt(tmp_path / "badtheta.csv", np.ones(3), delimiter=",")
    np.save(tmp_path / "dates.npy", np.array(["2020-01-01", "2020-02-01", "2020-03-01"], dtype="datetime64[D]")
            .reshape(3, 1))
    (tmp_path / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "comments.csv").write_text("# x1, x2\n\n")
    paths = {"arms": str(EXAMPLES / "soare_d5_arms.csv"), "rank1": str(tmp_path / "rank1.csv"),
             "badtheta": str(tmp_path / "badtheta.csv"), "tmp": str(tmp_path), "dates": str(tmp_path / "dates.npy"),
             "nested": str(tmp_path / "nested.json"), "empty": str(tmp_path / "empty.csv"),
             "comments": str(tmp_path / "comments.csv")}
    out = run(*[a.format(**paths) for a in args])
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


def test_unknown_problem_is_a_usage_error():
    out = run("solve", "h-optimal", "--arms", "x.csv")
    assert out.returncode == 2
    assert "h-optimal" in out.stderr


def test_readme_main_command_uses_the_embedded_solver():
    out = run("solve", "xy-oracle", "--method", "cvxpy", "--arms", str(EXAMPLES / "soare_d5_arms.csv"),
              "--theta", str(EXAMPLES / "soare_d5_theta.csv"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["solver"] == "CLARABEL" and data["gap"] <= 1e-5


def test_bandits_console_script_has_commands():
    code = "from bandits.cli import main; import sys; sys.argv = ['bandits', 'version']; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("bandits ")


def test_input_files_above_the_limit_are_refused_before_reading(tmp_path):
    from optdesign.errors import InstanceTooLargeError
    from optdesign.validation import check_input_file

    big = tmp_path / "big.csv"
    big.write_bytes(b"1,2\n" * 1000)
    assert check_input_file(big, "--arms") == big
    with pytest.raises(InstanceTooLargeError, match="above the limit"):
        check_input_file(big, "--arms", limit=100)
