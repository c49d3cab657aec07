"""Split-split-plot and strip-plot exact designs (optdesign.exact_designs.split_split_plot, strip_plot,
group_structure): the GLS information against V built and inverted densely, eta = 0 reductions, enumeration of every
design, closed
orthogonal cases, every move priced against the loss recomputed, the certified bound, and refused input."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from test_blocked_designs import check_moves

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.exact_designs import blocked_information
from optdesign.exact_designs.block_search import GroupSearch
from optdesign.exact_designs.criteria import ExactDCriterion, ExactLinearCriterion
from optdesign.exact_designs.group_structure import crossed_structure, nested_structure, subplot_layout
from optdesign.exact_designs.plot_layout import Layout


def indicator(groups):
    """Z, N x G: run r in group groups[r] (groups 0 .. G - 1)."""
    return np.eye(int(np.max(groups)) + 1)[groups]


def dense_v(*pairs):
    """V = I + sum eta Z Z^T over (eta, groups) pairs, built densely."""
    N = len(pairs[0][1])
    return np.eye(N) + sum(eta * indicator(g) @ indicator(g).T for eta, g in pairs)


def gls(X, rows, V):
    Xr = X[rows]
    return Xr.T @ np.linalg.solve(V, Xr)


def nested_groups(whole, sub):
    return np.repeat(np.arange(len(whole)), whole), np.repeat(np.arange(len(sub)), sub)


def crossed_groups(R, C, k):
    cells = np.arange(R * C).repeat(k)
    return cells // C, cells % C


def values(M, criterion):
    """The D or A values of stacked normalised information matrices (inf where singular)."""
    eig = np.linalg.eigvalsh(M)
    ok = eig[:, 0] > 1e-9 * eig[:, -1]
    out = np.full(M.shape[0], np.inf)
    if criterion == "D":
        out[ok] = np.exp(-np.linalg.slogdet(M[ok])[1] / M.shape[1])
    else:
        out[ok] = np.trace(np.linalg.inv(M[ok]), axis1=1, axis2=2)
    return out


# ---------------------------------------------------------------- the information against dense V
@pytest.mark.parametrize("seed", range(12))
def test_nested_information_against_dense_v(seed):
    rng = np.random.default_rng(seed)
    whole = rng.integers(1, 5, size=int(rng.integers(1, 4)))
    sub = np.concatenate([np.diff(np.sort(np.concatenate([[0, n], rng.choice(np.arange(1, n), size=min(
        n - 1, int(rng.integers(0, 3))), replace=False)]))) if n > 1 else [1] for n in whole]).astype(int)
    whole, sub = subplot_layout(whole, sub)
    X = rng.standard_normal((7, 3))
    rows = rng.integers(0, 7, size=whole.sum())
    eta1, eta2 = (float(v) for v in rng.choice([0.0, 0.3, 1.0, 40.0], size=2))
    M = nested_structure(whole, sub, eta1, eta2).information(X, rows)
    g1, g2 = nested_groups(whole, sub)
    assert np.allclose(M, gls(X, rows, dense_v((eta1, g1), (eta2, g2))), rtol=1e-10, atol=1e-10 * np.abs(M).max())


@pytest.mark.parametrize(("R", "C", "k"), [(1, 1, 1), (2, 3, 1), (3, 2, 2), (4, 4, 1)])
@pytest.mark.parametrize(("eta_r", "eta_c"), [(1.0, 1.0), (0.0, 2.5), (10.0, 0.1)])
def test_crossed_information_against_dense_v(R, C, k, eta_r, eta_c):
    rng = np.random.default_rng(R * 10 + C)
    X = rng.standard_normal((9, 4))
    rows = rng.integers(0, 9, size=R * C * k)
    M = crossed_structure(R, C, k, eta_r, eta_c).information(X, rows)
    gr, gc = crossed_groups(R, C, k)
    assert np.allclose(M, gls(X, rows, dense_v((eta_r, gr), (eta_c, gc))), rtol=1e-10, atol=1e-10 * np.abs(M).max())


def test_eta_zero_reductions():
    """eta_2 = 0: the split-plot information of the whole plots; eta_1 = 0 too: X^T X. A strip plot with eta_c = 0 is
    the split plot of its rows."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((8, 3))
    whole, sub = subplot_layout([4, 2, 4], 2)
    rows = rng.integers(0, 8, size=10)
    split = blocked_information(X, rows, whole, "random", 1.7)
    assert np.allclose(nested_structure(whole, sub, 1.7, 0.0).information(X, rows), split, rtol=1e-12)
    assert np.allclose(nested_structure(whole, sub, 0.0, 0.0).information(X, rows), X[rows].T @ X[rows], rtol=1e-12)
    rows = rng.integers(0, 8, size=12)
    assert np.allclose(crossed_structure(3, 4, 1, 0.6, 0.0).information(X, rows),
                       blocked_information(X, rows, [4, 4, 4], "random", 0.6), rtol=1e-12)


# ---------------------------------------------------------------- enumeration and closed forms
def split_split_enumeration(X, radices, whole, sub, eta1, eta2, criterion):
    """The best value over every split-split-plot design (candidates in rows (a Ks + b) Kt + t)."""
    Kw, Ks, Kt = radices
    N = int(sum(whole))
    g1, g2 = nested_groups(whole, sub)
    a = np.array(list(itertools.product(range(Kw), repeat=len(whole))))[:, g1]
    b = np.array(list(itertools.product(range(Ks), repeat=len(sub))))[:, g2]
    t = np.array(list(itertools.product(range(Kt), repeat=N)))
    rows = ((a[:, None, None, :] * Ks + b[None, :, None, :]) * Kt + t[None, None, :, :]).reshape(-1, N)
    Vinv = np.linalg.inv(dense_v((eta1, g1), (eta2, g2)))
    Xr = X[rows]
    return float(values(np.einsum("dni,nm,dmj->dij", Xr, Vinv, Xr) / N, criterion).min())


@pytest.mark.parametrize(("formula", "whole", "sub", "etas"), [
    ("~ w + s + t", [4, 4], 2, (1.0, 1.0)),
    ("~ w + s + t + s:t", [4, 4], 2, (2.0, 0.5)),
    ("~ w + s + t + w:t", [3, 3], [1, 2, 2, 1], (1.0, 3.0)),
])
@pytest.mark.parametrize("criterion", ["D", "A"])
def test_split_split_plot_equals_enumeration(formula, whole, sub, etas, criterion):
    levels = {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 1]}
    X, _, _ = od.candidates(formula, {"w": [-1, 1], "s": [-1, 1], "t": [-1, 1]})  # rows (a 2 + b) 2 + t
    w_sizes, s_sizes = subplot_layout(whole, sub)
    best = split_split_enumeration(X, (2, 2, 2), w_sizes, s_sizes, *etas, criterion)
    res = od.split_split_plot_design(formula, *levels, whole, sub, criterion, eta_whole=etas[0], eta_sub=etas[1],
                                     restarts=6)
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.lower_bound <= best * (1 + 1e-12) and 0 < res.efficiency <= 1
    g1, g2 = nested_groups(w_sizes, s_sizes)
    assert np.allclose(res.information, gls(X, res.rows, dense_v((etas[0], g1), (etas[1], g2))), rtol=1e-10)
    table = res.table()
    assert (table.groupby("whole_plot")["w"].nunique() == 1).all()
    assert (table.groupby("subplot")["s"].nunique() == 1).all()
    assert (table.groupby("subplot")["whole_plot"].nunique() == 1).all()  # sub-plots nest in whole plots
    json.dumps(res.to_dict())


def test_split_split_plot_with_eta_sub_zero_and_single_runs_is_a_split_plot():
    """One run per sub-plot and eta_2 = 0: the sub-plot factors are set run by run, as in the split-plot design whose
    sub-plot factors are both kinds together."""
    formula = "~ w + s + t + I(t**2) + s:t"
    kwargs = {"restarts": 6, "seed": 2}
    ssp = od.split_split_plot_design(formula, {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 0, 1]}, [3, 3, 3], 1,
                                     eta_whole=1.5, eta_sub=0.0, **kwargs)
    sp = od.split_plot_design(formula, {"w": [-1, 1]}, {"s": [-1, 1], "t": [-1, 0, 1]}, [3, 3, 3], eta=1.5, **kwargs)
    assert ssp.value == pytest.approx(sp.value, rel=1e-9)
    assert np.allclose(np.linalg.eigvalsh(ssp.information), np.linalg.eigvalsh(sp.information), rtol=1e-9)


def test_eta_zero_everywhere_is_the_unblocked_value():
    X, _, _ = od.candidates("~ w + s + t", {"w": [-1, 1], "s": [-1, 1], "t": [-1, 1]})
    res = od.split_split_plot_design("~ w + s + t", {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 1]}, [4, 4], 2,
                                     eta_whole=0.0, eta_sub=0.0, restarts=3)
    assert np.allclose(res.information, X[res.rows].T @ X[res.rows], rtol=1e-12)
    assert res.value == pytest.approx(od.exact_design(X, 0, "D", fixed=res.counts(8)).value, rel=1e-10)
    assert res.value == pytest.approx(1.0, rel=1e-9)  # the 2^3 factorial: M / N = I


def strip_enumeration(X, radices, R, C, k, eta_r, eta_c, criterion):
    """The best value over every strip-plot design (candidates in rows (a Kc + b) Kt + t)."""
    Kr, Kc, Kt = radices
    gr, gc = crossed_groups(R, C, k)
    N = R * C * k
    a = np.array(list(itertools.product(range(Kr), repeat=R)))[:, gr]
    b = np.array(list(itertools.product(range(Kc), repeat=C)))[:, gc]
    t = np.array(list(itertools.product(range(Kt), repeat=N)))
    rows = ((a[:, None, None, :] * Kc + b[None, :, None, :]) * Kt + t[None, None, :, :]).reshape(-1, N)
    Vinv = np.linalg.inv(dense_v((eta_r, gr), (eta_c, gc)))
    Xr = X[rows]
    return float(values(np.einsum("dni,nm,dmj->dij", Xr, Vinv, Xr) / N, criterion).min())


@pytest.mark.parametrize("criterion", ["D", "A"])
def test_strip_plot_equals_enumeration(criterion):
    formula = "~ r + c + t + r:t + I(c**2)"
    X, _, _ = od.candidates(formula, {"r": [-1, 1], "c": [-1, 0, 1], "t": [-1, 1]})
    best = strip_enumeration(X, (2, 3, 2), 2, 3, 1, 1.0, 0.5, criterion)
    res = od.strip_plot_design(formula, {"r": [-1, 1]}, {"c": [-1, 0, 1]}, 2, 3, criterion,
                               run_factors={"t": [-1, 1]}, eta_row=1.0, eta_column=0.5, restarts=8)
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.lower_bound <= best * (1 + 1e-12)
    gr, gc = crossed_groups(2, 3, 1)
    assert np.allclose(res.information, gls(X, res.rows, dense_v((1.0, gr), (0.5, gc))), rtol=1e-10)
    table = res.table()
    assert list(table.columns[:3]) == ["row", "column", "candidate"]
    assert (table.groupby("row")["r"].nunique() == 1).all() and (table.groupby("column")["c"].nunique() == 1).all()


def test_strip_plot_orthogonal_closed_form():
    """R = C = 4, k = 1, r and c on two levels, model r * c: the balanced design (each level on two rows and two
    columns) is D-optimal, M = diag(N / (1 + 4 eta_r + 4 eta_c), N / (1 + 4 eta_r), N / (1 + 4 eta_c), N)."""
    eta_r, eta_c = 1.0, 0.5
    X, _, _ = od.candidates("~ r * c", {"r": [-1, 1], "c": [-1, 1]})
    res = od.strip_plot_design("~ r * c", {"r": [-1, 1]}, {"c": [-1, 1]}, 4, 4, eta_row=eta_r, eta_column=eta_c,
                               restarts=3)
    closed = np.diag([16 / (1 + 4 * eta_r + 4 * eta_c), 16 / (1 + 4 * eta_r), 16 / (1 + 4 * eta_c), 16.0])
    assert np.allclose(res.information, closed, atol=1e-10)
    assert res.value == pytest.approx(strip_enumeration(X, (2, 2, 1), 4, 4, 1, eta_r, eta_c, "D"), rel=1e-12)
    assert sorted(res.extras["row_settings"].tolist()) == [0, 0, 1, 1]
    assert res.extras["etas"] == {"row": eta_r, "column": eta_c} and res.eta == eta_r
    assert set(res.values) == {"D", "A", "I"} and res.kind == "strip-plot"


# ---------------------------------------------------------------- the search's prices
@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("design", ["nested", "crossed"])
def test_every_move_and_reset_is_priced_as_the_loss_recomputed(criterion, design):
    """Run moves (rank 3) and group resets, by the determinant lemma (3n < p) or rebuilt (3n >= p), against the loss
    of the changed design computed from scratch."""
    rng = np.random.default_rng(11)
    radices = (3, 3, 4)
    if design == "nested":  # sub-plots of 1-3 runs (3n < p), whole plots of 4-6 (3n >= p)
        p, structure = 11, nested_structure(*subplot_layout([4, 6, 4], [2, 2, 3, 3, 1, 3]), 1.3, 0.7)
    else:  # rows of 4 runs (3n < p), columns of 5 (3n >= p)
        p, structure = 14, crossed_structure(5, 4, 1, 0.9, 1.6)
    X = rng.standard_normal((36, p))
    layout = Layout(radices, 2)
    members = structure.members
    Bm = rng.standard_normal((p, p))
    rule = (ExactDCriterion() if criterion == "D"
            else ExactLinearCriterion(np.eye(p) if criterion == "A" else Bm @ Bm.T, "X"))
    while True:  # a random start with a nonsingular information
        codes = np.zeros(structure.n_runs, dtype=np.int64)
        for level in range(2):
            _, local = np.unique(members[:, level], return_inverse=True)
            codes += rng.integers(0, radices[level], size=local.max() + 1)[local] * layout.strides[level]
        rows = codes + rng.integers(0, radices[2], size=structure.n_runs)
        if np.linalg.matrix_rank(X[rows]) == p:
            break
    search = GroupSearch(X, rows, structure, rule, layout=layout)

    def check(gain, new_rows):
        """gain = loss - loss(new_rows), or -inf exactly where the new M is (nearly) singular."""
        M = structure.information(X, new_rows)
        sign, logdet = np.linalg.slogdet(M)
        if sign <= 0 or logdet - np.linalg.slogdet(search.M)[1] <= np.log(1e-10):
            assert gain == -np.inf
        else:
            loss = -logdet if criterion == "D" else np.trace(np.linalg.solve(M, rule.B))
            assert gain == pytest.approx(search.loss - loss, rel=1e-8, abs=1e-9)

    moving = [0, 5, structure.n_runs - 1]
    for r in moving:
        assert np.all(search.allowed(r) // layout.free == rows[r] // layout.free)  # the run keeps its tied settings
    check_moves(search, rows, moving, check)
    checked = 0
    for level in range(2):
        for g in structure.groups(level).tolist():
            runs = np.flatnonzero(members[:, level] == g)
            current = layout.setting(rows[runs], level)
            assert np.all(current == current[0])
            for setting, gain in enumerate(search.reset_gains(level, g)):
                if setting == current[0]:
                    assert gain == -np.inf
                    continue
                reset = rows.copy()
                reset[runs] += (setting - current) * layout.strides[level]
                check(gain, reset)
                checked += np.isfinite(gain)
    assert checked >= 12


def test_the_bounds_are_valid_for_every_design_of_the_class():
    """The certified bound lies below the enumerated optimum, for D and A, split-split and strip."""
    X, _, _ = od.candidates("~ w + s + t", {"w": [-1, 1], "s": [-1, 1], "t": [-1, 1]})
    for criterion in "DA":
        best = split_split_enumeration(X, (2, 2, 2), np.array([4, 4]), np.array([2, 2, 2, 2]), 2.0, 1.0, criterion)
        res = od.split_split_plot_design("~ w + s + t", {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 1]}, [4, 4], 2,
                                         criterion, eta_whole=2.0, eta_sub=1.0, restarts=2)
        assert res.extras["group_lower_bound"] <= best * (1 + 1e-12)
        assert res.extras["unblocked_lower_bound"] <= best * (1 + 1e-12)


# ---------------------------------------------------------------- refused input
W, S, T = {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 1]}


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], 2, eta_whole=-1.0), "eta_whole"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], 2, eta_sub=float("nan")), "eta_sub"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], [2, 3, 3]), "nest in the whole plots"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], 3), "does not divide"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], [2, 0, 2, 4]), "subplot_sizes"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [8], 4), "whole plots"),
    (lambda: od.split_split_plot_design("~ w + s + w:s + t", W, S, T, [4, 4], 4), "sub-plots"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, {"w": [0, 1]}, T, [4, 4], 2), "both"),
    (lambda: od.split_split_plot_design("~ w + s", W, S, T, [4, 4], 2), "sub-sub-plot factor.*t"),
    (lambda: od.split_split_plot_design("~ w + s + t", W, S, T, [4, 4], 2, "E"), "criterion"),
    (lambda: od.strip_plot_design("~ r + c", {"r": [-1, 1]}, {"c": [-1, 1]}, 3, 3, eta_row=-0.5), "eta_row"),
    (lambda: od.strip_plot_design("~ r + c", {"r": [-1, 1]}, {"c": [-1, 1]}, 3, 3, eta_column=-2), "eta_column"),
    (lambda: od.strip_plot_design("~ r + c", {"r": [-1, 1]}, {"c": [-1, 1]}, 0, 3), "n_rows"),
    (lambda: od.strip_plot_design("~ r + c", {"r": [-1, 1]}, {"c": [-1, 1]}, 3, 3, runs_per_cell=0),
     "runs_per_cell"),
    (lambda: od.strip_plot_design("~ r + c", {"r": [-1, 1]}, {"c": [-1, 1]}, 1, 3), "rows"),
    (lambda: od.strip_plot_design("~ r * c", {"r": [-1, 1]}, {"c": [-1, 1]}, 3, 1, runs_per_cell=4), "columns"),
    (lambda: od.strip_plot_design("~ r * c", {"r": [-1, 1]}, {"c": [-1, 1]}, 1, 3, runs_per_cell=2), "rows"),
    (lambda: od.strip_plot_design("~ r + c", [-1, 1], {"c": [-1, 1]}, 3, 3), "row_factors"),
])
def test_refused_input(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
