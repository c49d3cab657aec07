"""Study reports: the practical lower bound, the K-armed characteristic time, the 80-column summary, the figure."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from bandits.cli import app
from bandits.cli.summary import compact_table, short_cells
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.studies import load_study, records_frame, run_study, summarize, write_tables
from bandits.studies.bounds import characteristic_time, kl_delta, practical_bound

# (c, delta) with c log(1 / delta) > 1, where t = c beta(t, delta) has a root in [1, inf)
GRID = [(c, delta) for c in (0.5, 1.0, 3.0, 20.0, 2.02e4, 1e7) for delta in (0.3, 0.1, 0.05, 1e-3, 1e-8)
        if c * math.log(1 / delta) > 1]

KARMED = """
[study]
name = "karmed"
seed = 3
runs = 3
delta = [0.1, 0.01]

[[instances]]
family = "gaussian"
means = ["1/0.5", "1/0.5/0.4"]

[[algorithms]]
name = "round-robin"
label = "uniform sampling with a long label"

[[algorithms]]
name = "oracle-weights"
"""


def gap(c: float, delta: float, t: float) -> float:
    """t - c beta(t, delta) with the practical threshold beta(t, delta) = log((1 + log t) / delta)."""
    return t - c * math.log((1 + math.log(t)) / delta)


def bisection(c: float, delta: float) -> float:
    """The search of the Frank–Wolfe sampling code: bisection of t - c beta(t) on [max(1, c log(1/delta)), 1e10]."""
    low, high = max(1.0, c * math.log(1 / delta)), 1e10
    for _ in range(400):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if gap(c, delta, mid) < 0 else (low, mid)
    return 0.5 * (low + high)


@pytest.mark.parametrize(("c", "delta"), GRID)
def test_practical_bound_is_the_fixed_point_and_the_bisection_of_the_papers_code(c, delta):
    t = practical_bound(c, delta)
    assert t == pytest.approx(c * math.log((1 + math.log(t)) / delta), rel=1e-9)
    assert t == pytest.approx(bisection(c, delta), rel=1e-9)
    assert t >= c * math.log(1 / delta) > c * kl_delta(delta)  # above the kl(delta, 1 - delta) bound
    beyond = t * np.geomspace(1 + 1e-6, 1e3, 50)
    assert all(gap(c, delta, s) > 0 for s in beyond)  # the largest crossing: the GLR t / c stays above beta


def test_practical_bound_grows_as_delta_shrinks_and_meets_the_kl_bound_asymptotically():
    deltas = [0.3, 0.1, 1e-2, 1e-5, 1e-10, 1e-50, 1e-300]
    bounds = [practical_bound(100.0, d) for d in deltas]
    assert np.all(np.diff(bounds) > 0)
    ratios = [b / (100.0 * kl_delta(d)) for b, d in zip(bounds, deltas, strict=True)]
    assert np.all(np.diff(ratios) < 0) and 1 < ratios[-1] < 1.01  # log(1 + log t*) is o(log 1/delta)
    assert practical_bound(200.0, 0.05) > practical_bound(100.0, 0.05)


def test_practical_bound_edge_cases():
    assert practical_bound(0.1, 0.5) == 1.0  # t > c beta(t) on all of [1, inf): nothing to wait for
    assert math.isnan(practical_bound(float("nan"), 0.1)) and math.isnan(practical_bound(0.0, 0.1))
    t = practical_bound(5.0, 0.9)  # f(1) > 0 but f dips below 0 further on: the largest root
    assert gap(5.0, 0.9, t) == pytest.approx(0, abs=1e-9) and gap(5.0, 0.9, 0.9 * t) < 0


def test_karmed_characteristic_time_is_the_oracles():
    two = characteristic_time("gaussian:means=1/0")
    assert two["kind"] == "T*" and two["unit"] == "samples"
    assert two["value"] == pytest.approx(8.0, rel=1e-6)  # two unit-variance Gaussian arms: 8 sigma^2 / Delta^2
    means = np.array([0.5, 0.45, 0.43, 0.4])
    bern = characteristic_time("bernoulli")  # GK16's first experiment
    assert bern["value"] == pytest.approx(KArmedProblem(4, _bernoulli()).oracle(means).T, rel=1e-9)


def _bernoulli():
    from bandits.pure_exploration.families import Bernoulli

    return Bernoulli()


def test_karmed_study_has_both_bounds_timing_and_an_80_column_table(tmp_path):
    path = tmp_path / "karmed.toml"
    path.write_text(KARMED)
    run_study(load_study(path), tmp_path / "res", progress=False)
    summary = write_tables(tmp_path / "res")
    assert (summary["bound_kind"] == "T*").all() and summary["practical_bound"].notna().all()
    assert (summary["practical_bound"] > summary["lower_bound"]).all()
    assert summary["ratio_practical"].to_numpy() == pytest.approx(summary["mean"] / summary["practical_bound"])
    assert (summary["us_per_sample"] > 0).all()
    runs = pd.read_csv(tmp_path / "res" / "runs.csv")
    first = runs[(runs["label"] == "oracle-weights") & (runs["delta"] == 0.1) & (runs["param_means"] == "1/0.5")]
    row = summary[(summary["algorithm"] == "oracle-weights") & (summary["delta"] == 0.1)].iloc[0]
    assert row["us_per_sample"] == pytest.approx(1e6 * first["wall_time"].sum() / first["samples"].sum())
    csv = pd.read_csv(tmp_path / "res" / "summary.csv", comment="#")
    assert list(csv.columns) == list(summary.columns)
    for args in (["plot", str(tmp_path / "res")], ["plot", str(tmp_path / "res"), "--wide"]):
        out = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
        assert out.exit_code == 0, out.output
        assert "…" not in out.output
    assert "ratio_practical" in out.output and "us_per_sample" in out.output  # --wide: every column


def render(summary: pd.DataFrame, width: int = 80) -> list[str]:
    """The compact table as an 80-column terminal shows it."""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(compact_table(summary))
    return console.export_text().splitlines()


def confidence_frame() -> pd.DataFrame:
    """A summary in the shape of :func:`summarize`, with long labels, two families, a warning and capped runs."""
    rows = []
    cells = ["soare:d=10,omega=0.01", "soare:d=35,omega=0.01", "line:N=200,K=3,means=planted,gap=0.5,seed=0"]
    labels = ["random+Laplacian gamma=1e4", "fully adaptive XY", "G"]
    for i, (cell, label) in enumerate((c, a) for c in cells for a in labels):
        rows.append({"cell": cell, "family": cell.split(":")[0], "algorithm": label, "delta": 1e-3, "runs": 1000,
                     "mean": 123456789.0 * (i + 1), "se": 9876543.21, "ratio": 1234.5678, "error_rate": 0.0123,
                     "capped": 7 * (i % 2), "warning": "error rate above delta" if i == 5 else ""})
    return pd.DataFrame(rows)


def test_the_default_summary_fits_80_columns_without_cutting_a_cell():
    lines = render(confidence_frame())
    assert max(map(len, lines)) <= 80 and not any("…" in line for line in lines)
    text = " ".join(lines)
    for word in ("random+Laplacian", "gamma=1e4", "fully", "adaptive", "1.23e8", "9.9e6", "1.23e3", "0.012"):
        assert word in text, word
    assert "! cap" in text and "(delta=0.001; 1000 runs)" in lines[0]  # a flag; what every row shares
    narrow = render(confidence_frame(), 60)  # narrower than the table: words fold, nothing is cut
    assert max(map(len, narrow)) <= 60 and not any("…" in line for line in narrow)


def test_fixed_budget_summary_fits_80_columns():
    frame = pd.DataFrame([{"cell": f"sbm:n=500,blocks=2,sigma=2.0,seed={s}", "family": "sbm", "algorithm": a,
                           "T": 100000, "runs": 100, "mean_error": 0.012345, "se_error": 0.0012,
                           "loss_rate": 0.25, "mean_superlevel": 250.5}
                          for s in ("run", "other") for a in ("random+Laplacian gamma=100", "GrAPL gamma*")])
    lines = render(frame)
    assert max(map(len, lines)) <= 80 and not any("…" in line for line in lines)
    assert "seed=run" in " ".join(lines) and "n=500" in lines[0]  # the shared options in the title


def test_short_cells_keep_what_varies():
    labels, common = short_cells(["soare:d=2,omega=0.01", "soare:d=4,omega=0.01", "soare:d=2,omega=0.01"])
    assert labels == {"soare:d=2,omega=0.01": "d=2", "soare:d=4,omega=0.01": "d=4"}
    assert common == "soare, omega=0.01"
    labels, common = short_cells(["line:N=3,K=3", "ring:N=3,K=3"])
    assert labels == {"line:N=3,K=3": "line", "ring:N=3,K=3": "ring"} and common == "N=3, K=3"
    labels, common = short_cells(["line:N=3,K=3", "ring:N=4,K=3"])
    assert labels == {"line:N=3,K=3": "line: N=3", "ring:N=4,K=3": "ring: N=4"} and common == "K=3"
    labels, common = short_cells(["a:x=1", "a:x=1,y=2"])  # an option given in one cell only varies
    assert labels == {"a:x=1": "a", "a:x=1,y=2": "y=2"} and common == "a, x=1"
    labels, _ = short_cells(["a:x=1,y=2", "a:y=2,x=1"])  # the same options: the short names would collide
    assert labels == {"a:x=1,y=2": "a:x=1,y=2", "a:y=2,x=1": "a:y=2,x=1"}


LINEAR = """
[study]
name = "linear"
seed = 7
runs = 2
delta = [0.1, 0.01]
x = "d"

[[instances]]
family = "soare"
d = [2, 3, 4]
omega = 0.3

[[algorithms]]
name = "xy-oracle"
threshold = "practical"
"""


def test_the_figure_has_integer_ticks_an_outside_legend_and_both_bounds(tmp_path):
    from bandits.studies import plots
    from bandits.studies.store import read_meta

    path = tmp_path / "linear.toml"
    path.write_text(LINEAR)
    run_study(load_study(path), tmp_path / "res", progress=False)
    fig = plots._sample_complexity(summarize(tmp_path / "res"), read_meta(tmp_path / "res")["study"],
                                   records_frame(tmp_path / "res")[0])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2 and all(ax.get_legend() is None for ax in axes) and len(fig.legends) == 1
    for ax in axes:  # d = 2, 3, 4: no 2.5
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and np.allclose(ticks, np.round(ticks))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["xy-oracle", *plots.BOUND_LABELS]
    assert tuple(fig.get_size_inches()) == (2 * plots.PANEL[0], plots.PANEL[1])
    assert plots.plot_study(tmp_path / "res").stat().st_size > 10_000
