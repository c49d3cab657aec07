"""Warm-started exact T* (a bandit's re-solves) against brute-force enumeration, and the fast paths it runs on:
the master written for CLARABEL against the cvxpy model, separation by enumeration against Pareto elimination."""

from __future__ import annotations

import numpy as np
import pytest

import bandits.multiagent.tracking as tracking
import optdesign as od
from bandits.multiagent import ExactTaS
from bandits.multiagent import instances as inst
from bandits.run import run
from optdesign import FactorGraph, InvalidInputError
from optdesign.factored.exact.constraint_generation import initial_working_set
from optdesign.factored.exact.enumerated_separation import EnumeratedSeparation
from optdesign.factored.exact.generated import CharTimeMaster, characteristic_time_generated
from optdesign.factored.exact.separation import most_violated

TOL = 1e-2  # exact TaS's certified gap


def instances() -> list[FactorGraph]:
    return [FactorGraph.line(4, 3, seed=0), FactorGraph.ring(5, 3, seed=1),
            FactorGraph.star(5, [2, 3, 4, 3, 2], seed=2), FactorGraph.grid(2, 3, 3, seed=3),
            FactorGraph.line(3, 4, seed=4)]


def brute_value(fg: FactorGraph, marginals: list[np.ndarray]) -> float:
    """max over a != a* of H_w(a) / Delta(a)^2 at the marginals, by enumeration (MF-TaS eq. 1 at fixed wbar)."""
    wbar = np.concatenate([m.ravel() for m in marginals])
    A = fg.joint_actions()
    others = np.any(A != fg.best_action(), axis=1)
    H = fg.deviation_matrix(A[others], with_best=True)
    return float(np.max(H @ (1.0 / wbar) / fg.gap(A[others]) ** 2))


def moved(fg: FactorGraph, rng: np.random.Generator, scale: float) -> FactorGraph:
    """The same structure with noisy means (a bandit's next plug-in estimate)."""
    return FactorGraph(fg.n_actions, [(s, t + scale * rng.standard_normal(t.shape))
                                      for s, t in zip(fg.scopes, fg.tables, strict=True)])


def factor_gaps(fg: FactorGraph) -> np.ndarray:
    star = fg.group_indices(fg.best_action())[0]
    return fg.means[star[np.repeat(np.arange(fg.n_factors), fg.table_sizes)]] - fg.means


@pytest.mark.filterwarnings("ignore:exact T:RuntimeWarning")  # the enumerated reference's own bracket is wider
@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_warm_resolves_along_moving_estimates_certify_the_enumerated_optimum(fg):
    rng = np.random.default_rng(11)
    previous = od.characteristic_time(fg, method="generate", tol=TOL, solver="CLARABEL")
    changed = 0
    for _ in range(4):  # each re-solve warm-started from the last, as exact TaS does
        nxt = moved(fg, rng, 0.05)
        changed += not np.array_equal(nxt.best_action(), previous.best_action)
        warm = od.characteristic_time(nxt, method="generate", tol=TOL, solver="CLARABEL", warm_start=previous)
        exact = od.characteristic_time(nxt, method="enumerate")  # one constraint per joint action: T* bracketed
        assert warm.status == "optimal" and warm.gap <= TOL
        assert warm.value == pytest.approx(brute_value(nxt, warm.marginals), rel=1e-9)  # attained
        assert warm.lower_bound <= exact.value * (1 + 1e-9)
        assert exact.lower_bound * (1 - 1e-9) <= warm.value <= exact.value * (1 + TOL)
        cold = od.characteristic_time(nxt, method="generate", tol=TOL, solver="CLARABEL")
        assert warm.value == pytest.approx(cold.value, rel=2 * TOL)
        fg, previous = nxt, warm
    assert changed <= 4


def test_a_centre_on_a_vertex_far_from_the_optimum_still_certifies():
    """The centre of a warm start from another a* can sit on a vertex: the solve falls back to uniform tables."""
    fg = FactorGraph.ring(5, 3, seed=0)
    plan = fg.plan()
    worst = fg.joint_actions()[np.argmin(fg.value(fg.joint_actions()))]
    centre = np.concatenate([  # the point mass at ``worst``, clique table by clique table
        (np.arange(step.n_rows) == (np.ravel_multi_index(tuple(worst[list(step.scope)]), step.shape) if step.scope
                                    else 0) * fg.n_actions[step.variable] + worst[step.variable]).astype(float)
        for step in plan.steps])
    res = characteristic_time_generated(fg, tol=1e-4, solver="CLARABEL", centre=centre)
    exact = od.characteristic_time(fg, method="enumerate")
    assert res.status == "optimal" and res.value == pytest.approx(exact.value, rel=1e-4)
    for bad in (centre[:-1], -centre, np.zeros_like(centre), "centre"):
        with pytest.raises(InvalidInputError, match="centre"):
            characteristic_time_generated(fg, centre=bad)


@pytest.mark.parametrize("fg", instances(), ids=repr)
def test_master_written_for_clarabel_solves_the_cvxpy_model(fg):
    master = CharTimeMaster(fg, "CLARABEL")
    master.add(initial_working_set(fg))
    reference = master.start()
    direct = master.solve(reference)
    c, centred = master.rows.T @ direct.lam, master.reference(direct.y)  # as the loop does after a solve
    bound_direct = master.minimiser_bound(c, centred)
    master.layout = None  # the cvxpy model, compiled by cvxpy, on the same working set and centre
    model = master.solve(reference)
    assert direct.z == pytest.approx(model.z, rel=1e-4)  # both at 1e-10 tolerances, AlmostSolved on some
    # weak duality: the bounds lie below the master's optimum, and near it (multipliers close to optimal); through
    # CLARABEL's own form the minimiser's bound is within 1e-3 (strong duality at the optimal multipliers)
    assert direct.z * (1 - 1e-3) <= bound_direct <= direct.z * (1 + 1e-4)
    assert 0.9 * direct.z <= master.minimiser_bound(c, centred) <= direct.z * (1 + 1e-4)


@pytest.mark.parametrize("fg", instances(), ids=repr)
@pytest.mark.parametrize("k", [1, 7])
def test_separation_by_enumeration_equals_pareto_elimination(fg, k):
    rng = np.random.default_rng(k)
    plan, best, gap = fg.plan(), fg.best_action(), factor_gaps(fg)
    star = fg.group_indices(best)[0]
    w = np.concatenate([rng.dirichlet(np.ones(t.size)) for t in fg.tables])
    h = 1.0 / w + 1.0 / w[star[np.repeat(np.arange(fg.n_factors), fg.table_sizes)]]
    h[star] = 0.0
    enumeration = EnumeratedSeparation.for_plan(plan)
    assert EnumeratedSeparation.for_plan(fg.plan()) is enumeration
    top = most_violated(plan, h, gap, k=k)
    for threshold in (0.0, float(top.ratios[-1]), 2 * top.max_ratio):
        pareto = most_violated(plan, h, gap, k=k, threshold=threshold)
        mine = enumeration.separate(h, gap, best, k=k, threshold=threshold, delta_min=fg.gap_min())
        if pareto.exact:
            assert mine.exact and mine.max_ratio == pytest.approx(pareto.max_ratio, rel=1e-12)
        else:  # everything below the threshold: the elimination only bounds the maximum
            assert pareto.max_ratio * (1 - 1e-12) <= mine.max_ratio <= pareto.upper_bound * (1 + 1e-12)
        np.testing.assert_allclose(mine.ratios, pareto.ratios, rtol=1e-12)
        assert not np.any(np.all(mine.actions == best, axis=1))
        idx = fg.group_indices(mine.actions) if mine.actions.size else np.zeros((0, fg.n_factors), int)
        np.testing.assert_allclose(h[idx].sum(axis=1) / gap[idx].sum(axis=1) ** 2, mine.ratios, rtol=1e-12)


def test_instances_of_one_structure_share_their_plan():
    fg = FactorGraph.ring(5, 3, seed=0)
    other = moved(fg, np.random.default_rng(0), 0.1)
    assert other.plan() is fg.plan() and FactorGraph.ring(5, 2, seed=0).plan() is not fg.plan()


def record_resolves(monkeypatch) -> list:
    """The (instance, result) of every re-solve of exact TaS."""
    seen, solve = [], tracking.characteristic_time

    def recording(fg, **kwargs):
        res = solve(fg, **kwargs)
        seen.append((fg, res))
        return res

    monkeypatch.setattr(tracking, "characteristic_time", recording)
    return seen


@pytest.mark.filterwarnings("ignore:exact T:RuntimeWarning")
def test_exact_tas_resolves_are_certified_against_enumeration(monkeypatch):
    seen = record_resolves(monkeypatch)
    env = inst.ring(4, 3, seed=0)
    r = run(ExactTaS(), env, 0.05, seed=3)
    assert r.correct and r.stopped_by == "stopping_rule" and len(seen) > 20
    for fg_hat, res in seen[:: max(1, len(seen) // 12)]:
        exact = od.characteristic_time(fg_hat, method="enumerate")
        assert res.gap <= TOL and res.lower_bound <= exact.value * (1 + 1e-9)
        assert exact.lower_bound * (1 - 1e-9) <= res.value <= exact.value * (1 + TOL)


def test_exact_tas_stops_as_with_cold_resolves(monkeypatch):
    """Warm re-solves change the work, not the statistics: the same seeds stop after about as many rounds as with
    every re-solve cold (the allocations agree to the certified tol, not bit for bit, so the paths differ)."""
    env = inst.line(4, 3, seed=2, means="planted", gap=0.5)
    seeds = range(8)
    warm = [run(ExactTaS(), env, 0.05, seed=s) for s in seeds]
    solve = tracking.characteristic_time
    monkeypatch.setattr(tracking, "characteristic_time", lambda fg, **kw: solve(fg, **{**kw, "warm_start": None}))
    cold = [run(ExactTaS(), env, 0.05, seed=s) for s in seeds]
    assert all(r.correct for r in warm + cold)
    ratio = np.mean([r.rounds for r in warm]) / np.mean([r.rounds for r in cold])
    assert 0.75 < ratio < 1.33


def test_cold_generation_certifies_where_the_cvxpy_model_does(monkeypatch):
    """The ring of notebook 03 whose bracket once stalled above tol with the master written without cvxpy's epigraph
    variable: both masters certify 1e-4, and their certified brackets overlap (both contain T*)."""
    fg = inst.ring(16, 2, seed=0).fg
    direct = od.characteristic_time(fg, method="generate", solver="CLARABEL")
    init = CharTimeMaster.__init__

    def cvxpy_model(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.layout = None

    monkeypatch.setattr(CharTimeMaster, "__init__", cvxpy_model)
    model = od.characteristic_time(fg, method="generate", solver="CLARABEL")
    for res in (direct, model):
        assert res.status == "optimal" and res.gap <= 1e-4
        assert res.value == pytest.approx(brute_value(fg, res.marginals), rel=1e-9)
    assert direct.lower_bound <= model.value and model.lower_bound <= direct.value


@pytest.mark.filterwarnings("ignore:exact T:RuntimeWarning")
@pytest.mark.parametrize("fg", instances()[:3], ids=repr)
def test_loose_master_settings_change_the_work_not_the_bracket(fg):
    """At a loose tol the master solves without iterative refinement (tight tol unchanged); the bracket still contains
    the enumerated T*."""
    from optdesign.factored.exact.generated import master_options

    assert master_options(1e-4) == {"tol_feas": 1e-10, "tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}
    assert master_options(TOL) == {"tol_feas": 1e-8, "tol_gap_rel": 1e-8, "tol_gap_abs": 1e-8,
                                   "iterative_refinement_enable": False}
    exact = od.characteristic_time(fg, method="enumerate")
    res = characteristic_time_generated(fg, tol=TOL, solver="CLARABEL")
    assert res.status == "optimal" and res.lower_bound <= exact.value * (1 + 1e-9)
    assert exact.lower_bound * (1 - 1e-9) <= res.value <= exact.value * (1 + TOL)
    assert res.value == pytest.approx(brute_value(fg, res.marginals), rel=1e-9)  # attained
