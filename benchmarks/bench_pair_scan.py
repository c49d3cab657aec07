"""The exact farthest-pair / top-pairs scan (optdesign.linear.pairs.top_pairs) against the two scans it replaced,
copied here as baselines and run in the same process (one BLAS thread):

    python benchmarks/bench_pair_scan.py                  # every table (a few minutes)
    python benchmarks/bench_pair_scan.py --only pricing   # one table: frank-wolfe, xy-allocation, pricing

* ``baseline_farthest_pair``: block centres along the items' principal axis (the pair search of Fiez et al.'s
  Frank–Wolfe design, ``fiez_frank_wolfe``, for xy-static / xy-oracle with ``variant="fiez"``);
* ``baseline_top_pairs``: items by decreasing norm, ||v_i - v_j|| <= ||v_i|| + ||v_j|| (the pricing of the
  designs over all pairwise differences, ``od.xy_allocation`` and ``od.transductive`` without theta).

Tables: 1. the Frank–Wolfe design over all pairs of many arms (Fiez et al.'s many-arms in R^2, the unit sphere);
2. XY-allocation over all pairs (the pricing of ``--only pairs`` of bench_designs_scale.py, generated sizes);
3. one pricing pass at the XY design of Gaussian arms (the maximum, and the top 40 d pairs).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
from bench_designs import timed
from rich.console import Console
from rich.table import Table

import optdesign as od
from bandits.instances import many_arms, sphere
from bandits.linear import static
from optdesign.linear import pairs
from optdesign.linear.criteria import cholesky_factor, whiten
from optdesign.runtime.blas import single_threaded_blas

FARTHEST_BLOCK = 128


def baseline_farthest_pair(V: np.ndarray, order: np.ndarray) -> tuple[int, int]:
    """The replaced block-centre scan (items in ``order``, blocks of FARTHEST_BLOCK, pruned by centre + radii)."""
    n = V.shape[1]
    r = np.linalg.norm(V - V.mean(axis=1, keepdims=True), axis=0)
    i0 = int(np.argmax(r))
    reach = np.sum((V - V[:, i0 : i0 + 1]) ** 2, axis=0)
    j0 = int(np.argmax(reach))
    best, pair = float(reach[j0]), (i0, j0)
    blocks = [order[lo : lo + FARTHEST_BLOCK] for lo in range(0, n, FARTHEST_BLOCK)]
    centres = np.stack([V[:, idx].mean(axis=1) for idx in blocks], axis=1)
    radii = np.array([np.linalg.norm(V[:, idx] - centres[:, a : a + 1], axis=0).max() for a, idx in enumerate(blocks)])
    gaps = np.linalg.norm(centres[:, :, None] - centres[:, None, :], axis=0) + radii[:, None] + radii[None, :]
    for a, b in zip(*np.nonzero(np.triu(gaps >= np.sqrt(best) * (1 - 1e-12))), strict=True):
        P, Q = V[:, blocks[a]], V[:, blocks[b]]
        D = np.sum(P**2, axis=0)[:, None] + np.sum(Q**2, axis=0)[None, :] - 2.0 * (P.T @ Q)
        k = int(np.argmax(D))
        if D.flat[k] > best:
            best, pair = float(D.flat[k]), (int(blocks[a][k // D.shape[1]]), int(blocks[b][k % D.shape[1]]))
    return pair


def baseline_top_pairs(V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
    """The replaced norm-pruned scan: items by decreasing norm, chunks of PAIR_CHUNK_ENTRIES pair values."""
    n = V.shape[1]
    if n < 2:
        return 0.0, np.empty((0, 2), dtype=np.int64)
    squared = np.einsum("ij,ij->j", V, V)
    order = np.argsort(-squared, kind="stable")
    squared = squared[order]
    norms = np.sqrt(squared)
    Vs = V[:, order]
    best, kth = -np.inf, -np.inf
    kept_values, kept_pairs = np.empty(0), np.empty((0, 2), dtype=np.int64)
    a = 0
    while a < n - 1:
        cutoff = best if k == 0 else min(best, max(floor, kth))
        reach = np.sqrt(max(cutoff, 0.0)) * (1 + 1e-9) - norms[a] if cutoff > -np.inf else -np.inf
        if norms[a + 1] <= reach:
            break
        stop = n if reach == -np.inf else a + 1 + int(np.searchsorted(-norms[a + 1:], -reach, side="left"))
        width = stop - (a + 1)
        b = min(a + max(1, pairs.PAIR_CHUNK_ENTRIES // width), n - 1, stop)
        block = squared[a:b, None] + squared[None, a + 1 : stop] - 2.0 * (Vs[:, a:b].T @ Vs[:, a + 1 : stop])
        m = b - a
        block[:, :m][np.tril_indices(m, -1)] = -np.inf
        flat = block.ravel()
        best = max(best, float(flat.max()))
        if k > 0:
            idx = np.flatnonzero(flat > max(floor, kth))
            if idx.size > k:
                idx = idx[np.argpartition(flat[idx], idx.size - k)[idx.size - k :]]
            r, c = np.divmod(idx, block.shape[1])
            kept_values = np.concatenate([kept_values, flat[idx]])
            kept_pairs = np.concatenate([kept_pairs, np.stack([a + r, a + 1 + c], axis=1)])
            if kept_values.size > k:
                top = np.argpartition(kept_values, kept_values.size - k)[kept_values.size - k :]
                kept_values, kept_pairs = kept_values[top], kept_pairs[top]
            if kept_values.size == k:
                kth = float(kept_values.min())
        a = b
    if kept_values.size == 0:
        return best, np.empty((0, 2), dtype=np.int64)
    ranked = np.argsort(-kept_values, kind="stable")[:k]
    return best, np.sort(order[kept_pairs[ranked]], axis=1)


def farthest_pair_baseline_for(Z: np.ndarray) -> Callable[..., tuple[float, np.ndarray]]:
    """top_pairs(V, 1) of the Frank–Wolfe loop answered by the baseline, with its order computed once from the
    items (the principal axis of Z, as the replaced code did)."""
    centred = Z - Z.mean(axis=0)
    order = np.argsort(centred @ np.linalg.svd(centred, full_matrices=False)[2][0])

    def scan(V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
        i, j = baseline_farthest_pair(V, order)
        return float(np.sum((V[:, i] - V[:, j]) ** 2)), np.array([[min(i, j), max(i, j)]])

    return scan


class ScanClock:
    """Wraps a scan and adds up the seconds spent in it (the rest of a design is the same code in both runs)."""

    def __init__(self, scan: Callable[..., tuple[float, np.ndarray]]) -> None:
        self.scan, self.seconds, self.calls = scan, 0.0, 0

    def __call__(self, V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        out = self.scan(V, k, floor)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return out


def table_frank_wolfe(console: Console) -> None:
    t = Table(title="Fiez et al.'s Frank–Wolfe design over all pairs of the arms: new scan vs block-centre baseline "
                    "(whole design, and the time in the pair scan)")
    for col in ("instance", "scans", "new [s]", "baseline [s]", "speed-up", "in scan: new [s]", "baseline [s]",
                "speed-up", "same weights"):
        t.add_column(col, justify="right")
    for env in (many_arms(10_000), many_arms(30_000), sphere(3_000, 3), sphere(1_000, 9)):
        new_clock, old_clock = ScanClock(pairs.top_pairs), ScanClock(farthest_pair_baseline_for(env.X))
        with mock.patch.object(static, "top_pairs", new_clock):
            new, t_new = timed(static.fiez_frank_wolfe, env.X, None, env.X)
        with mock.patch.object(static, "top_pairs", old_clock):
            old, t_old = timed(static.fiez_frank_wolfe, env.X, None, env.X)
        t.add_row(env.name, str(new_clock.calls), f"{t_new:.2f}", f"{t_old:.2f}", f"{t_old / t_new:.1f}x",
                  f"{new_clock.seconds:.2f}", f"{old_clock.seconds:.2f}",
                  f"{old_clock.seconds / new_clock.seconds:.1f}x",
                  str(np.allclose(new, old)))
    console.print(t)


def table_xy_allocation(console: Console) -> None:
    t = Table(title="XY-allocation over all pairs (pairs generated as they bind): new scan vs norm-pruned baseline "
                    "(whole design, best of 3, and the time in the pair scan)")
    for col in ("arms", "new [s]", "baseline [s]", "speed-up", "in scan: new [s]", "baseline [s]", "speed-up",
                "rel. value difference"):
        t.add_column(col, justify="right")
    cases = [(f"many-arms R^2, n = {n:,}", many_arms(n).X) for n in (10_000, 30_000)]
    cases += [(f"gaussian R^{d}, n = {n:,}", np.random.default_rng(n + d).standard_normal((n, d)))
              for n, d in ((5_000, 5), (20_000, 10))]
    for name, X in cases:
        new_clock, old_clock = ScanClock(pairs.top_pairs), ScanClock(baseline_top_pairs)
        with mock.patch.object(pairs, "top_pairs", new_clock):
            new, t_new = timed(od.xy_allocation, X, repeat=3)
        with mock.patch.object(pairs, "top_pairs", old_clock):
            old, t_old = timed(od.xy_allocation, X, repeat=3)
        t.add_row(name, f"{t_new:.2f}", f"{t_old:.2f}", f"{t_old / t_new:.1f}x", f"{new_clock.seconds / 3:.3f}",
                  f"{old_clock.seconds / 3:.3f}", f"{old_clock.seconds / new_clock.seconds:.1f}x",
                  f"{abs(new.value / old.value - 1):.1e}")
    console.print(t)


def table_pricing_pass(console: Console) -> None:
    t = Table(title="One pricing pass at the XY design of n Gaussian arms: new scan vs norm-pruned baseline")
    for col in ("n x d", "k", "new [ms]", "baseline [ms]", "speed-up", "same max"):
        t.add_column(col, justify="right")
    for n, d in ((20_000, 5), (20_000, 20), (50_000, 10)):
        X = np.random.default_rng(n + d).standard_normal((n, d))
        L = cholesky_factor(X, od.xy_allocation(X).weights)
        assert L is not None  # the design spans R^d
        V = whiten(L, X)
        for k in (0, 40 * d):
            (new, _), t_new = timed(pairs.top_pairs, V, k, repeat=3)
            (old, _), t_old = timed(baseline_top_pairs, V, k, repeat=3)
            t.add_row(f"{n:,} x {d}", str(k), f"{1e3 * t_new:.1f}", f"{1e3 * t_old:.1f}", f"{t_old / t_new:.1f}x",
                      str(abs(new / old - 1) < 1e-12))
    console.print(t)


TABLES = {"frank-wolfe": table_frank_wolfe, "xy-allocation": table_xy_allocation, "pricing": table_pricing_pass}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=TABLES, action="append", help="run only these tables")
    args = parser.parse_args()
    console = Console(width=160)
    with single_threaded_blas():
        for name in args.only or TABLES:
            TABLES[name](console)


if __name__ == "__main__":
    main()
