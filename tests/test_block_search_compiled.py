"""The compiled exchange of grouped designs (optdesign.exact_designs.block_kernels, block_passes, block_algebra) and the
compiled relaxation of the group bound (optdesign.exact_designs.group_relaxation), against direct numpy computations on
random instances: the state against M built from the runs, every price (run moves, exchanges between blocks, new
settings of a group) against the loss of the changed design computed from scratch (to 1e-10), the search against a
direct search that prices every move from scratch (the same moves in the same order, so the same design), and the
relaxation against
a numpy Frank–Wolfe."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from optdesign.exact_designs.block_bounds import FW_GAP, FW_STEPS, _relaxed
from optdesign.exact_designs.block_information import shrinkage
from optdesign.exact_designs.block_search import GroupSearch, best_of_starts
from optdesign.exact_designs.criteria import MIN_DET_RATIO, ExactDCriterion, ExactLinearCriterion
from optdesign.exact_designs.exchange import MIN_GAIN
from optdesign.exact_designs.group_structure import crossed_structure, nested_structure, single_structure
from optdesign.exact_designs.plot_layout import Layout

TOL = 1e-10


def rule_of(criterion, p, rng):
    """D, A, or a linear criterion with a random positive definite B."""
    if criterion == "D":
        return ExactDCriterion()
    R = rng.standard_normal((p, p))
    return ExactLinearCriterion(np.eye(p) if criterion == "A" else R @ R.T / p + 0.1 * np.eye(p), criterion)


def instance(kind, criterion, seed):
    """(X, rows, structure, rule, layout, replicates) of a random problem of one kind, with a nonsingular start."""
    rng = np.random.default_rng(seed)
    layout, replicates = None, True
    if kind in ("fixed", "random", "unique"):
        sizes = rng.integers(2, 5, size=3)
        effects = "fixed" if kind == "fixed" else "random"
        structure = single_structure(sizes, shrinkage(sizes, effects, 0.7), None if kind == "fixed" else 0.7)
        K, p, replicates = 18, 4, kind != "unique"
    elif kind in ("split", "split-wide"):  # whole plots of 2-4 runs (3-4 when wide: 3n < p for some, >= p for others)
        sizes = rng.integers(3 if kind == "split-wide" else 2, 5, size=4)
        structure = single_structure(sizes, shrinkage(sizes, "random", 1.3), 1.3)
        layout, p = Layout((3, 4), 1), 10 if kind == "split-wide" else 5
        K = 12
    elif kind == "nested":
        structure = nested_structure(np.array([4, 6, 4]), np.array([2, 2, 3, 3, 1, 3]), 1.3, 0.7)
        layout, K, p = Layout((2, 3, 3), 2), 18, 8
    else:
        structure = crossed_structure(3, 4, 1, 0.9, 1.6)
        layout, K, p = Layout((3, 2, 3), 2), 18, 7
    X = rng.standard_normal((K, p))
    rule = rule_of(criterion, p, rng)
    while True:
        if layout is None:
            rows = rng.choice(K, size=structure.n_runs, replace=replicates)
        else:
            codes = np.zeros(structure.n_runs, dtype=np.int64)
            for level in range(layout.tied):
                _, local = np.unique(structure.members[:, level], return_inverse=True)
                codes += rng.integers(0, layout.radices[level], size=local.max() + 1)[local] * layout.strides[level]
            rows = codes + rng.integers(0, layout.free, size=structure.n_runs)
        if np.linalg.matrix_rank(structure.information(X, rows)) == p:
            return X, rows, structure, rule, layout, replicates


def loss(structure, X, rows, rule):
    """(the loss from scratch, log det M), -log det M or tr(B M^{-1}) of M built from the runs."""
    M = structure.information(X, rows)
    sign, logdet = np.linalg.slogdet(M)
    if sign <= 0:
        return np.inf, -np.inf
    return (-logdet if isinstance(rule, ExactDCriterion) else float(np.trace(np.linalg.solve(M, rule.B)))), logdet


def direct_gain(structure, X, rows, new_rows, rule):
    """The loss decrease from rows to new_rows, from scratch; -inf where det M' / det M <= MIN_DET_RATIO."""
    before, logdet = loss(structure, X, rows, rule)
    after, new_logdet = loss(structure, X, new_rows, rule)
    if not new_logdet - logdet > np.log(MIN_DET_RATIO):
        return -np.inf
    return before - after


def check_gain(gain, structure, X, rows, new_rows, rule):
    """gain against the direct one, to TOL (1 + |gain|) plus the rounding of both: the direct one's two losses are
    computed to about eps cond(M) |loss| each, and their difference cancels; the compiled price updates M^{-1} by
    low-rank corrections, whose forward error is about eps cond(M) cond(M') |gain| (3.4e-6 on a gain of 5.9e3 with
    cond(M) = 2.2e3 under numpy 1.24 and numba 0.59-0.62, where an exact rational computation puts the direct one
    within 5e-9). True if the gain is finite."""
    expected = direct_gain(structure, X, rows, new_rows, rule)
    if not np.isfinite(expected):
        assert gain == expected
        return False
    conds = [np.linalg.cond(structure.information(X, r)) for r in (rows, new_rows)]
    rounding = sum(c * abs(loss(structure, X, r, rule)[0]) for c, r in zip(conds, (rows, new_rows), strict=True))
    updates = conds[0] * conds[1] * abs(expected)
    assert abs(gain - expected) <= TOL * (1.0 + abs(expected)) + np.finfo(float).eps * (16 * rounding + updates)
    return True


def candidate_moves(search, layout, structure, replicates, rows):
    """Every (kind, index, new rows) of the search's moves from ``rows``: runs moved, groups reset, runs exchanged."""
    moves = []
    if layout is not None:
        for level in range(layout.tied):
            for g in structure.groups(level).tolist():
                runs = np.flatnonzero(structure.members[:, level] == g)
                for s in range(layout.radices[level]):
                    new = rows.copy()
                    new[runs] += (s - layout.setting(rows[runs], level)) * layout.strides[level]
                    moves.append(("reset", (level, g, s), new))
    for r in range(rows.size):
        for j in search.allowed(r):
            new = rows.copy()
            new[r] = j
            moves.append(("move", (r, int(j)), new))
    return moves


KINDS = ["fixed", "random", "unique", "split", "split-wide", "nested", "crossed"]


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_state_is_that_of_the_runs(kind, criterion):
    X, rows, structure, rule, layout, replicates = instance(kind, criterion, 1)
    search = GroupSearch(X, rows, structure, rule, replicates, layout)
    M = structure.information(X, rows)
    Minv = np.linalg.inv(M)
    np.testing.assert_allclose(search.M, M, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(search.state.L @ search.state.L.T, M, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(search.state.Minv, Minv, rtol=1e-9, atol=TOL)
    np.testing.assert_allclose(search.state.h, np.einsum("ki,ij,kj->k", X, Minv, X), rtol=1e-9, atol=TOL)
    assert search.loss == pytest.approx(loss(structure, X, rows, rule)[0], rel=TOL, abs=TOL)


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_every_price_is_the_loss_recomputed_from_scratch(kind, criterion, seed):
    """Run moves, new settings of a group (both the determinant lemma and M' rebuilt) and exchanges between blocks:
    the compiled gain equals loss - loss(new runs) from numpy's slogdet / solve to 1e-10 (plus the rounding of that
    difference), or is -inf exactly where the new M is (nearly) singular."""
    X, rows, structure, rule, layout, replicates = instance(kind, criterion, seed)
    search = GroupSearch(X, rows, structure, rule, replicates, layout)
    checked = 0
    for what, index, new in candidate_moves(search, layout, structure, replicates, rows):
        if what == "move":
            r, j = index
            gain = search.move_gains(r, np.array([j]))[0]
        else:
            level, g, s = index
            gain = search.reset_gains(level, g)[s]
        if np.array_equal(new, rows):
            assert gain == -np.inf  # its own candidate or setting
            continue
        checked += check_gain(gain, structure, X, rows, new, rule)
    pairs, gains = search.swap_gains()
    for (r1, r2), gain in zip(pairs, gains, strict=True):
        new = rows.copy()
        new[[r1, r2]] = rows[[r2, r1]]
        checked += check_gain(gain, structure, X, rows, new, rule)
    assert (pairs.shape[0] > 0) == (layout is None)
    assert checked >= 15


def exact_information(structure, X, rows):
    """M = X_r^T X_r - S^T Gamma S in exact rational arithmetic (of the floats' exact values)."""
    Xr = [[Fraction(v) for v in X[r]] for r in rows]
    gamma = [[Fraction(v) for v in row] for row in structure.gamma]
    Zt, p, G = structure.indicator(), X.shape[1], structure.n_groups
    S = [[sum((Xr[r][j] for r in range(len(rows)) if Zt[g, r]), Fraction(0)) for j in range(p)] for g in range(G)]
    GS = [[sum(gamma[g][f] * S[f][j] for f in range(G)) for j in range(p)] for g in range(G)]
    return [[sum(x[i] * x[j] for x in Xr) - sum(S[g][i] * GS[g][j] for g in range(G)) for j in range(p)]
            for i in range(p)]


def exact_inverse(M):
    """(det M, M^{-1}) by Gauss–Jordan elimination in exact arithmetic (det 0, None if singular)."""
    n = len(M)
    A = [row[:] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(M)]
    det = Fraction(1)
    for k in range(n):
        pivot = next((i for i in range(k, n) if A[i][k] != 0), None)
        if pivot is None:
            return Fraction(0), None
        if pivot != k:
            A[k], A[pivot], det = A[pivot], A[k], -det
        det *= A[k][k]
        A[k] = [v / A[k][k] for v in A[k]]
        for i in range(n):
            if i != k and A[i][k] != 0:
                A[i] = [a - A[i][k] * b for a, b in zip(A[i], A[k], strict=True)]
    return det, [row[n:] for row in A]


@pytest.mark.parametrize("criterion", ["D", "A"])
@pytest.mark.parametrize("kind", ["fixed", "random", "split"])
def test_the_prices_are_exact_to_1e10(kind, criterion):
    """Every run move and new setting against log det M' / det M and tr(M^{-1}) - tr(M'^{-1}) in exact rational
    arithmetic: to 1e-10 (1 + |gain|), where numpy's own from-scratch difference can be off by more."""
    X, rows, structure, rule, layout, replicates = instance(kind, criterion, 2)
    search = GroupSearch(X, rows, structure, rule, replicates, layout)
    det0, inverse0 = exact_inverse(exact_information(structure, X, rows))
    checked = 0
    for what, index, new in candidate_moves(search, layout, structure, replicates, rows):
        if np.array_equal(new, rows):
            continue
        gain = (search.move_gains(index[0], np.array([index[1]]))[0] if what == "move"
                else search.reset_gains(index[0], index[1])[index[2]])
        det, inverse = exact_inverse(exact_information(structure, X, new))
        ratio = det / det0
        if ratio <= Fraction(MIN_DET_RATIO) * 1.01:
            continue  # at (or by rounding near) the singular threshold
        if criterion == "D":
            exact = math.log(ratio.numerator) - math.log(ratio.denominator)
        else:
            exact = float(sum(inverse0[i][i] - inverse[i][i] for i in range(len(inverse))))
        assert abs(gain - exact) <= TOL * (1.0 + abs(exact))
        checked += 1
    assert checked >= 15


def reference_search(X, rows, structure, rule, layout, replicates):
    """The passes of the search with every move priced from scratch: each group in turn its best setting, each run
    its best allowed candidate, the best exchange between groups, each improving move made at once."""
    rows = rows.copy()
    for _ in range(500):
        moved = False
        current = loss(structure, X, rows, rule)[0]
        if layout is not None:
            for level in range(layout.tied):
                for g in structure.groups(level).tolist():
                    runs = np.flatnonzero(structure.members[:, level] == g)
                    news = []
                    for s in range(layout.radices[level]):
                        new = rows.copy()
                        new[runs] += (s - layout.setting(rows[runs], level)) * layout.strides[level]
                        news.append(new)
                    gains = [-np.inf if np.array_equal(n, rows) else direct_gain(structure, X, rows, n, rule)
                             for n in news]
                    best = int(np.argmax(gains))
                    if gains[best] > MIN_GAIN * (1 + abs(current)):
                        rows, moved = news[best], True
                        current = loss(structure, X, rows, rule)[0]
        for r in range(rows.size):
            probe = GroupSearch(X, rows, structure, rule, replicates, layout)
            J = probe.allowed(r)
            if J.size == 0 or (J.size <= 1 and layout is not None):
                continue
            gains = []
            for j in J:
                new = rows.copy()
                new[r] = j
                gains.append(-np.inf if j == rows[r] else direct_gain(structure, X, rows, new, rule))
            best = int(np.argmax(gains))
            if gains[best] > MIN_GAIN * (1 + abs(current)):
                rows = rows.copy()
                rows[r] = J[best]
                moved, current = True, loss(structure, X, rows, rule)[0]
        if layout is None and structure.n_groups > 1:
            best_gain, best_new = -np.inf, None
            for r1 in range(rows.size):
                for r2 in range(r1 + 1, rows.size):
                    if structure.members[r1, 0] == structure.members[r2, 0] or rows[r1] == rows[r2]:
                        continue
                    new = rows.copy()
                    new[[r1, r2]] = rows[[r2, r1]]
                    gain = direct_gain(structure, X, rows, new, rule)
                    if gain > best_gain:
                        best_gain, best_new = gain, new
            if best_new is not None and best_gain > MIN_GAIN * (1 + abs(current)):
                rows, moved = best_new, True
        if not moved:
            return rows
    return rows


@pytest.mark.parametrize("criterion", ["D", "A"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_search_makes_the_moves_of_a_direct_search(kind, criterion):
    """From the same start the compiled passes reach the design of the passes priced from scratch, a local optimum of
    every move."""
    X, rows, structure, rule, layout, replicates = instance(kind, criterion, 7)
    search = GroupSearch(X, rows, structure, rule, replicates, layout)
    found = search.run()
    np.testing.assert_array_equal(found, reference_search(X, rows, structure, rule, layout, replicates))
    assert search.loss == pytest.approx(loss(structure, X, found, rule)[0], rel=TOL, abs=TOL)
    assert search.moves > 0
    again = GroupSearch(X, found, structure, rule, replicates, layout)
    for _, _, new in candidate_moves(again, layout, structure, replicates, found):
        assert direct_gain(structure, X, found, new, rule) <= MIN_GAIN * (1 + abs(again.loss))


def test_restarted_searches_share_the_plan_and_match_fresh_ones():
    X, rows, structure, rule, layout, replicates = instance("nested", "D", 2)
    first = GroupSearch(X, rows, structure, rule, replicates, layout)
    other = instance("nested", "D", 3)[1]
    restarted = first.restart(other)
    fresh = GroupSearch(X, other, structure, rule, replicates, layout)
    assert restarted.plan is first.plan
    np.testing.assert_array_equal(restarted.run(), fresh.run())
    np.testing.assert_array_equal(first.rows, rows)  # the first search's state is its own


def test_best_of_starts_skips_singular_starts_and_keeps_the_best():
    X, rows, structure, rule, layout, replicates = instance("random", "D", 4)
    singular = np.zeros_like(rows)  # every run at one candidate: M has rank one
    starts = [singular, rows, singular, np.random.default_rng(5).permutation(rows)]
    found = best_of_starts(lambda k: starts[k], lambda r: GroupSearch(X, r, structure, rule, replicates, layout), 3,
                           np.inf)
    assert len(found.losses) == 2 and found.moves > 0
    assert loss(structure, X, found.rows, rule)[0] == pytest.approx(min(found.losses), abs=TOL)


def numpy_relaxed(X, A, h, rho, floor=-np.inf):
    """The pairwise Frank–Wolfe of the relaxation in numpy (block_bounds' method, step by step)."""
    V = X @ A
    w = np.zeros(h.size)
    w[int(np.argmax(h))] = 1.0
    bound = np.inf
    for _ in range(FW_STEPS):
        z = X.T @ w
        f = float(h @ w - rho * (z @ (A @ z)))
        grad = h - 2.0 * rho * (V @ z)
        k = int(np.argmax(grad))
        gap = float(grad[k] - grad @ w)
        bound = min(bound, f + max(gap, 0.0))
        if gap <= FW_GAP * max(abs(f), 1e-300) or bound <= floor:
            break
        support = np.flatnonzero(w > 0)
        j = int(support[np.argmin(grad[support])])
        slope = float(grad[k] - grad[j])
        if j == k or slope <= 0:
            j, limit, slope = -1, 1.0, gap
            curvature = rho * float((X[k] - z) @ (V[k] - A @ z))
        else:
            limit = float(w[j])
            curvature = rho * float(h[k] + h[j] - 2.0 * (V[k] @ X[j]))
        step = limit if curvature <= 0 else min(limit, slope / (2.0 * curvature))
        if j < 0:
            w *= 1.0 - step
        else:
            w[j] -= step
            if step >= limit:
                w[j] = 0.0
        w[k] += step
    return bound


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_relaxation_is_the_numpy_one_and_a_valid_bound(seed):
    rng = np.random.default_rng(seed)
    K, p = int(rng.integers(2, 30)), int(rng.integers(1, 7))
    X = rng.standard_normal((K, p))
    R = rng.standard_normal((p, p))
    A = R @ R.T + 0.1 * np.eye(p)
    h = np.einsum("ki,ij,kj->k", X, A, X)
    rho = float(rng.uniform(0.05, 1.0))
    bound = _relaxed(X, A, h, rho)
    assert bound == pytest.approx(numpy_relaxed(X, A, h, rho), rel=1e-9)
    W = rng.dirichlet(np.full(K, 0.3), size=200)
    Z = W @ X
    f = W @ h - rho * np.einsum("si,ij,sj->s", Z, A, Z)
    assert bound >= f.max() - 1e-12 and bound >= h.max() - rho * h.max() - 1e-12
    floor = float(rng.uniform(h.min(), h.max()))
    low = _relaxed(X, A, h, rho, floor)
    assert low >= f.max() - 1e-12 or low <= floor  # a bound, or a number below the floor


def test_runs_that_are_not_candidates_are_refused_before_the_compiled_code():
    X, rows, structure, rule, layout, replicates = instance("random", "D", 4)
    search = GroupSearch(X, rows, structure, rule, replicates, layout)
    for bad in (rows[:-1], np.append(rows, 0), np.where(np.arange(rows.size) == 0, X.shape[0], rows), rows - 100):
        with pytest.raises(ValueError, match="candidate indices"):
            search.restart(bad)
