"""Compiled sum-product against the numpy passes on structures of every shape (wide factors, mixed K, a step of ten
inputs, trees, grids): the same messages, rows, log-partition and factor marginals to rounding, and the same draws, with
-inf entries and with max-sum's maximiser terms; the numpy pass inside a tight time budget."""

from __future__ import annotations

import numpy as np
import pytest
from test_max_sum_kernels import graphs

import optdesign.factored.inference.flat_plan as flat_plan
from optdesign.factored import SumProduct, maximiser_terms
from optdesign.runtime.deadline import time_budget


def _agree(a: SumProduct, b: SumProduct, marginals: bool) -> None:
    assert a.log_partition == pytest.approx(b.log_partition, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(a._flat, b._flat, rtol=1e-12, atol=1e-12)  # every message; -inf where the other has
    for x, y in zip(a.phis, b.phis, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)
    if marginals:
        np.testing.assert_allclose(a.marginals(), b.marginals(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("fg", graphs(), ids=lambda fg: f"N{fg.n_agents}F{fg.n_factors}")
@pytest.mark.parametrize("case", ["plain", "minus-inf", "maximisers", "max"])
def test_compiled_passes_equal_numpy(fg, case):
    plan = fg.plan()
    rng = np.random.default_rng(fg.n_agents)
    values = rng.normal(size=plan.table_size) * 5
    terms = None
    if case == "minus-inf":  # a few group actions excluded: zero marginal, messages still finite
        values[rng.choice(plan.table_size, size=plan.table_size // 10, replace=False)] = -np.inf
    if case in ("maximisers", "max"):
        terms = maximiser_terms(plan, np.round(fg.means * 2) / 2)  # ties: several maximisers
    reduce = "max" if case == "max" else "logsumexp"
    a = SumProduct(plan, values, row_terms=terms, reduce=reduce, compiled=False)
    b = SumProduct(plan, values, row_terms=terms, reduce=reduce, compiled=True)
    assert not a.compiled and b.compiled
    _agree(a, b, marginals=case != "max")
    if case != "max":  # the same uniforms: the same joint actions (unless one falls within rounding of a cdf entry)
        np.testing.assert_array_equal(a.sample(np.random.default_rng(5), 300), b.sample(np.random.default_rng(5), 300))
        out = b.marginals()
        if case == "minus-inf":
            assert np.all(out[np.isneginf(values)] == 0.0)
        sums = np.add.reduceat(out, plan.factor_offsets[:-1])
        np.testing.assert_allclose(sums, 1.0, atol=1e-12)  # each factor's marginal is a distribution


def test_compiled_draws_follow_the_marginals():
    fg = graphs()[0]
    plan = fg.plan()
    sp = SumProduct(plan, np.random.default_rng(3).normal(size=plan.table_size), compiled=True)
    draws = plan.group_indices(sp.sample(np.random.default_rng(4), 4000))
    frequencies = np.bincount(draws.ravel(), minlength=plan.table_size) / 4000
    np.testing.assert_allclose(frequencies, sp.marginals(), atol=0.04)  # 4000 draws: sd <= 0.008


def test_the_default_path_follows_the_time_budget(monkeypatch):
    plan = graphs()[0].plan()
    values = np.zeros(plan.table_size)
    assert SumProduct(plan, values).compiled
    monkeypatch.setattr(flat_plan, "COMPILED_MAX_ROWS", 0)
    with time_budget(60.0):
        assert not SumProduct(plan, values).compiled  # the numpy pass checks the budget between steps
    assert SumProduct(plan, values).compiled
