"""Lines of a package by what they hold: docstrings, code, comments, blank lines; per subpackage, at any commit.

    python benchmarks/code_size.py                       # bandits in the working tree
    python benchmarks/code_size.py --rev fec3d7c         # bandits at a commit (read through git, nothing checked out)
    python benchmarks/code_size.py --package optdesign --new-since fec3d7c

A docstring line is a line of a module, class or function docstring (the numpydoc sections the layout rules require
of every public name are most of them); a comment line holds only a comment; code is every other non-blank line.
``--new-since REV`` adds, per subpackage, the lines of the files that did not exist at REV (a file git finds renamed
or moved since REV is not new): what was added since then as new modules, as opposed to grown in the modules that were
there.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

LINE_KINDS = ("docstring", "code", "comment", "blank")


def files(package: str, rev: str | None) -> dict[str, str]:
    """The package's Python sources by path, from the working tree or from commit ``rev``."""
    if rev is None:
        return {str(p): p.read_text(encoding="utf-8") for p in sorted(Path(package).rglob("*.py"))}
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, package], check=True, capture_output=True,
                            text=True).stdout.split()
    return {path: subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True,
                                 text=True).stdout for path in listed if path.endswith(".py")}


def renamed(package: str, since: str, rev: str | None) -> set[str]:
    """Paths of the files that git finds renamed or moved since commit ``since`` (their new paths)."""
    status = subprocess.run(["git", "diff", "-M", "--diff-filter=R", "--name-status", since, *([rev] if rev else []),
                             "--", package], check=True, capture_output=True, text=True).stdout
    return {line.split("\t")[2] for line in status.splitlines()}


def line_kinds(source: str) -> Counter[str]:
    """How many lines of ``source`` are docstring, code, comment and blank lines."""
    docstring: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstring.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    out: Counter[str] = Counter()
    for number, line in enumerate(source.splitlines(), start=1):
        text = line.strip()
        out["docstring" if number in docstring else "blank" if not text else
            "comment" if text.startswith("#") else "code"] += 1
    return out


def subpackage(path: str, package: str) -> str:
    """The first folder under the package, or ``(top)`` for its own modules."""
    parts = Path(path).relative_to(package).parts
    return parts[0] if len(parts) > 1 else "(top)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", default="bandits")
    parser.add_argument("--rev", default=None, help="a commit to read instead of the working tree")
    parser.add_argument("--new-since", default=None, help="also count the lines of files absent at this commit")
    args = parser.parse_args()
    try:
        sources = files(args.package, args.rev)
        before = set(files(args.package, args.new_since)) | renamed(args.package, args.new_since, args.rev) \
            if args.new_since else None
    except subprocess.CalledProcessError as error:  # an unknown commit: git's own message
        parser.error(f"git could not read the package: {error.stderr.strip()}")
    if not sources:
        parser.error(f"no Python files under {args.package!r} (run from the repository's root)")
    rows: dict[str, Counter[str]] = {}
    for path, source in sources.items():
        kinds = line_kinds(source)
        kinds["total"] = sum(kinds.values())
        if before is not None and path not in before:
            kinds["new files"] = kinds["total"]
        rows.setdefault(subpackage(path, args.package), Counter()).update(kinds)
    rows = {name: rows[name] for name in sorted(rows)}
    rows["all"] = sum(rows.values(), Counter())
    columns = ["total", *LINE_KINDS, *(["new files"] if before is not None else [])]
    table = Table(title=f"{args.package} at {args.rev or 'the working tree'}: lines by kind")
    for column in ["subpackage", *columns]:
        table.add_column(column, justify="left" if column == "subpackage" else "right")
    for name, kinds in rows.items():
        table.add_row(name, *(f"{kinds[c]:,}" for c in columns))
    Console().print(table)


if __name__ == "__main__":
    main()
