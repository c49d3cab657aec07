"""Candidate sets from model formulas (optdesign.formulas): model matrices built by hand, lattice counts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError


def test_model_matrix_equals_the_hand_built_one():
    """3 x 3 factorial, x1 in {-1, 0, 1}, x2 in {0, 0.5, 1}: columns 1, x1, x2, x1 x2, x1^2, x2^3."""
    cand = od.candidates("~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**3)", {"x1": [-1, 0, 1], "x2": (0, 1, 3)})
    grid = np.array(list(itertools.product([-1.0, 0.0, 1.0], [0.0, 0.5, 1.0])))
    x1, x2 = grid[:, 0], grid[:, 1]
    by_name = dict(zip(cand.columns, cand.X.T, strict=True))
    expected = {"Intercept": np.ones(9), "x1": x1, "x2": x2, "x1:x2": x1 * x2, "I(x1 ** 2)": x1**2,
                "I(x2 ** 3)": x2**3}
    assert cand.X.shape == (9, 6)
    assert set(by_name) == set(expected)
    for name, column in expected.items():
        np.testing.assert_allclose(by_name[name], column)
    np.testing.assert_allclose(cand.points.to_numpy(), grid)


def test_no_intercept_and_expanded_interactions():
    cand = od.candidates("~ 0 + (a + b + c)**2", od.simplex_lattice(["a", "b", "c"], 2))
    P = cand.points.to_numpy()
    assert cand.columns == ["a", "b", "c", "a:b", "a:c", "b:c"]
    np.testing.assert_allclose(cand.X, np.column_stack([P, P[:, 0] * P[:, 1], P[:, 0] * P[:, 2],
                                                        P[:, 1] * P[:, 2]]))


def test_categorical_factor_is_treatment_coded():
    cand = od.candidates("~ x + C(z)", {"x": [0.0, 1.0], "z": ["u", "v", "w"]})
    z = cand.points["z"].to_numpy()
    np.testing.assert_allclose(cand.X, np.column_stack([np.ones(6), cand.points["x"], z == "v", z == "w"]))


@pytest.mark.parametrize(("q", "m"), [(2, 1), (3, 2), (3, 3), (4, 2), (5, 4)])
def test_simplex_lattice_has_every_point_once(q, m):
    names = [f"x{i}" for i in range(q)]
    P = od.simplex_lattice(names, m).to_numpy()
    assert P.shape == (math.comb(q + m - 1, m), q)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P * m, np.round(P * m))  # proportions in {0, 1/m, ..., 1}
    assert len({tuple(np.round(row * m).astype(int)) for row in P}) == len(P)


def test_grids_and_cubes():
    grid = od.factor_grid({"a": (0, 10, 6), "b": ["lo", "hi"]})
    assert grid.shape == (12, 2) and grid["a"].tolist()[:2] == [0.0, 0.0]
    np.testing.assert_allclose(sorted(set(grid["a"])), [0, 2, 4, 6, 8, 10])
    assert od.cube(["x1", "x2", "x3", "x4"]).shape == (81, 4)
    assert sorted(set(od.cube(["x"], 5)["x"])) == [-1.0, -0.5, 0.0, 0.5, 1.0]


def test_design_table_reports_runs_and_weights():
    X, points, _ = od.candidates("~ x1 + x2 + x1:x2 + I(x1**2) + I(x2**2)", {"x1": (-1, 1, 3), "x2": (-1, 1, 3)})
    exact = od.exact_design(X, 8)
    table = od.design_table(points, exact)
    assert table["runs"].sum() == 8 and list(table.index) == exact.support.tolist()
    np.testing.assert_allclose(table[["x1", "x2"]].to_numpy(), points.to_numpy()[exact.support])
    approx = od.design_table(points, od.d_optimal(X))
    assert approx["weight"].sum() == pytest.approx(1.0)
    assert od.design_table(points, np.array([0, 2, 0, 0, 1, 0, 0, 0, 3])).columns[-1] == "runs"


@pytest.mark.parametrize(("formula", "factors", "match"), [
    ("~ x1 + x3", {"x1": [0, 1], "x2": [0, 1]}, "names x3, not a factor"),
    ("y ~ x1", {"x1": [0, 1]}, "has a response"),
    ("~ x1 +", {"x1": [0, 1]}, "cannot parse"),
    ("~ np.log(x1)", {"x1": [0, 1]}, "NaN or infinite"),
    ("~ a + b", pd.DataFrame({"a": [0.0, 1.0, 0.5], "b": [1.0, 0.0, 0.5]}), "rank 2"),
    ("~ x1", {"x1": (1, 0, 3)}, "low < high"),
    ("~ x1", {"x1": (0, 1)}, "a range is"),
    ("~ x1", {"x1": [0, 0, 1]}, "distinct"),
    ("~ x1", {"x1": 3}, "list of levels"),
    ("~ x1", {"1x": [0, 1]}, "identifiers"),
    (["~ x1"], {"x1": [0, 1]}, "formula must be a string"),
])
def test_bad_input_is_one_clear_error(formula, factors, match):
    with pytest.raises(InvalidInputError, match=match):
        od.candidates(formula, factors)


def test_bad_lattices_and_tables():
    with pytest.raises(InvalidInputError, match="at least two components"):
        od.simplex_lattice(["a"], 2)
    with pytest.raises(InvalidInputError, match="m must be a positive integer"):
        od.simplex_lattice(["a", "b"], 0)
    points = od.cube(["x"])
    with pytest.raises(InvalidInputError, match="2 entries for 3"):
        od.design_table(points, [1, 1])
    with pytest.raises(InvalidInputError, match="nonnegative"):
        od.design_table(points, [1, -1, 1])
