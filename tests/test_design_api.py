"""One design API: every design reports its criterion in its own units with a certificate and the G-value; G and D
take linear constraints as every classical criterion does.

Truths checked: D's value is det A^(-1/d) (the same as phi_0 and criterion_value), certified by Atwood's bound
value d / G; G under constraints against a closed form (a symmetric instance where the optimum is 4 / (1 + 3c)) and
against a grid search over the constrained designs; constraints that do not bind give Kiefer–Wolfowitz's d; the
constrained G-design's G-value never exceeds the constrained D-design's.
"""

import itertools

import numpy as np
import pytest

import optdesign as od
from optdesign.design_result import CRITERION_UNITS, DesignResult, better_certified
from optdesign.errors import InvalidInputError

TRIANGLE = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def _random(K, d, seed):
    return np.random.default_rng(seed).standard_normal((K, d))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_d_value_is_the_d_criterion_certified_by_atwood(seed):
    X = _random(30, 4, seed)
    res = od.d_optimal(X, tol=1e-9)
    assert res.criterion == "d-optimal" and res.units == CRITERION_UNITS["d-optimal"]
    assert res.value == pytest.approx(od.criterion_value(X, res.weights, "d"), rel=1e-10)
    assert res.value == pytest.approx(od.phi_optimal(X, 0, tol=1e-9).value, rel=1e-8)
    assert res.g_value == pytest.approx(od.g_value(X, res.weights), rel=1e-10)
    assert res.g_value == pytest.approx(4, rel=1e-8)  # Kiefer–Wolfowitz
    assert res.lower_bound == pytest.approx(res.value * 4 / res.g_value, rel=1e-12)
    assert res.gap == pytest.approx(res.g_value / 4 - 1, abs=1e-12)


@pytest.mark.parametrize("design", [od.a_optimal, od.e_optimal, lambda X: od.c_optimal(X, X[0] - X[1]),
                                    lambda X: od.ds_optimal(X, [0, 1]), lambda X: od.phi_optimal(X, 2)],
                         ids=["a", "e", "c", "ds", "phi"])
def test_classical_designs_report_their_g_value(design):
    X = _random(25, 3, 5)
    res = design(X)
    G = od.criterion_value(X, res.weights, "g")
    assert res.g_value == pytest.approx(G, rel=1e-9) or (np.isinf(G) and np.isinf(res.g_value))
    assert res.g_value >= 3 * (1 - 1e-9)  # at least d for every design


@pytest.mark.parametrize("cap", [0.05, 0.2, 0.3])
def test_constrained_g_closed_form(cap):
    """e_1, e_2, e_1 + e_2 with w_3 <= c < 1/3: by symmetry and convexity w = ((1 - c)/2, (1 - c)/2, c) and
    G* = max((a + c) / (a (a + 2c)), 4 / (1 + 3c)) with a = (1 - c) / 2; the third row binds."""
    res = od.g_optimal(TRIANGLE, constraints=od.caps([1.0, 1.0, cap]), tol=1e-6)
    a = (1 - cap) / 2
    exact = max((a + cap) / (a * (a + 2 * cap)), 4 / (1 + 3 * cap))
    assert res.value == pytest.approx(exact, rel=1e-6)
    assert res.lower_bound <= exact * (1 + 1e-9) and res.gap <= 1e-6
    assert res.weights == pytest.approx([a, a, cap], abs=1e-5)
    assert res.constraints == 3 and res.g_value == res.value


def test_constrained_g_against_a_grid_search():
    """K = 4 in the plane under a budget: the certified bracket holds the best design of a fine grid."""
    X = np.array([[1.0, 0.2], [0.1, 1.0], [1.0, 1.0], [1.0, -0.7]])
    cost = np.array([1.0, 1.0, 3.0, 2.0])
    res = od.g_optimal(X, constraints=od.budget(cost, 1.5), tol=1e-5)
    assert cost @ res.weights <= 1.5 + 1e-9
    step = 1 / 120
    best = np.inf
    for i, j, k in itertools.product(range(121), repeat=3):
        w = np.array([i, j, k, 120 - i - j - k]) * step
        if w[3] < 0 or cost @ w > 1.5:
            continue
        A = X.T @ (w[:, None] * X)
        if np.linalg.matrix_rank(A) == 2:
            best = min(best, float(np.max(np.einsum("ij,jk,ik->i", X, np.linalg.inv(A), X))))
    assert res.lower_bound <= best * (1 + 1e-9)
    assert res.value <= best * (1 + 1e-9)  # at least as good as every grid design
    assert best <= res.value * 1.02  # and the grid comes close


def test_constraints_that_do_not_bind_give_kiefer_wolfowitz():
    X = _random(40, 3, 7)
    res = od.g_optimal(X, constraints=od.caps(np.ones(40)), tol=1e-7)
    assert res.value == pytest.approx(3, rel=1e-6) and res.gap <= 1e-7


def test_constrained_g_beats_constrained_d_on_the_g_value():
    """Under constraints G and D differ; each is at least as good as the other on its own criterion."""
    X = _random(60, 4, 11)
    cons = od.caps(np.full(60, 0.04))
    g, d = od.g_optimal(X, constraints=cons, tol=1e-6), od.d_optimal(X, constraints=cons, tol=1e-6)
    assert g.value <= d.g_value * (1 + 1e-6)
    assert d.value <= od.criterion_value(X, g.weights, "d") * (1 + 1e-6)
    assert d.criterion == "d-optimal" and "p" not in d.extras and d.constraints == 60
    assert d.value == pytest.approx(od.phi_optimal(X, 0, constraints=cons, tol=1e-6).value, rel=1e-9)
    for res in (g, d):
        assert np.all(res.weights <= 0.04 + 1e-9) and res.weights.sum() == pytest.approx(1)
        assert res.lower_bound <= res.value and res.gap <= 1e-6


def test_constrained_g_grows_its_working_set_over_many_rows():
    X = _random(400, 5, 3)
    res = od.g_optimal(X, constraints=od.budget(np.linspace(1, 3, 400), 1.6), tol=1e-6)
    assert res.status == "optimal" and res.gap <= 1e-6
    assert res.value == pytest.approx(od.g_value(X, res.weights), rel=1e-9)
    assert res.extras["working_directions"] < 400


@pytest.mark.parametrize("call, message", [
    (lambda: od.g_optimal(TRIANGLE, constraints=od.caps([1, 1, 0.2]), method="barrier"), "'auto' or 'cvxpy'"),
    (lambda: od.d_optimal(TRIANGLE, constraints=od.caps([1, 1, 0.2]), method="exchange"), "'auto' or 'cvxpy'"),
    (lambda: od.g_optimal(TRIANGLE, constraints=od.caps([0.1, 0.1, 0.1])), "no design|empty|infeasible"),
    (lambda: od.g_optimal(TRIANGLE, constraints=od.caps([1, 0, 0])), "do not span"),
    (lambda: od.g_optimal(TRIANGLE, constraints=(np.ones((1, 2)), np.ones(1))), "constraints"),
    (lambda: od.d_optimal(TRIANGLE, constraints=od.caps([1, 0, 0])), "estimate|estimating"),
])
def test_bad_constraints_one_clear_error(call, message):
    with pytest.raises(InvalidInputError, match=message):
        call()


def _designs():
    X = _random(20, 3, 2)
    cs = od.candidates("~ x", {"x": (-2, 2, 21)})
    thetas = np.array([[0.0, 1.0], [0.5, 1.5]])
    return {
        "g": lambda: od.g_optimal(X), "d": lambda: od.d_optimal(X), "a": lambda: od.a_optimal(X),
        "i": lambda: od.i_optimal(X), "c": lambda: od.c_optimal(X, X[0]), "l": lambda: od.c_optimal(X, X[:2]),
        "e": lambda: od.e_optimal(X), "ds": lambda: od.ds_optimal(X, [0]), "phi": lambda: od.phi_optimal(X, 3),
        "xy": lambda: od.xy_allocation(X), "xy-oracle": lambda: od.xy_oracle(X, X[0]),
        "transductive": lambda: od.transductive(X, X[:5]),
        "transductive-oracle": lambda: od.transductive(X, X[:5], X[0]),
        "bayesian-d": lambda: od.bayesian_d_optimal(cs, thetas, "logit"),
        "bayesian-a": lambda: od.bayesian_a_optimal(cs, thetas, "logit"),
        "maximin": lambda: od.maximin_d_optimal(cs, thetas, "logit"),
        "minimax": lambda: od.maximin_d_optimal(cs, thetas, "logit", standardised=False),
        "local": lambda: od.glm_design(cs, thetas[0], "logit"),
    }


@pytest.mark.parametrize("name", list(_designs()))
def test_every_design_states_its_units(name):
    res = _designs()[name]()
    assert res.criterion in CRITERION_UNITS, res.criterion
    assert res.units == CRITERION_UNITS[res.criterion]
    out = res.to_dict()
    assert out["units"] == res.units and out["value"] == res.value and "g_value" in out


def _result(gap):
    return DesignResult(weights=np.ones(2) / 2, value=1.0, status="optimal", solver="numpy", solve_time=0.0, gap=gap,
                        method="m", criterion="a-optimal")


def test_a_gap_of_exactly_zero_wins():
    """A conic design certified with gap 0.0 is not mistaken for one without a certificate."""
    exact, loose, uncertified = _result(0.0), _result(1e-3), _result(None)
    assert better_certified(exact, loose) is exact
    assert better_certified(loose, exact) is exact
    assert better_certified(uncertified, exact) is exact and better_certified(exact, uncertified) is exact
    assert better_certified(loose, uncertified) is loose


def test_the_lmi_model_agrees_with_the_socp(monkeypatch):
    """The working set's two models (rotated cones, or one LMI per direction on many arms) reach the same certified
    optimum."""
    import optdesign.linear.classical.minmax_g as minmax_g

    X = _random(50, 4, 9)
    cons = od.budget(np.linspace(1, 2, 50), 1.4)
    socp = od.g_optimal(X, constraints=cons)
    monkeypatch.setattr(minmax_g, "SOCP_MAX_CONES", 0)
    lmi = od.g_optimal(X, constraints=cons)
    assert lmi.value == pytest.approx(socp.value, rel=2e-5)
    assert max(lmi.lower_bound, socp.lower_bound) <= min(lmi.value, socp.value) * (1 + 1e-9)
    assert lmi.gap <= 1e-4 and socp.gap <= 1e-4


def test_exact_and_blocked_results_state_their_units():
    X = od.candidates("~ a + b", od.cube(["a", "b"]))[0]
    exact = od.exact_design(X, 6, "A")
    assert exact.units == CRITERION_UNITS["a-optimal"] and exact.to_dict()["units"] == exact.units
    blocked = od.blocked_design(X, [3, 3], criterion="D", seed=0)
    assert blocked.units == "det(M/N)^(-1/p)" and blocked.to_dict()["units"] == blocked.units
