"""Exact N-run designs (optdesign.exact_designs): against enumeration of every N-run design, closed forms and the
bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.exact_designs.criteria import MIN_DET_RATIO, ExactDCriterion, ExactLinearCriterion
from optdesign.exact_designs.exchange import Exchange


def quadratic(points):
    t = np.asarray(points, dtype=float)
    return np.column_stack([np.ones(t.size), t, t**2])


def response_surface(k):
    """Full quadratic model in k factors on the 3^k grid: 1, x_i, x_i x_j (i <= j)."""
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=k)))
    cols = [np.ones(len(g))] + [g[:, i] for i in range(k)] + [g[:, i] * g[:, j] for i in range(k) for j in range(i, k)]
    return np.column_stack(cols)


def criterion_value(X, counts, criterion, B=None):
    """The homogeneous value, computed directly: det(M)^(-1/d) or tr(B M^{-1}), M = sum (n_k / n) x_k x_k^T."""
    M = (X * (counts / counts.sum())[:, None]).T @ X
    if criterion == "D":
        sign, logdet = np.linalg.slogdet(M)
        return np.exp(-logdet / X.shape[1]) if sign > 0 else np.inf
    if np.linalg.matrix_rank(M) < X.shape[1]:
        return np.inf
    B = np.eye(X.shape[1]) if criterion == "A" else B
    return float(np.trace(B @ np.linalg.inv(M)))


def enumerated_optimum(X, n, criterion, replicates, B=None):
    """The best value over every n-run design (multisets of candidates, or subsets without replicates)."""
    K = X.shape[0]
    pick = itertools.combinations_with_replacement if replicates else itertools.combinations
    return min(criterion_value(X, np.bincount(c, minlength=K), criterion, B) for c in pick(range(K), n))


def test_three_points_one_run_each_is_d_optimal():
    """Quadratic regression on {-1, 0, 1}, N = 3: one run per point, which is also the approximate optimum."""
    res = od.exact_design(quadratic([-1, 0, 1]), 3)
    assert res.counts.tolist() == [1, 1, 1]
    assert res.efficiency == pytest.approx(1.0, abs=1e-9)
    # det M = 4/27 at the uniform design on {-1, 0, 1}
    assert res.value == pytest.approx((4 / 27) ** (-1 / 3), rel=1e-12)


@pytest.mark.parametrize("points", [[-1, 0, 1], [-1, -0.3, 0.2, 1], [-1, -0.5, 0, 0.5, 1]])
@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("replicates", [True, False])
def test_equals_enumeration_on_quadratic_regression(points, criterion, replicates):
    X = quadratic(points)
    B = X.T @ X / len(X)
    for n in range(3, 6):
        if not replicates and n > len(points):
            continue
        res = od.exact_design(X, n, criterion, replicates=replicates)
        best = enumerated_optimum(X, n, criterion, replicates, B)
        assert res.value == pytest.approx(best, rel=1e-9)
        assert res.value == pytest.approx(criterion_value(X, res.counts, criterion, B), rel=1e-9)
        assert res.lower_bound <= best * (1 + 1e-12)  # the approximate bound is below the exact optimum


@pytest.mark.parametrize("criterion", ["D", "A"])
@pytest.mark.parametrize("n", [6, 7])
def test_equals_enumeration_on_a_response_surface(criterion, n):
    """Quadratic model in 2 factors on the 3 x 3 grid (p = 6): all 3003 (n = 6) or 6435 (n = 7) designs."""
    X = response_surface(2)
    res = od.exact_design(X, n, criterion)
    best = enumerated_optimum(X, n, criterion, True)
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.efficiency <= 1.0


def test_bounds_match_closed_form_approximate_optima():
    """On {-1, 0, 1}: the D-optimal design is uniform (det M = 4/27); the A-optimal one is (1/4, 1/2, 1/4)
    with tr M^{-1} = 8 (M = [[1, 0, 1/2], [0, 1/2, 0], [1/2, 0, 1/2]])."""
    X = quadratic([-1, 0, 1])
    d_opt = (4 / 27) ** (-1 / 3)
    a_opt = criterion_value(X, np.array([1, 2, 1]), "A")
    assert a_opt == pytest.approx(8.0)
    for n in (3, 4, 7):
        d_res = od.exact_design(X, n, "D", tol=1e-8)
        a_res = od.exact_design(X, n, "A", tol=1e-8)
        assert d_opt / (1 + 1e-7) <= d_res.lower_bound <= d_opt
        assert a_opt / (1 + 1e-7) <= a_res.lower_bound <= a_opt
        assert d_res.value >= d_opt and a_res.value >= a_opt


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
def test_stated_efficiency_is_certified_and_counts_are_integers(criterion):
    X = response_surface(3)
    for n in (10, 17, 30):
        res = od.exact_design(X, n, criterion, restarts=3)
        assert res.counts.dtype.kind == "i" and res.counts.min() >= 0 and res.counts.sum() == n
        # value = lower_bound / efficiency, and the bound is below the approximate design's value
        assert res.value * res.efficiency == pytest.approx(res.lower_bound, rel=1e-12)
        assert 0 < res.efficiency <= 1 and res.lower_bound <= res.approximate_value
        assert res.value == pytest.approx(criterion_value(X, res.counts, criterion, X.T @ X / len(X)), rel=1e-9)


def test_without_replicates_at_most_one_run_per_candidate():
    X = response_surface(2)
    for n in (6, 8, 9):
        res = od.exact_design(X, n, replicates=False)
        assert res.counts.max() == 1 and res.counts.sum() == n
    assert od.exact_design(X, 9, replicates=False).counts.tolist() == [1] * 9


def test_i_criterion_moments_default_to_the_candidates():
    X = response_surface(2)
    default = od.exact_design(X, 8, "I")
    given = od.exact_design(X, 8, "I", moments=X.T @ X / len(X))
    assert given.value == pytest.approx(default.value, rel=1e-9)
    other = np.diag([1.0, 0.1, 0.1, 0.5, 0.2, 0.5])  # another region: the values differ
    assert od.exact_design(X, 8, "I", moments=other).value != pytest.approx(default.value)


@pytest.mark.parametrize("rule", [ExactDCriterion(), ExactLinearCriterion(np.eye(4), "A"),
                                  ExactLinearCriterion(np.diag([1.0, 2.0, 0.5, 0.0]) + 0.1, "I")])
def test_swap_gains_equal_the_direct_change(rule):
    """Determinant lemma / Woodbury: each gain is loss(M) - loss(M - x_i x_i^T + x_j x_j^T), computed directly."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 4))
    counts = np.array([2, 1, 1, 0, 1, 0, 3, 0, 0, 1, 0, 0])
    search = Exchange(X, counts, rule, True)
    points, table = search.move_gains()
    for column, i in enumerate(points):
        gains = table[:, column]
        for j in range(12):
            if j == i:
                assert gains[j] == -np.inf  # no move
                continue
            moved = counts.copy()
            moved[i] -= 1
            moved[j] += 1
            direct = search.loss - Exchange(X, moved, rule, True).loss
            assert gains[j] == pytest.approx(direct, rel=1e-8, abs=1e-10)
    search.move(0, 3)  # after the rank-one updates V, h and the kept quantities match a fresh factorisation
    fresh = Exchange(X, search.counts, rule, True)
    np.testing.assert_allclose(search.V, fresh.V, atol=1e-10)
    np.testing.assert_allclose(search.h, fresh.h, atol=1e-10)
    if fresh.extra is not None:
        np.testing.assert_allclose(search.extra, fresh.extra, atol=1e-10)


def test_the_rounded_start_survives_a_singular_rounding():
    """n = d on a design with more than d support points: the start is completed to a basis."""
    X = response_surface(3)
    res = od.exact_design(X, 10, restarts=0)
    assert res.counts.sum() == 10 and np.linalg.matrix_rank(X[res.support]) == 10


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n": 2}, "n >= 3"),
    ({"n": 4, "replicates": False}, "n <= 3"),
    ({"n": 0}, "n must be a positive integer"),
    ({"n": 3, "criterion": "E"}, "criterion must be one of D, A, I"),
    ({"n": 3, "criterion": "A", "moments": np.eye(3)}, "moments= is the region of the I-criterion"),
    ({"n": 3, "criterion": "I", "moments": -np.eye(3)}, "positive semidefinite"),
    ({"n": 3, "criterion": "I", "moments": np.ones((3, 2))}, "3 columns"),
    ({"n": 3, "criterion": "I", "moments": np.triu(np.ones((3, 3)))}, "symmetric"),
    ({"n": 3, "restarts": -1}, "restarts"),
])
def test_bad_input_is_one_clear_error(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        od.exact_design(quadratic([-1, 0, 1]), **kwargs)


def test_bad_candidates_are_one_clear_error():
    with pytest.raises(InvalidInputError, match="NaN or infinite"):
        od.exact_design(np.array([[1.0, np.nan], [0.0, 1.0]]), 2)
    with pytest.raises(InvalidInputError, match="span R"):
        od.exact_design(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), 3)


@pytest.mark.parametrize("replicates", [True, False])
def test_every_kind_of_start_is_a_spanning_n_run_design(replicates):
    from optdesign.exact_designs.starts import extreme_start, perturbed_start

    X = response_surface(3)
    rng = np.random.default_rng(1)
    for n in (10, 14, 27):
        for counts in (extreme_start(X, n, replicates, rng),
                       perturbed_start(X, extreme_start(X, n, replicates, rng), replicates, rng)):
            assert counts.sum() == n and counts.min() >= 0 and np.linalg.matrix_rank(X[counts > 0]) == 10
            assert replicates or counts.max() == 1


def test_a_time_limit_stops_the_restarts():
    X = response_surface(3)
    res = od.exact_design(X, 15, restarts=10**6, time_limit=1.0)  # a start takes milliseconds, even on a busy machine
    assert 1 < res.starts < 10**6 and res.counts.sum() == 15
    assert od.exact_design(X, 15, restarts=0).starts == 1


def _direct_loss(X, counts, rule):
    """The loss recomputed from scratch (inf when M is singular)."""
    try:
        return Exchange(X, counts, rule, True).loss
    except np.linalg.LinAlgError:
        return np.inf


def _logdet(X, counts):
    """log det M (-inf when singular)."""
    sign, logdet = np.linalg.slogdet((X * counts[:, None]).T @ X)
    return logdet if sign > 0 else -np.inf


def _moves(search):
    """Every one-run move (i, j) with a finite gain, by enumeration."""
    points, table = search.move_gains()
    return [(int(i), int(j)) for c, i in enumerate(points) for j in range(table.shape[0]) if np.isfinite(table[j, c])]


@pytest.mark.parametrize("rule", [ExactDCriterion(), ExactLinearCriterion(np.eye(4), "A"),
                                  ExactLinearCriterion(np.diag([1.0, 2.0, 0.5, 0.0]) + 0.1, "I")])
def test_pair_gains_equal_the_direct_change(rule):
    """4 x 4 determinant lemma / Woodbury: each pair's gain is loss(M) - loss(M') with both runs moved, computed
    directly; the pairs listed are exactly the feasible pairs of distinct moves (counts stay >= 0)."""
    from optdesign.exact_designs.pair_moves import pair_gains

    rng = np.random.default_rng(5)
    X = rng.standard_normal((9, 4))
    counts = np.array([2, 1, 1, 0, 1, 0, 3, 0, 0])
    search = Exchange(X, counts, rule, True)
    points, table = search.move_gains()
    U, gains = pair_gains(search, points, table, moves=10**6)
    listed = set()
    for (j1, i1, j2, i2), gain in zip(U, gains, strict=True):
        moved = counts.copy()
        np.add.at(moved, [j1, i1, j2, i2], [1, -1, 1, -1])
        assert moved.min() >= 0
        listed.add(frozenset([(int(i1), int(j1)), (int(i2), int(j2))]))
        if gain == -np.inf:  # refused: M' (nearly) singular, det M' / det M below MIN_DET_RATIO
            assert _logdet(X, moved) - _logdet(X, counts) < np.log(2 * MIN_DET_RATIO)
            continue
        direct = search.loss - _direct_loss(X, moved, rule)
        assert gain == pytest.approx(direct, rel=1e-7, abs=1e-9)
    moves = _moves(search)
    feasible = set()
    for a, b in itertools.combinations(moves, 2):
        moved = counts.copy()
        np.add.at(moved, [a[1], a[0], b[1], b[0]], [1, -1, 1, -1])
        if moved.min() >= 0:
            feasible.add(frozenset([a, b]))
    assert listed == feasible and len(U) == len(feasible)


@pytest.mark.parametrize("criterion", ["D", "A"])
@pytest.mark.parametrize("by_point", [False, True])
def test_the_search_ends_where_no_move_and_no_pair_improves(criterion, by_point, monkeypatch):
    """With every pair priced, the local optimum is 2-opt: by enumeration, no single move and no pair of moves
    lowers the loss; also when single moves go point by point (the path of large tables)."""
    if by_point:
        monkeypatch.setattr("optdesign.exact_designs.exchange.TABLE_ENTRIES", 0)
    X = response_surface(2)
    rule = ExactDCriterion() if criterion == "D" else ExactLinearCriterion(np.eye(6), "A")
    rng = np.random.default_rng(2)
    for n in (7, 9):
        counts = np.bincount(rng.choice(9, size=n), minlength=9)
        counts = od.exact_design(X, n, criterion, restarts=0).counts if np.linalg.matrix_rank(X[counts > 0]) < 6 \
            else counts
        search = Exchange(X, counts, rule, True, pair_moves=10**6)
        final = search.run()
        loss = _direct_loss(X, final, rule)
        tol = 1e-9 * (1 + abs(loss))
        moves = _moves(search)
        for i, j in moves:
            moved = final.copy()
            moved[i] -= 1
            moved[j] += 1
            assert _direct_loss(X, moved, rule) >= loss - tol
        for a, b in itertools.combinations(moves, 2):
            moved = final.copy()
            np.add.at(moved, [a[1], a[0], b[1], b[0]], [1, -1, 1, -1])
            if moved.min() >= 0:
                assert _direct_loss(X, moved, rule) >= loss - tol


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
def test_pairs_only_improve_on_the_single_move_optimum(criterion):
    """From the same start the search with pairs follows the single moves to their local optimum and goes on from
    there, so it never ends worse; on the quadratic model in three factors it ends strictly better somewhere."""
    from optdesign.exact_designs.exchange import local_optimum
    from optdesign.exact_designs.starts import extreme_start

    X = response_surface(3)
    B = None if criterion == "D" else np.eye(10) if criterion == "A" else X.T @ X / X.shape[0]
    rule = ExactDCriterion() if B is None else ExactLinearCriterion(B, criterion)
    rng = np.random.default_rng(0)
    better = 0
    for _ in range(30):
        start = extreme_start(X, 16, True, rng)
        _, single, _ = local_optimum(X, start, rule, True, pairs=False)
        _, paired, _ = local_optimum(X, start, rule, True)
        assert paired <= single + 1e-9 * (1 + abs(single))
        better += paired < single - 1e-9 * (1 + abs(single))
    assert better > 0
