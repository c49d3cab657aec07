"""FCR and characteristic times against brute force, closed forms and the T* <= T^MF(m) chain."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import brentq

import optdesign as od
from optdesign import FactorGraph, InstanceTooLargeError, InvalidInputError
from optdesign.factored.inference.constraint_reduction import enumerated_max, factored_max
from optdesign.runtime import solvers


def instances():
    return [
        FactorGraph.line(5, 3, seed=11),
        FactorGraph.ring(5, 3, seed=12),
        FactorGraph.ring(4, 2, seed=13),
        FactorGraph.star(5, [2, 3, 2, 3, 2], seed=14),
        FactorGraph.grid(2, 3, 3, seed=15),
    ]


@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_fcr_of_constant_terms_is_the_max_over_joint_actions(fg):
    """With fixed terms the FCR LP returns exactly max_a sum_e f_e(a_e) (brute force)."""
    terms = np.random.default_rng(0).standard_normal(fg.abar)
    fm = factored_max(cp.Constant(terms), fg.plan())
    problem = cp.Problem(cp.Minimize(fm.t), fm.constraints)
    solvers.solve(problem, "CLARABEL")
    brute = (terms[fg.group_indices(fg.joint_actions())]).sum(axis=1).max()
    assert fm.t.value == pytest.approx(brute, rel=1e-6, abs=1e-7)
    en = enumerated_max(cp.Constant(terms), fg.group_indices(fg.joint_actions()))
    assert en.n_constraints == fg.n_joint_actions


@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_fcr_with_clique_terms_is_the_max_over_joint_actions(fg):
    """row_terms add a function of the elimination cliques; the max-sum regrets are one that adds up to
    the gap, so the FCR LP returns max_a [sum_e f_e(a_e) + Delta(a)] (brute force)."""
    from optdesign.factored.inference.max_sum import MaxSum

    plan = fg.plan()
    terms = np.random.default_rng(1).standard_normal(fg.abar)
    regrets = np.concatenate(MaxSum(plan, fg.means).regrets)
    fm = factored_max(cp.Constant(terms), plan, row_terms=regrets)
    solvers.solve(cp.Problem(cp.Minimize(fm.t), fm.constraints), "CLARABEL")
    A = fg.joint_actions()
    brute = (terms[fg.group_indices(A)].sum(axis=1) + fg.gap(A)).max()
    assert fm.t.value == pytest.approx(brute, rel=1e-6, abs=1e-7)
    with pytest.raises(InvalidInputError, match="row_terms"):
        factored_max(cp.Constant(terms), plan, row_terms=regrets[:-1])


@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_mean_field_with_fcr_equals_enumeration(fg):
    for m in (1, 3):
        fcr = od.mf_characteristic_time(fg, m=m)
        brute = od.mf_characteristic_time(fg, m=m, fcr=False)
        assert fcr.value == pytest.approx(brute.value, rel=1e-5)
        assert fcr.value == pytest.approx(fcr.solver_value, rel=1e-5)


@pytest.mark.parametrize(("N", "K"), [(4, 2), (7, 3), (30, 4)])
def test_fcr_constraint_count_closed_forms(N, K):
    """Natural order: line (N-1)K^2 + K + 1 rows, ring (N-2)K^3 + K^2 + K + 1 (pairwise factors)."""
    line, ring = FactorGraph.line(N, K, seed=0), FactorGraph.ring(N, K, seed=0)
    natural = list(range(N))
    assert factored_max(cp.Variable(line.abar), line.plan(natural)).n_constraints == (N - 1) * K**2 + K + 1
    assert factored_max(cp.Variable(ring.abar), ring.plan(natural)).n_constraints == (N - 2) * K**3 + K**2 + K + 1
    assert line.plan().width == 1 and ring.plan().width == 2


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("make", [FactorGraph.line, FactorGraph.ring])
def test_chain_of_characteristic_times(make, seed):
    """T* <= T^MF(m+1) <= T^MF(m) <= T^MF(1) <= 2 Abar / Delta_min^2 (MF-TaS Lemma H.1)."""
    fg = make(5, 3, seed=seed)
    exact = od.characteristic_time(fg)
    mf = [od.mf_characteristic_time(fg, m=m).value for m in (1, 2, 4, 8)]
    rel = 1e-6
    assert exact.value <= mf[-1] * (1 + rel)
    assert all(a >= b * (1 - rel) for a, b in itertools.pairwise(mf))
    assert mf[0] <= 2 * fg.abar / fg.gap_min() ** 2 * (1 + rel)


@pytest.mark.parametrize("fg", instances()[:4], ids=repr)
def test_exact_junction_tree_equals_global_simplex(fg):
    jt = od.characteristic_time(fg)
    gl = od.characteristic_time(fg, formulation="global")
    assert jt.value == pytest.approx(gl.value, rel=1e-6)
    # the global allocation's marginals are the reported marginals, and they are distributions
    for marg in jt.marginals:
        assert marg.sum() == pytest.approx(1.0, abs=1e-7)
    assert gl.global_allocation.shape == fg.n_actions


def gk_gaussian_time(means: np.ndarray) -> float:
    """Garivier–Kaufmann T*(mu) for unit-variance Gaussians by their 1-D root-finding scheme.

    For d(x, y) = (x - y)^2 / 2, g_a(x) = Delta_a^2 x / (2 (1 + x)) so x_a(y) = 2y / (Delta_a^2 - 2y);
    F(y) = sum_a x_a(y)^2 = 1 fixes y*, and T*^-1 = y* / (1 + sum_a x_a(y*)).
    """
    best = np.argmax(means)
    deltas = np.delete(means[best] - means, best)

    def x(y):
        return 2 * y / (deltas**2 - 2 * y)

    y_star = brentq(lambda y: np.sum(x(y) ** 2) - 1, 1e-15, deltas.min() ** 2 / 2 * (1 - 1e-12))
    return (1 + np.sum(x(y_star))) / y_star


@pytest.mark.parametrize("means", [[0.5, 0.45, 0.43, 0.4], [1.0, 0.0], [0.3, 0.21, 0.2, 0.19, 0.18], [2.0, 1.5, -1.0]])
def test_single_agent_matches_garivier_kaufmann(means):
    """N = 1: 2 T* (MF-TaS convention) equals GK's Gaussian T*; T^MF(K-1) equals T*."""
    means = np.asarray(means)
    fg = FactorGraph.single_agent(means)
    exact = od.characteristic_time(fg)
    assert 2 * exact.value == pytest.approx(gk_gaussian_time(means), rel=1e-6)
    full = od.mf_characteristic_time(fg, m=len(means) - 1)
    assert full.value == pytest.approx(exact.value, rel=1e-6)


def test_large_line_mean_field_is_fast_enough_to_run_in_ci():
    fg = FactorGraph.line(300, 3, seed=0, means="planted", gap=0.1)
    res = od.mf_characteristic_time(fg)
    assert res.n_constraints == 299 * 4 + 2 + 1  # FCR on two action classes per agent: (N - 1) 2^2 + 2 + 1
    assert res.value == pytest.approx(res.solver_value, rel=1e-5)
    assert res.value <= 2 * fg.abar / 0.1**2
    full = od.mf_characteristic_time(fg, reduce=False)
    assert full.n_constraints == 299 * 9 + 3 + 1
    assert full.value == pytest.approx(res.value, rel=1e-5)


def test_mean_field_model_relabels_for_any_best_action():
    """The program depends on a* only through relabelling: one solve serves every a*."""
    fg = FactorGraph.ring(5, 3, seed=3)
    model = od.MeanFieldModel(fg)
    other = np.array([2, 0, 1, 1, 2])
    local = model.local_allocations(other)
    terms = model.terms_at(local, other)
    from optdesign.factored.inference.max_sum import MaxSum

    assert MaxSum(model.plan, terms).value == pytest.approx(model.solve().t, rel=1e-5)


def test_mean_field_model_for_structure_is_shared_by_equal_structures(monkeypatch):
    from optdesign.factored.mean_field import model as mf_model

    monkeypatch.setattr(od.MeanFieldModel, "_shared", {})
    monkeypatch.setattr(mf_model, "MODEL_CACHE", 2)
    ring, other_means = FactorGraph.ring(4, 3, seed=0), FactorGraph.ring(4, 3, seed=5)
    model = od.MeanFieldModel.for_structure(ring)
    assert model.solve() is model.solve()  # solved once, when built
    assert od.MeanFieldModel.for_structure(other_means) is model
    assert model.solve().t / other_means.gap_min() ** 2 == pytest.approx(
        od.mf_characteristic_time(other_means).value, rel=1e-5)
    line, star = FactorGraph.line(4, 3, seed=0), FactorGraph.star(4, 3, seed=0)
    assert od.MeanFieldModel.for_structure(line) is not model
    od.MeanFieldModel.for_structure(ring)  # most recently used: the line goes first
    od.MeanFieldModel.for_structure(star)
    assert len(od.MeanFieldModel._shared) == 2
    assert od.MeanFieldModel.for_structure(ring) is model
    with pytest.raises(InvalidInputError, match="FactorGraph"):
        od.MeanFieldModel.for_structure("ring")


def test_bad_requests():
    fg = FactorGraph.line(12, 3, seed=0)
    with pytest.raises(InstanceTooLargeError, match="method='generate'"):
        od.characteristic_time(fg, method="enumerate")
    small = FactorGraph.line(2, 2, seed=0)
    with pytest.raises(InvalidInputError, match="exceeds"):
        od.mf_characteristic_time(small, m=4)
    with pytest.raises(InvalidInputError):
        od.mf_characteristic_time(small, m=0)
    with pytest.raises(InvalidInputError):
        od.characteristic_time(small, formulation="sdp")
    with pytest.raises(InvalidInputError):
        od.characteristic_time(np.zeros(3))
    # m and max_joint_actions must be integers (a bool or a string used to slip through or raise TypeError)
    for m in (True, 1.0, "2"):
        with pytest.raises(InvalidInputError, match="m must be a positive integer"):
            od.mf_characteristic_time(small, m=m)
        with pytest.raises(InvalidInputError, match="m must be a positive integer"):
            small.m_best(m)
    for limit in ("100", None, -1, 1e9, False):
        with pytest.raises(InvalidInputError, match="max_joint_actions"):
            od.characteristic_time(small, max_joint_actions=limit)


def hard_line():
    """A line of 7 agents with K = 4 (16,384 joint actions) on which exact T* once took 300 s: an
    unscaled first pass left a marginal at 5e-9, CLARABEL failed on the rescaled second pass and the
    SCS fallback ran 200,000 iterations."""
    return FactorGraph.line(7, 4, seed=0)


def test_exact_characteristic_time_of_a_hard_line_stays_with_the_first_solver():
    import warnings

    fg = hard_line()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = od.characteristic_time(fg, solver="CLARABEL")
    assert res.status == "optimal" and res.value == pytest.approx(res.solver_value, rel=1e-6)
    # T* <= T^MF(m): the mean-field allocations are a subset of the marginal polytope
    assert res.value <= od.mf_characteristic_time(fg, m=10).value


@pytest.mark.slow
def test_exact_characteristic_time_of_a_hard_line_equals_the_global_simplex():
    fg = hard_line()
    assert od.characteristic_time(fg).value == pytest.approx(
        od.characteristic_time(fg, formulation="global").value, rel=1e-6)
