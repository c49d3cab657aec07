"""Designs at scale: 10^4..10^6 arms or 10^8 pairwise directions, as ratios against baselines run in the same process.

    python benchmarks/bench_designs_scale.py                  # every table (about 10 minutes, ~1 GiB)
    python benchmarks/bench_designs_scale.py --only gd        # one table: gd, xy-gaussian, pairs, oracle-many-arms,
    python benchmarks/bench_designs_scale.py --only corank    #   or corank (--corank-big adds d = 5000)
    python benchmarks/bench_designs_scale.py --max-n 100000   # a quick G/D run

Tables (one BLAS thread):
1. gd: G/D-optimal on n = 10^4..10^6 Gaussian arms, d = 10, 20, 50: the active-set exchange
   (optdesign.linear.exchange; time to gap 1e-4, pricing passes, peak resident memory added beyond X,
   certified gap) against the multiplicative algorithm and full Frank–Wolfe with the same time limit.
2. xy-gaussian: XY-allocation over all n(n-1)/2 pairwise differences of n Gaussian arms (n up to 5 * 10^4,
   d = 10, 20): time to gap 1e-4, and one pricing pass at the returned design by the pruned scan
   (optdesign.linear.pairs.top_pairs) against the scan of every pair (the baseline, same blocks).
3. pairs: XY-allocation on Fiez et al.'s many arms in R^2 and Gaussian arms in R^5: pairs generated as they bind
   against the barrier on the explicit list of n(n-1)/2 differences (up to n = 2000; the list is not split into
   a working set), then generated only at n = 10k and 30k.
4. oracle-many-arms: XY-oracle on Fiez et al.'s many arms (n directions, n nearly active arms): the barrier's
   column generation on arms with a working set of directions, n = 3k .. 10^6.
5. corank: G/D-optimal with K = d + r arms, r small (optdesign.linear.corank: variances from the left null space
   of X, O(K r^2) each after one QR of X) against the path ``auto`` took before (Frank–Wolfe below
   EXCHANGE_MIN_ARMS arms, the exchange above), same process: Soare et al.'s instance (r = 1) at d = 500..2000
   (d = 5000 with --corank-big: the new path only, the old one takes minutes there) and Gaussian arms with some
   shortened (zero weights at the optimum) for r from 1 to past the dispatch rule r^2 <= CORANK_RATIO d.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np
from bench_designs import timed
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import optdesign as od
from optdesign.linear import dispatch, pairs
from optdesign.linear.corank import d_optimal_corank, left_null_basis
from optdesign.linear.criteria import cholesky_factor, whiten
from optdesign.linear.exchange import d_optimal_exchange
from optdesign.linear.firstorder import d_optimal_fw, d_optimal_multiplicative
from optdesign.runtime.blas import single_threaded_blas


def scan_every_pair(V: np.ndarray) -> float:
    """The baseline pricing pass: max_{i<j} ||v_i - v_j||^2 over every pair, in the same row blocks."""
    squared = np.einsum("ij,ij->j", V, V)
    n = V.shape[1]
    rows = max(1, pairs.PAIR_CHUNK_ENTRIES // n)
    best = -np.inf
    for a in range(0, n - 1, rows):
        b = min(a + rows, n - 1)
        block = squared[a:b, None] + squared[None, a + 1:] - 2.0 * (V[:, a:b].T @ V[:, a + 1:])
        block[:, : b - a][np.tril_indices(b - a, -1)] = -np.inf
        best = max(best, float(block.max()))
    return best


def table_xy_gaussian(console: Console, max_n: int) -> None:
    t = Table(title="XY-allocation over all pairs of n Gaussian arms (tol 1e-4): the design, and one pricing pass "
                    "at it: pruned scan vs every pair")
    for col in ("n x d", "pairs", "design [s]", "rounds", "working pairs", "gap", "pruned pass [s]",
                "every-pair pass [s]", "pass speed-up", "same max"):
        t.add_column(escape(col), justify="right")
    sizes = [(n, d) for n in (5_000, 20_000, 50_000) for d in (10, 20) if n <= max_n]
    with single_threaded_blas():
        for n, d in sizes:
            X = np.random.default_rng(n + d).standard_normal((n, d))
            res, elapsed = timed(od.xy_allocation, X)
            V = whiten(cholesky_factor(X, res.weights), X)
            (pruned, _), t_pruned = timed(pairs.top_pairs, V)
            full, t_full = timed(scan_every_pair, V)
            t.add_row(f"{n:,} x {d}", f"{n * (n - 1) // 2:.2e}", f"{elapsed:.2f}", str(res.extras["rounds"]),
                      f"{res.extras['working_directions']:,}", f"{res.gap:.1e}", f"{t_pruned:.3f}", f"{t_full:.2f}",
                      f"{t_full / t_pruned:.0f}x", str(abs(pruned / full - 1) < 1e-12))
    console.print(t)


def table_pairs(console: Console) -> None:
    from bandits.instances import many_arms

    t = Table(title="XY-allocation over all pairs: generated (linear.pairs) vs explicit list (one BLAS thread)")
    for col in ("arms", "pairs", "explicit [s]", "generated [s]", "working pairs", "rounds", "gap",
                "value vs explicit", "speed-up"):
        t.add_column(escape(col), justify="right")
    cases = [("many-arms R^2", many_arms(n).X) for n in (500, 1000, 2000, 10_000, 30_000)]
    cases += [("gaussian R^5", np.random.default_rng(n).standard_normal((n, 5))) for n in (500, 1000)]
    with single_threaded_blas():
        for name, X in cases:
            n = X.shape[0]
            gen, t_gen = timed(od.xy_allocation, X)
            cells = ["-", "-", "-"]
            if n <= 2000:  # the barrier on the full list (no working set of directions)
                limit, dispatch.DIRECTION_LIST_LIMIT = dispatch.DIRECTION_LIST_LIMIT, 10**12
                try:
                    ref, t_ref = timed(od.minmax_design, X, od.pairwise_differences(X))
                finally:
                    dispatch.DIRECTION_LIST_LIMIT = limit
                cells = [f"{t_ref:.2f}", f"{gen.value / ref.value - 1:+.1e}", f"{t_ref / t_gen:.0f}x"]
            t.add_row(f"{name}, n = {n:,}", f"{n * (n - 1) // 2:,}", cells[0], f"{t_gen:.2f}",
                      str(gen.extras["working_directions"]), str(gen.extras["rounds"]), f"{gen.gap:.1e}", *cells[1:])
    console.print(t)


def table_oracle_many_arms(console: Console) -> None:
    from bandits.instances import many_arms

    t = Table(title="XY-oracle on many arms in R^2: working set of directions, barrier with column generation on arms")
    for col in ("arms", "time [s]", "Newton steps", "working directions", "gap", "status", "method"):
        t.add_column(escape(col), justify="right")
    with single_threaded_blas():
        for n in (3_000, 10_000, 30_000, 100_000, 1_000_000):
            env = many_arms(n)
            res, elapsed = timed(od.xy_oracle, env.X, env.theta)
            t.add_row(f"{n:,}", f"{elapsed:.1f}", str(res.iterations), str(res.extras.get("working_directions", "all")),
                      f"{res.gap:.1e}", res.status, res.method)
    console.print(t)


def _status_mib(key: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 2**10 for line in f if line.startswith(key))


def traced(fn, *args, **kwargs):
    """(result, seconds, peak resident MiB added during the call: the kernel's high-water mark reset through
    /proc/self/clear_refs, which does not slow the call; tracemalloc where that is unavailable)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before, tracing = _status_mib("VmRSS"), False
    except OSError:
        tracemalloc.start()
        tracing = True
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    if tracing:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return out, elapsed, peak
    return out, elapsed, _status_mib("VmHWM") - before


def table_scale(console: Console, max_n: int = 1_000_000, time_limit: float = 20.0) -> None:
    """G/D-optimal on many Gaussian arms, one BLAS thread, every solver stopped at ``time_limit`` seconds."""
    t = Table(title=f"G/D-optimal on n Gaussian arms, tol 1e-4, one BLAS thread, time limit {time_limit:.0f} s "
                    "(exchange vs multiplicative and full Frank–Wolfe; 'peak' = resident MiB added beyond X)")
    for col in ("n x d", "X MiB", "exchange [s]", "passes", "peak MiB", "peak / X", "gap",
                "mult [s]", "mult iters", "mult peak", "mult gap", "FW [s]", "FW iters", "FW peak", "FW gap",
                "FW / exchange"):
        t.add_column(escape(col), justify="right")
    sizes = [(n, d) for n in (10_000, 100_000, 1_000_000) for d in (10, 20, 50) if n <= max_n]
    with single_threaded_blas():
        for n, d in sizes:
            X = np.random.default_rng(n + d).standard_normal((n, d))
            x_mib = X.nbytes / 2**20
            cells = []
            for fn in (d_optimal_exchange, d_optimal_multiplicative, d_optimal_fw):
                res, elapsed, peak = traced(fn, X, tol=1e-4, time_limit=time_limit)
                gap = res.value / d - 1
                mark = "" if res.converged else ">"
                cells.append((f"{mark}{elapsed:.2f}", str(res.iterations), f"{peak:.0f}", f"{gap:.1e}", elapsed, mark))
            (ex, mult, fw) = cells
            t.add_row(f"{n:,} x {d}", f"{x_mib:.0f}", ex[0], ex[1], ex[2], f"{float(ex[2]) / x_mib:.2f}", ex[3],
                      *mult[:4], *fw[:4], f"{fw[5]}{fw[4] / ex[4]:.0f}x")
            del X
    console.print(t)
    console.print("'>' marks a run stopped by the time limit (its gap is the certified gap reached). "
                  "Peak memory of this process (max RSS): "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")


def table_corank(console: Console, big: bool) -> None:
    from bandits.instances import soare

    t = Table(title="G/D-optimal with K = d + r arms, tol 1e-4, one BLAS thread: co-rank path vs the previous auto "
                    "path (Frank–Wolfe below 2000 arms, exchange above), same process")
    for col in ("instance", "K x d", "r^2 / d", "auto path", "null basis [s]", "co-rank [s]", "iters", "gap",
                "previous path", "previous [s]", "previous gap", "speed-up"):
        t.add_column(escape(col), justify="right")
    cases = [(f"soare d = {d}", soare(d=d).X) for d in (500, 1000, 2000)]
    for d in (500, 1000):
        for r in sorted({1, 5, *(int(np.sqrt(ratio * d)) for ratio in (1, 4, 16, 64, 128))}):
            rng = np.random.default_rng(d + r)
            X = rng.standard_normal((d + r, d))
            X[: 2 * r] *= rng.uniform(0.2, 1.0, (2 * r, 1))  # shortened arms: weights 0 at the optimum
            cases.append((f"gaussian r = {r}", X))
    if big:
        cases.append(("soare d = 5000", soare(d=5000).X))
    with single_threaded_blas():
        for name, X in cases:
            K, d = X.shape
            L, t_null = timed(left_null_basis, X)
            res, t_new = timed(d_optimal_corank, X, tol=1e-4, L=L)
            t_new += t_null
            auto = "corank" if dispatch.corank_applies(K, d) else "previous"
            cells = ["-", "-", "-", "-"]
            if d < 5000:
                old_fn, old_name = ((d_optimal_exchange, "exchange") if K >= dispatch.EXCHANGE_MIN_ARMS
                                    else (d_optimal_fw, "frank-wolfe"))
                old, t_old = timed(old_fn, X, tol=1e-4, time_limit=600.0)
                cells = [old_name, f"{t_old:.2f}", f"{old.value / d - 1:.1e}", f"{t_old / t_new:.1f}x"]
            t.add_row(name, f"{K:,} x {d:,}", f"{(K - d) ** 2 / d:.2f}", auto, f"{t_null:.2f}", f"{t_new:.2f}",
                      str(res.iterations), f"{res.value / d - 1:.1e}", *cells)
    console.print(t)
    console.print(f"auto takes the co-rank path when r^2 / d <= CORANK_RATIO = {dispatch.CORANK_RATIO:g}; "
                  "'co-rank \\[s]' includes the null basis.")


TABLES = ("gd", "xy-gaussian", "pairs", "oracle-many-arms", "corank")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=TABLES, action="append", help="run only these tables")
    parser.add_argument("--max-n", type=int, default=1_000_000, help="largest n of the gd and xy-gaussian tables")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per solver run of the gd table")
    parser.add_argument("--corank-big", action="store_true", help="add Soare's d = 5000 to the corank table")
    args = parser.parse_args()
    console = Console(width=200)
    console.print(f"optdesign {od.__version__}")
    chosen = args.only or TABLES
    if "gd" in chosen:
        table_scale(console, args.max_n, args.time_limit)
    if "xy-gaussian" in chosen:
        table_xy_gaussian(console, args.max_n)
    if "pairs" in chosen:
        table_pairs(console)
    if "oracle-many-arms" in chosen:
        table_oracle_many_arms(console)
    if "corank" in chosen:
        table_corank(console, args.corank_big)


if __name__ == "__main__":
    main()
