"""Classical designs (A, I, c, L, E, Ds, phi_p; optdesign.linear.classical): the certified fast paths against the
cvxpy models in the same process, and the targets set for them (RESULTS §16), on one core.

    python benchmarks/bench_classical_designs.py                   # both tables (about 10 minutes, ~2 GiB)
    python benchmarks/bench_classical_designs.py --only compare    # fast path vs cvxpy model
    python benchmarks/bench_classical_designs.py --only targets    # the size targets
    python benchmarks/bench_classical_designs.py --max-n 100000    # the targets without n = 10^6

Tables (BLAS limited to one thread before numpy loads; the conic solver CLARABEL is single-threaded):
1. compare: each criterion on Gaussian candidates (n x d), ``method="fast"`` (tol 1e-6) against ``method="cvxpy"``:
   seconds of each, their ratio, both certified gaps, and the relative difference of the values.
2. targets: A, I and D at n = 10^5 and 10^6, d = 20, to a certified efficiency lower_bound / value >= 1 - 1e-6
   (tol 1e-6; target under 5 s at 10^6); E at n = 10^4, d = 20 (target under 10 s); constrained designs (a budget
   sum_k c_k w_k <= 0.9 with costs uniform on [0.5, 2] and caps w_k <= 1 / (2 d)) at n = 10^4, d = 20 (target
   under 10 s, certified). Each row is one call of the public function; the time includes its input checks.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import optdesign as od  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def _criteria(d: int, rng: np.random.Generator) -> dict:
    """name -> (function, positional arguments) of every criterion."""
    return {
        "A": (od.a_optimal, ()),
        "I (region: 50 points)": (od.i_optimal, (rng.standard_normal((50, d)),)),
        "c": (od.c_optimal, (rng.standard_normal(d),)),
        "L (3 rows)": (od.c_optimal, (rng.standard_normal((3, d)),)),
        "E": (od.e_optimal, ()),
        "Ds (half the parameters)": (od.ds_optimal, (np.arange(d // 2),)),
        "phi_2": (od.phi_optimal, (2.0,)),
        "D (phi_0)": (od.phi_optimal, (0.0,)),
    }


def table_compare(console: Console, sizes: list[tuple[int, int]]) -> None:
    t = Table(title="Fast path (tol 1e-6) vs cvxpy model, same process: seconds, ratio, certified gaps")
    for col in ("criterion", "n x d", "fast [s]", "method", "fast gap", "cvxpy [s]", "cvxpy gap", "cvxpy / fast",
                "values differ"):
        t.add_column(col, justify="right")
    for n, d in sizes:
        rng = np.random.default_rng(n + d)
        X = rng.standard_normal((n, d))
        for name, (fn, args) in _criteria(d, rng).items():
            fast, t_fast = timed(fn, X, *args, method="fast", tol=1e-6)
            model, t_model = timed(fn, X, *args, method="cvxpy")
            t.add_row(name, f"{n:,} x {d}", f"{t_fast:.3f}", fast.method, f"{fast.gap:.1e}", f"{t_model:.2f}",
                      f"{model.gap:.1e}", f"{t_model / t_fast:.0f}x", f"{abs(fast.value / model.value - 1):.1e}")
    console.print(t)


def table_targets(console: Console, max_n: int) -> None:
    t = Table(title="Size targets, one core: certified efficiency = lower_bound / value")
    for col in ("design", "n x d", "seconds", "target [s]", "efficiency", "status", "method", "rounds", "support"):
        t.add_column(col, justify="right")
    d = 20
    rows = []
    for n in (100_000, 1_000_000):
        if n > max_n:
            continue
        X = np.random.default_rng(n).standard_normal((n, d))
        for name, fn, args in (("A", od.a_optimal, ()), ("I (candidates)", od.i_optimal, ()),
                               ("D (phi_0)", od.phi_optimal, (0.0,))):
            res, seconds = timed(fn, X, *args, tol=1e-6)
            rows.append((name, n, res, seconds, "5" if n == 1_000_000 else "-"))
        del X
    n = 10_000
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, d))
    res, seconds = timed(od.e_optimal, X, tol=1e-6)
    rows.append(("E", n, res, seconds, "10"))
    cons = od.budget(rng.uniform(0.5, 2.0, n), 0.9) + od.caps(np.full(n, 1.0 / (2 * d)))
    for name, fn, args in (("A + budget + caps", od.a_optimal, ()), ("I + budget + caps", od.i_optimal, ()),
                           ("D + budget + caps", od.phi_optimal, (0.0,)), ("E + budget + caps", od.e_optimal, ())):
        res, seconds = timed(fn, X, *args, constraints=cons)
        assert np.all(cons.A @ res.weights <= cons.b)  # the constraints hold at the returned design
        rows.append((name, n, res, seconds, "10"))
    for name, n, res, seconds, target in rows:
        t.add_row(name, f"{n:,} x {d}", f"{seconds:.2f}", target, f"{res.efficiency:.8f}", res.status, res.method,
                  str(res.iterations), str(res.support.size))
    console.print(t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("compare", "targets"))
    parser.add_argument("--max-n", type=int, default=1_000_000)
    args = parser.parse_args()
    console = Console(width=170)
    od.a_optimal(np.random.default_rng(0).standard_normal((30, 3)), method="cvxpy")  # imports before the clocks
    if args.only in (None, "compare"):
        table_compare(console, [(500, 5), (2_000, 10), (5_000, 10)])
    if args.only in (None, "targets"):
        table_targets(console, args.max_n)


if __name__ == "__main__":
    main()
