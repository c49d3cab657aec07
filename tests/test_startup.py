"""Start-up: ``import optdesign``, ``import bandits`` and the command lines' help load none of the heavy stack.

Structural checks in fresh subprocesses (which modules are in ``sys.modules``), never timings; the times are
measured by ``benchmarks/bench_startup.py``. The packages re-export their names on first access (PEP 562,
:func:`optdesign._lazy.lazy_exports`), so the other tests here check that every name of each ``__all__`` still
resolves, is listed by ``dir()`` and is known to type checkers.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a module counts as loaded when its code ran: an unexecuted lazy module (optdesign._lazy.lazy_module) does not
CHECK = textwrap.dedent("""
    import sys

    HEAVY = ("cvxpy", "scipy.stats", "scipy.sparse", "scipy.optimize", "matplotlib", "pandas", "dask",
             "distributed", "joblib", "networkx")

    def check(after):
        loaded = [name for name in HEAVY
                  if name in sys.modules and type(sys.modules[name]).__name__ != "_LazyModule"]
        assert not loaded, f"{after} loaded {loaded}"
""")


def _run(code: str) -> None:
    out = subprocess.run([sys.executable, "-c", CHECK + textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr + out.stdout


def test_import_loads_no_heavy_module():
    _run("""
        import optdesign
        check("import optdesign")
        import bandits
        check("import bandits")
        dir(optdesign), dir(bandits)
        optdesign.InvalidInputError, optdesign.linear, optdesign.factored
        check("dir() and the subpackages")
        import bandits.pure_exploration.question_table
        import bandits.pure_exploration.sampler
        check("the sampler interface and the question table (a plug-in's imports, bandits list)")
    """)


def test_command_line_help_loads_no_heavy_module():
    _run("""
        from typer.testing import CliRunner

        from bandits.cli import app as bandits_app
        from optdesign.cli import app as optdesign_app

        runner = CliRunner()
        calls = [(optdesign_app, ["--help"]), (optdesign_app, ["solve", "--help"]),
                 (optdesign_app, ["compare", "--help"]), (bandits_app, ["--help"]), (bandits_app, ["list"]),
                 (bandits_app, ["run", "--help"]), (bandits_app, ["study", "--help"]),
                 (bandits_app, ["plot", "--help"])]
        for app, args in calls:
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (args, result.output)
            check(" ".join(args))
    """)


PACKAGES = ["optdesign", "optdesign.linear", "optdesign.factored", "bandits"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves_and_is_listed(name):
    module = importlib.import_module(name)
    listed = dir(module)
    for attr in module.__all__:
        assert getattr(module, attr) is not None, f"{name}.{attr}"
        assert attr in listed, f"{attr} missing from dir({name})"
    namespace: dict = {}
    exec(f"from {name} import *", namespace)
    assert set(module.__all__) <= set(namespace)
    assert not hasattr(module, "no_such_name")


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checkers_see_every_exported_name(name):
    """Each name of ``__all__`` is bound in the source (imported, under ``TYPE_CHECKING`` for the lazy ones)."""
    path = ROOT.joinpath(*name.split("."), "__init__.py")
    tree = ast.parse(path.read_text())
    bound = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for alias in node.names}
    module = importlib.import_module(name)
    assert set(module.__all__) <= bound, sorted(set(module.__all__) - bound)


def test_lazy_names_are_the_defining_objects():
    import optdesign as od
    from optdesign.factored.graph.factor_graph import FactorGraph
    from optdesign.linear.classical.dg_designs import g_optimal
    from optdesign.linear.dispatch import METHODS

    assert od.FactorGraph is FactorGraph and od.g_optimal is g_optimal
    assert od.linear.METHODS is METHODS


def test_lazy_exports_of_a_package_not_being_imported_is_one_clear_error():
    from optdesign.errors import InvalidInputError
    from optdesign.runtime.exports import lazy_exports

    with pytest.raises(InvalidInputError, match=r"\('no_such_package'\): no such package is being imported"):
        lazy_exports("no_such_package", {".x": ["y"]})
