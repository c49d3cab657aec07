"""`optdesign solve` for the designs on candidates alone: each criterion gives the Python API's value, exact designs
(--runs), constraints from both file formats are met by the printed design, candidates from a formula, and every
bad input is one line with exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import optdesign as od
from optdesign.cli import app

runner = CliRunner()
T = np.linspace(-1.0, 1.0, 7)
X = np.column_stack([np.ones(7), T, T**2])  # quadratic regression on 7 points of [-1, 1]


def solve(*args: str) -> dict:
    out = runner.invoke(app, ["solve", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.fixture
def arms(tmp_path):
    path = tmp_path / "X.csv"
    np.savetxt(path, X, delimiter=",")
    return str(path)


@pytest.mark.parametrize("problem, extra, api", [
    ("a-optimal", [], lambda: od.a_optimal(X)),
    ("i-optimal", [], lambda: od.i_optimal(X)),
    ("c-optimal", ["--c", "0,1,0"], lambda: od.c_optimal(X, [0.0, 1.0, 0.0])),
    ("e-optimal", [], lambda: od.e_optimal(X)),
    ("ds-optimal", ["--subset", "2"], lambda: od.ds_optimal(X, [2])),
    ("d-optimal", [], lambda: od.d_optimal(X)),
])
def test_each_criterion_gives_the_api_value(arms, problem, extra, api):
    data = solve(problem, "--arms", arms, "--diagnostics", *extra)
    expected = api()
    assert data["problem"] == problem
    assert data["value"] == pytest.approx(expected.value, rel=2e-4)
    assert data["lower_bound"] <= expected.value * (1 + 1e-9)  # a certified bound lies below the optimum
    assert abs(sum(data["weights"]) - 1) < 1e-9
    efficiency = data["diagnostics"]["criteria"]
    own = {"a-optimal": "a", "i-optimal": "i", "c-optimal": "c", "e-optimal": "e", "ds-optimal": "ds",
           "d-optimal": "d"}[problem]
    assert efficiency[own]["efficiency"] >= 1 - 2e-4 and efficiency[own]["efficiency_upper"] <= 1.0


def test_d_optimal_reports_the_g_value_and_the_determinant(arms):
    """Kiefer–Wolfowitz: the G-value is d = 3 at the D-optimum; the value is det(M)^(-1/3), as in the diagnostics."""
    data = solve("d-optimal", "--arms", arms, "--tol", "1e-8", "--diagnostics")
    w = np.array(data["weights"])
    assert data["g_value"] == pytest.approx(3.0, rel=1e-7)
    assert data["units"] == "det A(w)^(-1/d), the D-criterion in variance units"
    criteria = data["diagnostics"]["criteria"]
    assert criteria["g"]["value"] == pytest.approx(data["g_value"], rel=1e-12)
    assert criteria["d"]["value"] == pytest.approx(od.criterion_value(X, w, "d"), rel=1e-12)
    assert data["value"] == pytest.approx(criteria["d"]["value"], rel=1e-12)


def test_table_fits_80_columns(arms):
    out = runner.invoke(app, ["solve", "a-optimal", "--arms", arms, "--diagnostics"])
    assert out.exit_code == 0, out.output
    assert "certified lower bound" in out.stdout and "efficiency" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


@pytest.mark.parametrize("problem, criterion", [("d-optimal", "D"), ("a-optimal", "A"), ("i-optimal", "I")])
def test_runs_give_an_exact_design(arms, problem, criterion):
    data = solve(problem, "--arms", arms, "--runs", "5")
    expected = od.exact_design(X, 5, criterion, tol=1e-4)  # the command's --tol
    counts = np.array(data["counts"])
    assert counts.sum() == 5 and np.all(counts >= 0) and counts.dtype.kind == "i"
    assert data["value"] == pytest.approx(expected.value, rel=1e-9)
    assert data["lower_bound"] <= data["value"] and data["efficiency"] == pytest.approx(expected.efficiency)


def test_constraints_from_npz_and_toml_are_met(arms, tmp_path):
    cost = np.array([1.0, 1.0, 3.0, 3.0, 3.0, 1.0, 1.0])
    A = np.vstack([cost, np.eye(7)])
    b = np.concatenate([[1.4], np.full(7, 0.3)])
    np.savez(tmp_path / "c.npz", A=A, b=b)
    (tmp_path / "c.toml").write_text("caps = 0.3\n[budget]\ncost = [1, 1, 3, 3, 3, 1, 1]\ntotal = 1.4\n")
    (tmp_path / "c.json").write_text(json.dumps({"linear": {"A": A.tolist(), "b": b.tolist()}}))
    expected = od.a_optimal(X, constraints=(A, b))
    for name in ("c.npz", "c.toml", "c.json"):
        data = solve("a-optimal", "--arms", arms, "--constraints", str(tmp_path / name))
        w = np.array(data["weights"])
        assert np.all(A @ w <= b + 1e-7), name
        assert data["value"] == pytest.approx(expected.value, rel=2e-4), name
    unconstrained = od.a_optimal(X).value
    assert expected.value > unconstrained * 1.01  # the constraints bind
    for problem, design in (("g-optimal", od.g_optimal), ("d-optimal", od.d_optimal)):  # G and D take them too
        data = solve(problem, "--arms", arms, "--constraints", str(tmp_path / "c.toml"))
        assert np.all(A @ np.array(data["weights"]) <= b + 1e-7) and data["constraints"] == b.size, problem
        assert data["value"] == pytest.approx(design(X, constraints=(A, b)).value, rel=2e-4), problem


def test_formula_candidates_and_factor_settings():
    formula = "~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**2)"
    data = solve("d-optimal", "--formula", formula, "--factor", "x1=-1:1:3", "--factor", "x2=-1,0,1", "--runs", "6")
    X2, _, _ = od.candidates(formula, {"x1": (-1, 1, 3), "x2": [-1.0, 0.0, 1.0]})
    assert data["value"] == pytest.approx(od.exact_design(X2, 6, tol=1e-4).value, rel=1e-9)
    table = data["design_table"]
    assert sum(row["runs"] for row in table) == 6 and {"x1", "x2"} <= set(table[0])
    approximate = solve("a-optimal", "--formula", formula, "--factor", "x1=-1:1:3", "--factor", "x2=-1:1:3")
    assert approximate["value"] == pytest.approx(od.a_optimal(X2).value, rel=2e-4)


def test_region_and_plot(arms, tmp_path):
    region = np.column_stack([np.ones(3), [-0.5, 0.0, 0.5], [0.25, 0.0, 0.25]])
    np.savetxt(tmp_path / "Z.csv", region, delimiter=",")
    data = solve("i-optimal", "--arms", arms, "--region", str(tmp_path / "Z.csv"), "--plot", str(tmp_path / "f.png"))
    assert data["value"] == pytest.approx(od.i_optimal(X, region).value, rel=2e-4)
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, message", [
    (["c-optimal", "--arms", "{arms}"], "c-optimal needs --c"),
    (["ds-optimal", "--arms", "{arms}"], "ds-optimal needs --subset"),
    (["a-optimal", "--arms", "{arms}", "--c", "1,0,0"], "--c only applies to c-optimal"),
    (["a-optimal", "--arms", "{arms}", "--subset", "0"], "--subset only applies to ds-optimal"),
    (["e-optimal", "--arms", "{arms}", "--region", "{arms}"], "--region only applies to i-optimal"),
    (["e-optimal", "--arms", "{arms}", "--runs", "5"], "exact designs exist for d-optimal, a-optimal, i-optimal"),
    (["a-optimal", "--arms", "{arms}", "--runs", "2"], "cannot estimate the d = 3 parameters"),
    (["a-optimal", "--arms", "{arms}", "--runs", "5", "--constraints", "{npz}"], "takes neither --constraints"),
    (["d-optimal", "--arms", "{arms}", "--constraints", "{npz}", "--method", "barrier"], "'auto' or 'cvxpy'"),
    (["xy", "--arms", "{arms}", "--formula", "~ x"], "--formula only applies to the designs on candidates"),
    (["char-time", "--instance", "{arms}", "--runs", "3"], "--runs only applies to the designs on candidates"),
    (["a-optimal", "--arms", "{arms}", "--items", "{arms}"], "--items only applies to xy"),
    (["a-optimal"], "a-optimal needs --arms FILE"),
    (["a-optimal", "--arms", "{arms}", "--formula", "~ x1", "--factor", "x1=0:1:3"], "not both"),
    (["a-optimal", "--formula", "~ x1"], "--formula needs the factors"),
    (["a-optimal", "--factor", "x1=0:1:3"], "--formula, which is missing"),
    (["a-optimal", "--formula", "~ x1 + x3", "--factor", "x1=0:1:3"], "names x3, not a factor"),
    (["a-optimal", "--formula", "~ x1", "--factor", "x1=0:1"], "a range is LOW:HIGH:POINTS"),
    (["a-optimal", "--formula", "~ x1", "--factor", "x1=0:1:3", "--factor", "x1=0,1"], "given twice"),
    (["a-optimal", "--arms", "{arms}", "--method", "barrier"], "method must be one of auto, fast, cvxpy"),
    (["c-optimal", "--arms", "{arms}", "--c", "1,x"], "--c: expected numbers"),
    (["c-optimal", "--arms", "{arms}", "--c", "1,0"], "length"),
    (["ds-optimal", "--arms", "{arms}", "--subset", "0,7"], "subset"),
    (["a-optimal", "--arms", "{arms}", "--constraints", "{arms}"], "must be .npz"),
    (["a-optimal", "--arms", "{arms}", "--constraints", "{badkey}"], "unknown entry 'cap'"),
    (["a-optimal", "--arms", "{arms}", "--constraints", "{badlen}"], "--constraints:"),
    (["a-optimal", "--arms", "{arms}", "--constraints", "{infeasible}"], "leave no design"),
    (["a-optimal", "--arms", "{arms}", "--constraints", "{broken}"], "cannot read"),
    (["a-optimal", "--arms", "{arms}", "--plot", "{tmp}/f.txt"], "--plot"),
])
def test_bad_input_is_one_line(arms, tmp_path, args, message):
    np.savez(tmp_path / "c.npz", A=np.ones((1, 7)), b=np.ones(1))
    (tmp_path / "badkey.toml").write_text("cap = 0.5\n")
    (tmp_path / "badlen.json").write_text(json.dumps({"caps": [0.5, 0.5]}))
    (tmp_path / "infeasible.json").write_text(json.dumps({"caps": 0.1}))  # 7 caps of 0.1 sum to less than 1
    (tmp_path / "broken.toml").write_text("caps = [\n")
    paths = {"arms": arms, "npz": str(tmp_path / "c.npz"), "badkey": str(tmp_path / "badkey.toml"),
             "badlen": str(tmp_path / "badlen.json"), "infeasible": str(tmp_path / "infeasible.json"),
             "broken": str(tmp_path / "broken.toml"), "tmp": str(tmp_path)}
    out = runner.invoke(app, ["solve", *[a.format(**paths) for a in args]])
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], out.stderr


# ---------------------------------------------------------------- --power: the F tests of the design's runs
def test_power_of_an_exact_design_is_the_api_power(arms):
    """Default effects: skpr's effect size 2, coefficients +-1 (all + with one test per column)."""
    data = solve("d-optimal", "--arms", arms, "--runs", "9", "--power")
    counts = np.array(data["counts"])
    expected = od.design_power(X, counts, od.anticipated_coefficients(X, 2.0))
    assert data["power"] == json.loads(json.dumps(expected.to_dict()))
    custom = solve("d-optimal", "--arms", arms, "--runs", "9", "--power", "--effects", "0,0.5,-0.4", "--alpha", "0.1",
                   "--sigma", "0.7")
    again = od.design_power(X, np.array(custom["counts"]), [0.0, 0.5, -0.4], alpha=0.1, sigma=0.7)
    assert [t["power"] for t in custom["power"]["tests"]] == pytest.approx(list(again.power.values()), rel=1e-12)
    one = solve("d-optimal", "--arms", arms, "--runs", "9", "--power", "--effects", "0.5")
    assert one["power"]["coefficients"] == [0.0, 0.5, 0.5]  # one number: every coefficient but the intercept's


def test_power_of_an_approximate_design_rounds_it_to_the_power_runs(arms):
    data = solve("a-optimal", "--arms", arms, "--power", "--power-runs", "11", "--effects", "0,1,1")
    expected = od.design_power(X, np.array(data["weights"]), [0.0, 1.0, 1.0], runs=11)
    assert data["power"]["n"] == 11
    assert [t["power"] for t in data["power"]["tests"]] == pytest.approx(list(expected.power.values()), rel=1e-9)


def test_power_with_a_formula_tests_its_terms_and_the_table_fits_80_columns():
    formula = "~ x + C(c)"
    args = ["d-optimal", "--formula", formula, "--factor", "x=-1:1:3", "--factor", "c=a,b,c", "--runs", "12",
            "--power", "--diagnostics"]
    data = solve(*args)
    assert [t["term"] for t in data["power"]["tests"]] == ["Intercept", "x", "C(c)", "whole model"]
    assert [t["df1"] for t in data["power"]["tests"]] == [1, 1, 2, 3]
    cs = od.candidates(formula, {"x": (-1, 1, 3), "c": ["a", "b", "c"]})
    expected = od.design_power(cs, np.array(data["counts"]), od.anticipated_coefficients(cs, 2.0, terms=formula),
                               terms=formula)
    assert [t["power"] for t in data["power"]["tests"]] == pytest.approx(list(expected.power.values()), rel=1e-12)
    out = runner.invoke(app, ["solve", *args])
    assert out.exit_code == 0, out.output
    assert "power of the F tests" in out.stdout and "whole model" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


def test_power_that_cannot_be_computed_leaves_the_design_with_a_note(arms):
    out = runner.invoke(app, ["solve", "d-optimal", "--arms", arms, "--runs", "3", "--power", "--json"])
    assert out.exit_code == 0, out.output
    assert "power" not in json.loads(out.stdout) and "power skipped" in out.stderr and "N > p" in out.stderr


# ---------------------------------------------------------------- --fixed: runs already made, N new ones added
def test_fixed_counts_runs_and_factor_settings_give_the_augmented_design(arms, tmp_path):
    fixed = np.array([2, 0, 0, 0, 0, 0, 1])
    expected = od.exact_design(X, 4, fixed=fixed, tol=1e-4)
    np.savetxt(tmp_path / "counts.csv", fixed[None, :], delimiter=",", fmt="%d")
    np.savetxt(tmp_path / "runs.csv", np.repeat(X, fixed, axis=0), delimiter=",")
    for name in ("counts.csv", "runs.csv"):
        data = solve("d-optimal", "--arms", arms, "--runs", "4", "--fixed", str(tmp_path / name))
        counts = np.array(data["counts"])
        assert data["fixed"] == fixed.tolist() and data["n_fixed"] == 3 and data["n_new"] == 4, name
        assert counts.sum() == 7 and np.all(counts >= fixed), name
        assert data["value"] == pytest.approx(expected.value, rel=1e-9), name
    formula = "~ x1 + x2 + x1:x2"
    (tmp_path / "settings.csv").write_text("x2,x1\n-1,-1\n# a comment\n-1,-1\n1,0\n")
    data = solve("d-optimal", "--formula", formula, "--factor", "x1=-1:1:3", "--factor", "x2=-1,1", "--runs", "4",
                 "--fixed", str(tmp_path / "settings.csv"))
    cs = od.candidates(formula, {"x1": (-1, 1, 3), "x2": [-1.0, 1.0]})
    at = {(row["x1"], row["x2"]): k for k, row in enumerate(cs.points.to_dict("records"))}
    want = np.zeros(len(at), dtype=int)
    want[at[(-1.0, -1.0)]], want[at[(0.0, 1.0)]] = 2, 1
    assert data["fixed"] == want.tolist()
    assert data["value"] == pytest.approx(od.exact_design(cs.X, 4, fixed=want, tol=1e-4).value, rel=1e-9)


def test_fixed_runs_show_in_the_table(arms, tmp_path):
    np.savetxt(tmp_path / "runs.csv", X[[0, 0]], delimiter=",")
    out = runner.invoke(app, ["solve", "d-optimal", "--arms", arms, "--runs", "3", "--fixed",
                              str(tmp_path / "runs.csv")])
    assert out.exit_code == 0, out.output
    assert "(2 fixed)" in out.stdout and "runs: fixed + new" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


@pytest.mark.parametrize("args, message", [
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--effects", "1"], "--effects applies to the power"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--alpha", "0.1"], "--alpha applies to the power"),
    (["d-optimal", "--arms", "{arms}", "--power-runs", "5"], "--power-runs applies to the power"),
    (["d-optimal", "--arms", "{arms}", "--power"], "--power needs the design's runs"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--power", "--power-runs", "6"], "drop --power-runs"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--power", "--alpha", "1.5"], "--alpha must be strictly"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--power", "--sigma", "0"], "--sigma must be a positive"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--power", "--effects", "1,2"], "--effects: 2 coefficients"),
    (["d-optimal", "--arms", "{arms}", "--runs", "5", "--power", "--effects", "nan"], "--effects must be finite"),
    (["xy", "--arms", "{arms}", "--power"], "--power only applies to the designs on candidates"),
    (["d-optimal", "--arms", "{arms}", "--fixed", "{counts}"], "--fixed keeps runs already made"),
    (["d-optimal", "--arms", "{arms}", "--runs", "2", "--fixed", "{stranger}"], "run 1 (1, 0.5, 0.3) is not a"),
    (["d-optimal", "--arms", "{arms}", "--runs", "2", "--fixed", "{wide}"], "expected one count per candidate"),
    (["d-optimal", "--arms", "{arms}", "--runs", "2", "--fixed", "{fractional}"], "whole, nonnegative"),
    (["d-optimal", "--formula", "~ x1", "--factor", "x1=0:1:3", "--runs", "2", "--fixed", "{settings}"],
     "is not a setting of the candidates"),
])
def test_bad_power_and_fixed_options_are_one_line(arms, tmp_path, args, message):
    np.savetxt(tmp_path / "counts.csv", np.ones((1, 7)), delimiter=",")
    np.savetxt(tmp_path / "stranger.csv", [[1.0, 0.5, 0.3]], delimiter=",")
    np.savetxt(tmp_path / "wide.csv", np.ones((2, 5)), delimiter=",")
    np.savetxt(tmp_path / "fractional.csv", np.full((1, 7), 0.5), delimiter=",")
    (tmp_path / "settings.csv").write_text("x1\n0.25\n")
    paths = {"arms": arms, **{name: str(tmp_path / f"{name}.csv") for name in
                              ("counts", "stranger", "wide", "fractional", "settings")}}
    out = runner.invoke(app, ["solve", *[a.format(**paths) for a in args]])
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], out.stderr
