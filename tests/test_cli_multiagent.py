"""`optdesign solve char-time|mf-char-time|regret` and `optdesign compare`, in process via CliRunner."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from optdesign.cli import app
from optdesign.factored import characteristic_time, mf_characteristic_time
from optdesign.factored.graph.factor_graph import FactorGraph

runner = CliRunner()
TINY = ["compare", "--agents", "3:4", "--actions", "2:3", "--seeds", "2", "--m", "1,2"]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_line_error(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A saved line of 3 agents with 3 actions (27 joint actions) and the instance itself."""
    fg = FactorGraph.line(3, 3, seed=0)
    path = tmp_path_factory.mktemp("instances") / "line3.json"
    fg.save(path)
    return path, fg


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A line of 12 agents with K = 3: 531,441 joint actions, above every exact limit."""
    path = tmp_path_factory.mktemp("instances") / "line12.json"
    FactorGraph.line(12, 3, seed=0).save(path)
    return path


def test_char_times_json_match_the_library(small):
    path, fg = small
    out = {}
    for problem, m in (("char-time", 1), ("mf-char-time", 1), ("mf-char-time", 2)):
        args = ["solve", problem, "--instance", path, "--json"] + (["--m", m] if problem == "mf-char-time" else [])
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["problem"] == problem
        out[problem, m] = data
    exact, mf, mf2 = out["char-time", 1], out["mf-char-time", 1], out["mf-char-time", 2]
    assert exact["value"] == pytest.approx(characteristic_time(fg).value, rel=1e-6)
    assert mf["value"] == pytest.approx(mf_characteristic_time(fg).value, rel=1e-6)
    assert mf2["value"] == pytest.approx(mf_characteristic_time(fg, 2).value, rel=1e-6)
    assert exact["method"] == "exact" and mf["method"] == "mean-field" and mf2["m"] == 2
    assert exact["value"] <= mf2["value"] * (1 + 1e-6) and mf2["value"] <= mf["value"] * (1 + 1e-6)
    assert exact["best_action"] == mf["best_action"] == fg.best_action().tolist()
    assert mf["n_constraints"] > 0 and len(mf["local_allocations"]) == 3


@pytest.mark.parametrize("problem, heading", [("char-time", "T* (exact)"), ("mf-char-time", "T^MF(1)")])
def test_char_times_table(small, problem, heading):
    result = invoke("solve", problem, "--instance", small[0])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for fragment in (heading, "E[tau] >= 2 T kl(delta,1-delta)", "solver optimum", "n_constraints", "n_variables",
                     "width", "optimal", "best joint action", "compile time"):
        assert fragment in text, fragment
    assert ("local allocations" if problem == "mf-char-time" else "factor marginals") in text


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["solve", "char-time"], ["char-time needs --instance"]),
        (["solve", "regret", "--regret-method", "mf"], ["regret needs --instance"]),
        (["solve", "g-optimal"], ["g-optimal needs --arms"]),
        (["solve", "mf-char-time", "--instance", "missing.json"], ["file not found"]),
        (["solve", "char-time", "--instance", "{small}", "--m", "2"], ["--m only applies"]),
        (["solve", "char-time", "--instance", "{small}", "--arms", "x.csv"], ["--arms is only used"]),
        (["solve", "mf-char-time", "--instance", "{small}", "--method", "cvxpy"], ["--regret-method"]),
        (["solve", "mf-char-time", "--instance", "{small}", "--m", "27"], ["exceeds the number of joint actions"]),
        (["solve", "g-optimal", "--arms", "x.csv", "--instance", "{small}"], ["--instance is only used"]),
        (["compare", "--agents", "4:3"], ["--agents: empty range"]),
        (["compare", "--graph", "ring", "--agents", "2:3"], ["--agents: values must be >= 3"]),
        (["compare", "--m", "1,x"], ["--m: expected"]),
        (["compare", "--plot", "{missing_dir}/fig.png"], ["--plot", "directory not found"]),
        (["compare", "--plot", "{tmp}/fig.xyz"], ["--plot", "must be an image format"]),
        (["compare", "--plot", "{tmp}"], ["--plot", "is a directory"]),
    ],
)
def test_bad_input_is_one_line(small, tmp_path, args, fragments):
    paths = {"small": str(small[0]), "missing_dir": str(tmp_path / "nope"), "tmp": str(tmp_path)}
    assert_one_line_error(invoke(*[a.format(**paths) for a in args]), *fragments)


def test_exact_beyond_enumeration_is_generated_and_certified(large):
    result = invoke("solve", "char-time", "--instance", large, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["formulation"] == "constraint-generation" and out["status"] == "optimal"
    assert out["lower_bound"] <= out["value"] <= out["lower_bound"] * (1 + 1e-4)
    mf = json.loads(invoke("solve", "mf-char-time", "--instance", large, "--json").stdout)
    assert out["value"] <= mf["value"] * (1 + 1e-6)  # T* <= T^MF


def test_regret_json_and_table(small, large):
    from optdesign.factored.regret.lower_bound import regret_lower_bound

    path, fg = small
    exact = json.loads(invoke("solve", "regret", "--instance", path, "--json").stdout)
    mf = json.loads(invoke("solve", "regret", "--instance", path, "--regret-method", "mf", "--m", 2, "--json").stdout)
    assert exact["problem"] == "regret" and exact["method"] == "exact"
    assert exact["value"] == pytest.approx(regret_lower_bound(fg).value, rel=1e-6)
    assert mf["value"] == pytest.approx(regret_lower_bound(fg, "mf", m=2).value, rel=1e-6)
    assert exact["value"] <= mf["value"] * (1 + 1e-6)  # the mean-field (FCR) bound is an upper bound
    table = invoke("solve", "regret", "--instance", path)
    assert table.exit_code == 0 and "liminf R(T) / log T >= c_theta" in table.stdout
    big = json.loads(invoke("solve", "regret", "--instance", large, "--json").stdout)  # by constraint generation
    assert big["formulation"] == "constraint-generation" and big["lower_bound"] <= big["value"]
    assert big["gap"] <= 1e-4


def test_compare_json_records():
    result = invoke(*TINY, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["m"] == [1, 2] and data["ties_skipped"] == 0 and data["failures"] == []
    instances = data["instances"]
    assert len(instances) == 2 * 2 * 2
    for rec in instances:
        assert not rec["exact_skipped"]
        assert rec["ratio_mf_exact"] >= 1 - 1e-6
        assert rec["ratio_m2"] <= 1 + 1e-6
        assert rec["T_star_constraints"] == rec["n_joint_actions"] - 1
    rec = instances[-1]
    fg = FactorGraph.line(rec["N"], rec["K"], seed=rec["seed"])
    assert rec["T_mf"] == pytest.approx(mf_characteristic_time(fg).value, rel=1e-6)
    assert rec["T_star"] == pytest.approx(characteristic_time(fg).value, rel=1e-6)
    # the paper's claims, checked instance by instance: no violations on these instances
    assert data["checks"] == {"T* <= T^MF(m)": [], "T^MF(m) nonincreasing in m": [], "T^MF/T* <= 4 Abar/rho": []}
    assert all(rec["ratio_bound"] == 4 * rec["abar"] / (rec["N"] - 1) for rec in instances)  # line: rho = N - 1
    summary = data["summary"]
    assert [(r["N"], r["K"]) for r in summary] == [(3, 2), (3, 3), (4, 2), (4, 3)]
    for r in summary:
        assert r["n_instances"] == 2 and r["n_exact"] == 2
        assert r["ratio_mf_exact_mean"] >= 1 - 1e-6 and r["ratio_mf_exact_std"] >= 0
        assert r["ratio_m2_mean"] <= 1 + 1e-6 and r["ratio_m1_mean"] == pytest.approx(1.0)


def test_compare_skips_exact_above_the_limit_and_m_beyond_the_instance():
    result = invoke("compare", "--graph", "star", "--agents", "3", "--actions", "2", "--seeds", "1", "--m", "2,8",
                    "--exact-limit", "4", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (rec,) = data["instances"]
    assert rec["exact_skipped"] and rec.get("T_star") is None and rec.get("ratio_mf_exact") is None
    assert "ratio_m2" in rec and rec.get("ratio_m8") is None  # |A| = 8: T^MF(8) does not exist
    assert data["summary"][0]["n_exact"] == 0
    table = invoke("compare", "--graph", "star", "--agents", "3", "--actions", "2", "--seeds", "1", "--m", "2",
                   "--exact-limit", "4")
    assert table.exit_code == 0 and "skipped" in table.stdout


def test_compare_skips_and_counts_ties(monkeypatch):
    original = FactorGraph.line.__func__

    def tied_for_seed_zero(cls, N, K=2, **kw):
        if kw.get("seed") == 0:  # every joint action has the same mean
            return FactorGraph([K] * N, [((i, i + 1), np.zeros((K, K))) for i in range(N - 1)])
        return original(cls, N, K, **kw)

    monkeypatch.setattr(FactorGraph, "line", classmethod(tied_for_seed_zero))
    data = json.loads(invoke("compare", "--agents", "3", "--actions", "2", "--seeds", "2", "--m", "2", "--json").stdout)
    assert data["ties_skipped"] == 1 and [r["seed"] for r in data["instances"]] == [1]
    assert data["summary"][0]["n_instances"] == 1 and data["summary"][0]["ties_skipped"] == 1
    only_ties = invoke("compare", "--agents", "3", "--actions", "2", "--seeds", "1", "--m", "2", "--json")
    assert only_ties.exit_code == 0, only_ties.output
    data = json.loads(only_ties.stdout)
    assert data["instances"] == [] and data["summary"][0]["n_instances"] == 0


def test_compare_plot_writes_a_png(tmp_path):
    """matplotlib is in the [test] extra: this test must run, not skip."""
    from matplotlib.image import imread

    path = tmp_path / "compare.png"
    result = invoke(*TINY, "--plot", path)
    assert result.exit_code == 0, result.output
    assert "T^MF/T*" in result.stdout and "FCR rows" in result.stdout and f"figure written to {path}" in result.stdout
    assert "check T* <= T^MF(m): holds on all 8 instances" in result.stdout
    assert path.read_bytes().startswith(b"\x89PNG")
    image = imread(path)
    height, width = image.shape[:2]
    assert width >= 900 and height >= 800  # two rows of panels (Fig. 7 per K, Fig. 8 below) at 120 dpi
    assert image[..., :3].std() > 0.05  # not a blank canvas


def test_claim_checks_report_each_violation():
    import pandas as pd

    from optdesign.cli.compare import check_claims

    ok = {"N": 3, "K": 2, "seed": 0, "T_star": 1.0, "T_mf_m1": 3.0, "T_mf_m2": 2.0, "ratio_mf_exact": 3.0,
          "ratio_bound": 16.0}
    # T* above T^MF(1) (not above T^MF(2)), T^MF(2) above T^MF(1), the ratio above its bound
    bad = {"N": 3, "K": 2, "seed": 1, "T_star": 3.05, "T_mf_m1": 3.0, "T_mf_m2": 3.1, "ratio_mf_exact": 30.0,
           "ratio_bound": 16.0}
    checks = check_claims(pd.DataFrame([ok, bad]), [1, 2])
    assert checks["T* <= T^MF(m)"] == ["N=3 K=2 seed=1 m=1: T*=3.05 > 3"]
    assert checks["T^MF(m) nonincreasing in m"] == ["N=3 K=2 seed=1: T^MF(1)=3 < T^MF(2)=3.1"]
    assert checks["T^MF/T* <= 4 Abar/rho"] == ["N=3 K=2 seed=1: 30 > 16"]
    assert check_claims(pd.DataFrame([ok]), [1, 2]) == {k: [] for k in checks}


def test_compare_plot_without_matplotlib(monkeypatch, tmp_path):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    result = invoke(*TINY, "--plot", tmp_path / "fig.png")
    assert_one_line_error(result, 'pip install ".[plots]"')
    assert not (tmp_path / "fig.png").exists()
