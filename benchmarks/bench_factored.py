"""Factored lower bounds at and past the MF-TaS paper's scale: T^MF reduced by symmetry, certified.

Run ``python benchmarks/bench_factored.py`` (a few minutes; ``--only NAME`` for one table, e.g. ``--only
regret-scale``) or ``--full`` for the largest sizes (ring N = 10^5, the full-K reference at N = 10, exact T* at
N = 50 and at K = 20; about half an hour). Every figure is measured
in this run, on one BLAS thread.

Tables:
1. The paper's Table 1 instances (ring, K = 10, uniform means, seed 0): T^MF by the orbit search (one p per orbit
   of the ring's rotations, Kelley's cutting planes) against the binary conic program and the full-K program, with
   the certified bracket and the paper's CPU column (CVXPY + MOSEK, its laptop).
2. T^MF on large rings, a star and a grid (K = 10): where the time goes (inference for a* and Delta_min on the full
   tables, model build and solve with the certificate), passes or FCR rows and the certified gap; the conic program
   on the same rings for comparison.
4. Exact T* by constraint generation (rings K = 10 up to N = 20, a grid; --full: N = 50 and N = 10 with K = 20)
   with its certified gap, iterations, working set and where the time goes, against enumerating every joint
   action where that fits, beside the paper's CPU column.
5. The regret constant c_theta (Graves–Lai, MF-TaS App. F) by the same constraint generation, against enumeration
   where it fits and beside the FCR upper bound c^MF.
3. The exact separation oracle of T* (max over ALL joint actions of H_w(a) / Delta(a)^2 by Pareto variable
   elimination) at the mean-field allocation's marginals, against enumerating every joint action where that fits.
6. The regret constant c_theta at scale (rings N = 5..20, K = 10 and 3, by generation; ring N = 9, K = 3 and with
   --full N = 4, K = 10 enumerated; ``--only regret-scale``): iterations or passes, working set, time per master
   solve and in separation, against the first master or pass centred on uniform counts (before), in the same run.
7. Exact T* by constraint generation on rings N = 20 and 30, K = 10 (--full: N = 50; ``--only tstar-scale``):
   iterations, working set, master and separation time, when the top-k separation overflows its state budget and
   the violated joint actions come from the whole violation range (k halved while that overflows) against only its
   upper half (k / 10, before), in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import resource
import time

from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_limits

import optdesign as od
from optdesign import FactorGraph

PAPER_CPU_TMF = {3: "0.09 ± 0.03", 5: "0.54 ± 0.13", 10: "0.81 ± 0.31"}  # MF-TaS Table 1, seconds
PAPER_CPU_TSTAR = {3: "6.87 ± 1.12", 5: "2375.82 ± 5.32", 10: "> 10800"}


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def table_paper(console: Console, full: bool) -> None:
    t = Table(title="T^MF on the MF-TaS Table 1 rings (K = 10, seed 0): orbit search vs the conic programs")
    for col in ("N", "|A|", "T^MF (orbits)", "gap", "time (s)", "binary conic (s)", "rel. diff", "full-K conic (s)",
                "rel. diff", "paper CPU (s)"):
        t.add_column(col, justify="right")
    for N in (3, 5, 10):
        fg = FactorGraph.ring(N, 10, seed=0)
        fg.gap_min()
        tied, t_tied = timed(od.mf_characteristic_time, fg)
        conic, t_conic = timed(od.mf_characteristic_time, fg, solver="CLARABEL", symmetry=None)
        row = [str(N), f"1e{N}", f"{tied.value:,.2f}", f"{tied.gap:.1e}", f"{t_tied:.4f}", f"{t_conic:.3f}",
               f"{abs(tied.value / conic.value - 1):.1e}"]
        if N < 10 or full:
            ref, t_ref = timed(od.mf_characteristic_time, fg, reduce=False)
            row += [f"{t_ref:.2f}", f"{abs(tied.value / ref.value - 1):.1e}"]
        else:
            row += ["(--full)", ""]
        t.add_row(*row, PAPER_CPU_TMF[N])
    console.print(t)


def table_large(console: Console, full: bool) -> None:
    t = Table(title="T^MF on large graphs (K = 10, uniform means, seed 0): orbit search where the structure has few "
              "orbits, the binary conic program otherwise")
    for col in ("graph", "N", "orbits", "solver", "passes / FCR rows", "inference (s)", "model+solve (s)",
                "total (s)", "max RSS MiB", "gap", "target (s)"):
        t.add_column(col, justify="right")
    ring = lambda N: FactorGraph.ring(N, 10, seed=0)  # noqa: E731
    cases = [("ring", N, ring, target, "auto") for N, target in ((10, 0.02), (100, None), (1000, 1.0), (10_000, None))]
    cases += [("ring", 1000, ring, None, None), ("ring", 10_000, ring, None, None),
              ("star", 10_000, lambda N: FactorGraph.star(N, 10, seed=0), None, "auto"),
              ("grid 3x30", 90, lambda N: FactorGraph.grid(3, 30, 10, seed=0), None, "auto")]
    if full:
        cases.append(("ring", 100_000, ring, 60.0, "auto"))
    for name, N, make, target, symmetry in cases:
        start = time.perf_counter()
        fg = make(N)
        fg.m_best(2)
        t_inf = time.perf_counter() - start
        res = od.mf_characteristic_time(fg, solver="CLARABEL", symmetry=symmetry)
        total = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the process so far (Linux: KiB)
        orbits = res.extras["orbits"]
        size = f"{res.extras['passes']} passes" if orbits else f"{res.n_constraints:,} rows"
        t.add_row(name, f"{N:,}", "off" if symmetry is None else str(orbits or "many"), res.solver, size,
                  f"{t_inf:.2f}", f"{total - t_inf:.2f}", f"{total:.2f}", f"{peak:.0f}", f"{res.gap:.1e}",
                  "" if target is None else f"{target:g}")
    console.print(t)


def mf_terms(fg: FactorGraph) -> tuple:
    """h_e(b) = 1{b != a*_e}(1/wbar_{e,a*_e} + 1/wbar_{e,b}) at the T^MF allocation, and the factor gaps."""
    import numpy as np

    res = od.mf_characteristic_time(fg)
    wbar = np.concatenate([m.ravel() for m in res.marginals])
    star = fg.group_indices(fg.best_action())[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    h = 1.0 / wbar + 1.0 / wbar[star][factor_of]
    h[star] = 0.0
    gap = fg.means[star][factor_of] - fg.means
    return h, gap


def enumerated_max_ratio(fg: FactorGraph, h, gap) -> float:
    """max over a != a* of H(a) / Delta(a)^2 by listing every joint action (the reference)."""
    import numpy as np

    idx = fg.group_indices(fg.joint_actions())
    d = gap[idx].sum(axis=1)
    return float(np.max(np.where(d > 0, h[idx].sum(axis=1) / np.where(d > 0, d, 1.0) ** 2, 0.0)))


def table_separation(console: Console, full: bool) -> None:

    from optdesign.factored.exact.separation import most_violated

    t = Table(title="Exact separation max_a H_w(a)/Delta(a)^2 (ring, K = 10, seed 0, w = T^MF marginals)")
    for col in ("N", "|A|", "k = 1 (ms)", "k = 20 (ms)", "frontier points (k = 20)", "enumeration (ms)",
                "speed-up", "same max"):
        t.add_column(col, justify="right")
    for N in (4, 5, 10, 20) + ((40,) if full else ()):
        fg = FactorGraph.ring(N, 10, seed=0)
        h, gap = mf_terms(fg)
        plan = fg.plan()
        one, t_one = timed(most_violated, plan, h, gap, delta_min=fg.gap_min(), k=1)
        top, t_top = timed(most_violated, plan, h, gap, delta_min=fg.gap_min(), k=20)
        row = [str(N), f"1e{N}", f"{1e3 * t_one:.1f}", f"{1e3 * t_top:.1f}", f"{top.n_states:,}"]
        if fg.n_joint_actions <= 100_000:
            ref, t_ref = timed(enumerated_max_ratio, fg, h, gap)
            row += [f"{1e3 * t_ref:.0f}", f"{t_ref / t_one:.0f}x", str(abs(one.max_ratio / ref - 1) < 1e-12)]
        else:
            row += ["-", "", ""]
        t.add_row(*row)
    console.print(t)


def exact_instances(full: bool) -> list[tuple[str, FactorGraph, str]]:
    """(label, instance, paper CPU) of the exact tables: the paper's rings, then past them."""
    cases = [(f"ring N={N} K=10", FactorGraph.ring(N, 10, seed=0), PAPER_CPU_TSTAR.get(N, "-"))
             for N in (3, 4, 5, 10, 20)]
    cases.append(("grid 3x3 K=4", FactorGraph.grid(3, 3, 4, seed=0), "-"))
    if full:
        cases += [("ring N=50 K=10", FactorGraph.ring(50, 10, seed=0), "-"),
                  ("ring N=10 K=20", FactorGraph.ring(10, 20, seed=0), "-")]
    return cases


def generated_vs_enumerated(fg: FactorGraph, generate, enumerate) -> tuple:
    """(generated result, its wall time, [enumeration time, relative difference] or placeholders above 10^4
    joint actions); solver warnings are silenced (the certified gap is in the table)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, total = timed(generate, fg)
        ref = timed(enumerate, fg) if fg.n_joint_actions <= 10_000 else None
    cells = ["-", ""] if ref is None else [f"{ref[1]:.1f}", f"{abs(res.value / ref[0].value - 1):.1e}"]
    return res, total, cells


def table_exact(console: Console, full: bool) -> None:
    t = Table(title="Exact T* by constraint generation (seed 0, tol 1e-4): certified bracket, where the time goes")
    for col in ("instance", "|A|", "T*", "gap", "status", "iterations", "working set", "master (s)",
                "separation (s)", "total (s)", "enumeration (s)", "rel. diff", "paper CPU (s)"):
        t.add_column(col, justify="right")
    for label, fg, paper in exact_instances(full):
        fg.gap_min()
        res, total, cells = generated_vs_enumerated(
            fg, lambda fg: od.characteristic_time(fg, method="generate", tol=1e-4, time_limit=1800.0),
            lambda fg: od.characteristic_time(fg, method="enumerate"))
        row = [label, f"{fg.n_joint_actions:.0e}", f"{res.value:,.2f}", f"{res.gap:.1e}", res.status,
               str(res.extras["iterations"]), f"{res.extras['working_set']:,}", f"{res.extras['master_time']:.1f}",
               f"{res.extras['separation_time']:.2f}", f"{total:.1f}", *cells]
        t.add_row(*row, paper)
    console.print(t)


def table_regret(console: Console, full: bool) -> None:
    """The Graves–Lai regret constant by the same constraint generation, against enumeration where it fits."""
    from optdesign.factored.regret.lower_bound import regret_lower_bound

    t = Table(title="Exact regret constant c_theta by constraint generation (seed 0, tol 1e-4)")
    for col in ("instance", "|A|", "c_theta", "gap", "status", "iterations", "working set", "total (s)",
                "enumeration (s)", "rel. diff", "c^MF (FCR upper bound)"):
        t.add_column(col, justify="right")
    cases = [("ring N=4 K=5", FactorGraph.ring(4, 5, seed=0)), ("ring N=5 K=10", FactorGraph.ring(5, 10, seed=0)),
             ("ring N=10 K=10", FactorGraph.ring(10, 10, seed=0)), ("line N=30 K=3", FactorGraph.line(30, 3, seed=0))]
    if full:
        cases.append(("ring N=20 K=10", FactorGraph.ring(20, 10, seed=0)))
    for label, fg in cases:
        res, total, cells = generated_vs_enumerated(
            fg, lambda fg: regret_lower_bound(fg, strategy="generate", tol=1e-4),
            lambda fg: regret_lower_bound(fg, strategy="enumerate"))
        mf = regret_lower_bound(fg, "mf")
        row = [label, f"{fg.n_joint_actions:.0e}", f"{res.value:,.4f}", f"{res.gap:.1e}", res.status,
               str(res.extras["iterations"]), f"{res.extras['working_set']:,}", f"{total:.1f}", *cells]
        t.add_row(*row, f"{mf.value:,.4f}")
    console.print(t)


OLD_TIME_LIMIT = 120.0  # seconds for constraint generation from the uniform start (the "before" columns)


@contextlib.contextmanager
def uniform_start():
    """c_theta started from the cone's uniform feasible counts ``mu0`` (scaled to the worst row like the mixture)
    instead of the mixture of the best joint actions through every entry: the "before" columns."""
    from optdesign.factored.regret.cone import Cone

    mixture = Cone.mixture
    Cone.mixture = lambda self, fg, plan: self.mu0  # type: ignore[method-assign]
    try:
        yield
    finally:
        Cone.mixture = mixture  # type: ignore[method-assign]


def table_regret_scale(console: Console, full: bool) -> None:
    """c_theta on rings N = 5..20 (K = 10 and K = 3) by constraint generation, and enumerated where that fits: the
    mixture start against the uniform one (before), in the same process; the uniform start gets OLD_TIME_LIMIT
    seconds (generation) and ring N = 20, K = 10 and the enumerated ring N = 4, K = 10 run only with --full."""
    import warnings

    from optdesign.factored.regret.lower_bound import regret_lower_bound

    t = Table(title=f"c_theta at scale (ring, seed 0, tol 1e-4): first master or pass centred on the mixture of "
              f"the best joint actions through every entry vs on uniform counts (before; time limit "
              f"{OLD_TIME_LIMIT:g} s)")
    for col in ("instance", "|A|", "strategy", "c_theta", "gap", "status", "iterations / passes", "working set",
                "master (s)", "per master (s)", "separation (s)", "total (s)", "before: total (s)",
                "before: status", "before: gap", "speed-up"):
        t.add_column(col, justify="right", no_wrap=col in ("instance", "status", "before: status"))
    cases = [(N, K, "generate", K == 3 or N <= 15 or full) for K in (10, 3) for N in (5, 10, 15, 20)]
    cases += [(9, 3, "enumerate", True)] + ([(4, 10, "enumerate", True)] if full else [])
    for N, K, strategy, before in cases:
        fg = FactorGraph.ring(N, K, seed=0)
        fg.gap_min()
        run = functools.partial(regret_lower_bound, fg, strategy=strategy, tol=1e-4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, total = timed(run, time_limit=1800.0)
            old = None
            if before:
                with uniform_start():
                    try:
                        old = timed(run, time_limit=OLD_TIME_LIMIT)
                    except od.SolverError as err:
                        old = (str(err)[:40], None)
        x = res.extras
        if old is None:
            cells = ["(--full)", "", "", ""]
        elif old[1] is None:
            cells = ["-", f"SolverError: {old[0]}", "", ""]
        else:
            sign = "" if old[0].status == "optimal" else ">"
            cells = [f"{old[1]:.1f}", old[0].status, f"{old[0].gap:.1e}", f"{sign}{old[1] / total:.1f}x"]
        if strategy == "generate":
            work = [str(x["iterations"]), f"{x['working_set']:,}", f"{x['master_time']:.1f}",
                    f"{x['master_time'] / x['iterations']:.2f}", f"{x['separation_time']:.2f}"]
        else:
            work = [f"{x['passes']} passes", "all", f"{res.solve_time:.1f}", f"{res.solve_time / x['passes']:.2f}",
                    "-"]
        t.add_row(f"ring N={N} K={K}", f"{fg.n_joint_actions:.0e}", strategy, f"{res.value:,.2f}",
                  f"{res.gap:.1e}", res.status, *work, f"{total:.1f}", *cells)
    console.print(t)


@contextlib.contextmanager
def upper_half_share():
    """T* with the violated joint actions past the top-k state budget taken as the regret master takes them (upper
    half of the violation range, k divided by 10 while that overflows) instead of from the whole range with k
    halved: the "before" columns."""
    from optdesign.factored.exact.cutting_plane_master import CuttingPlaneMaster
    from optdesign.factored.exact.generated import CharTimeMaster

    share, shrink = CharTimeMaster.top_share, CharTimeMaster.top_shrink
    CharTimeMaster.top_share, CharTimeMaster.top_shrink = CuttingPlaneMaster.top_share, CuttingPlaneMaster.top_shrink
    try:
        yield
    finally:
        CharTimeMaster.top_share, CharTimeMaster.top_shrink = share, shrink


def table_tstar_scale(console: Console, full: bool) -> None:
    """Exact T* on rings N = 20, 30 (--full: 50), K = 10, by constraint generation: violated joint actions from the
    whole violation range, k halved, against its upper half, k / 10 (before), once the top-k separation overflows,
    in the same process."""
    from optdesign.factored.exact.generated import characteristic_time_generated

    t = Table(title="Exact T* at scale (ring, K = 10, seed 0, tol 1e-4): violated joint actions past the top-k "
              "budget from the whole range, k halved, vs its upper half, k / 10 (before)")
    for col in ("instance", "T*", "gap", "iterations", "working set", "master (s)", "separation (s)", "total (s)",
                "before: T*", "before: gap", "before: iterations", "before: master (s)", "before: separation (s)",
                "before: total (s)", "speed-up"):
        t.add_column(col, justify="right", no_wrap=col == "instance")
    for N in (20, 30, 50) if full else (20, 30):
        fg = FactorGraph.ring(N, 10, seed=0)
        fg.gap_min()
        res, total = timed(characteristic_time_generated, fg, time_limit=3600.0)
        with upper_half_share():
            old, old_total = timed(characteristic_time_generated, fg, time_limit=3600.0)
        cells = []
        for r, seconds in ((res, total), (old, old_total)):
            x = r.extras
            cells.append([f"{r.value:,.2f}", f"{r.gap:.1e}", str(x["iterations"]), f"{x['working_set']:,}",
                          f"{x['master_time']:.1f}", f"{x['separation_time']:.1f}", f"{seconds:.1f}"])
        t.add_row(f"ring N={N}", *cells[0], *(cells[1][:3] + cells[1][4:]), f"{old_total / total:.1f}x")
    console.print(t)


TABLES = {"paper": table_paper, "large": table_large, "separation": table_separation, "exact": table_exact,
          "regret": table_regret, "regret-scale": table_regret_scale,
          "tstar-scale": table_tstar_scale}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="largest sizes and the full-K reference at N = 10")
    parser.add_argument("--only", choices=sorted(TABLES), action="append",
                        help="run only these tables (repeatable); all of them by default")
    args = parser.parse_args()
    console = Console(width=220)
    with threadpool_limits(1):
        for symmetry in ("auto", None):  # imports and solver start-up, not timed
            od.mf_characteristic_time(FactorGraph.ring(3, 2, seed=0), solver="CLARABEL", symmetry=symmetry)
        for name, table in TABLES.items():
            if args.only is None or name in args.only:
                table(console, args.full)


if __name__ == "__main__":
    main()
