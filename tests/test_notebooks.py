"""The notebooks in notebooks/: each executes without a cell error, and none is committed with outputs.

Execution uses nbclient with the ``python3`` kernel (provided by ipykernel, part of the ``test`` extra) and the
repository root as working directory, so the notebooks' relative paths (examples/, benchmarks/) resolve; it is
skipped with a reason when nbclient/nbformat or a ``python3`` kernel spec is missing. The notebooks assert their
mathematical facts themselves, so a broken fact fails here as a cell error.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
KERNEL = "python3"
TIMEOUT = 300  # seconds per cell


def _ids(paths):
    return [p.name for p in paths]


def _read(path: Path):
    nbformat = pytest.importorskip("nbformat")
    return nbformat.read(path, as_version=4)


def _require_kernel() -> None:
    """Skip (with the reason) unless a ``python3`` kernel spec can be found."""
    pytest.importorskip("nbclient")
    kernelspec = pytest.importorskip("jupyter_client.kernelspec")
    try:
        kernelspec.KernelSpecManager().get_kernel_spec(KERNEL)
    except kernelspec.NoSuchKernel:
        if os.environ.get("CI"):  # CI installs the test extra, which provides the kernel: never skip there
            pytest.fail(f"no {KERNEL!r} Jupyter kernel spec in CI")
        pytest.skip(f"no {KERNEL!r} Jupyter kernel spec (install ipykernel, or run "
                    f"'python -m ipykernel install --user --name {KERNEL}')")


def test_notebooks_present():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_has_no_outputs(path):
    """Stale-output guard: notebooks are committed cleared (no outputs, no execution counts)."""
    nb = _read(path)
    dirty = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: code cells {dirty} have outputs or execution counts; clear them "
                       f"(e.g. jupyter nbconvert --clear-output --inplace {path.relative_to(ROOT)})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_executes(path):
    _require_kernel()
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = _read(path)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=TIMEOUT,
                            resources={"metadata": {"path": str(ROOT)}})  # cwd of the kernel
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed\n{exc}", pytrace=False)
    print(f"{path.name}: executed in {time.perf_counter() - start:.1f} s")
    # the executed copy stays in memory: the file on disk keeps no outputs
