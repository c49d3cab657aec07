"""Sphinx configuration of the optdesign-bandits documentation.

Build, from the repository root::

    pip install ".[docs]" && sphinx-build -j auto -W --keep-going -b html docs docs/_build/html

Environment variables:

* ``DOCS_OFFLINE=1``: no intersphinx look-ups (CI reaches only the package index). Without it the inventories of
  Python, numpy, scipy, cvxpy and networkx are fetched with a short timeout, and a build without network falls back
  to an empty inventory for each: it loses the external links, not the build.
* ``DOCS_EXECUTE_NOTEBOOKS=0``: render the notebooks without executing them (no outputs; quick page edits).
* ``DOCS_MATHJAX=URL``: load MathJax from there instead of its CDN.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import re
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document the source tree even when the package is installed elsewhere

import sphinx.ext.autosummary as autosummary_module  # noqa: E402
from sphinx.domains.python import PythonDomain  # noqa: E402
from sphinx.ext.napoleon import Config as NapoleonConfig  # noqa: E402
from sphinx.ext.napoleon.docstring import NumpyDocstring  # noqa: E402

import optdesign  # noqa: E402

project = "optdesign-bandits"
author = "optdesign-bandits contributors"
copyright = "the optdesign-bandits contributors, MIT licence"
release = optdesign.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "myst_nb",  # Markdown pages (MyST) and notebooks
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "README.md", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

html_theme = "furo"
html_title = f"optdesign-bandits {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# --------------------------------------------------------------------------------------------
# API reference: autosummary pages generated from the docstrings (api/generated/, not committed)

autosummary_generate = True
autosummary_ignore_module_all = False  # a module's __all__, when it has one, is its public API
autosummary_imported_members = False
# [source] links go to the documented module's own source, so a name a module re-exports has its link on its defining
# module's page. Following imports instead, viewcode keeps one module prefix per source page for its [docs] links back
# whichever page documented the name first: links to anchors that do not exist, and pages that depend on the reading
# order, which a parallel build (-j) changes (docs/check_anchors.py checks the links).
viewcode_follow_imported_members = False
# A class lists the methods it inherits from the project's own bases (FactorGraph's generators and JSON format are
# mixins, a policy's protocol methods live in bandits.core.algorithm), not those of builtins and typing constructs.
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True,
                           "inherited-members": "object,BaseException,Exception,dict,tuple,list,str,Generic,Protocol"}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# numpy.typing.ArrayLike stays one name in the signatures instead of its expanded union
autodoc_type_aliases = {"ArrayLike": "numpy.typing.ArrayLike", "npt.ArrayLike": "numpy.typing.ArrayLike"}
autoclass_content = "both"

# The docstrings are prose with the occasional numpy-style section (Parameters, Returns, Examples): napoleon's
# parser reads those sections and leaves the rest alone, where numpydoc would demand them everywhere. It is called
# from _numpy_sections rather than loaded as an extension, because the extension also parses the docstring of an
# attribute or property as "type: description" and would render the prose before a colon as a type.
# Parameter types render as text (napoleon_use_param=False): a shape such as "(n, d)" is not a cross-reference to
# every attribute named n or d. An Attributes section renders as a field list (napoleon_use_ivar), so a documented
# attribute is not described twice (its own autodoc entry and the class docstring).
_NAPOLEON = NapoleonConfig(napoleon_google_docstring=False, napoleon_numpy_docstring=True, napoleon_use_rtype=False,
                           napoleon_use_param=False, napoleon_use_ivar=True)


def _numpy_sections(app, what, name, obj, options, lines) -> None:
    if what not in ("attribute", "data", "property"):
        lines[:] = NumpyDocstring(lines, _NAPOLEON, app, what, name, obj, options).lines()


# The public names of the two packages' __init__ (``optdesign.g_optimal``) are re-exports of objects documented in
# their defining module (``optdesign.linear.designs.g_optimal``). References to the short names, in the pages and in
# the package tables of the API reference, resolve to the defining module's entry (see _resolve_reexport below).


def _reexports() -> dict[str, str]:
    mapping: dict[str, str] = {}
    packages = ["optdesign", "bandits"]
    for top in ("optdesign", "bandits"):
        root = importlib.import_module(top)
        packages += [info.name for info in pkgutil.walk_packages(root.__path__, prefix=f"{top}.") if info.ispkg]
    for package in packages:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            home = getattr(obj, "__module__", None)
            if home and home != package and hasattr(obj, "__qualname__"):
                mapping[f"{package}.{name}"] = f"{home}.{obj.__qualname__}"
    return mapping


def _submodules() -> dict[str, list[str]]:
    """Public child modules of every package (autosummary's own list skips a module that a re-export shadows)."""
    children: dict[str, list[str]] = {}
    for top in ("optdesign", "bandits"):
        package = importlib.import_module(top)
        children[top] = []
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{top}."):
            parent, _, leaf = info.name.rpartition(".")
            if leaf.startswith("_") or any(part.startswith("_") for part in parent.split(".")):
                continue
            children.setdefault(parent, []).append(info.name)
            if info.ispkg:
                children.setdefault(info.name, [])
    return children


REEXPORTS = _reexports()
# The summaries of the API tables end at the first sentence; the docstrings cite "eq. 1", "Sec. 4", "App. H".
autosummary_module.WELL_KNOWN_ABBREVIATIONS = (*autosummary_module.WELL_KNOWN_ABBREVIATIONS,
                                               "eq.", "eqs.", "Eq.", "Sec.", "App.", "Fig.", "Alg.", "Thm.", "cf.")
SUBMODULES = _submodules()
# A module that its package's namespace shadows (optdesign.factored.exact.characteristic_time is also the name of a
# re-exported function) cannot be named to autosummary, which would document the function instead: its page is
# written by _write_shadowed_pages and listed in a plain toctree by the template.
SHADOWED = sorted(name for children in SUBMODULES.values() for name in children
                  if importlib.import_module(name)
                  is not getattr(importlib.import_module(name.rpartition(".")[0]), name.rpartition(".")[2]))
autosummary_context = {"reexports": REEXPORTS, "submodules": SUBMODULES, "shadowed": SHADOWED}


def _write_shadowed_pages(app) -> None:
    out = DOCS / "api" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    for name in SHADOWED:
        title = name.replace("_", r"\_")
        text = f"{title}\n{'=' * len(title)}\n\n.. automodule:: {name}\n"
        page = out / f"{name}.rst"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


def _resolve_reexport(app, env, node, contnode):
    """Resolve ``optdesign.FactorGraph.ring`` as ``optdesign.factored.FactorGraph.ring``, and a bare
    name that the docstrings use without its module (``InvalidInputError``) when exactly one object has it."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    parts = target.split(".")
    for cut in range(len(parts), 1, -1):
        head = ".".join(parts[:cut])
        if head in REEXPORTS:
            canonical = ".".join([REEXPORTS[head], *parts[cut:]])
            return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical, node, contnode)
    if "." not in target:
        matches = {name for name in domain.names_ending_with(target) if name.startswith(("optdesign.", "bandits."))}
        if len(matches) == 1:
            return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", matches.pop(), node, contnode)
    return None


# The docstrings write cardinalities and absolute values as in plain text (|Z|, |mu_i - tau|); reStructuredText
# would read them as substitution references, so a bar outside literal text is escaped before parsing.

_LITERAL_SPAN = re.compile(r"(``.*?``|`[^`]*`)")


def _escape_bars(app, what, name, obj, options, lines) -> None:
    literal_indent = None  # indentation of the paragraph that opened a literal block (``::``)
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.endswith("::"):
            literal_indent = indent
        table_row = stripped.startswith(("+", "|")) and stripped.endswith(("+", "|"))  # a grid table
        if "|" not in line or table_row or stripped.startswith((">>>", "...")):
            continue
        lines[i] = "".join(part if part.startswith("`") else part.replace("|", r"\|")
                           for part in _LITERAL_SPAN.split(line))


# --------------------------------------------------------------------------------------------
# intersphinx: optional, never a reason for the build to fail

intersphinx_timeout = 5
intersphinx_disabled_reftypes = ["std:doc"]
if os.environ.get("DOCS_OFFLINE", "0") not in ("", "0"):
    intersphinx_mapping: dict = {}
else:
    _empty = Path(tempfile.gettempdir()) / "optdesign-docs-empty-objects.inv"
    _empty.write_bytes(b"# Sphinx inventory version 2\n# Project: none\n# Version: 0\n"
                       b"# The remainder of this file is compressed using zlib.\n" + zlib.compress(b""))
    _fallback = str(_empty)  # tried when the site cannot be reached: no links, no warning
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", (None, _fallback)),
        "numpy": ("https://numpy.org/doc/stable", (None, _fallback)),
        "scipy": ("https://docs.scipy.org/doc/scipy", (None, _fallback)),
        "cvxpy": ("https://www.cvxpy.org", (None, _fallback)),
        "networkx": ("https://networkx.org/documentation/stable", (None, _fallback)),
    }

# --------------------------------------------------------------------------------------------
# nitpicky: every cross-reference to a name of optdesign or bandits resolves, or the -W build fails

nitpicky = True

# External names are never an error: offline (DOCS_OFFLINE=1) no inventory is loaded, so none of them resolves;
# online the inventories resolve what they list, and the rest stays unresolved either way (pandas, rich and typer
# have no inventory here, numpy's private paths such as numpy._typing._array_like._SupportsArray are in none, and a
# site that cannot be reached gives an empty inventory). The same patterns serve both modes. Each is matched against
# the whole target; none can match a name of optdesign or bandits.
_EXTERNAL_ROOTS = (
    # third-party packages, under their names and the aliases the signatures use
    "numpy", "np", "npt", "scipy", "sp", "pandas", "pd", "networkx", "nx", "cvxpy", "matplotlib", "rich", "typer",
    "dask", "joblib",
    # the standard library
    "collections", "typing", "pathlib", "abc", "enum", "contextlib", "fractions", "threading", "concurrent",
)
nitpick_ignore_regex = [
    # a dotted name under one of those roots (numpy.ndarray, np.random.Generator, collections.abc.Sequence, ...)
    (r"py:.*", rf"(?:{'|'.join(_EXTERNAL_ROOTS)})\..+"),
    # external names that annotations kept as strings and Raises sections write without their module
    (r"py:.*", r"ArrayLike|Path|Executor|Figure|Table|AbstractContextManager|LinAlgError"),
    # a subscripted builtin or typing generic held as a string (ConstraintsLike's "tuple[Any, Any]"), or its pieces
    # where a signature that does not parse as Python (a dataclass's ``<factory>`` default) is split at its commas
    (r"py:.*", r"(?:tuple|list|dict|Sequence)\[.*"),
]


def _type_variables() -> list[tuple[str, str]]:
    """The TypeVars and ParamSpecs of both packages, fully dotted and bare (signatures show both): type parameters
    of a signature, with no page of their own to link to. Read from the source, nothing imported."""
    names = []
    for path in sorted([*(ROOT / "optdesign").rglob("*.py"), *(ROOT / "bandits").rglob("*.py")]):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        names += [(module, node.targets[0].id) for node in ast.parse(path.read_text(encoding="utf-8")).body
                  if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                  and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                  and node.value.func.id in ("TypeVar", "ParamSpec")]
    return [(role, target) for module, name in names for role in ("py:class", "py:obj")
            for target in (f"{module}.{name}", name)]


# Internal classes (outside their module's __all__, so without a page) that documented signatures and base lists
# show: make_plan's criterion, FiezXYAdaptiveState's options, the question mixins of the arm and linear problems.
nitpick_ignore = [
    *_type_variables(),
    ("py:class", "optdesign.exact_designs.criteria.ExactCriterion"),
    ("py:class", "bandits.linear.fiez_adaptive._PhaseOptions"),
    ("py:class", "bandits.pure_exploration.arm_questions.ArmLevels"),
    ("py:class", "bandits.pure_exploration.arm_questions.ArmSwaps"),
    ("py:class", "bandits.pure_exploration.linear_sets.LinearQuestion"),
]


def _alias_names() -> None:
    """Show an ``autodoc_type_aliases`` alias inside a union by its name: Sphinx renders the ``X | None`` of an
    alias as ``TypeAliasForwardRef('numpy.typing.ArrayLike') | None``, a reference to nothing."""
    from sphinx.util import inspect as sphinx_inspect

    forward_ref = getattr(sphinx_inspect, "TypeAliasForwardRef", None)
    if forward_ref is not None:
        forward_ref.__repr__ = lambda self: self.name


_alias_names()

# MathJax from its CDN by default; DOCS_MATHJAX names another copy (a URL, or a file:// path for offline reading).
if os.environ.get("DOCS_MATHJAX"):
    mathjax_path = os.environ["DOCS_MATHJAX"]

# --------------------------------------------------------------------------------------------
# MyST and notebooks

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type"]

# The notebooks read files relative to the repository root (examples/, benchmarks/), as tests/test_notebooks.py
# runs them, while myst-nb would execute a page in its own folder. So they are executed here, with nbclient and the
# repository root as working directory (about 40 s for the three), into docs/notebooks/ (generated, not committed),
# and myst-nb renders the stored outputs. DOCS_EXECUTE_NOTEBOOKS=0 copies them unexecuted.
nb_execution_mode = "off"
nb_merge_streams = True
NOTEBOOK_SOURCES = ROOT / "notebooks"
NOTEBOOK_PAGES = DOCS / "notebooks"


def _prepare_notebooks(html: bool) -> None:
    """Write the notebooks into docs/notebooks/: executed for HTML builds unless DOCS_EXECUTE_NOTEBOOKS=0;
    other builders (doctest) keep the copies already there, so they do not undo an HTML build's outputs."""
    import nbformat

    NOTEBOOK_PAGES.mkdir(exist_ok=True)
    no_execution = os.environ.get("DOCS_EXECUTE_NOTEBOOKS", "1") in ("", "0")
    for source in sorted(NOTEBOOK_SOURCES.glob("*.ipynb")):
        target = NOTEBOOK_PAGES / source.name
        if not html and target.exists():
            continue
        if not html or no_execution:
            shutil.copyfile(source, target)
            continue
        from nbclient import NotebookClient

        nb = nbformat.read(source, as_version=4)
        start = time.perf_counter()
        NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(ROOT)}}).execute()
        print(f"executed {source.name} in {time.perf_counter() - start:.1f} s")
        nbformat.write(nb, target)


# --------------------------------------------------------------------------------------------
# doctest (sphinx-build -b doctest docs docs/_build/doctest): the Examples sections of the entry points

doctest_global_setup = "import numpy as np\nimport optdesign as od\n"


# --------------------------------------------------------------------------------------------
# The sidebar's navigation tree

# Furo draws the whole navigation tree on every page: Sphinx's toctree(titles_only=True) copies each document's full
# table of contents (every class, method and function of a module page) and only then keeps the titles. On these
# 648 pages a profiled HTML build spent 304 of its 484 s there. The tables below hold the titles and sub-toctrees only,
# which is what titles_only keeps, so the tree drawn is the same; each page's own table of contents is untouched. They
# are made once per build, when the documents have been read, before any page is written.
_TITLE_TOCS: dict = {}
# A page that is not a document (a highlighted module source, the index, the search page) marks no entry of the tree
# as current, so its tree depends on its folder only (the links are relative): those pages share one drawing per
# folder and set of arguments.
_SHARED_TREES: dict = {}


def _titles_only(toc):
    """A copy of one document's table of contents with what toctree(titles_only=True) keeps of it."""
    from sphinx import addnodes

    toc = toc.deepcopy()
    for top_level in toc.children:
        if len(top_level) > 1:
            subtrees = list(top_level.findall(addnodes.toctree))
            if subtrees:
                top_level[1][:] = subtrees
            else:
                top_level.pop(1)
    return toc


def _read_title_tocs(app, env):
    """Fill the title-only tables from the documents just read."""
    _TITLE_TOCS.clear()
    _SHARED_TREES.clear()
    _TITLE_TOCS.update((name, _titles_only(toc)) for name, toc in env.tocs.items())


def _navigation_from_titles(app, pagename, templatename, context, doctree):
    """Let the page's toctree() read the title-only tables when it is asked for titles only (Furo's sidebar)."""
    toctree = context.get("toctree")
    if toctree is None:
        return
    env = app.builder.env
    shared_key = None if pagename in env.all_docs else (os.path.dirname(pagename),)

    def titles_only_toctree(**kwargs):
        if not kwargs.get("titles_only") or not _TITLE_TOCS:
            return toctree(**kwargs)
        key = shared_key and shared_key + tuple(sorted(kwargs.items()))
        if key in _SHARED_TREES:
            return _SHARED_TREES[key]
        full, env.tocs = env.tocs, _TITLE_TOCS
        try:
            tree = toctree(**kwargs)
        finally:
            env.tocs = full
        if key:
            _SHARED_TREES[key] = tree
        return tree

    context["toctree"] = titles_only_toctree


# --------------------------------------------------------------------------------------------
# Cross-reference look-ups

# A type in a signature (``int``, ``numpy.ndarray``) is a "specific" reference: when no object has that exact name,
# Sphinx's Python domain scans every documented object for one whose name ends with it, once per reference. On these
# pages that is tens of thousands of scans, almost all for types documented elsewhere. The domain below
# first asks a set of every dotted suffix of the documented names: a name not in it can match nothing, so the answer
# (no match) is the one the scan would give, and the scan runs only when a match is possible.
class _PythonDomainWithSuffixes(PythonDomain):
    """The Python domain, with the no-match case of its suffix search answered from a set of name suffixes."""

    def __init__(self, env) -> None:
        super().__init__(env)
        self._suffixes: frozenset[str] = frozenset()
        self._by_last_part: dict[str, list[str]] = {}
        self._stale = True

    # every change to the domain's objects goes through one of these three
    def note_object(self, *args, **kwargs):
        self._stale = True
        return super().note_object(*args, **kwargs)

    def clear_doc(self, docname):
        self._stale = True
        return super().clear_doc(docname)

    def merge_domaindata(self, docnames, otherdata):
        self._stale = True
        return super().merge_domaindata(docnames, otherdata)

    def find_obj(self, env, modname, classname, name, type, searchmode=0):
        if searchmode == 1 and name and name.removesuffix("()") not in self._index()[0]:
            return []
        return super().find_obj(env, modname, classname, name, type, searchmode)

    def names_ending_with(self, last_part: str) -> list[str]:
        """The documented names whose last dotted part is ``last_part``."""
        return self._index()[1].get(last_part, [])

    def _index(self) -> tuple[frozenset[str], dict[str, list[str]]]:
        if self._stale:
            parts = [name.split(".") for name in self.objects]
            self._suffixes = frozenset(".".join(p[i:]) for p in parts for i in range(len(p)))
            self._by_last_part = {}
            for name, p in zip(self.objects, parts, strict=True):
                self._by_last_part.setdefault(p[-1], []).append(name)
            self._stale = False
        return self._suffixes, self._by_last_part


def setup(app):
    app.add_domain(_PythonDomainWithSuffixes, override=True)
    app.connect("env-updated", _read_title_tocs)
    app.connect("html-page-context", _navigation_from_titles, priority=400)  # before Furo's handler (500)
    app.connect("builder-inited", lambda app: _prepare_notebooks(html=app.builder.format == "html"))
    app.connect("builder-inited", _write_shadowed_pages, priority=400)  # before autosummary's generation
    app.connect("missing-reference", _resolve_reexport)
    app.connect("autodoc-process-docstring", _numpy_sections)
    app.connect("autodoc-process-docstring", _escape_bars)
