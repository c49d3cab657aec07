"""Start-up time: ``import optdesign``, ``import bandits`` and the command lines' ``--help``, each in a fresh process.

    python benchmarks/bench_startup.py              # 7 runs of each command
    python benchmarks/bench_startup.py --runs 15 --first-use
    python benchmarks/bench_startup.py --compiled      # every compiled rule's first run, then its cached run
    python benchmarks/bench_startup.py --compiled --rules fws,top-two --kinds linear
    PYTHONPATH=../other-checkout python benchmarks/bench_startup.py   # another revision (e.g. a git worktree)

Every command runs ``--runs`` times in a new subprocess (the interpreter of this process, the console scripts
next to it); the table gives the median and the fastest wall time next to the target, and ``python -c "import
numpy"`` in the same run as the floor (the packages need numpy as soon as they compute anything). The commands
are interleaved, so a load change on the machine affects all of them alike.

``--first-use`` adds one fresh process that times ``od.mf_characteristic_time`` on a ring of 8 agents (3 actions)
three times: the first call pays for cvxpy's import (loaded on first use), the later ones only for the solve.

``--compiled`` times, instead, the first run of every compiled rule (``bandits.pure_exploration.compiled.plan.RULES``)
on a linear and a K-armed instance: one fresh process with an empty numba cache (numba compiles the rule's loop, at
the optimisation level ``NUMBA_OPT`` says, 3 by default), then one with the cache it left (numba loads it).

With ``PYTHONDONTWRITEBYTECODE`` set (or a read-only source tree) the project's modules are compiled in every
process: the times then include that, and the caption says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bandits.pure_exploration.compiled.plan import RULES

FIRST_USE = """
import time
start = time.perf_counter()
import optdesign as od
fg = od.FactorGraph.ring(8, 3, seed=1)
print(f"import optdesign + FactorGraph.ring: {time.perf_counter() - start:.3f} s")
for call in range(3):
    start = time.perf_counter()
    od.mf_characteristic_time(fg, 2)
    print(f"mf_characteristic_time call {call + 1}: {time.perf_counter() - start:.3f} s")
"""

COMPILED_RUN = """
import sys, time
from bandits.instances import parse_instance
from bandits.registry import make_algorithm
from bandits.run import run
env = parse_instance(sys.argv[1])
start = time.perf_counter()
run(make_algorithm(sys.argv[2]), env, 0.1, seed=0)
print(time.perf_counter() - start)
"""
#: (label, instance) of the compiled runs' two kinds
COMPILED_INSTANCES = (("linear", "soare:d=3,omega=0.2"), ("K-armed", "gaussian:means=1/0.6/0.2/-0.2"))


def console_script(name: str) -> tuple[list[str], str]:
    """The console script ``name`` next to this interpreter, or its entry point run by ``python -c``."""
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)], name
    return [sys.executable, "-c", f"from {name}.cli import main; main()"], f"{name} (python -c, no console script)"


def commands() -> list[tuple[str, list[str], float | None]]:
    """(label, argv, target in seconds or None) of every command measured; the floor first."""
    python = sys.executable
    optdesign, optdesign_label = console_script("optdesign")
    bandits, bandits_label = console_script("bandits")
    return [
        ('python -c "import numpy" (floor)', [python, "-c", "import numpy"], None),
        ('python -c "import optdesign"', [python, "-c", "import optdesign"], 0.3),
        ('python -c "import bandits"', [python, "-c", "import bandits"], 0.3),
        ("a sampler plug-in's import", [python, "-c", "from bandits.pure_exploration.sampler import Sampler"], None),
        (f"{optdesign_label} --help", [*optdesign, "--help"], 0.5),
        (f"{bandits_label} --help", [*bandits, "--help"], 0.5),
        (f"{bandits_label} list", [*bandits, "list"], None),
        (f"{optdesign_label} solve --help", [*optdesign, "solve", "--help"], None),
        (f"{bandits_label} run --help", [*bandits, "run", "--help"], None),
    ]


def source_root() -> Path:
    """The directory holding the ``optdesign`` package this interpreter imports (found without importing it)."""
    spec = importlib.util.find_spec("optdesign")
    if spec is None or spec.origin is None:
        sys.exit("optdesign is not importable: install it or set PYTHONPATH")
    return Path(spec.origin).parents[1]


def process_env(root: Path) -> dict[str, str]:
    """This process's environment with ``root`` first on PYTHONPATH: started in ``root``, ``python -c`` and the
    console scripts import the same source tree (``python -c`` puts the working directory first on sys.path, a
    script does not)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


def wall_time(argv: list[str], root: Path) -> float:
    """Wall time of one run of ``argv`` in ``root`` (:func:`process_env`; its output discarded); a failing command
    stops the benchmark."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, cwd=root, env=process_env(root), stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    return time.perf_counter() - start


def compiled_first_runs(console: Console, root: Path, rules: list[str], kinds: list[str]) -> None:
    """Per compiled rule and kind, the seconds of one run from an empty numba cache, then from the cache it left."""
    env = process_env(root)
    table = Table(title="A compiled rule's first run, fresh process each",
                  caption=f"NUMBA_OPT={os.environ.get('NUMBA_OPT', '3 (numba default)')}; packages from {root}")
    for col in ("rule", "instance", "empty cache (s)", "cached (s)"):
        table.add_column(col, justify="left" if col in ("rule", "instance") else "right")
    with tempfile.TemporaryDirectory() as cache:
        for kind, instance in COMPILED_INSTANCES:
            for rule in rules if kind in kinds else ():
                seconds = []
                for _ in range(2):
                    out = subprocess.run([sys.executable, "-c", COMPILED_RUN, instance, rule], check=True, cwd=root,
                                         env={**env, "NUMBA_CACHE_DIR": f"{cache}/{kind}-{rule}"},
                                         capture_output=True, text=True)
                    seconds.append(float(out.stdout.split()[-1]))
                table.add_row(rule, kind, f"{seconds[0]:.1f}", f"{seconds[1]:.2f}")
                console.print(f"{kind} {rule}: {seconds[0]:.1f} s, then {seconds[1]:.2f} s")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command")
    parser.add_argument("--first-use", action="store_true", help="also time the first mf_characteristic_time calls")
    parser.add_argument("--compiled", action="store_true", help="time every compiled rule's first run instead")
    parser.add_argument("--rules", default=",".join(RULES), help="the compiled rules timed, comma-separated")
    parser.add_argument("--kinds", default="linear,K-armed", help="the instances' kinds timed, comma-separated")
    args = parser.parse_args()
    console = Console(width=None if sys.stdout.isatty() else 120)
    root = source_root()
    if args.compiled:
        rules, kinds = args.rules.split(","), args.kinds.split(",")
        unknown = sorted(set(rules) - set(RULES)) + sorted(set(kinds) - {kind for kind, _ in COMPILED_INSTANCES})
        if unknown:
            parser.error(f"not a compiled rule or kind: {', '.join(unknown)} (rules: {', '.join(RULES)}; "
                         f"kinds: linear, K-armed)")
        compiled_first_runs(console, root, rules, kinds)
        return
    measured = commands()
    times: dict[str, list[float]] = {label: [] for label, _, _ in measured}
    for _, argv, _ in measured:  # one run each to fill the OS file cache; not counted
        wall_time(argv, root)
    for _ in range(args.runs):
        for label, argv, _ in measured:
            times[label].append(wall_time(argv, root))

    floor = statistics.median(times[measured[0][0]])
    uncached = bool(os.environ.get("PYTHONDONTWRITEBYTECODE")) or sys.flags.dont_write_bytecode
    caption = (f"{args.runs} runs each, {sys.executable}, packages from {root}"
               + ("; PYTHONDONTWRITEBYTECODE is set: the project's modules are compiled in every run" if uncached
                  else ""))
    table = Table(title="Start-up wall time, fresh process per run", caption=caption)
    for col in ("command", "target (s)", "median (s)", "min (s)", "median - floor (s)", ""):
        table.add_column(col, justify="left" if col in ("command", "") else "right")
    for label, _, target in measured:
        median = statistics.median(times[label])
        verdict = "" if target is None else ("ok" if median <= target else "ABOVE TARGET")
        table.add_row(label, "" if target is None else f"{target:.1f}", f"{median:.3f}", f"{min(times[label]):.3f}",
                      f"{median - floor:+.3f}", verdict)
    console.print(table)

    if args.first_use:
        out = subprocess.run([sys.executable, "-c", FIRST_USE], check=True, capture_output=True, text=True, cwd=root)
        console.print("First use, one fresh process:")
        console.print(out.stdout.rstrip())


if __name__ == "__main__":
    main()
