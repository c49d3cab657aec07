"""Designs over all pairwise differences without listing them (optdesign.linear.pairs), against the
explicit direction list, brute force and closed forms."""

import numpy as np
import pytest

import optdesign as od
import optdesign.linear.designs as lin
import optdesign.linear.dispatch as dispatch
import optdesign.linear.models as models
import optdesign.linear.pairs as pairs
from bandits.instances import many_arms
from bandits.linear import RAGE, StaticAllocation
from bandits.linear import static as static_module
from optdesign.errors import InstanceTooLargeError


def _brute_pairs(V):
    n = V.shape[1]
    i, j = np.triu_indices(n, 1)
    return np.sum((V[:, i] - V[:, j]) ** 2, axis=0), np.stack([i, j], axis=1)


@pytest.mark.parametrize("chunk", [7, 1000, 2_000_000])
def test_top_pairs_equals_brute_force_whatever_the_chunking(monkeypatch, chunk):
    monkeypatch.setattr(pairs, "PAIR_CHUNK_ENTRIES", chunk)
    V = np.random.default_rng(0).standard_normal((3, 60))
    values, all_pairs = _brute_pairs(V)
    best, top = pairs.top_pairs(V, 15)
    assert best == pytest.approx(values.max(), rel=1e-12)
    expected = {tuple(p) for p in all_pairs[np.argsort(-values)[:15]].tolist()}
    assert {tuple(p) for p in top.tolist()} == expected
    assert np.all(top[:, 0] < top[:, 1])
    floor = np.sort(values)[-4]
    _, above = pairs.top_pairs(V, 15, floor=floor)
    assert len(above) == 3  # strictly above the 4th largest


@pytest.mark.parametrize("chunk", [5, 2_000_000])
@pytest.mark.parametrize("k", [0, 1, 40, 5_000])
def test_pruned_scan_equals_brute_force_on_spread_norms(monkeypatch, chunk, k):
    """The norm-bound pruning skips most pairs; the maximum and the top-k (with and without a floor) must
    still be exactly those of the full list, also with tied values (duplicated and antipodal items)."""
    monkeypatch.setattr(pairs, "PAIR_CHUNK_ENTRIES", chunk)
    rng = np.random.default_rng(5)
    V = rng.standard_normal((4, 120)) * np.exp(rng.uniform(-3, 1, 120))  # norms over two orders of magnitude
    V[:, 7] = V[:, 3]
    V[:, 9] = -V[:, 3]
    values, _ = _brute_pairs(V)
    best, top = pairs.top_pairs(V, k)
    assert best == pytest.approx(values.max(), rel=1e-12)
    ranked = np.sort(values)[::-1][: min(k, values.size)]
    assert np.sort(np.sum((V[:, top[:, 0]] - V[:, top[:, 1]]) ** 2, axis=0))[::-1] == pytest.approx(ranked, rel=1e-9)
    assert len({tuple(p) for p in top.tolist()}) == len(top) and np.all(top[:, 0] < top[:, 1])
    if k:
        floor = np.sort(values)[-31:-29].mean()  # between the 31st and the 30th largest
        _, above = pairs.top_pairs(V, k, floor=floor)
        assert len(above) == min(k, 30)


def _check_against_brute_force(V, k, floor=-np.inf):
    values, _ = _brute_pairs(V)
    best, top = pairs.top_pairs(V, k, floor)
    assert best == pytest.approx(values.max(), rel=1e-12)
    expected = np.sort(values[values > floor])[::-1][:k]
    got = np.sum((V[:, top[:, 0]] - V[:, top[:, 1]]) ** 2, axis=0)
    assert np.sort(got)[::-1] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert len({tuple(p) for p in top.tolist()}) == len(top) and np.all(top[:, 0] < top[:, 1])


def _item_sets(rng):
    """Items where each bound alone fails somewhere: equal norms (circle, sphere: the norm bound prunes nothing),
    norms over orders of magnitude, an arc of nearly equal directions (Fiez et al.'s many arms), lattice points
    (ties and duplicates) and a cloud far from the origin."""
    angles = 0.78 + rng.uniform(0.0, 0.1, 300)
    sphere = rng.standard_normal((3, 300))
    yield "circle", np.stack([np.cos(angles * 8), np.sin(angles * 8)]) * np.array([[3.0], [0.2]])
    yield "sphere", sphere / np.linalg.norm(sphere, axis=0)
    yield "spread norms", rng.standard_normal((4, 300)) * np.exp(rng.uniform(-5, 2, 300))
    yield "arc", np.c_[[1.0, 0.0], [-np.sqrt(0.5), np.sqrt(0.5)], np.stack([np.cos(angles), np.sin(angles)])]
    yield "lattice", rng.integers(-2, 3, (2, 300)).astype(float)
    yield "far cloud", rng.standard_normal((3, 300)) + 50.0


@pytest.mark.parametrize("block,chunk,partition", [(4, 7, 0), (16, 1000, 0), (16, 1000, 10**9), (128, 2_000_000, 64)])
@pytest.mark.parametrize("k", [0, 1, 2, 60])
def test_one_scan_equals_brute_force_where_either_bound_fails(monkeypatch, block, chunk, partition, k):
    """Block-centre and norm bounds together, in blocks small enough that both prune, with blocks by norm only
    (``partition`` large) or the better of norm and principal-axis blocks: the maximum and the top-k pairs
    (with and without a floor) are those of the full list, whatever bound does the pruning."""
    monkeypatch.setattr(pairs, "PAIR_BLOCK", block)
    monkeypatch.setattr(pairs, "PAIR_CHUNK_ENTRIES", chunk)
    monkeypatch.setattr(pairs, "PARTITION_PAIRS", partition)
    rng = np.random.default_rng(block + k)
    for _, V in _item_sets(rng):
        _check_against_brute_force(V, k)
        distinct = np.unique(np.round(_brute_pairs(V)[0], 9))[::-1]
        _check_against_brute_force(V, k, floor=(distinct[7] + distinct[8]) / 2)  # the 8 largest distinct values


def test_scan_of_tied_items():
    """All items equal (every pair at 0), two items, one item, and many copies of two antipodal points."""
    assert pairs.top_pairs(np.ones((2, 50)), 3)[0] == 0.0
    assert len(pairs.top_pairs(np.ones((2, 50)), 3)[1]) == 3
    best, top = pairs.top_pairs(np.array([[0.0, 3.0], [0.0, 4.0]]), 5)
    assert best == pytest.approx(25.0) and top.tolist() == [[0, 1]]
    assert pairs.top_pairs(np.ones((3, 1)), 2)[0] == 0.0
    V = np.repeat(np.array([[1.0, -1.0], [0.0, 0.0]]), 200, axis=1)  # 200 copies of each: 40,000 pairs at 4
    best, top = pairs.top_pairs(V, 10)
    assert best == pytest.approx(4.0) and len(top) == 10
    assert np.allclose(np.sum((V[:, top[:, 0]] - V[:, top[:, 1]]) ** 2, axis=0), 4.0)


def test_max_pair_variance_matches_pseudo_inverse_and_detects_unestimable_pairs():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((30, 4))
    B = rng.standard_normal((4, 3))
    A = B @ B.T  # rank 3
    all_pairs = _brute_pairs(Z.T)[1]
    assert pairs.max_pair_variance(A, Z) == np.inf  # generic differences leave range(A)
    # items that differ only inside range(A): every difference is estimable
    Zr = rng.standard_normal((30, 3)) @ B.T + rng.standard_normal(4)
    Y = Zr[all_pairs[:, 0]] - Zr[all_pairs[:, 1]]
    brute = np.einsum("ij,jk,ik->i", Y, np.linalg.pinv(A, hermitian=True), Y).max()
    assert pairs.max_pair_variance(A, Zr) == pytest.approx(brute, rel=1e-9)


@pytest.mark.parametrize("n,d,seed", [(250, 3, 0), (320, 5, 1)])
def test_generated_pairs_design_equals_explicit_list(n, d, seed):
    """Above PAIR_LIST_LIMIT the design is generated over pairs; same optimum, certificate on all pairs."""
    X = np.random.default_rng(seed).standard_normal((n, d))
    assert pairs.pair_count(n) > lin.PAIR_LIST_LIMIT
    gen = od.xy_allocation(X)
    assert gen.extras["working_directions"] < gen.extras["directions"] / 100
    ref = dispatch.minmax_design(X, od.pairwise_differences(X))
    assert gen.gap <= 1e-4 and ref.gap <= 1e-4
    # the generated value is F(w) over every pair, and both certificates bracket both values
    assert gen.value == pytest.approx(od.minmax_value(X, gen.weights, od.pairwise_differences(X)), rel=1e-10)
    assert gen.lower_bound <= ref.value * (1 + 1e-12) and ref.lower_bound <= gen.value * (1 + 1e-12)


def test_generated_transductive_design_with_the_cvxpy_inner_solver():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((6, 2))
    Z = rng.standard_normal((220, 2))
    gen = od.transductive(X, Z, method="cvxpy")
    ref = dispatch.minmax_design(X, od.pairwise_differences(Z), method="barrier", tol=1e-7)
    assert gen.value == pytest.approx(ref.value, rel=2e-4)
    assert gen.lower_bound <= ref.value * (1 + 1e-9)


def test_tied_pairs_use_the_explicit_list_and_reach_the_closed_form():
    """X = Z = basis of R^201 (20,100 pairs, all tied): value 2 d at the uniform design."""
    d = 201
    res = od.xy_allocation(np.eye(d))
    assert res.value == pytest.approx(2 * d, rel=1e-8) and res.gap <= 1e-6
    assert "working_directions" not in res.extras


def test_many_arms_at_the_papers_size_is_certified():
    """Fiez et al. exp. 2 with n = 10,000 arms (5e7 pairs): certified XY design and oracle design."""
    env = many_arms(10_000)
    xy = od.xy_allocation(env.X)
    assert xy.status == "optimal" and xy.gap <= 1e-4 and xy.extras["directions"] == 49_995_000
    small = many_arms(300)  # the same family: the value barely moves with n
    assert xy.value == pytest.approx(od.xy_allocation(small.X).value, rel=1e-3)
    # the oracle has only n directions but 10,000 nearly active arms: column generation on arms must
    # certify it within the first barrier run (it used to stall and hand a 1e8-cone model to cvxpy)
    oracle = od.xy_oracle(env.X, env.theta)
    assert oracle.status == "optimal" and oracle.gap <= 1e-4 and oracle.method == "barrier"
    assert oracle.value == pytest.approx(od.xy_oracle(small.X, small.theta).value, rel=1e-2)


def test_auto_does_not_build_a_huge_cvxpy_model(monkeypatch):
    X = np.random.default_rng(3).standard_normal((40, 3))
    Y = od.pairwise_differences(X)
    monkeypatch.setattr(dispatch, "BARRIER_TIME_LIMIT", 0.0)  # the first barrier attempt stops uncertified
    monkeypatch.setattr(dispatch, "AUTO_FALLBACK_CONES", 100)

    def refuse(*args, **kwargs):
        raise AssertionError("the cvxpy model must not be built above AUTO_FALLBACK_CONES")

    monkeypatch.setattr(lin, "MinMaxDesignModel", refuse)
    res = dispatch.minmax_design(X, Y)
    assert res.method == "barrier" and res.gap <= 1e-4
    monkeypatch.undo()
    monkeypatch.setattr(models, "MINMAX_MAX_CONES", 1000)
    with pytest.raises(InstanceTooLargeError, match="method='barrier'"):
        models.MinMaxDesignModel(X, Y)


def test_static_design_is_solved_once_per_instance(monkeypatch):
    calls = []
    real = static_module._solve_static_design
    monkeypatch.setattr(static_module, "_design_cache", {})
    def counting(design, env):
        calls.append(design)
        return real(design, env)

    monkeypatch.setattr(static_module, "_solve_static_design", counting)
    env = many_arms(50)
    other = many_arms(50, seed=1)
    for e in (env, env, other, env):
        StaticAllocation(design="oracle").start(e, 0.05, np.random.default_rng(0))
    assert calls == ["oracle", "oracle"]


def test_rage_on_many_arms_beyond_the_explicit_pair_list():
    """RAGE's phase designs and variance checks go through the pair scan (n = 2,000: 2e6 pairs)."""
    env = many_arms(2000)
    rng = np.random.default_rng(0)
    policy = RAGE().start(env, 0.05, rng)
    while not policy.stopped(0.05):
        counts = policy.next_batch(10**8)
        policy.observe(counts, env.pull(counts, rng))
    assert policy.recommend() == env.best_item
    assert len(policy.state.phases) >= 2
    for phase in policy.state.phases:
        assert phase["max_var"] <= phase["var_bound"] * (1 + 1e-9)


def test_pair_functions_reject_bad_input():
    from optdesign.errors import InvalidInputError

    V = np.random.default_rng(4).standard_normal((2, 10))
    with pytest.raises(InvalidInputError, match="NaN"):
        pairs.top_pairs(np.where(V > 1, np.nan, V), 3)
    with pytest.raises(InvalidInputError, match="k must be"):
        pairs.top_pairs(V, -1)
    with pytest.raises(InvalidInputError, match="square"):
        pairs.max_pair_variance(np.ones((2, 3)), V.T)
    with pytest.raises(InvalidInputError, match="2 columns"):
        pairs.max_pair_variance(np.eye(2), np.ones((4, 3)))
    X = np.eye(2)

    def never(*args):
        raise AssertionError("no inner solve on bad input")

    with pytest.raises(InvalidInputError, match="span"):
        pairs.pairwise_design(np.ones((3, 2)), V.T, never, tol=1e-4)
    with pytest.raises(InvalidInputError, match="tol"):
        pairs.pairwise_design(X, V.T, never, tol=0.0)
    with pytest.raises(InvalidInputError, match="batch"):
        pairs.pairwise_design(X, V.T, never, tol=1e-4, batch=0)
    with pytest.raises(InvalidInputError, match="single distinct item"):
        pairs.pairwise_design(X, np.ones((5, 2)), never, tol=1e-4)


def test_oracle_design_on_many_directions_generates_them(monkeypatch):
    """XY-oracle on 5,000 arms: generated directions (working set, all priced) against the full list; each
    certified bracket contains the other's value, and the certificate LP in small chunks gives the same design."""
    from optdesign.linear import certificate_lp

    rng = np.random.default_rng(3)
    X, theta = rng.standard_normal((5000, 4)), rng.standard_normal(4)
    generated = od.xy_oracle(X, theta)
    assert generated.extras["directions"] == 4999 and generated.extras["working_directions"] < 1000
    assert generated.status == "optimal" and generated.gap <= 1e-4
    monkeypatch.setattr(dispatch, "DIRECTION_LIST_LIMIT", 10**9)
    listed = od.xy_oracle(X, theta)
    assert "directions" not in listed.extras
    assert generated.lower_bound <= listed.value * (1 + 1e-9) and listed.lower_bound <= generated.value * (1 + 1e-9)
    monkeypatch.setattr(certificate_lp, "LP_CHUNK_ENTRIES", 1000)
    chunked = od.xy_oracle(X, theta)
    assert chunked.value == pytest.approx(listed.value, rel=1e-9)
    assert chunked.lower_bound == pytest.approx(listed.lower_bound, rel=1e-6)
