"""Time limits of the factored bounds: exact T*, T^MF and the regret bound with ``time_limit`` on rings (K = 10).

Run ``python benchmarks/bench_deadline.py`` (about 3 minutes: rings N = 100, 1,000 and 10^5, uniform means, seed 0,
``time_limit = 10``); ``--sizes 100,1000`` and ``--only tstar`` narrow it, ``--limit`` changes the limit. Every case
runs in a fresh interpreter on one BLAS thread; the ring is built before the clock starts. Per case: wall seconds of
the call against the limit, status, the certified bracket [lower bound, value] and its gap, why it stopped
(``stopped``), and where the bracket came from when no solve gave one (``fallback``: the uniform allocation
evaluated exactly, its closed form, the feasible start, or "none" when a* itself was not found in time).
``--only cli`` times ``optdesign solve char-time --time-limit LIMIT`` on the 10^5-agent ring read from JSON, wall
seconds of the whole process (its limit covers reading the instance). The first column, "a*, Delta_min", is the
max-sum part every bound needs first: the elimination plan, a* and the runner-up, timed alone in its own process.
The machine's load average is printed with the table (the figures are wall times).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

FUNCTIONS = ("tstar", "mf", "regret")
SIZES = (100, 1000, 100_000)


def worker(kind: str, n: int, limit: float, memory_gb: float) -> dict:
    """One case in this process: build the ring, then time one call (address space capped at ``memory_gb``)."""
    from threadpoolctl import threadpool_limits

    cap = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    import optdesign as od

    with threadpool_limits(1):
        fg = od.FactorGraph.ring(n, 10, seed=0)
        start = time.perf_counter()
        if kind == "maxsum":
            fg.plan()
            fg.gap_min()
            return {"elapsed": time.perf_counter() - start}
        call = {"tstar": od.characteristic_time, "mf": od.mf_characteristic_time, "regret": od.regret_lower_bound}
        try:
            res = call[kind](fg, time_limit=limit)
        except TypeError as exc:  # a baseline without the argument
            return {"elapsed": time.perf_counter() - start, "error": f"TypeError: {exc}"}
        elapsed = time.perf_counter() - start
    return {"elapsed": elapsed, "status": res.status, "value": res.value, "lower": res.lower_bound, "gap": res.gap,
            "stopped": res.extras.get("stopped"), "fallback": res.extras.get("fallback"),
            "iterations": res.extras.get("iterations"),
            "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def run_worker(kind: str, n: int, limit: float, memory_gb: float, baseline: str | None = None) -> dict:
    """One case in a fresh interpreter; with ``baseline``, on the checkout at that path, stopped after 3 x limit."""
    env = {**os.environ, "PYTHONPATH": baseline} if baseline else None
    timeout = 3 * limit + 30 if baseline else None
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", f"{kind}:{n}", "--limit", str(limit),
                              "--memory-gb", str(memory_gb)], capture_output=True, text=True, check=True, env=env,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"elapsed": float(timeout or 0), "error": f"not returned after {timeout:.0f} s (ring built)"}
    except subprocess.CalledProcessError as exc:
        return {"elapsed": float("nan"), "error": f"failed: {exc.stderr.strip().splitlines()[-1]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_cli(n: int, limit: float) -> dict:
    """``optdesign solve char-time --time-limit LIMIT`` on the ring read from JSON, timed as a whole process."""
    import optdesign as od

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"ring{n}.json"
        od.FactorGraph.ring(n, 10, seed=0).save(path)
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", "from optdesign.cli import main; main()", "solve", "char-time",
                              "--instance", str(path), "--time-limit", str(limit)],
                             capture_output=True, text=True, check=False, env={**os.environ, "COLUMNS": "200"})
        elapsed = time.perf_counter() - start

    def row(label: str) -> str | None:
        match = re.search(rf"{re.escape(label)}\s*│\s*([^│]+?)\s*│", out.stdout)
        return match.group(1) if match else None

    return {"elapsed": elapsed, "exit": out.returncode, "status": row("status"), "value": row("T* (exact)"),
            "lower": row("certified lower bound"), "delta_min": row("Delta_min")}


def fmt(x: object) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=10.0, help="time_limit in seconds (default 10)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="ring sizes N, comma-separated")
    parser.add_argument("--only", choices=[*FUNCTIONS, "cli"], action="append", help="cases to run (repeatable)")
    parser.add_argument("--memory-gb", type=float, default=12.0, help="address-space cap of each case (default 12)")
    parser.add_argument("--baseline", help="a checkout to time the same calls on (its path; cases stopped after "
                        "3 x limit + 30 s), e.g. the main branch before time limits held")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, n = args.worker.split(":")
        print(json.dumps(worker(kind, int(n), args.limit, args.memory_gb)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    only = args.only or [*FUNCTIONS, "cli"]
    console = Console(width=220)
    load = os.getloadavg()[0]
    table = Table(title=f"time_limit = {args.limit:g} s on rings (K = 10, seed 0): wall seconds of the call")
    for col in ("N", "a*, Delta_min (s)", "bound", "wall (s)", "wall / limit", "status", "lower bound", "value",
                "gap", "stopped", "fallback", "iterations", "peak RSS (GB)", "baseline wall (s)"):
        table.add_column(col, justify="right")
    kinds = [k for k in FUNCTIONS if k in only]
    for n in sizes if kinds else ():
        maxsum = run_worker("maxsum", n, args.limit, args.memory_gb)["elapsed"]
        for kind in kinds:
            r = run_worker(kind, n, args.limit, args.memory_gb)
            base = run_worker(kind, n, args.limit, args.memory_gb, args.baseline) if args.baseline else None
            before = "" if base is None else base.get("error") or f"{base['elapsed']:.2f} ({base['status']})"
            table.add_row(f"{n:,}", f"{maxsum:.2f}", kind, f"{r['elapsed']:.2f}", f"{r['elapsed'] / args.limit:.2f}",
                          r["status"], fmt(r["lower"]), fmt(r["value"]), fmt(r["gap"]), fmt(r["stopped"]),
                          fmt(r["fallback"]), fmt(r["iterations"]), f"{r['rss_gb']:.2f}", before)
            console.print(f"  N = {n:,} {kind}: {r['elapsed']:.2f} s, {r['status']}; baseline {before}",
                          highlight=False)
    if kinds:
        console.print(table)
    if "cli" in only:
        cli = run_cli(max(sizes), args.limit)
        console.print(f"optdesign solve char-time --time-limit {args.limit:g} on the ring N = {max(sizes):,} read from "
                      f"JSON: {cli['elapsed']:.2f} s wall (exit {cli['exit']}), status {cli['status']}, "
                      f"T* in [{cli['lower']}, {cli['value']}], Delta_min {cli['delta_min']}", highlight=False)
    console.print(f"load average (1 min) before / after: {load:.2f} / {os.getloadavg()[0]:.2f} on "
                  f"{os.cpu_count()} cores", highlight=False)


if __name__ == "__main__":
    main()
