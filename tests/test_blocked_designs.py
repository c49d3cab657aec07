"""Blocked and split-plot exact designs (optdesign.exact_designs.blocked, split_plot): the information against explicit
V^{-1} and projections, closed forms, enumeration of every design, the certified bound, and refused input."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.exact_designs import blocked_information
from optdesign.exact_designs.block_bounds import group_bound


def indicator(sizes):
    """Z, N x b: run r in block g."""
    return np.repeat(np.eye(len(sizes)), sizes, axis=0)


def check_moves(search, rows, runs, check):
    """Price every move of each run of ``runs`` (a GroupSearch's moves) by ``check(gain, moved_rows)``, the run's own
    candidate gaining -inf; the number of finite gains checked."""
    checked = 0
    for r in runs:
        J = search.allowed(r)
        for j, gain in zip(J, search.move_gains(r, J), strict=True):
            moved = rows.copy()
            moved[r] = j
            if j == rows[r]:
                assert gain == -np.inf
            else:
                check(gain, moved)
                checked += np.isfinite(gain)
    return checked


def gls(X, rows, sizes, eta):
    """X_r^T V^{-1} X_r with V = I + eta Z Z^T built and inverted explicitly."""
    Z = indicator(sizes)
    V = np.eye(len(rows)) + eta * Z @ Z.T
    Xr = X[rows]
    return Xr.T @ np.linalg.solve(V, Xr)


def projected(X, rows, sizes):
    """X_r^T (I - P_Z) X_r, P_Z the orthogonal projection on the columns of Z."""
    Z = indicator(sizes)
    Xr = X[rows]
    return Xr.T @ (Xr - Z @ np.linalg.lstsq(Z, Xr, rcond=None)[0])


def random_instance(rng):
    K, p = int(rng.integers(5, 12)), int(rng.integers(1, 5))
    sizes = rng.integers(1, 5, size=int(rng.integers(1, 5)))
    return rng.standard_normal((K, p)), rng.integers(0, K, size=sizes.sum()), sizes


@pytest.mark.parametrize("seed", range(20))
def test_information_against_explicit_v_inverse_and_projection(seed):
    rng = np.random.default_rng(seed)
    X, rows, sizes = random_instance(rng)
    eta = float(rng.choice([0.0, rng.exponential(), 50 * rng.random()]))
    M = blocked_information(X, rows, sizes, "random", eta)
    assert np.allclose(M, gls(X, rows, sizes, eta), rtol=1e-10, atol=1e-10 * np.abs(M).max())
    F = blocked_information(X, rows, sizes, "fixed")
    assert np.allclose(F, projected(X, rows, sizes), rtol=1e-10, atol=1e-10 * max(1.0, np.abs(M).max()))
    # within-block centring, block by block
    starts = np.concatenate([[0], np.cumsum(sizes)])
    centred = sum((Xb := X[rows[a:b]] - X[rows[a:b]].mean(axis=0)).T @ Xb for a, b in itertools.pairwise(starts))
    assert np.allclose(F, centred, atol=1e-10 * max(1.0, np.abs(M).max()))


def test_random_information_falls_with_eta_from_unblocked_to_fixed():
    rng = np.random.default_rng(7)
    X, sizes = rng.standard_normal((9, 3)), np.array([3, 4, 2, 5])
    rows = rng.integers(0, 9, size=sizes.sum())
    Xr = X[rows]
    assert np.allclose(blocked_information(X, rows, sizes, "random", 0.0), Xr.T @ Xr, rtol=1e-12)
    fixed = blocked_information(X, rows, sizes, "fixed")
    previous = Xr.T @ Xr
    for eta in [0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1e4]:
        M = blocked_information(X, rows, sizes, "random", eta)
        assert np.linalg.eigvalsh(previous - M).min() >= -1e-10  # Loewner-decreasing in eta
        assert np.linalg.eigvalsh(M - fixed).min() >= -1e-10  # never below the fixed-block information
        previous = M
    gap = np.abs(blocked_information(X, rows, sizes, "random", 1e8) - fixed).max()
    assert gap <= 1e-6 * np.abs(fixed).max()


def factorial(k=3):
    F = np.array(list(itertools.product([-1.0, 1.0], repeat=k)))
    return np.column_stack([np.ones(len(F)), F]), F


@pytest.mark.parametrize("replicates", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_to_the_three_in_two_blocks_confounds_only_abc(replicates, seed):
    """The D-optimal fixed blocks of four keep the main effects orthogonal to blocks: slopes' information 8 I, as the
    textbook blocking that confounds only x1 x2 x3 with blocks (others reach it too, e.g. two fold-over pairs)."""
    X, F = factorial()
    res = od.blocked_design(X, [4, 4], replicates=replicates, seed=seed, restarts=5)
    assert res.parameters.tolist() == [1, 2, 3]  # the intercept is absorbed by the block effects
    assert np.allclose(res.information, 8 * np.eye(3), atol=1e-9)
    assert np.linalg.det(res.information) == pytest.approx(8.0**3, rel=1e-12)
    assert np.allclose(F[res.rows].reshape(2, 4, 3).sum(axis=1), 0.0)  # main effects orthogonal to blocks
    textbook = np.argsort(F.prod(axis=1), kind="stable")  # the blocks x1 x2 x3 = -1 and +1: ABC confounded
    assert np.allclose(blocked_information(X[:, 1:], textbook, [4, 4], "fixed"), 8 * np.eye(3))
    assert res.value == pytest.approx(1.0, rel=1e-12)
    assert res.efficiency == pytest.approx(1.0, abs=1e-9)
    assert res.lower_bound <= res.value


def blocked_enumeration(X, sizes, effects, eta, criterion, replicates):
    """The best value over every assignment of candidates to the runs (distinct candidates without replicates)."""
    K, N = X.shape[0], int(sum(sizes))
    rows = np.array(list(itertools.product(range(K), repeat=N)))
    if not replicates:
        rows = rows[np.array([len(set(r)) == N for r in rows])]
    Z = indicator(sizes)
    A = np.eye(N) - Z @ np.linalg.pinv(Z) if effects == "fixed" else np.linalg.inv(np.eye(N) + eta * Z @ Z.T)
    Xr = X[rows]
    M = np.einsum("dni,nm,dmj->dij", Xr, A, Xr) / N
    return stacked_values(M, criterion)


def stacked_values(M, criterion):
    """The best D or A value over stacked normalised information matrices (singular ones left out)."""
    eig = np.linalg.eigvalsh(M)
    M = M[eig[:, 0] > 1e-9 * eig[:, -1]]
    if criterion == "D":
        return float(np.min(np.exp(-np.linalg.slogdet(M)[1] / M.shape[1])))
    return float(np.min(np.trace(np.linalg.inv(M), axis1=1, axis2=2)))


@pytest.mark.parametrize(("effects", "eta", "sizes", "replicates"), [
    ("fixed", None, [3, 3], True), ("random", 1.0, [3, 3], True), ("random", 0.3, [2, 4], True),
    ("fixed", None, [2, 2, 2], False), ("random", 2.0, [2, 3], False)])
@pytest.mark.parametrize("criterion", ["D", "A"])
def test_blocked_equals_enumeration(effects, eta, sizes, replicates, criterion):
    """Quadratic model on {-1, 0, 1} x {-1, 1} minus its constant for fixed blocks (K = 6): every assignment."""
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], [-1.0, 1.0])))
    X = np.column_stack([np.ones(6), g[:, 0], g[:, 1], g[:, 0] ** 2])
    Xp = X[:, 1:] if effects == "fixed" else X
    best = blocked_enumeration(Xp, sizes, effects, eta, criterion, replicates)
    res = od.blocked_design(X, sizes, criterion, block_effects=effects, eta=eta, replicates=replicates, restarts=10)
    assert res.value == pytest.approx(best, rel=1e-9)
    M = blocked_information(Xp, res.rows, sizes, effects, 0.0 if eta is None else eta)
    assert np.allclose(res.information, M, rtol=1e-12)
    assert res.lower_bound <= best * (1 + 1e-12)
    rng = np.random.default_rng(1)
    for _ in range(5):  # the group bound is valid from any design's information, not only the optimum's
        rows = rng.integers(0, 6, size=sum(sizes))
        M = blocked_information(Xp, rows, sizes, effects, 0.0 if eta is None else eta)
        B = None if criterion == "D" else np.eye(Xp.shape[1])
        assert group_bound(Xp, M, np.array(sizes), effects, eta or 0.0, B) <= best * (1 + 1e-12)
    if not replicates:
        assert len(set(res.rows.tolist())) == res.n


def split_plot_enumeration(X, Kw, Ks, sizes, eta, criterion):
    """The best value over every split-plot design: a whole-plot setting per plot, a sub-plot setting per run (the
    candidates X in rows a Ks + t)."""
    N, G = int(sum(sizes)), len(sizes)
    levels = np.array(list(itertools.product(range(Kw), repeat=G)))
    subs = np.array(list(itertools.product(range(Ks), repeat=N)))
    rows = (np.repeat(levels, sizes, axis=1)[:, None, :] * Ks + subs[None, :, :]).reshape(-1, N)
    Z = indicator(sizes)
    Vinv = np.linalg.inv(np.eye(N) + eta * Z @ Z.T)
    Xr = X[rows]
    M = np.einsum("dni,nm,dmj->dij", Xr, Vinv, Xr) / N
    return stacked_values(M, criterion)


@pytest.mark.parametrize(("formula", "sub_levels", "sizes", "eta"), [
    ("~ w + s", [-1, 0, 1], [2, 2, 2], 1.0),
    ("~ w + s + w:s + I(s**2)", [-1, 0, 1], [3, 3], 1.0),
    ("~ w + s + I(s**2)", [-1, 0, 1], [2, 3, 2], 0.5),
    ("~ w + s + w:s", [-1, 1], [2, 2, 3], 4.0)])
@pytest.mark.parametrize("criterion", ["D", "A"])
def test_split_plot_equals_enumeration(formula, sub_levels, sizes, eta, criterion):
    X, _, _ = od.candidates(formula, {"w": [-1, 1], "s": sub_levels})  # row a Ks + t, as the search's
    best = split_plot_enumeration(X, 2, len(sub_levels), sizes, eta, criterion)
    for seed in range(3):
        res = od.split_plot_design(formula, {"w": [-1, 1]}, {"s": sub_levels}, sizes, criterion, eta=eta, seed=seed,
                                   restarts=8)
        assert res.value == pytest.approx(best, rel=1e-9)
        assert res.lower_bound <= best * (1 + 1e-12)
        rows = np.repeat(np.arange(len(sizes)) % 2, sizes) * len(sub_levels) + np.arange(sum(sizes)) % len(sub_levels)
        B = None if criterion == "D" else np.eye(X.shape[1])
        M = gls(X, rows, sizes, eta)  # another design: its bound is valid too
        assert group_bound(X, M, np.array(sizes), "random", eta, B, plots=len(sub_levels)) <= best * (1 + 1e-12)
        table = res.table()
        assert (table.groupby("whole_plot")["w"].nunique() == 1).all()
        assert np.allclose(res.information, gls(X, res.rows, sizes, eta), rtol=1e-10)


def test_eta_zero_and_one_run_per_block_against_the_unblocked_value():
    """eta = 0: the unblocked value of the same runs; one run per block: (1 + eta) times it (M / (1 + eta))."""
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=2)))
    X = np.column_stack([np.ones(9), g, g[:, 0] * g[:, 1], g ** 2])
    for criterion in "DAI":
        res = od.blocked_design(X, [4, 4, 3], criterion, block_effects="random", eta=0.0, restarts=3)
        same = od.exact_design(X, 0, criterion, fixed=res.counts(9))  # n = 0: the fixed runs evaluated
        assert res.value == pytest.approx(same.value, rel=1e-10)
        assert res.value == pytest.approx(od.exact_design(X, 11, criterion).value, rel=1e-6)
        eta = 2.5
        single = od.blocked_design(X, [1] * 8, criterion, block_effects="random", eta=eta, restarts=3)
        same = od.exact_design(X, 0, criterion, fixed=single.counts(9))
        assert single.value == pytest.approx((1 + eta) * same.value, rel=1e-10)


def test_one_fixed_block_is_the_intercept_adjusted_unblocked_design():
    """One fixed block: the slopes' information is the Schur complement of the intercept, det = det M(w), so the
    D value is the unblocked one to the power p / (p - 1)."""
    t = np.linspace(-1, 1, 7)
    X = np.column_stack([np.ones(7), t, t**2])
    res = od.blocked_design(X, [6], block_effects="fixed")
    unblocked = od.exact_design(X, 0, fixed=res.counts(7))
    assert res.value == pytest.approx(unblocked.value ** (3 / 2), rel=1e-10)
    assert res.value == pytest.approx(od.exact_design(X, 6).value ** (3 / 2), rel=1e-9)  # both optimal
    assert res.efficiency <= 1.0


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize(("effects", "eta"), [("fixed", None), ("random", 0.7)])
def test_reported_values_come_from_the_information(criterion, effects, eta):
    g = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=2)))
    X = np.column_stack([np.ones(9), g, g[:, 0] * g[:, 1], g ** 2])
    res = od.blocked_design(X, [5, 5, 4], criterion, block_effects=effects, eta=eta, restarts=4)
    Xp = X[:, res.parameters]
    M = blocked_information(Xp, res.rows, res.block_sizes, effects, eta or 0.0) / res.n
    region = np.cov(Xp.T, bias=True) if effects == "fixed" else Xp.T @ Xp / 9
    p = M.shape[0]
    assert res.values["D"] == pytest.approx(np.linalg.det(M) ** (-1 / p), rel=1e-10)
    assert res.values["A"] == pytest.approx(np.trace(np.linalg.inv(M)), rel=1e-10)
    assert res.values["I"] == pytest.approx(np.trace(region @ np.linalg.inv(M)), rel=1e-10)
    assert res.value == res.values[criterion]
    assert 0 < res.efficiency <= 1.0
    json.dumps(res.to_dict())


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"block_effects": "random", "eta": -0.1}, "eta"),
    ({"block_effects": "random", "eta": float("nan")}, "eta"),
    ({"block_effects": "random", "eta": True}, "eta"),
    ({"block_effects": "fixed", "eta": 1.0}, "eta"),
    ({"block_effects": "mixed"}, "block_effects"),
    ({"block_sizes": [4, 0]}, "block_sizes"),
    ({"block_sizes": []}, "block_sizes"),
    ({"block_sizes": [4.5, 4]}, "block_sizes"),
    ({"block_sizes": [float("nan"), 4]}, "NaN"),
    ({"block_sizes": [-2, 4]}, "block_sizes"),
    ({"block_sizes": [5, 5], "replicates": False}, "N <= 8"),
    ({"block_sizes": [1] * 8}, "singular"),
    ({"block_sizes": [2, 2]}, "N - b"),
    ({"block_sizes": [1, 1], "block_effects": "random"}, "singular"),
    ({"criterion": "E"}, "criterion"),
    ({"criterion": "D", "moments": np.eye(3)}, "moments"),
    ({"criterion": "I", "moments": np.eye(4)}, "moments must have 3 columns"),
])
def test_blocked_refuses_bad_input(kwargs, match):
    X, _ = factorial()
    args = {"block_sizes": [4, 4], **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        od.blocked_design(X, args.pop("block_sizes"), **args)


def test_fixed_blocks_refuse_a_constant_hidden_in_the_columns():
    onehot = np.repeat(np.eye(3), 2, axis=0)  # a categorical factor coded without intercept: columns sum to one
    X = np.column_stack([onehot, np.tile([-1.0, 1.0], 3)])
    with pytest.raises(InvalidInputError, match="constant"):
        od.blocked_design(X, [3, 3])
    assert od.blocked_design(X, [3, 3], block_effects="random").value > 0


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.split_plot_design("~ s", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 2]), "whole-plot factor.*w"),
    (lambda: od.split_plot_design("~ w", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 2]), "sub-plot factor.*s"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"w": [-1, 1]}, [2, 2]), "both"),
    (lambda: od.split_plot_design("~ w + s + z", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 2]), "not a factor"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [4]), "whole plots"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [1, 1]), "N = 2 < 3"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 2], eta=-1), "eta"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 0]), "whole_plot_sizes"),
    (lambda: od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [2, 2], "G"), "criterion"),
    (lambda: od.split_plot_design("~ w + s", [-1, 1], {"s": [-1, 1]}, [2, 2]), "whole_plot_factors"),
])
def test_split_plot_refuses_bad_input(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_blocked_information_refuses_bad_input():
    X = np.eye(2)
    with pytest.raises(InvalidInputError, match="rows"):
        blocked_information(X, [0, 1, 2], [3])
    with pytest.raises(InvalidInputError, match="rows"):
        blocked_information(X, [0, 1], [3])
    with pytest.raises(InvalidInputError, match="eta"):
        blocked_information(X, [0, 1], [2], "random", -1.0)


def test_split_plot_table_and_larger_instance():
    """Two hard and two easy factors on three levels, full quadratic model, 12 whole plots of 4 (skpr-like)."""
    formula = "~ (a + b + c + d)**2 + I(a**2) + I(b**2) + I(c**2) + I(d**2)"
    res = od.split_plot_design(formula, {"a": (-1, 1, 3), "b": (-1, 1, 3)}, {"c": (-1, 1, 3), "d": (-1, 1, 3)},
                               [4] * 12, eta=1.0, restarts=4)
    table = res.table()
    assert list(table.columns) == ["whole_plot", "candidate", "a", "b", "c", "d"]
    assert (table.groupby("whole_plot")[["a", "b"]].nunique() == 1).all().all()
    assert res.n == 48 and len(res.columns) == 15
    assert 0 < res.efficiency <= 1.0
    X, _, _ = od.candidates(formula, res.points)
    assert np.allclose(res.information, gls(X, res.rows, res.block_sizes, 1.0), rtol=1e-10)
    assert res.extras["whole_plot_settings"].size == 12
    json.dumps(res.to_dict())


def test_seven_treatments_in_seven_blocks_of_three_is_a_balanced_incomplete_block_design():
    """D-optimal fixed blocks of 3 on 7 treatments (AlgDesign's optBlock example): a BIBD (Kiefer 1958), every pair of
    treatments together in exactly one block. The unblocked bound certifies only 7/9, the BIBD's efficiency factor
    lambda v / (r k); the bound over mixtures of blocks certifies it optimal (its pair bound is exact here)."""
    X, _, _ = od.candidates("~ C(t)", {"t": [str(i) for i in range(1, 8)]})
    res = od.blocked_design(X, [3] * 7, restarts=3)
    incidence = np.zeros((7, 7))
    incidence[np.repeat(np.arange(7), 3), res.rows] = 1
    concurrence = incidence.T @ incidence
    assert np.all(np.diag(concurrence) == 3) and np.all(concurrence[~np.eye(7, dtype=bool)] == 1)
    assert res.extras["unblocked_lower_bound"] / res.value == pytest.approx(7 / 9, rel=1e-9)
    assert res.efficiency == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize(("effects", "eta", "plots"), [("fixed", 0.0, None), ("random", 0.8, None),
                                                        ("random", 2.0, 3)])
def test_every_move_is_priced_as_the_loss_recomputed(criterion, effects, eta, plots):
    """The rank-three prices of run moves and exchanges, and each whole-plot setting's loss, against the loss of the
    moved design computed from scratch."""
    from optdesign.exact_designs.block_information import shrinkage
    from optdesign.exact_designs.block_search import GroupSearch
    from optdesign.exact_designs.criteria import ExactDCriterion, ExactLinearCriterion
    from optdesign.exact_designs.group_structure import single_structure
    from optdesign.exact_designs.plot_layout import Layout

    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 4))
    sizes = np.array([3, 4, 3])
    B = rng.standard_normal((4, 4))
    rule = (ExactDCriterion() if criterion == "D"
            else ExactLinearCriterion(np.eye(4) if criterion == "A" else B @ B.T, "X"))
    rows = rng.integers(0, 12, size=10)
    if plots is not None:  # 4 whole-plot settings x 3 sub-plot settings: one setting per plot
        rows = np.repeat(rng.integers(0, 4, size=3), sizes) * plots + rng.integers(0, plots, size=10)
    structure = single_structure(sizes, shrinkage(sizes, effects, eta))
    layout = None if plots is None else Layout((4, plots), 1)
    search = GroupSearch(X, rows, structure, rule, layout=layout)

    def check(gain, new_rows):
        """gain = loss - loss(new_rows), or -inf exactly where the new M is (nearly) singular."""
        M = blocked_information(X, new_rows, sizes, effects, eta)
        ratio = np.linalg.det(M) / np.linalg.det(search.M)
        if ratio <= 1e-10:
            assert gain == -np.inf
        else:
            assert gain == pytest.approx(search.loss - GroupSearch(X, new_rows, structure, rule, layout=layout).loss,
                                         rel=1e-9, abs=1e-9)

    checked = check_moves(search, rows, [0, 4, 9], check)
    if plots is None:
        pairs, gains = search.swap_gains()
        for (r1, r2), gain in zip(pairs, gains, strict=True):
            swapped = rows.copy()
            swapped[[r1, r2]] = rows[[r2, r1]]
            check(gain, swapped)
            checked += np.isfinite(gain)
    else:
        for g in range(3):
            runs = np.flatnonzero(search.group == g)
            for level, gain in enumerate(search.reset_gains(0, g)):
                if level == rows[runs[0]] // plots:
                    assert gain == -np.inf  # its current setting
                    continue
                reset = rows.copy()
                reset[runs] = level * plots + rows[runs] % plots
                check(gain, reset)
                checked += np.isfinite(gain)
    assert checked >= 10


def test_time_limit_stops_new_starts():
    X, _ = factorial()
    res = od.blocked_design(X, [4, 4], restarts=50, time_limit=1e-9)
    assert res.starts == 1 and len(res.extras["start_losses"]) == 1


def test_the_group_bound_certifies_small_split_plots_optimal():
    """One hard factor on two levels, one easy on three, four whole plots of three: the design found is optimal over
    mixtures of whole plots, so its certified efficiency is 1 (the unblocked bound gives 1/2)."""
    res = od.split_plot_design("~ w + s + I(s**2)", {"w": [-1, 1]}, {"s": [-1, 0, 1]}, [3, 3, 3, 3], eta=1.0)
    assert res.efficiency == pytest.approx(1.0, abs=1e-9)
    assert res.extras["unblocked_lower_bound"] / res.value == pytest.approx(0.5, abs=1e-9)
