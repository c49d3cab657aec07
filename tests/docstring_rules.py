"""The numpydoc rules that every public function and class of both packages follows (checked by test_docstrings).

Public means what the API reference renders: in every module whose dotted path has no part with a leading
underscore, the functions and classes named by the module's ``__all__`` (or, without one, every name it defines
without a leading underscore), everything the packages re-export, and the public methods of those classes. A
module's helpers stay out of its ``__all__``. The command modules (typer commands, whose docstrings are their
``--help`` text) are left out.

Rules, each a message of ``problems``:

* a docstring, parsed by numpydoc without warnings;
* a ``Parameters`` section naming exactly the parameters of the signature (a class documents ``__init__``'s in
  its own docstring or in ``__init__``'s; a dataclass field may instead carry a ``#:`` comment);
* a ``Returns`` (or ``Yields``) section when the function returns a value;
* a ``Raises`` section naming each exception the function itself raises (``raise Name(...)`` in its body).

A method without a docstring of its own inherits its base's (as ``inspect.getdoc`` and autodoc do). A method that
overrides a base method with the same parameters, documented there in full, may say in its own docstring only
what it does differently: the sections are the base's.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any

from numpydoc.docscrape import NumpyDocString

PACKAGES = ("optdesign", "bandits")
COMMAND_MODULES = ("optdesign.cli", "bandits.cli")  # typer commands: the docstring is the --help text
NOT_DOCUMENTED_RAISES = {"NotImplementedError", "KeyboardInterrupt", "StopIteration"}


def public_modules() -> Iterator[str]:
    for top in PACKAGES:
        package = importlib.import_module(top)
        yield top
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{top}."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            if info.name.startswith(COMMAND_MODULES):
                continue
            yield info.name


def _module_names(module: Any) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module.__name__]


def public_objects() -> Iterator[tuple[str, Any, type | None]]:
    """(dotted name, function or class, owning class or None) for everything the rules apply to."""
    seen: set[int] = set()
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in _module_names(module):
            obj = getattr(module, name)
            if id(obj) in seen or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            seen.add(id(obj))
            name = f"{obj.__module__}.{obj.__qualname__}"
            if inspect.isclass(obj):
                yield name, obj, None
                for attr, raw in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
                    if inspect.isfunction(func):
                        yield f"{name}.{attr}", func, obj
            else:
                yield name, obj, None


def _parse(doc: str) -> tuple[NumpyDocString | None, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parsed = NumpyDocString(doc)
        except Exception as error:  # numpydoc raises ValueError on malformed sections
            return None, [f"numpydoc cannot parse it: {error}"]
    return parsed, [f"numpydoc: {w.message}" for w in caught]


def _names(parsed: NumpyDocString | None, *sections: str) -> set[str]:
    names: set[str] = set()
    for section in sections:
        for item in parsed[section] if parsed is not None else []:
            names.update(part.strip().lstrip("*") for part in (item.name or item.type).split(","))
    return names


def _function_node(func: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, without those of nested functions and classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield child
        yield from _own_nodes(child)


def _raised(node: ast.AST | None) -> set[str]:
    names: set[str] = set()
    for child in _own_nodes(node) if node is not None else []:
        if isinstance(child, ast.Raise) and child.exc is not None:
            target = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
            if isinstance(target, ast.Name) and target.id[:1].isupper():
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                names.add(target.attr)
    return names - NOT_DOCUMENTED_RAISES


def _returns_value(node: ast.AST | None, func: Any) -> bool:
    annotation = inspect.signature(func).return_annotation
    if annotation in (None, "None", "NoReturn", "typing.NoReturn"):
        return False
    if node is None:
        return annotation is not inspect.Signature.empty
    for child in _own_nodes(node):
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(child, ast.Return) and child.value is not None:
            if not (isinstance(child.value, ast.Constant) and child.value.value is None):
                return True
    return False


def _parameters(func: Any, skip_first: bool) -> list[str]:
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return []
    if skip_first and params:
        params = params[1:]
    return [p.name for p in params]


def _has_var_keyword(func: Any) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(func).parameters.values())


def _commented_fields(cls: type) -> set[str]:
    """Dataclass fields documented by a ``#:`` comment on the line(s) above them."""
    try:
        lines, _ = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return set()
    documented: set[str] = set()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if ":" in stripped and not stripped.startswith(("#", "def ", "@", "class ", '"', "'")):
            field = stripped.split(":", 1)[0].strip()
            if field.isidentifier() and index and lines[index - 1].strip().startswith("#:"):
                documented.add(field)
    return documented


def problems(name: str, obj: Any, owner: type | None) -> list[str]:
    """What ``obj`` lacks under the rules above (empty when it follows them)."""
    if inspect.isclass(obj):
        return _class_problems(obj)
    doc = inspect.getdoc(getattr(owner, obj.__name__)) if owner is not None else inspect.getdoc(obj)
    if not doc:
        return ["no docstring"]
    if owner is not None and isinstance(inspect.getattr_static(owner, obj.__name__), property):
        return []
    parsed, found = _parse(doc)
    is_method = owner is not None and not isinstance(inspect.getattr_static(owner, obj.__name__), staticmethod)
    params = _parameters(obj, skip_first=is_method)
    node = _function_node(obj)
    if not (owner is not None and _documented_in_base(owner, obj.__name__, params)):
        found += _parameter_problems(params, _names(parsed, "Parameters", "Other Parameters"), _has_var_keyword(obj))
        if _returns_value(node, obj) and parsed is not None and not (parsed["Returns"] or parsed["Yields"]):
            found.append("returns a value but has no Returns section")
    missing = _raised(node) - _names(parsed, "Raises")
    if missing:
        found.append(f"raises {sorted(missing)} without a Raises section naming it")
    return found


def _documented_in_base(owner: type, name: str, params: list[str]) -> bool:
    """Whether a base class of ``owner`` defines ``name`` with these parameters and documents them in full."""
    for base in owner.__mro__[1:]:
        if name in base.__dict__:
            raw = base.__dict__[name]
            func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
            if not inspect.isfunction(func) or not func.__doc__:
                return False
            is_static = isinstance(raw, staticmethod)
            parsed, _ = _parse(inspect.cleandoc(func.__doc__))
            documented = _names(parsed, "Parameters", "Other Parameters")
            return _parameters(func, skip_first=not is_static) == params and set(params) <= documented
    return False


def _parameter_problems(params: list[str], documented: set[str], var_keyword: bool) -> list[str]:
    found = []
    undocumented = [p for p in params if p not in documented]
    if undocumented:
        found.append(f"parameters not in its Parameters section: {undocumented}")
    unknown = sorted(documented - set(params))
    if unknown and not var_keyword:
        found.append(f"Parameters section names what the signature lacks: {unknown}")
    return found


def _class_problems(cls: type) -> list[str]:
    doc = inspect.getdoc(cls)
    if not doc or doc == inspect.getdoc(object):
        return ["no docstring"]
    if issubclass(cls, BaseException) or getattr(cls, "_is_protocol", False):
        return []  # an exception documents itself in prose; a Protocol is never instantiated
    parsed, found = _parse(doc)
    init = cls.__dict__.get("__init__")
    init_doc = inspect.getdoc(init) if init is not None and init.__doc__ else ""
    init_parsed, init_found = _parse(init_doc) if init_doc else (None, [])
    documented = (_names(parsed, "Parameters", "Other Parameters", "Attributes")
                  | _names(init_parsed, "Parameters", "Other Parameters"))
    if dataclasses.is_dataclass(cls):
        documented |= _commented_fields(cls)
    params = _parameters(cls, skip_first=False) if "__init__" in cls.__dict__ or dataclasses.is_dataclass(cls) else []
    var_keyword = init is not None and _has_var_keyword(init)
    found += init_found + _parameter_problems(params, documented & set(params) if params else set(), var_keyword)
    missing = set()
    for hook in ("__init__", "__post_init__"):
        if hook in cls.__dict__:
            missing |= _raised(_function_node(cls.__dict__[hook]))
    missing -= _names(parsed, "Raises") | _names(init_parsed, "Raises")
    if missing:
        found.append(f"__init__ raises {sorted(missing)} without a Raises section naming it")
    return found


if __name__ == "__main__":  # python tests/docstring_rules.py [prefix ...]: what the rules find, by name
    import sys

    prefixes = tuple(sys.argv[1:]) or PACKAGES
    count = 0
    for dotted, item, owner_class in public_objects():
        if dotted.startswith(prefixes):
            for problem in problems(dotted, item, owner_class):
                count += 1
                print(f"{dotted}: {problem}")
    print(f"{count} problem(s)")
