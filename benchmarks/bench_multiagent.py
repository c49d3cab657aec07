"""Speed of the multi-agent lower bounds: T^MF with FCR, against enumeration; exact T*.

Run ``python benchmarks/bench_multiagent.py`` (about two minutes) or ``--full`` for the large
sizes (line N = 10,000, ring N = 1000, 5 x 20 grid; several minutes).
Every figure is measured in this run; ratios compare with a baseline timed in the same process.

Tables:
1. T^MF by FCR against the enumerated program (one constraint per joint action) at N = 6..8, K = 3.
2. T^MF by FCR on large graphs: inference (a*, Delta_min), model build, compilation, solve,
   constraint count and width; per-agent time on lines of growing N shows the linear growth.
3. Exact T*: the junction-tree marginal polytope against the paper's global simplex.
"""

from __future__ import annotations

import argparse
import time
import warnings

from rich.console import Console
from rich.table import Table

import optdesign as od
from optdesign import FactorGraph


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def table_fcr_vs_enumeration(console: Console) -> None:
    t = Table(title="T^MF: FCR against enumerating every joint action (K = 3, uniform means)")
    for col in ("graph", "N", "joint actions", "enum rows", "FCR rows", "enum [s]", "FCR [s]", "speed-up",
                "rel. diff"):
        t.add_column(col, justify="right")
    for make, name in ((FactorGraph.line, "line"), (FactorGraph.ring, "ring")):
        for N in (6, 7, 8):
            fg = make(N, 3, seed=N)
            fg.gap_min()
            brute, t_brute = timed(od.mf_characteristic_time, fg, fcr=False)
            fcr, t_fcr = timed(od.mf_characteristic_time, fg)
            t.add_row(name, str(N), str(fg.n_joint_actions), str(brute.n_constraints), str(fcr.n_constraints),
                      f"{t_brute:.2f}", f"{t_fcr:.3f}", f"{t_brute / t_fcr:.0f}x",
                      f"{abs(fcr.value / brute.value - 1):.1e}")
    console.print(t)


def table_large(console: Console, full: bool) -> None:
    t = Table(title="T^MF with FCR on large graphs (K = 3, planted means, Delta_min = 0.1)")
    for col in ("graph", "N", "rows", "width", "inference [s]", "build [s]", "compile [s]", "solve+compile [s]",
                "total [s]", "ms / agent", "target [s]"):
        t.add_column(col, justify="right")
    cases = [("line", FactorGraph.line, N, None) for N in (250, 500, 1000, 2000, 4000)]
    cases[2] = ("line", FactorGraph.line, 1000, 2.0)
    if full:
        cases += [("line", FactorGraph.line, 10_000, 20.0), ("ring", FactorGraph.ring, 1000, 30.0)]
    cases.append(("grid 5x20", lambda N, K, **kw: FactorGraph.grid(5, 20, K, **kw), 100, 60.0 if full else None))
    if not full:
        cases.append(("ring", FactorGraph.ring, 200, None))
    for name, make, N, target in cases:
        fg = make(N, 3, seed=0, means="planted", gap=0.1)
        fg = FactorGraph(fg.n_actions, list(zip(fg.scopes, fg.tables, strict=True)))  # drop cached inference
        start = time.perf_counter()
        fg.gap_min()
        t_inf = time.perf_counter() - start
        res = od.mf_characteristic_time(fg)
        total = time.perf_counter() - start
        t.add_row(name, str(N), str(res.n_constraints), str(res.width), f"{t_inf:.2f}",
                  f"{res.extras['build_time']:.2f}", f"{res.compile_time:.2f}", f"{res.solve_time:.2f}",
                  f"{total:.2f}", f"{1000 * total / N:.2f}", "-" if target is None else f"< {target:.0f}")
    console.print(t)


def table_exact(console: Console) -> None:
    t = Table(title="Exact T*: junction-tree marginal polytope against the global simplex (K = 3)")
    for col in ("graph", "N", "joint actions", "global vars", "JT vars", "global [s]", "JT [s]", "speed-up",
                "rel. diff", "T^MF / T*"):
        t.add_column(col, justify="right")
    for make, name, N in ((FactorGraph.line, "line", 6), (FactorGraph.ring, "ring", 6),
                          (FactorGraph.line, "line", 8), (FactorGraph.ring, "ring", 8)):
        fg = make(N, 3, seed=N)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            glob, t_glob = timed(od.characteristic_time, fg, formulation="global")
        jt, t_jt = timed(od.characteristic_time, fg)
        mf = od.mf_characteristic_time(fg)
        t.add_row(name, str(N), str(fg.n_joint_actions), str(glob.n_variables), str(jt.n_variables),
                  f"{t_glob:.2f}", f"{t_jt:.2f}", f"{t_glob / t_jt:.1f}x", f"{abs(jt.value / glob.value - 1):.1e}",
                  f"{mf.value / jt.value:.2f}")
    console.print(t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="include the large sizes")
    args = parser.parse_args()
    console = Console(width=170)
    console.print(f"optdesign {od.__version__}, solver {od.default_solver()}")
    table_fcr_vs_enumeration(console)
    table_exact(console)
    table_large(console, args.full)


if __name__ == "__main__":
    main()
