"""The Pareto elimination of :mod:`optdesign.factored.exact.pareto`, compiled: one numba call per pass.

The reference (``optdesign.factored.exact.pareto._Elimination``) is numpy per elimination step; on long, narrow
structures (a line of 100 agents has 100 steps of a few dozen points) its cost is the interpreter's, a few numpy calls
per step. These loops do the same operations in the same order (the sums over a row's inputs left to right, the same
pruning bounds, the same stable (group, Delta) order of the Pareto layers), so a pass keeps the same frontier points,
counts the same pairs and returns the same joint actions; ``tests/test_pareto_kernels.py`` compares the two on random
structures. The plan's index arithmetic is flattened once per plan
(:func:`optdesign.factored.inference.flat_plan.plan_arrays`). A pass cannot check the enclosing time budget between its
steps, so :func:`optdesign.factored.exact.separation.most_violated` takes this path only where
:func:`optdesign.factored.inference.flat_plan.compiled_by_default` allows it (outside a budget, or on small plans).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..inference.flat_plan import PlanArrays

__all__ = ["bounds", "elimination_pass"]

# codes of elimination_pass's status
OK, TOO_MANY_STATES, TOO_MANY_PAIRS = 0, 1, 2


def bounds(arrays: PlanArrays, values: np.ndarray, table_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Max-sum of each row of ``values`` both ways, as the reference's ``_Bounds``: inside and outside maxima.

    Parameters
    ----------
    arrays : PlanArrays
        The plan.
    values : numpy.ndarray, shape (F, table_size)
        The tables.
    table_size : int
        The factor tables' length.

    Returns
    -------
    tuple of numpy.ndarray
        ``(inside, outside)``, each (F, n_flat): at a message's positions, the maxima over its subtree and outside it.
    """
    a = arrays
    inside, rows = _inside(np.ascontiguousarray(values, dtype=float), a.K, a.row_off, a.msg_off, a.inputs, a.n_cols,
                           a.n_flat, table_size)
    outside = np.full_like(inside, -np.inf)
    at_roots = inside[:, a.msg_off[a.roots]]
    total = at_roots.sum(axis=1)
    for j, r in enumerate(a.roots):
        outside[:, a.msg_off[r]] = total - at_roots[:, j]
    _outside(inside, rows, outside, a.K, a.row_off, a.msg_off, a.inputs, a.n_cols, a.col_msg)
    return inside, outside


@njit(cache=True)
def _inside(values: np.ndarray, K: np.ndarray, row_off: np.ndarray, msg_off: np.ndarray, index: np.ndarray,
            n_cols: np.ndarray, n_flat: int, table_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The flat vector with every message (the row maxima of the inputs' sums) and the rows' sums."""
    F = values.shape[0]
    flat = np.empty((F, n_flat))
    flat[:, :table_size] = values
    rows = np.empty((F, row_off[-1]))
    for m in range(K.size):
        k, r0, n = K[m], row_off[m], row_off[m + 1] - row_off[m]
        for f in range(F):
            for r in range(n):
                s = 0.0
                for c in range(n_cols[m]):
                    s = flat[f, index[r0 + r, c]] if c == 0 else s + flat[f, index[r0 + r, c]]
                rows[f, r0 + r] = s
            for z in range(n // k):
                best = rows[f, r0 + z * k]
                for j in range(1, k):
                    if rows[f, r0 + z * k + j] > best:
                        best = rows[f, r0 + z * k + j]
                flat[f, msg_off[m] + z] = best
    return flat, rows


@njit(cache=True)
def _outside(flat: np.ndarray, rows: np.ndarray, outside: np.ndarray, K: np.ndarray, row_off: np.ndarray,
             msg_off: np.ndarray, index: np.ndarray, n_cols: np.ndarray, col_msg: np.ndarray) -> None:
    """Fill ``outside`` down the plan (roots given): a message entry's maximum over the completions outside its
    subtree, the largest over the reading step's rows of (row sum + that step's outside) minus the entry."""
    F = flat.shape[0]
    for m in range(K.size - 1, -1, -1):
        k, r0, n = K[m], row_off[m], row_off[m + 1] - row_off[m]
        for c in range(n_cols[m]):
            if col_msg[m, c] < 0:
                continue
            for r in range(n):
                pos = index[r0 + r, c]
                for f in range(F):
                    v = (rows[f, r0 + r] + outside[f, msg_off[m] + r // k]) - flat[f, pos]
                    if v > outside[f, pos]:
                        outside[f, pos] = v


@njit(cache=True)
def _group_order(group: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Stable permutation sorting by (group, Delta): a float key, checked, else two stable sorts (the reference's)."""
    n = D.size
    if n < 2:
        return np.arange(n)
    lo, hi = D.min(), D.max()
    order = np.argsort(group * (2.0 * (hi - lo) + 1.0) + (D - lo), kind="mergesort")
    for i in range(1, n):
        a, b = order[i - 1], order[i]
        if group[b] < group[a] or (group[b] == group[a] and D[b] < D[a]):
            by_delta = np.argsort(D, kind="mergesort")
            return by_delta[np.argsort(group[by_delta], kind="mergesort")]
    return order


@njit(cache=True)
def _pareto_layers(group: np.ndarray, D: np.ndarray, H: np.ndarray, star: np.ndarray, layers: int) -> np.ndarray:
    """Indices, in (group, Delta) order, of the points in the first ``layers`` Pareto layers per group."""
    order = _group_order(group, D)
    n = D.size
    keep = np.zeros(n, dtype=np.bool_)
    alive = np.arange(n)
    for _ in range(layers):
        if alive.size == 0:
            break
        rest = np.empty(alive.size, dtype=np.int64)
        m = 0
        run_g, run_h = 0, 0.0
        for i in range(alive.size):
            o = order[alive[i]]
            g, h = group[o], H[o]
            dominated = i > 0 and run_g == g and run_h >= h
            if dominated:
                rest[m] = alive[i]
                m += 1
            else:
                keep[alive[i]] = True
            value = -1.0 if star[o] else h
            if i == 0 or g > run_g or (g == run_g and value > run_h):
                run_g, run_h = g, value
        alive = rest[:m]
    return order[keep]


@njit(cache=True)
def _prune(D: np.ndarray, H: np.ndarray, rest: np.ndarray, row: np.ndarray, dmin: float, tau: float, mu: np.ndarray,
           const: np.ndarray, rtol: float) -> tuple[np.ndarray, float]:
    """The keep mask of the pairs that may still complete to a ratio >= tau, and the largest bound pruned."""
    n = D.size
    keep = np.ones(n, dtype=np.bool_)
    pruned = 0.0
    for p in range(n):
        r = row[p]
        denominator = max(D[p] - rest[1, r], dmin)
        bound = (H[p] + rest[0, r]) / denominator**2
        drop = bound < tau * (1.0 - rtol)
        if drop:
            pruned = max(pruned, bound)
        for t in range(mu.size):
            tangent = rest[2 + t, r]
            value = ((H[p] - mu[t] * D[p]) + const[t]) + tangent
            if value < -rtol * (((H[p] + mu[t] * abs(D[p])) + const[t]) + abs(tangent)):
                if not drop:
                    pruned = max(pruned, tau)
                drop = True
        keep[p] = not drop
    return keep, pruned


@njit(cache=True)
def _inputs(m: int, final: bool, n_cols: np.ndarray, col_msg: np.ndarray,
            roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The messages step m reads and their columns (the final combination reads the roots' messages)."""
    if final:
        return roots.copy(), np.zeros(roots.size, dtype=np.int64)
    n_in = 0
    for c in range(n_cols[m]):
        n_in += col_msg[m, c] >= 0
    in_msg, in_col = np.empty(n_in, dtype=np.int64), np.empty(n_in, dtype=np.int64)
    j = 0
    for c in range(n_cols[m]):
        if col_msg[m, c] >= 0:
            in_msg[j], in_col[j] = col_msg[m, c], c
            j += 1
    return in_msg, in_col


@njit(cache=True)
def _rests(m: int, final: bool, n: int, kk: int, r0: int, in_msg: np.ndarray, in_col: np.ndarray, index: np.ndarray,
           msg_off: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z[j, r], the state of input j's message at row r, and rest[j]: outside plus the inside maxima of inputs j, ..."""
    F, n_in = inside.shape[0], in_msg.size
    z = np.zeros((n_in, n), dtype=np.int64)
    rest = np.empty((n_in + 1, F, n))
    for r in range(n):
        for f in range(F):
            rest[n_in, f, r] = 0.0 if final else outside[f, msg_off[m] + r // kk]
        for j in range(n_in - 1, -1, -1):
            z[j, r] = 0 if final else index[r0 + r, in_col[j]] - msg_off[in_msg[j]]
            for f in range(F):
                rest[j, f, r] = rest[j + 1, f, r] + inside[f, msg_off[in_msg[j]] + z[j, r]]
    return z, rest


@njit(cache=True)
def _start(m: int, final: bool, n: int, kk: int, r0: int, index: np.ndarray, n_cols: np.ndarray, col_msg: np.ndarray,
           h: np.ndarray, gap: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows' own pairs: Delta and H summed over the step's factors left to right, and the a* flag."""
    D, H = np.zeros(n), np.zeros(n)
    star = np.ones(n, dtype=np.bool_)
    if not final:
        for r in range(n):
            first = True
            for c in range(n_cols[m]):
                if col_msg[m, c] < 0:
                    e = index[r0 + r, c]
                    D[r] = gap[e] if first else D[r] + gap[e]
                    H[r] = h[e] if first else H[r] + h[e]
                    first = False
            star[r] = r % kk == target
    return D, H, star


@njit(cache=True)
def _merge(j: int, total: int, row: np.ndarray, D: np.ndarray, H: np.ndarray, st: np.ndarray, ptr: np.ndarray,
           zj: np.ndarray, start: np.ndarray, size: np.ndarray, base: int, fr_D: np.ndarray, fr_H: np.ndarray,
           fr_star: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every point with every frontier point of input j's message at its row's state (``start``, ``size`` per state,
    the message's points from ``base`` in the store): ``total`` new points, counted by the caller."""
    row2 = np.empty(total, dtype=np.int64)
    D2, H2 = np.empty(total), np.empty(total)
    st2 = np.empty(total, dtype=np.bool_)
    ptr2 = np.zeros((total, ptr.shape[1]), dtype=np.int64)
    q = 0
    for p in range(row.size):
        s = zj[row[p]]
        for i in range(size[s]):
            pt = start[s] + i  # within the message's frontier
            row2[q], D2[q], H2[q] = row[p], D[p] + fr_D[base + pt], H[p] + fr_H[base + pt]
            st2[q] = st[p] and fr_star[base + pt]
            ptr2[q, :] = ptr[p, :]
            ptr2[q, j] = pt
            q += 1
    return row2, D2, H2, st2, ptr2


@njit(cache=True)
def elimination_pass(K: np.ndarray, variable: np.ndarray, row_off: np.ndarray, msg_off: np.ndarray,
                     index: np.ndarray, n_cols: np.ndarray, col_msg: np.ndarray, roots: np.ndarray,
                     state_off: np.ndarray, h: np.ndarray, gap: np.ndarray, star: np.ndarray, dmin: float, k: int,
                     tau: float, max_states: int, inside: np.ndarray, outside: np.ndarray, mu: np.ndarray,
                     const: np.ndarray, rtol: float) -> tuple[np.ndarray, float, int, int, int, int, int]:
    """One Pareto elimination pass at threshold tau, as the reference's ``_Elimination.run``.

    Returns (actions, pruned bound, frontier points, pairs formed, peak frontier, status, the count that broke a
    limit): status OK, TOO_MANY_STATES (stored frontier points) or TOO_MANY_PAIRS (one merge).
    """
    S = K.size
    width = max(1, roots.size, n_cols.max() if S else 1)
    st_start, st_size = np.zeros(state_off[S], dtype=np.int64), np.zeros(state_off[S], dtype=np.int64)
    fr_off = np.zeros(S + 1, dtype=np.int64)
    fr_row, fr_D, fr_H = np.empty(1024, dtype=np.int64), np.empty(1024), np.empty(1024)
    fr_star, fr_ptr = np.empty(1024, dtype=np.bool_), np.zeros((1024, width), dtype=np.int64)
    empty = np.zeros((0, variable.size), dtype=np.int64)
    pruned, n_states, n_pairs, peak = 0.0, 0, 0, 0
    for m in range(S + 1):
        final = m == S  # the last combination joins the roots' messages into complete joint actions
        kk, r0, n = (1, 0, 1) if final else (K[m], row_off[m], row_off[m + 1] - row_off[m])
        in_msg, in_col = _inputs(m, final, n_cols, col_msg, roots)
        z, rest = _rests(m, final, n, kk, r0, in_msg, in_col, index, msg_off, inside, outside)
        D, H, st = _start(m, final, n, kk, r0, index, n_cols, col_msg, h, gap, -1 if final else star[variable[m]])
        row, ptr = np.arange(n), np.zeros((n, width), dtype=np.int64)
        keep, cut = _prune(D, H, rest[0], row, dmin, tau, mu, const, rtol)
        pruned = max(pruned, cut)
        row, D, H, st, ptr = row[keep], D[keep], H[keep], st[keep], ptr[keep]
        for j in range(in_msg.size):
            msg = in_msg[j]
            total = 0
            for p in range(row.size):
                total += st_size[state_off[msg] + z[j, row[p]]]
            if total > max_states:
                return empty, pruned, n_states, n_pairs, peak, TOO_MANY_PAIRS, total
            n_pairs += total
            lo, hi = state_off[msg], state_off[msg + 1]
            row, D, H, st, ptr = _merge(j, total, row, D, H, st, ptr, z[j], st_start[lo:hi], st_size[lo:hi],
                                        fr_off[msg], fr_D, fr_H, fr_star)
            keep, cut = _prune(D, H, rest[j + 1], row, dmin, tau, mu, const, rtol)
            pruned = max(pruned, cut)
            row, D, H, st, ptr = row[keep], D[keep], H[keep], st[keep], ptr[keep]
            if j + 1 < in_msg.size:
                sel = _pareto_layers(row, D, H, st, k)
                row, D, H, st, ptr = row[sel], D[sel], H[sel], st[sel], ptr[sel]
        sel = _pareto_layers(row // kk, D, H, st, k)
        if final:
            return _actions(ptr[sel], S, K, variable, fr_off, fr_row, fr_ptr, col_msg, n_cols, roots), \
                pruned, n_states, n_pairs, peak, OK, 0
        fr_row, fr_D, fr_H, fr_star, fr_ptr = _reserve(fr_off[m] + sel.size, fr_row, fr_D, fr_H, fr_star, fr_ptr)
        b = fr_off[m]
        fr_row[b: b + sel.size], fr_D[b: b + sel.size], fr_H[b: b + sel.size] = row[sel], D[sel], H[sel]
        fr_star[b: b + sel.size], fr_ptr[b: b + sel.size] = st[sel], ptr[sel]
        fr_off[m + 1] = b + sel.size
        counts = np.bincount(row[sel] // kk, minlength=n // kk)
        start = 0
        for s in range(counts.size):
            st_start[state_off[m] + s], st_size[state_off[m] + s] = start, counts[s]
            start += counts[s]
            peak = max(peak, counts[s])
        n_states += sel.size
        if n_states > max_states:
            return empty, pruned, n_states, n_pairs, peak, TOO_MANY_STATES, n_states
    return empty, pruned, n_states, n_pairs, peak, OK, 0  # not reached: the last step returns


@njit(cache=True)
def _reserve(size: int, fr_row: np.ndarray, fr_D: np.ndarray, fr_H: np.ndarray, fr_star: np.ndarray,
             fr_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The frontier store, doubled until it holds ``size`` points."""
    cap = fr_row.size
    if size <= cap:
        return fr_row, fr_D, fr_H, fr_star, fr_ptr
    while cap < size:
        cap *= 2
    row, D, H = np.empty(cap, dtype=np.int64), np.empty(cap), np.empty(cap)
    star, ptr = np.empty(cap, dtype=np.bool_), np.zeros((cap, fr_ptr.shape[1]), dtype=np.int64)
    n = fr_row.size
    row[:n], D[:n], H[:n], star[:n], ptr[:n] = fr_row, fr_D, fr_H, fr_star, fr_ptr
    return row, D, H, star, ptr


@njit(cache=True)
def _actions(ptr: np.ndarray, S: int, K: np.ndarray, variable: np.ndarray, fr_off: np.ndarray, fr_row: np.ndarray,
             fr_ptr: np.ndarray, col_msg: np.ndarray, n_cols: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """Joint actions of the final points, following the back-pointers down the elimination."""
    n_agents = variable.size
    actions = np.zeros((ptr.shape[0], n_agents), dtype=np.int64)
    for a in range(ptr.shape[0]):
        points = np.full(S, -1, dtype=np.int64)
        for j in range(roots.size):
            points[roots[j]] = ptr[a, j]
        for m in range(S - 1, -1, -1):
            g = fr_off[m] + points[m]
            actions[a, variable[m]] = fr_row[g] % K[m]
            j = 0
            for c in range(n_cols[m]):
                if col_msg[m, c] >= 0:
                    points[col_msg[m, c]] = fr_ptr[g, j]
                    j += 1
    return actions
