"""Instances of one's own, like sampling rules: a family named by its ``package.module:function`` path or published
as an entry point of the group ``bandits.instances``; its environment's kind decides what runs on it."""

from __future__ import annotations

import sys
import textwrap
from importlib import metadata

import pytest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.experiment import Experiment
from bandits.instances import instance_kind, parse_instance
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


@pytest.fixture
def families(tmp_path, monkeypatch):
    """A temporary module of instance families on sys.path."""
    (tmp_path / "my_instances.py").write_text(textwrap.dedent("""
        from bandits.pure_exploration.instances import gaussian

        def three(gap=0.5):
            '''Three unit-variance Gaussian arms, the best ``gap`` above the others.'''
            return gaussian(means=f"{gap}/0/0")

        def kindless():
            return object()
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_instances", None)


def test_a_family_by_its_path_runs_like_a_named_one(families):
    env = parse_instance("my_instances:three:gap=1.5")
    assert env.kind == "karmed" and list(env.means) == [1.5, 0.0, 0.0]
    assert instance_kind("my_instances:three") == "karmed"
    result = run(make_algorithm("fws"), env, 0.1, seed=0)
    assert result.correct and result.stopped_by == "stopping_rule"
    record = Experiment("top-two", "my_instances:three:gap=1.5", deltas=(0.1,), seed=1).execute()[0]
    assert record["correct"]
    out = CliRunner().invoke(app, ["run", "track-and-stop", "-i", "my_instances:three:gap=2", "--delta", "0.1"])
    assert out.exit_code == 0, out.output


def test_a_family_published_as_an_entry_point(families, monkeypatch):
    eps = [metadata.EntryPoint("three-arms", "my_instances:three", "bandits.instances")]
    monkeypatch.setattr(metadata, "entry_points", lambda group=None: [e for e in eps if e.group == group])
    assert parse_instance("three-arms:gap=1").kind == "karmed"
    out = CliRunner().invoke(app, ["list"])
    assert out.exit_code == 0 and "three-arms" in out.output and "my_instances:three" in out.output


@pytest.mark.parametrize(("text", "message"), [
    ("no-such-instance", "unknown instance 'no-such-instance'.*package.module:function"),
    ("my_instances:kindless", "unknown instance kind"),
    ("my_instances:missing", "no attribute 'missing'"),
    ("my_instances:three:width=2", "width"),
    ("no_such_module_here:f", "does not import"),
])
def test_bad_families_are_refused_in_one_line(families, text, message):
    with pytest.raises(InvalidInputError, match=message):
        parse_instance(text)


def test_an_algorithm_on_the_wrong_kind_of_plugin_instance_is_refused(families):
    with pytest.raises(InvalidInputError, match="runs on linear instances"):
        Experiment("xy-adaptive", "my_instances:three", deltas=(0.1,)).check()
