"""The package layout: no import cycles, no private names across packages, short modules and routines, README names
exist.

Imports are read from the source (ast), function-level ones included, so a cycle that only closes at run time
is caught too.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
from pathlib import Path
from typing import cast

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("optdesign", "bandits")
MAX_LINES = 400
MAX_ROUTINE_LINES = 60


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _package_of(module: str) -> str:
    """The package a module's relative imports start from."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import of the project's own modules."""
    tree = ast.parse(MODULES[module].read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names if alias.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module).split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub, None, node.lineno) if sub in MODULES else (target, alias.name, node.lineno))
    return out


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for module in MODULES:
        for target, _, _ in _imports(module):
            while target not in MODULES and "." in target:  # ``import a.b.c`` of a name inside a module
                target = target.rpartition(".")[0]
            if target in MODULES and target != module:
                graph.add_edge(module, target)
    return graph


def test_no_import_cycles():
    graph = _graph()
    # a package's __init__ re-exports its submodules; a submodule importing its own package's __init__
    # would close a cycle through it, so those edges count as well
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import cycles: {cycles[:5]}"


_NAMED_MODULE = re.compile(r"((?:optdesign|bandits)(?:\.\w+)+)(?::[\w.]+)?")


def _imports_by_name(module: str) -> list[str]:
    """The project's modules a module names in a string to import later (``"bandits.pure_exploration.karmed:K"``,
    ``importlib.import_module("optdesign.linear")``): imports all the same, which an import statement would show."""
    tree = ast.parse(MODULES[module].read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found = _NAMED_MODULE.fullmatch(node.value)
            if found and found.group(1) in MODULES:
                out.append(found.group(1))
    return out


def _package_graph() -> nx.DiGraph:
    """Which package's modules import which other package (function-level imports and imports by name included).
    A package's ``__init__`` is left out: its re-exports serve the package's users, not its modules."""
    graph = nx.DiGraph()
    for module in MODULES:
        if MODULES[module].name == "__init__.py":
            continue
        for target in [t for t, _, _ in _imports(module)] + _imports_by_name(module):
            while target not in MODULES and "." in target:
                target = target.rpartition(".")[0]
            if target in MODULES and _package_of(target) != _package_of(module):
                graph.add_edge(_package_of(module), _package_of(target))
    return graph


#: the packages whose subpackages must not import each other both ways (in bandits: the families build on
#: ``bandits.core``, the root's wiring (registry, instances, kinds, plugins, run) names the families, the CLI and the
#: studies use the wiring)
ACYCLIC_PACKAGES = ("optdesign", "bandits")


@pytest.mark.parametrize("top", ACYCLIC_PACKAGES)
def test_no_import_cycles_between_packages(top):
    """A package may build on another, not both ways: a cycle held open by an import inside a function, or by a
    module named in a string, is a cycle all the same."""
    graph = _package_graph().subgraph(p for p in _package_graph() if p.split(".")[0] == top)
    cycles = sorted(nx.simple_cycles(graph), key=len)
    assert not cycles, f"packages importing each other: {cycles[:5]}"


def test_optdesign_never_imports_bandits():
    graph = _graph()
    bad = [(a, b) for a, b in graph.edges if a.startswith("optdesign") and b.startswith("bandits")]
    assert not bad


def test_no_private_names_across_packages():
    """``from x.y import _name`` only within the package that defines ``_name``."""
    bad = []
    for module in MODULES:
        here = _package_of(module)
        for target, name, line in _imports(module):
            private = name is not None and name.startswith("_") and not name.startswith("__")
            owner = target if target in MODULES and MODULES[target].name == "__init__.py" else target.rpartition(".")[0]
            if private and owner != here:
                bad.append(f"{module}:{line} imports {name} from {target}")
    assert not bad, bad


def test_modules_are_short():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function from its ``def`` line (decorators not counted) to its last line, less its docstring's."""
    lines = cast(int, node.end_lineno) - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= cast(int, first.end_lineno) - first.lineno + 1
    return lines


#: modules at the top of optdesign (its shared ground: errors, results, vocabulary, ...); the rest lives in subpackages
MAX_ROOT_MODULES = 12


def test_the_optdesign_root_holds_only_its_shared_ground():
    """Input checks (``validation``) and run-time machinery (``runtime``) are grouped, so the root stays short."""
    root = sorted(path.name for path in (ROOT / "optdesign").glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


def test_routines_are_short():
    """Every function and method (nested ones too) of optdesign and bandits has at most MAX_ROUTINE_LINES lines of
    code, its docstring excluded: end_lineno - lineno + 1 of the def, less the docstring's lines."""
    long = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > MAX_ROUTINE_LINES:
                long[f"{module}:{node.lineno} {node.name}"] = _code_lines(node)
    assert not long, f"functions over {MAX_ROUTINE_LINES} lines of code (docstring excluded): {long}"


def _readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))


def test_every_name_the_readme_uses_exists():
    code = _readme_python()
    assert code, "the README has python snippets"
    tree = ast.parse(code)
    checked = 0
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)
                aliases[alias.asname or alias.name] = alias.name
                checked += 1
        elif isinstance(node, ast.ImportFrom) and node.module.split(".")[0] in PACKAGES:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{node.module}.{alias.name}"
                checked += 1
    for node in ast.walk(tree):  # od.name, od.Class.method
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            module = importlib.import_module(aliases[node.value.id])
            assert hasattr(module, node.attr), f"{aliases[node.value.id]}.{node.attr}"
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", ["optdesign.cli", "bandits.cli", "optdesign.linear", "optdesign.factored"])
def test_subpackages_document_their_modules(name):
    module = importlib.import_module(name)
    assert module.__doc__ and len(module.__doc__.splitlines()) >= 3


def _module_table(doc: str) -> list[str] | None:
    """The first column of a package docstring's table of modules (an rst simple table), or None without one."""
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line.strip())]
    if len(rules) < 2:
        return None
    return [line.split()[0].rstrip("/") for line in lines[rules[0] + 1:rules[-1]] if line and not line[0].isspace()]


TABLES = {path.parent: table for path in MODULES.values() if path.name == "__init__.py"
          and (table := _module_table(ast.get_docstring(ast.parse(path.read_text())) or "")) is not None}


@pytest.mark.parametrize("package", sorted(TABLES), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_package_table_lists_exactly_its_modules(package):
    """A package docstring that tabulates its modules names each of them once and nothing else."""
    names = TABLES[package]
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(names) == sorted(modules)


# Project files cite the papers and the project's own documentation only, never working notes outside the repository.
# The needles are assembled so that this file does not match them itself.
_OUTSIDE_REFERENCES = ("../" + "shared", "shared" + "/spec", "shared" + "/seeds", "spec" + " §")
_SCANNED = ("optdesign", "bandits", "benchmarks", "tests", "docs", "notebooks", "examples", "README.md")


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", *_SCANNED], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist): scan the folders instead
        listed = [str(p.relative_to(ROOT)) for name in _SCANNED for p in sorted((ROOT / name).rglob("*"))
                  if p.is_file()] + (["README.md"] if (ROOT / "README.md").exists() else [])
    return [ROOT / name for name in listed if name and (ROOT / name).is_file()]


def test_no_references_outside_the_repository():
    files = _tracked_files()
    assert any(p.name == "README.md" for p in files) and len(files) > 50
    hits = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary files
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if any(needle in line for needle in _OUTSIDE_REFERENCES):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not hits, "references to files outside the repository:\n" + "\n".join(hits)


def test_text_files_hold_no_control_characters():
    """A backslash escape lost in an edit (``\\frac`` written as a form feed, ``\\theta`` as a tab) shows here."""
    control = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f]")  # tabs too: none of these files needs one
    hits = []
    for path in _tracked_files():
        if path.suffix not in (".py", ".md", ".rst", ".toml", ".ipynb", ".txt", ".json", ".csv"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if control.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]!r}")
    assert not hits, "control characters:\n" + "\n".join(hits)


#: the optdesign modules bandits may import from: the top level, the subpackages' top level, the shared errors and
#: input checks, the command lines' width; everything else in optdesign is its inside and may change without notice
BANDITS_MAY_IMPORT = ("optdesign", "optdesign.linear", "optdesign.factored", "optdesign.identification",
                      "optdesign.errors", "optdesign.validation",
                      "optdesign.runtime.terminal", "optdesign.runtime.exports")


def _dunder(name: str) -> bool:
    """Module metadata such as ``__version__``: public without being listed in ``__all__``."""
    return name.startswith("__") and name.endswith("__")


def test_bandits_import_only_the_public_surface_of_optdesign():
    """Every import of optdesign in bandits names one of ``BANDITS_MAY_IMPORT`` and a name in its ``__all__``."""
    bad = []
    for module in MODULES:
        if not module.startswith("bandits"):
            continue
        for target, name, line in _imports(module):
            if not target.startswith("optdesign"):
                continue
            if target not in BANDITS_MAY_IMPORT:
                bad.append(f"{module}:{line} imports {target}" + (f".{name}" if name else ""))
            elif name is not None and not _dunder(name) and name not in importlib.import_module(target).__all__:
                bad.append(f"{module}:{line} imports {name}, not in {target}.__all__")
        bad += _attributes_outside_all(module)
    assert not bad, bad


def _attributes_outside_all(module: str) -> list[str]:
    """``od.name`` after ``import optdesign as od`` (or of a subpackage) where ``name`` is not in its ``__all__``."""
    tree = ast.parse(MODULES[module].read_text())
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name in BANDITS_MAY_IMPORT}
    return [f"{module}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}, not in its __all__"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
            and not _dunder(node.attr) and node.attr not in importlib.import_module(aliases[node.value.id]).__all__]


#: modules whose code runs on any problem: they ask for capabilities, never a problem's class
GENERIC_MODULES = (*(m for m in MODULES if m.startswith("bandits.pure_exploration.samplers.")),
                   "bandits.core.thresholds", "bandits.pure_exploration.policy", "bandits.pure_exploration.algorithm")


@pytest.mark.parametrize("module", GENERIC_MODULES)
def test_sampling_rules_never_test_a_problem_class(module):
    """A rule asks the problem for capabilities (:mod:`bandits.pure_exploration.capabilities`): no ``isinstance`` on a
    problem or reward-family class, and no ``getattr`` probing a problem for an attribute."""
    from bandits.pure_exploration.families import ExponentialFamily
    from bandits.pure_exploration.problem import Problem

    namespace = importlib.import_module(module)
    bad = []
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2):
            continue
        if node.func.id == "isinstance":
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            for kind in kinds:
                cls = getattr(namespace, kind.id, None) if isinstance(kind, ast.Name) else None
                if isinstance(cls, type) and issubclass(cls, (Problem, ExponentialFamily)):
                    bad.append(f"{module}:{node.lineno} isinstance(..., {cls.__name__})")
        elif node.func.id == "getattr" and "problem" in ast.unparse(node.args[0]):
            bad.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    assert not bad, bad
