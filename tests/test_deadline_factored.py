"""Time limits of exact T*, T^MF and the regret bound: the call returns within its limit (plus slack) with a valid
certified bracket, whatever the instance and wherever the time runs out.

Truths: the closed forms of a single agent with two arms, and on small instances the certified brackets of
unlimited solves (enumeration for T* and the regret bound). A bracket [lower, value] is valid when it meets the
unlimited one: lower <= its value and value >= its lower bound (both certified, so the optimum lies in both).
"""

from __future__ import annotations

import functools
import itertools
import time

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import optdesign as od
from optdesign import FactorGraph
from optdesign.errors import TimeLimitReached
from optdesign.factored.exact import fallback
from optdesign.runtime import deadline, solvers

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # cut solves warn about their gap

RTOL = 1e-6
# generous: CI machines are slow and shared; this checks that the limit is held, not how fast
SLACK = 5.0
GENERATORS = {"ring": FactorGraph.ring, "line": FactorGraph.line, "star": FactorGraph.star}


@functools.cache
def instance(kind: str, n: int, k: int, seed: int) -> FactorGraph:
    return GENERATORS[kind](n, k, seed=seed)


@functools.cache
def truths(kind: str, n: int, k: int, seed: int) -> dict:
    """Certified brackets of unlimited solves: {"tstar": (lower, upper), "mf": ..., "regret": ...}."""
    fg = instance(kind, n, k, seed)
    out = {"tstar": od.characteristic_time(fg, method="enumerate"), "mf": od.mf_characteristic_time(fg),
           "regret": od.regret_lower_bound(fg)}
    return {name: (res.lower_bound, res.value) for name, res in out.items()}


def assert_valid(res, truth: tuple[float, float]) -> None:
    lower, upper = truth
    assert res.lower_bound is not None and 0 <= res.lower_bound <= res.value
    assert res.lower_bound <= upper * (1 + RTOL), "the lower bound exceeds the optimum"
    assert res.value >= lower * (1 - RTOL), "the value is below the optimum"
    if np.isfinite(res.value) and res.lower_bound > 0:
        assert res.gap == pytest.approx(res.value / res.lower_bound - 1)


SOLVES = {
    "tstar": lambda fg, **kw: od.characteristic_time(fg, **kw),
    "mf": lambda fg, **kw: od.mf_characteristic_time(fg, **kw),
    "regret": lambda fg, **kw: od.regret_lower_bound(fg, **kw),
}
SMALL = [("ring", 5, 3, 0), ("line", 4, 3, 1), ("star", 4, 2, 2), ("ring", 4, 3, 7)]


# --------------------------------------------------------------------------------------- closed-form brackets
def test_fallback_brackets_are_exact_for_one_agent_with_two_arms():
    """Gap 0.5: T* = T^MF = (2 + 2) / 0.25 = 16 and c_theta = 2 / 0.5 = 4 (Lai–Robbins); the ends meet there."""
    fg = FactorGraph([2], [((0,), np.array([1.0, 0.5]))])
    tstar, mf = fallback.char_time_bracket(fg), fallback.mf_bracket(fg, fg.m_best(2))
    assert (tstar.lower, tstar.upper) == pytest.approx((16.0, 16.0)) and tstar.how == "uniform"
    assert (mf.lower / 0.25, mf.upper / 0.25) == pytest.approx((16.0, 16.0))
    regret = fallback.regret_bracket(fg)  # uniform mass 16 at mean gap 0.25
    assert (regret.lower, regret.upper) == pytest.approx((4.0, 4.0))


@pytest.mark.parametrize("case", SMALL, ids=str)
def test_fallback_brackets_contain_the_optima(case):
    fg, truth = instance(*case), truths(*case)
    tstar, regret = fallback.char_time_bracket(fg), fallback.regret_bracket(fg)
    mf = fallback.mf_bracket(fg, fg.m_best(2))
    for bracket, name, scale in ((tstar, "tstar", 1.0), (regret, "regret", 1.0), (mf, "mf", fg.gap_min() ** 2)):
        lower, upper = truth[name]
        assert bracket.lower / scale <= upper * (1 + RTOL) and bracket.upper / scale >= lower * (1 - RTOL), name
    assert tstar.how == "uniform"


def test_fallback_upper_end_is_the_closed_form_when_separation_is_refused(monkeypatch):
    """Past the separation's array size limit (a ring of 10^5 agents), the upper end is 2 sum_e |T_e| / Delta_min^2."""
    from optdesign.errors import InstanceTooLargeError

    def refused(*args, **kwargs):
        raise InstanceTooLargeError("exact separation's bounds needs too much memory (test)")

    case = ("ring", 5, 3, 0)
    fg = instance(*case)
    monkeypatch.setattr(fallback, "most_violated", refused)
    monkeypatch.setattr(fallback, "MAX_JOINT_ACTIONS", 0)  # as on a large instance: no enumeration
    bracket = fallback.char_time_bracket(fg)
    assert bracket.how == "closed-form" and bracket.upper == pytest.approx(2 * fg.abar / fg.gap_min() ** 2)
    assert bracket.upper >= truths(*case)["tstar"][0]


@pytest.mark.parametrize("listed", [0, 1])
def test_a_budget_spent_while_the_best_actions_are_listed_leaves_the_bracket_unrefined(monkeypatch, listed):
    """The mixtures need a* and a runner-up: when the budget runs out before the second is listed (the search returns
    what it found, possibly nothing), the bracket is the one before refinement, not an error."""
    case = ("ring", 5, 3, 0)
    fg = instance(*case)
    found = [np.asarray(a, dtype=np.int64) for a in fallback.best_first_actions(fg, listed)]
    monkeypatch.setattr(fallback, "best_first_actions", lambda fg, n: found)
    monkeypatch.setattr(fallback, "MAX_JOINT_ACTIONS", 0)  # as on a large instance: no enumeration
    bracket = fallback.char_time_bracket(fg, refine=True)
    assert bracket.how == "uniform" and bracket.lower <= truths(*case)["tstar"][0] <= bracket.upper < np.inf


def test_mf_fallback_with_explicit_rows_contains_t_mf_2():
    fg = instance("line", 4, 3, 1)
    ranked = fg.m_best(3)
    exact = od.mf_characteristic_time(fg, 2)
    bracket = fallback.mf_bracket(fg, ranked)
    scale = ranked[-1][1] ** 2
    assert bracket.lower / scale <= exact.value * (1 + RTOL) and bracket.upper / scale >= exact.lower_bound


# ring N = 6, K = 10 (10^6 joint actions): certified brackets of unlimited solves (characteristic_time and
# regret_lower_bound without a limit, 16 s and 8 s)
RING_6_10 = {"tstar": (47815.163666776425, 47815.565721749466), "regret": (3396.9509457184513, 3396.956561683001)}


@pytest.mark.parametrize("name", sorted(SOLVES))
def test_a_time_limit_too_short_for_anything_still_gives_a_finite_certified_bracket(name):
    """time_limit=1e-9 returned [0, inf] beyond 20,000 joint actions: a* was looked for under the spent budget. Its
    max-sum pass now gets overtime, so the closed forms (and the T^MF bracket) hold, a positive lower bound below a
    finite value."""
    fg = FactorGraph.ring(6, 10, seed=0)  # fresh: no cached plan or max-sum
    start = time.perf_counter()
    res = SOLVES[name](fg, time_limit=1e-9)
    assert time.perf_counter() - start <= SLACK
    assert res.status == "not_converged" and res.extras["fallback"] != "none" and res.best_action.size == fg.n_agents
    assert 0 < res.lower_bound <= res.value < np.inf
    assert_valid(res, RING_6_10[name] if name in RING_6_10 else
                 (lambda exact: (exact.lower_bound, exact.value))(od.mf_characteristic_time(fg)))


def _blocked_by_setup(monkeypatch) -> None:
    """As on a ring of 1,000 agents with K = 10 under a 30-s limit: no program over the clique tables can start."""
    monkeypatch.setattr(fallback, "setup_seconds", lambda size: 1e9)


def test_a_solve_that_cannot_start_spends_its_budget_on_better_allocations(monkeypatch):
    """The smallest program could not start in the limit, and the call returned the uniform allocation's bracket
    after a fraction of its budget (ring N = 1,000, K = 10, 30 s: [8.3e9, 4.1e11] after 5.9 s). The budget now goes to
    mixtures of the best joint actions, each certified by one exact separation: the value is attained by the
    returned marginals and far below the uniform allocation's."""
    from optdesign.factored.exact.separation import most_violated

    fg = instance("ring", 30, 3, 0)  # 2e14 joint actions
    exact = od.characteristic_time(fg)
    uniform = fallback.char_time_bracket(fg)
    _blocked_by_setup(monkeypatch)
    res = od.characteristic_time(fg, time_limit=30)
    assert res.status == "not_converged" and res.extras["stopped"] == "setup" and res.extras["fallback"] == "mixture"
    assert_valid(res, (exact.lower_bound, exact.value))
    assert res.value < uniform.upper / 3 and res.lower_bound == pytest.approx(uniform.lower)
    wbar = np.concatenate([t.ravel() for t in res.marginals])
    star = fg.group_indices(fg.best_action())[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    h = 1.0 / wbar + (1.0 / wbar[star])[factor_of]
    h[star] = 0.0
    sep = most_violated(fg.plan(), h, fg.means[star][factor_of] - fg.means)
    assert sep.exact and sep.max_ratio == pytest.approx(res.value, rel=1e-9)  # attained by the returned marginals
    assert sum(t.sum() for t in res.marginals) == pytest.approx(fg.n_factors)  # a distribution's marginals


def test_a_regret_bound_that_cannot_start_spends_its_budget_on_better_counts(monkeypatch):
    """As for T*, with the counts 2 V_w w of a mixture w: they satisfy every row of c_theta and cost the value."""
    from optdesign.factored.exact.separation import most_violated

    fg = instance("ring", 30, 3, 0)
    exact = od.regret_lower_bound(fg)
    uniform = fallback.regret_bracket(fg)
    _blocked_by_setup(monkeypatch)
    res = od.regret_lower_bound(fg, time_limit=30)
    assert res.extras["stopped"] == "setup" and res.extras["fallback"] == "mixture"
    assert_valid(res, (exact.lower_bound, exact.value))
    assert res.value < uniform.upper / 10
    counts = np.concatenate([t.ravel() for t in res.marginals])
    star = fg.group_indices(fg.best_action())[0]
    factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
    local_gap = fg.means[star][factor_of] - fg.means
    h = 1.0 / counts
    h[star] = 0.0
    sep = most_violated(fg.plan(), h, local_gap)  # max_a sum_{e: a_e != a*_e} 1 / n_{e,a_e} / Delta(a)^2
    assert sep.exact and sep.max_ratio == pytest.approx(0.5, rel=1e-9)  # every row holds, the worst is tight
    assert counts @ local_gap == pytest.approx(res.value, rel=1e-6)


# --------------------------------------------------------------------------------------- cut short, on purpose
def _sleep_then_time_out(*args, **kwargs):
    time.sleep(0.05)
    raise TimeLimitReached("the time budget ran out during a solve (test)")


@pytest.mark.parametrize("name, target", [
    ("tstar", "optdesign.factored.exact.generated.CharTimeMaster.solve"),
    ("regret", "optdesign.factored.regret.master.RegretMaster.solve"),
    ("mf", "optdesign.factored.mean_field.orbits.OrbitMeanField.solve"),
])
def test_a_first_solve_cut_short_returns_the_fallback_bracket(monkeypatch, name, target):
    case = ("ring", 5, 3, 0)
    fg, truth = instance(*case), truths(*case)
    monkeypatch.setattr(target, _sleep_then_time_out)
    kwargs = {"method": "generate"} if name == "tstar" else {"strategy": "generate"} if name == "regret" else {}
    res = SOLVES[name](fg, time_limit=30, **kwargs)
    assert res.status == "not_converged" and res.extras["stopped"] == "time"
    assert res.extras["fallback"] in ("uniform", "start")
    assert_valid(res, truth[name])


def test_a_small_instance_brackets_after_its_budget_is_spent(monkeypatch):
    """Up to 20,000 joint actions the fallback bracket is computed only when needed, with overtime: still the bracket
    at the uniform allocation once the solve has spent the whole budget."""
    case = ("ring", 5, 3, 0)
    fg, truth = instance(*case), truths(*case)

    def spend_the_budget(*args, **kwargs):
        time.sleep(0.3)
        raise TimeLimitReached("the time budget ran out during a solve (test)")

    monkeypatch.setattr("optdesign.factored.exact.generated.CharTimeMaster.solve", spend_the_budget)
    res = od.characteristic_time(fg, method="generate", time_limit=0.2)
    assert res.status == "not_converged" and res.extras["fallback"] == "uniform"
    assert_valid(res, truth["tstar"])


def test_a_stop_request_before_max_sum_returns_an_empty_bracket():
    """a* is not even known: value inf, lower bound 0, no best action (status interrupted)."""
    fg = FactorGraph.ring(5, 3, seed=11)  # fresh: no cached plan or max-sum
    deadline.request_stop()
    try:
        res = od.characteristic_time(fg, time_limit=30)
    finally:
        deadline.clear_stop()
    assert res.status == "interrupted" and res.extras["fallback"] == "none"
    assert res.value == np.inf and res.lower_bound == 0.0 and res.best_action.size == 0


def test_a_solver_stopped_on_its_time_limit_returns_its_point_only_when_asked(monkeypatch):
    import cvxpy as cp

    x = cp.Variable(50, nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum(cp.inv_pos(x)) + cp.sum(x)), [cp.sum(x) <= 10])
    monkeypatch.setattr(solvers, "time_limit_options", lambda name, seconds: {"time_limit": 1e-9})
    with deadline.time_budget(60):
        info = solvers.solve(problem, "CLARABEL", accept_limit=True)
        assert info.status == "not_converged" and x.value is not None
        with pytest.raises(TimeLimitReached) as error:
            solvers.solve(problem, "CLARABEL")
    assert error.value.status == "time_limit"


def test_no_solve_starts_when_its_setup_exceeds_the_time_left():
    assert solvers.setup_seconds(10**5) == pytest.approx(solvers.SETUP_SECONDS)
    with deadline.time_budget(0.5):
        solvers.check_setup_time(1_000, "a small program")  # well below the budget
        with pytest.raises(TimeLimitReached, match="cannot start"):
            solvers.check_setup_time(10**6, "a large program")


def test_overtime_extends_a_budget_only_within_its_block():
    with deadline.time_budget(1e-6):
        time.sleep(1e-3)
        assert deadline.budget_expired()
        with deadline.overtime(30):
            assert not deadline.budget_expired()
            deadline.check_budget()
        with pytest.raises(TimeLimitReached, match="a test loop"):
            deadline.check_budget("a test loop")
    with deadline.overtime(30):
        assert deadline.remaining_budget() is None  # no budget: nothing to extend


def test_cli_mf_char_time_takes_a_time_limit(tmp_path):
    import json

    from typer.testing import CliRunner

    from optdesign.cli import app

    path = tmp_path / "ring.json"
    instance("ring", 5, 3, 0).save(path)
    out = CliRunner().invoke(app, ["solve", "mf-char-time", "--instance", str(path), "--time-limit", "30", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["status"] == "optimal" and data["lower_bound"] <= data["value"]


# --------------------------------------------------------------------------------------- properties
@settings(max_examples=12)
@given(case=st.tuples(st.sampled_from(sorted(GENERATORS)), st.integers(3, 4), st.integers(2, 3),
                      st.integers(0, 3)),
       name=st.sampled_from(sorted(SOLVES)), limit=st.floats(1e-4, 0.3))
def test_random_time_limits_hold_with_a_valid_bracket(case, name, limit):
    fg, truth = instance(*case), truths(*case)[name]
    start = time.perf_counter()
    res = SOLVES[name](fg, time_limit=limit)
    assert time.perf_counter() - start <= limit + SLACK
    assert res.status in ("optimal", "optimal_inaccurate", "not_converged")
    event(f"{name}: {res.status}, fallback {res.extras.get('fallback')}")
    if res.lower_bound is None:  # a mean-field regret bound has none; the exact ones always do
        return
    if res.extras.get("fallback") == "none":  # a* not found in time: the empty bracket
        assert res.value == np.inf and res.lower_bound == 0.0
        return
    assert_valid(res, truth)


@settings(max_examples=40)
@given(case=st.tuples(st.sampled_from(sorted(GENERATORS)), st.integers(3, 6), st.integers(2, 3),
                      st.integers(0, 50)),
       integer=st.booleans())
def test_runner_up_without_stored_regrets_is_iter_bests_second(case, integer):
    """The max-sum pass without stored regrets finds the pair iter_best lists second (ties included)."""
    from optdesign.factored.inference.max_sum import MaxSum

    fg = instance(*case)
    if integer:  # integer means: ties everywhere
        fg = FactorGraph(fg.n_actions, [(s, np.round(3 * t)) for s, t in zip(fg.scopes, fg.tables, strict=True)])
    full = MaxSum(fg.plan(), fg.means)
    second = list(itertools.islice(full.iter_best(), 2))[1]
    gap, action = MaxSum(fg.plan(), fg.means, keep_regrets=False).runner_up()
    assert gap == second[0] and np.array_equal(action, second[1])


def test_plan_index_helpers_match_their_matrix_forms():
    from optdesign.factored.inference.orders import _adjacency, _min_degree, interaction_graph, min_degree_order

    fg = FactorGraph.grid(3, 3, [2, 3, 2, 3, 2, 3, 2, 3, 2], seed=4)
    plan = fg.plan()
    x = np.random.default_rng(0).normal(size=int(sum(fg.n_actions)))
    assert np.array_equal(plan.group_sums(x), plan.group_selection() @ x)
    assert _min_degree(_adjacency(fg.n_agents, fg.scopes)) == min_degree_order(
        interaction_graph(fg.n_agents, fg.scopes))
