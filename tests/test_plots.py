"""The study figure (bandits.studies.plots), checked through its matplotlib objects on stored results made up here:
panel order, one position per algorithm, the runs drawn, the bounds across, shared and alike axes, title, legend."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.collections import PathCollection

from bandits.studies import ResultStore, load_study, plot_study, plots, records_frame, summarize
from bandits.studies.store import read_meta
from bandits.studies.worker import entry_head

ONE_INSTANCE = """
[study]
name = "tiny"
seed = 1
runs = 6
delta = [0.0001, 0.1]

[[instances]]
family = "soare"
d = 2
omega = 0.3

[[algorithms]]
name = "round-robin"
label = "uniform sampling"

[[algorithms]]
name = "xy-oracle"
label = "XY-Oracle"

[[algorithms]]
name = "xy-static"
"""
SWEEP = ONE_INSTANCE.replace("d = 2", "d = [2, 3]").replace('runs = 6', 'runs = 3\nx = "d"')
C = 50.0  # the made-up characteristic time of every instance


def stored(tmp_path, text: str):
    """A results directory of ``text``'s study with made-up runs (samples grow with log 1/delta and with the
    algorithm, one heavy run per cell) and the characteristic time C for every instance."""
    path = tmp_path / "study.toml"
    path.write_text(text)
    study = load_study(path)
    out = tmp_path / "res"
    rng = np.random.default_rng(0)
    with ResultStore(out, study) as store:
        for spec in study.runs:
            slow = 1 + list(dict.fromkeys(r.label for r in study.runs)).index(spec.label)
            heavy = 20 if spec.replicate == 0 else 1
            records = [{"delta": d, "samples": int(C * slow * heavy * np.log(1 / d) * rng.uniform(2, 3)),
                        "rounds": 1, "correct": True, "stopped_by": "stopping_rule", "wall_time": 0.01}
                       for d in spec.deltas]
            store.append({**entry_head(spec), "records": records, "status": "ok", "seconds": 0.01})
    (out / "bounds.json").write_text(json.dumps({spec.instance: {"kind": "T*", "value": C, "unit": "samples"}
                                                 for spec in study.runs}))
    return out


def figure(out):
    return plots._sample_complexity(summarize(out), read_meta(out)["study"], records_frame(out)[0])


def panels(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def test_one_instance_puts_the_algorithms_side_by_side_with_every_run(tmp_path):
    out = stored(tmp_path, ONE_INSTANCE)
    fig = figure(out)
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == ["δ = 0.1", "δ = 0.0001"]  # by delta, easy to hard
    names = ["uniform sampling", "XY-Oracle", "xy-static"]
    for ax in axes:
        assert list(ax.get_xticks()) == [0, 1, 2]  # one position per algorithm
        assert [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] == names
        points = [c for c in ax.collections if isinstance(c, PathCollection)]
        # each algorithm: its 6 runs as points, then its mean
        assert [len(c.get_offsets()) for c in points] == [6, 1] * 3
        runs = np.concatenate([np.asarray(c.get_offsets())[:, 1] for c in points[::2]])
        assert runs.max() > 10 * np.median(runs)  # the heavy run is drawn, not averaged away
        bounds = {line.get_label(): line for line in ax.get_lines() if line.get_label() in plots.BOUND_LABELS}
        assert set(bounds) == set(plots.BOUND_LABELS)
        for line in bounds.values():  # horizontal, from edge to edge of the panel
            assert list(line.get_xdata()) == [0, 1] and len(set(line.get_ydata())) == 1
        assert ax.get_yscale() == "log"
    delta = {ax.get_title(): ax for ax in axes}
    lower = {t: next(line.get_ydata()[0] for line in ax.get_lines() if line.get_label() == plots.BOUND_LABELS[0])
             for t, ax in delta.items()}
    assert lower["δ = 0.0001"] > lower["δ = 0.1"]  # c kl(delta, 1 - delta) grows as delta shrinks
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])  # one y axis: the panels compare at a glance
    assert_alike_and_apart(fig, axes)
    title = fig.get_suptitle()
    assert "tiny" in title and "soare" in title and "d=2" in title and "δ = 0.1, 0.0001" in title


def assert_alike_and_apart(fig, axes):
    """The same y tick labels on every panel, no minor labels; one legend, below the panels and clear of them."""
    fig.canvas.draw()
    labels = [ax.yaxis.get_major_formatter().format_ticks(ax.get_yticks()) for ax in axes]
    assert all(lab == labels[0] for lab in labels) and any(labels[0])
    assert [t.get_text() for t in axes[0].get_yticklabels()] == labels[0]  # drawn on the left panel
    assert not any(t.get_text() for ax in axes for t in ax.get_yticklabels(minor=True))
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in axes)
    box = fig.legends[0].get_window_extent()
    renderer = fig.canvas.get_renderer()
    assert all(box.y1 <= ax.get_tightbbox(renderer).y0 for ax in axes)  # below every panel, labels included
    assert box.y0 >= 0 and box.x0 >= 0 and box.x1 <= fig.bbox.width  # inside the figure


def test_a_sweep_keeps_its_axis_and_orders_the_panels_by_delta(tmp_path):
    out = stored(tmp_path, SWEEP)
    fig = figure(out)
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == ["δ = 0.1", "δ = 0.0001"]
    for ax in axes:
        assert ax.get_xlabel() == "d" and len(ax.containers) == 3  # one error-bar line per algorithm
        xs = {tuple(line.get_xdata()) for line in ax.get_lines() if line.get_label() in plots.BOUND_LABELS}
        assert xs == {(2, 3)}  # the bounds follow the axis
    assert_alike_and_apart(fig, axes)
    assert "2 instances" in fig.get_suptitle() and "δ = 0.1, 0.0001" in fig.get_suptitle()


def test_plot_study_writes_the_figure(tmp_path):
    out = stored(tmp_path, ONE_INSTANCE)
    assert plot_study(out).stat().st_size > 10_000


@pytest.mark.parametrize(("cells", "ordered"), [(["line:N=100", "line:N=20", "grid:rows=4"],
                                                  ["grid:rows=4", "line:N=20", "line:N=100"])])
def test_instances_are_in_natural_order(cells, ordered):
    assert sorted(cells, key=plots._natural) == ordered


def test_the_printed_summary_runs_delta_in_the_figures_order(tmp_path):
    from typer.testing import CliRunner

    from bandits.cli import app

    out = stored(tmp_path, ONE_INSTANCE)
    printed = CliRunner().invoke(app, ["plot", str(out)], env={"COLUMNS": "80"})
    assert printed.exit_code == 0, printed.output
    rows = [line.split() for line in printed.stdout.splitlines() if line.startswith("soare")]
    deltas = [float(next(w for w in row if w in ("0.1", "0.0001"))) for row in rows]
    assert deltas == sorted(deltas, reverse=True) and len(deltas) == 6
