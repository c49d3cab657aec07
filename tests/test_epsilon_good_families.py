"""Epsilon-good identification on Bernoulli, Poisson and exponential arms (optdesign.identification.shifted and
.epsilon_good): the shifted pieces against brute-force minimisation and finite differences, the one stationary point
of an exponential piece (the roots of its stationarity cubic), the equalisation against the cvxpy model
where both apply (Gaussian arms, epsilon = 0) and against a brute-force max-min on two arms, the certificates, and
runs of the generic rules under the GLR stop."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import minimize_scalar

import optdesign as od
from bandits.instances import parse_instance
from bandits.pure_exploration import Bernoulli, Poisson
from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem
from bandits.pure_exploration.families import Exponential
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.identification import PairsModel, pair_pieces
from optdesign.identification.families import divergence
from optdesign.identification.shifted import anchored_time

FAMILIES = ("bernoulli", "poisson", "exponential")


def _instance(family: str, rng: np.random.Generator, K: int = 5) -> np.ndarray:
    return rng.uniform(0.02, 0.98, K) if family == "bernoulli" else rng.uniform(0.05, 5.0, K)


def _brute_piece(mu_i: float, mu_j: float, w_i: float, w_j: float, s: float, family: str, c: float = 1.0) -> float:
    """min over x of w_i d(mu_i, x) + w_j d(mu_j, c x + s): a grid on the feasible interval, then bounded Brent search
    between the grid points beside its least value (no assumption on the number of local minima)."""
    lo = max((mu_j - s) / c, 0.0 if family != "gaussian" else -1e3)
    hi = min(mu_i, (1.0 - s) / c) if family == "bernoulli" else mu_i

    def cost(x: float) -> float:
        with np.errstate(all="ignore"):
            value = (w_i * divergence(mu_i, x, family) if w_i > 0 else 0.0) + (
                w_j * divergence(mu_j, c * x + s, family) if w_j > 0 else 0.0)
        return float(np.nan_to_num(value, nan=np.inf))

    grid = np.linspace(lo, hi, 4001)
    k = int(np.argmin([cost(x) for x in grid]))
    found = minimize_scalar(cost, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]), method="bounded",
                            options={"xatol": 1e-13})
    return min(found.fun, cost(lo), cost(hi))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(4))
def test_a_shifted_piece_is_the_least_cost_move(family, seed):
    rng = np.random.default_rng(seed)
    mu = _instance(family, rng)
    if family == "bernoulli" and seed % 2:
        mu[int(np.argmin(mu))] = 0.0  # an estimate on the boundary
    w, eps = rng.dirichlet(np.ones(5)), float(rng.uniform(0.02, 0.3))
    best = int(np.argmax(mu))
    pairs = np.array([(best, j) for j in range(5) if j != best])
    values, _ = pair_pieces(mu, pairs, w, family=family, shifts=eps)
    for (i, j), value in zip(pairs, values, strict=True):
        assert value == pytest.approx(_brute_piece(mu[i], mu[j], w[i], w[j], eps, family), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_gradients_are_the_derivatives_in_w(family):
    rng = np.random.default_rng(7)
    mu, w = _instance(family, rng), rng.dirichlet(np.ones(5))
    pairs = np.array([(int(np.argmax(mu)), j) for j in range(5) if j != int(np.argmax(mu))])
    _, G = pair_pieces(mu, pairs, w, family=family, shifts=0.1)
    h = 1e-6
    for k in range(5):
        up, down = w.copy(), w.copy()
        up[k] += h
        down[k] -= h
        numeric = (pair_pieces(mu, pairs, up, family=family, shifts=0.1)[0]
                   - pair_pieces(mu, pairs, down, family=family, shifts=0.1)[0]) / (2 * h)
        np.testing.assert_allclose(G[:, k], numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_an_exponential_piece_has_one_stationary_point(seed):
    """d(mu, .) is concave past 2 mu on exponential arms, yet w_i d(mu_i, x) + w_j d(mu_j, c x + s) has one
    stationary point on [a, b]: its condition times x^2 (c x + s)^2 is a cubic with exactly one real root there, over
    means, shifts, scales and weights spread across many orders of magnitude."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(4000):
        mi, mj = 1.0, float(np.exp(rng.uniform(-8, 0.5)))
        s, c, wi = (float(np.exp(rng.uniform(lo, hi))) for lo, hi in ((-6, 3), (-1, 2), (-8, 8)))
        if c * mi + s <= mj:
            continue
        a, b = max((mj - s) / c, 0.0), mi
        cubic = [c**2 * (wi + 1.0), c * (wi * (2 * s - c * mi) + (s - mj)), wi * s * (s - 2 * c * mi), -wi * mi * s**2]
        roots = np.roots(cubic)
        real = roots[np.abs(roots.imag) <= 1e-9 * np.abs(roots)].real
        assert np.count_nonzero((real >= a - 1e-12) & (real <= b + 1e-12)) == 1, (mj, s, c, wi)
        checked += 1
    assert checked > 3000


def test_exponential_pieces_beyond_the_convex_range_are_the_least_cost_moves():
    """Arms far below the anchor plus the shift: lambda_j runs past 2 mu_j, where d(mu_j, .) is concave."""
    mu, w = np.array([4.0, 0.1, 0.5, 2.0]), np.array([0.1, 0.4, 0.3, 0.2])
    pairs = np.array([(0, 1), (0, 2), (0, 3)])
    for eps in (0.05, 1.0, 3.0):
        values, _ = pair_pieces(mu, pairs, w, family="exponential", shifts=eps)
        for (i, j), value in zip(pairs, values, strict=True):
            assert value == pytest.approx(_brute_piece(mu[i], mu[j], w[i], w[j], eps, "exponential"), rel=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_zero_shift_is_the_weighted_mean_piece(family):
    """With s = 0 the Newton root is the weighted mean of the closed form (best-arm identification)."""
    rng = np.random.default_rng(3)
    mu, w = _instance(family, rng), rng.dirichlet(np.ones(5))
    pairs = np.array([(int(np.argmax(mu)), j) for j in range(5) if j != int(np.argmax(mu))])
    closed = pair_pieces(mu, pairs, w, family=family)
    from optdesign.identification.shifted import shifted_pieces
    newton = shifted_pieces(mu, pairs, w, np.zeros(4), family)
    np.testing.assert_allclose(newton[0], closed[0], rtol=1e-10)
    np.testing.assert_allclose(newton[1], closed[1], rtol=1e-8)


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.3])
def test_the_equalisation_agrees_with_the_cvxpy_model_on_gaussian_arms(eps):
    """Two independent methods on the problem both cover: the root finding here and the certified conic solve."""
    mu = np.array([1.0, 0.9, 0.7, 0.5, 0.1])
    upper, lower, w = anchored_time(mu, 0, eps, "gaussian")
    model = PairsModel(5, np.array([(0, j) for j in range(1, 5)])).solve(mu, shifts=eps)
    assert upper == pytest.approx(model.value, rel=1e-7)
    assert lower <= upper and upper - lower <= 1e-9 * upper
    np.testing.assert_allclose(w, model.weights, atol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_epsilon_zero_agrees_with_the_cvxpy_model(family):
    mu = np.array([0.6, 0.55, 0.4, 0.3]) if family == "bernoulli" else np.array([3.0, 2.6, 2.0, 1.0])
    upper, lower, _ = anchored_time(mu, 0, 0.0, family)
    model = od.pairwise_characteristic_time(mu, od.best_arm_pairs(mu), family=family)
    assert upper == pytest.approx(model.value, rel=1e-6)
    assert lower <= model.value * (1 + 1e-6)


def _two_arm_time(mu: np.ndarray, anchor: int, eps: float, family: str, c: float = 1.0) -> float:
    """1 / max_w f(w) on two arms by a bounded search over w_anchor, each f by brute force."""
    other = 1 - anchor

    def minus_value(w_anchor: float) -> float:
        return -_brute_piece(mu[anchor], mu[other], w_anchor, 1.0 - w_anchor, eps, family, c)

    found = minimize_scalar(minus_value, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12})
    return -1.0 / found.fun


@pytest.mark.parametrize(("family", "mu", "eps"), [
    ("bernoulli", [0.6, 0.4], 0.1), ("bernoulli", [0.95, 0.9], 0.2), ("bernoulli", [0.3, 0.05], 0.02),
    ("poisson", [2.0, 1.5], 0.3), ("poisson", [0.5, 0.45], 0.1),
    ("exponential", [2.0, 1.5], 0.3), ("exponential", [3.0, 0.4], 1.0), ("exponential", [1.0, 0.9], 0.3),
])
def test_two_arms_agree_with_a_brute_force_max_min(family, mu, eps):
    """On two arms T* is the smaller of the two anchors' times (both arms may be epsilon-good)."""
    mu = np.asarray(mu)
    anchors = [a for a in (0, 1) if mu[a] >= mu.max() - eps]
    expected = min(_two_arm_time(mu, a, eps, family) for a in anchors)
    result = od.epsilon_good_characteristic_time(mu, eps, family=family)
    assert result.value == pytest.approx(expected, rel=1e-6)
    assert result.lower_bound <= result.value and result.gap <= 1e-9


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(3))
def test_the_certificate_holds_against_random_proportions(family, seed):
    """Weak duality: no proportions separate every piece of the easiest answer better than 1 / lower_bound."""
    rng = np.random.default_rng(seed)
    mu, eps = _instance(family, rng, K=6), 0.1
    result = od.epsilon_good_characteristic_time(mu, eps, family=family)
    assert result.gap <= 1e-9 and np.isclose(result.weights.sum(), 1.0)
    good = np.flatnonzero(mu >= mu.max() - eps)
    for w in rng.dirichlet(np.ones(6), size=200):
        for i in good:
            pairs = np.array([(i, j) for j in range(6) if j != i])
            assert pair_pieces(mu, pairs, w, family=family, shifts=eps)[0].min() <= 1.0 / result.lower_bound


def test_a_bernoulli_arm_near_one_is_the_easiest_answer():
    """Near 1 the constraint lambda_i <= 1 - epsilon binds without a pull of the others: the best arm at 0.97 needs
    far fewer samples than BAI, and another epsilon-good arm is solved too (its pieces are larger)."""
    mu, eps = np.array([0.97, 0.95, 0.5]), 0.1
    result = od.epsilon_good_characteristic_time(mu, eps, family="bernoulli")
    assert result.gap <= 1e-9
    assert result.value == pytest.approx(anchored_time(mu, 0, eps, "bernoulli")[0])
    assert result.value < anchored_time(mu, 1, eps, "bernoulli")[0]
    assert result.value < od.pairwise_characteristic_time(mu, od.best_arm_pairs(mu), family="bernoulli").value / 10


def test_an_arm_on_the_edge_of_the_epsilon_good_set_keeps_the_certificate():
    """0.2 is epsilon-good at 0.3 - 0.1 up to rounding: its own time is bracketed without the equalisation (an
    enormous T), and the best arm's answer stays the certified optimum."""
    mu, eps = np.array([0.3, 0.21, 0.2, 0.19, 0.18]), 0.1
    edge_upper, edge_lower, _ = anchored_time(mu, 2, eps, "bernoulli")
    assert 1e12 < edge_lower <= edge_upper
    result = od.epsilon_good_characteristic_time(mu, eps, family="bernoulli")
    assert result.value == pytest.approx(anchored_time(mu, 0, eps, "bernoulli")[0]) and result.gap <= 1e-9


def test_an_anchor_apart_by_one_rounding_step_is_infinitely_hard():
    """An estimate puts an arm one ulp inside the epsilon-good set: its pieces round to 0 (Track-and-Stop met such
    estimates in a study), so its time is infinite and the best arm's answer is kept."""
    mu = np.array([0.5, np.nextafter(0.4, 1.0), 0.2])
    upper, lower, _ = anchored_time(mu, 1, 0.1, "bernoulli")
    assert lower <= upper and lower > 1e20
    result = od.epsilon_good_characteristic_time(mu, 0.1, family="bernoulli")
    assert result.value == pytest.approx(anchored_time(mu, 0, 0.1, "bernoulli")[0]) and result.gap <= 1e-9


@pytest.mark.parametrize("family", ("gaussian", *FAMILIES))
@pytest.mark.parametrize("seed", range(3))
def test_a_scaled_piece_is_the_least_cost_move(family, seed):
    """Multiplicative epsilon: the pieces {lambda_j >= lambda_i / (1 - eps)}; on Gaussian arms also the closed form
    (c mu_i - mu_j)^2 / (2 sigma^2 (c^2 / w_i + 1 / w_j))."""
    rng = np.random.default_rng(seed)
    mu = _instance("bernoulli" if family == "gaussian" else family, rng)
    w, eps = rng.dirichlet(np.ones(5)), float(rng.uniform(0.02, 0.4))
    c = 1.0 / (1.0 - eps)
    best = int(np.argmax(mu))
    pairs = np.array([(best, j) for j in range(5) if j != best])
    values, _ = pair_pieces(mu, pairs, w, family=family, scales=c)
    for (i, j), value in zip(pairs, values, strict=True):
        assert value == pytest.approx(_brute_piece(mu[i], mu[j], w[i], w[j], 0.0, family, c), rel=1e-9, abs=1e-14)
    if family == "gaussian":
        i, j = pairs[:, 0], pairs[:, 1]
        closed = (c * mu[i] - mu[j]) ** 2 / (2 * (c**2 / w[i] + 1 / w[j]))
        np.testing.assert_allclose(values, closed, rtol=1e-10)


@pytest.mark.parametrize(("mu", "eps"), [([1.0, 0.5], 0.2), ([1.0, 0.95], 0.1), ([2.0, 1.0, 0.5], 0.3)])
def test_multiplicative_gaussian_times_have_the_closed_form(mu, eps):
    """One other arm j per anchor i: max_w (c mu_i - mu_j)^2 / (2 (c^2 / w_i + 1 / w_j)) at w_i / w_j = c gives
    T_i = 2 (1 + c)^2 / (c mu_i - mu_j)^2; with more arms the pairs share the anchor, so only the bound is checked."""
    mu, c = np.asarray(mu), 1.0 / (1.0 - eps)
    result = od.epsilon_good_characteristic_time(mu, eps, kind="multiplicative")
    if mu.size == 2:
        anchors = [a for a in (0, 1) if mu[a] >= (1 - eps) * mu.max()]
        expected = min(2 * (1 + c) ** 2 / (c * mu[a] - mu[1 - a]) ** 2 for a in anchors)
        assert result.value == pytest.approx(expected, rel=1e-8)
    assert result.gap <= 1e-9


@pytest.mark.parametrize(("family", "mu", "eps"), [("bernoulli", [0.6, 0.4], 0.2), ("bernoulli", [0.95, 0.9], 0.1),
                                                   ("poisson", [2.0, 1.5], 0.2), ("exponential", [2.0, 1.5], 0.2),
                                                   ("exponential", [3.0, 0.2], 0.5)])
def test_multiplicative_two_arms_agree_with_a_brute_force_max_min(family, mu, eps):
    mu, c = np.asarray(mu), 1.0 / (1.0 - eps)
    anchors = [a for a in (0, 1) if mu[a] >= (1 - eps) * mu.max()]
    expected = min(_two_arm_time(mu, a, 0.0, family, c) for a in anchors)
    result = od.epsilon_good_characteristic_time(mu, eps, family=family, kind="multiplicative")
    assert result.value == pytest.approx(expected, rel=1e-6) and result.gap <= 1e-9


def test_a_multiplicative_answer_is_a_fraction_of_the_best():
    problem, mu = EpsilonGoodProblem(4, 0.1, kind="multiplicative"), np.array([2.0, 1.85, 1.75, 0.3])
    assert [problem.correct(k, mu) for k in range(4)] == [True, True, False, False]


def test_the_multiplicative_question_runs_by_its_name():
    """``problem=multiplicative-epsilon-good:epsilon=E`` (an algorithm's text takes one problem option)."""
    env = parse_instance("bernoulli:means=0.6/0.56/0.3/0.2")
    additive = run(make_algorithm("track-and-stop:problem=epsilon-good:epsilon=0.1"), env, 0.05, seed=0)
    ratio = run(make_algorithm("track-and-stop:problem=multiplicative-epsilon-good:epsilon=0.1"), env, 0.05, seed=0)
    assert ratio.correct and additive.correct and ratio.recommendation in (0, 1)
    problem = EpsilonGoodProblem(4, 0.1, Bernoulli(), kind="multiplicative")
    assert problem.oracle(env.means).T > EpsilonGoodProblem(4, 0.1, Bernoulli()).oracle(env.means).T  # 0.06 < 0.1


@pytest.mark.parametrize(("family", "spec"), [(Bernoulli(), "bernoulli:means=0.6/0.55/0.3/0.2"),
                                              (Poisson(), "poisson:means=3/2.8/1.5/1"),
                                              (Exponential(), "exponential:means=3/2.8/1.5/0.2")])
def test_the_problem_reports_the_certified_time(family, spec):
    problem = EpsilonGoodProblem(4, 0.1, family)
    mu = parse_instance(spec).means
    oracle = problem.oracle(mu)
    direct = od.epsilon_good_characteristic_time(mu, 0.1, family=family.name)
    assert oracle.T == pytest.approx(direct.value) and oracle.lower_bound <= oracle.T


@pytest.mark.parametrize("rule", ["fws", "track-and-stop", "round-robin", "top-two", "top-two:beta=ids"])
def test_generic_rules_stop_with_an_epsilon_good_arm_on_bernoulli_arms(rule):
    """Top-Two with the empirical best as leader and the problem's transportation costs is EB-TC-epsilon."""
    env = parse_instance("bernoulli:means=0.6/0.56/0.3/0.2")
    text = f"{rule},problem=epsilon-good:epsilon=0.1" if ":" in rule else f"{rule}:problem=epsilon-good:epsilon=0.1"
    for seed in range(2):
        good = run(make_algorithm(text), env, 0.05, seed=seed)
        assert good.correct and good.recommendation in (0, 1)


@pytest.mark.parametrize("rule", ["fws", "track-and-stop", "top-two:challenger=tci", "lazy-tas"])
@pytest.mark.parametrize("question", ["epsilon-good:epsilon=0.4", "multiplicative-epsilon-good:epsilon=0.2"])
def test_generic_rules_stop_with_an_epsilon_good_arm_on_exponential_arms(rule, question):
    """Arms 0 and 1 are epsilon-good (2 - 0.4 and 0.8 * 2 are 1.6)."""
    env = parse_instance("exponential:means=2/1.7/0.8/0.4")
    text = f"{rule},problem={question}" if ":" in rule else f"{rule}:problem={question}"
    for seed in range(2):
        good = run(make_algorithm(text), env, 0.05, seed=seed)
        assert good.correct and good.recommendation in (0, 1)


@pytest.mark.parametrize("family", [Bernoulli(), Poisson(), Exponential()])
def test_the_transportation_costs_at_epsilon_zero_are_best_arm_identifications(family):
    """EB-TC-epsilon's costs and the IDS share reduce to the K-armed problem's closed forms at epsilon = 0, and with
    the empirical best as leader the costs are the pieces."""
    from bandits.pure_exploration import KArmedProblem

    mu, N = np.array([0.6, 0.5, 0.3, 0.2]), np.array([10.0, 7.0, 5.0, 3.0])
    good, bai = EpsilonGoodProblem(4, 0.0, family), KArmedProblem(4, family)
    for leader in range(4):
        np.testing.assert_allclose(good.pair_costs(mu, N, leader), bai.pair_costs(mu, N, leader), rtol=1e-12)
    assert good.pair_share(mu, N, 0, 1) == pytest.approx(bai.pair_share(mu, N, 0, 1), rel=1e-12)
    shifted = EpsilonGoodProblem(4, 0.1, family)
    pieces = shifted.pieces(mu, N)
    np.testing.assert_allclose(shifted.pair_costs(mu, N, pieces.best)[pieces.answers], pieces.values)


def test_a_larger_epsilon_stops_sooner_on_bernoulli_arms():
    env = parse_instance("bernoulli:means=0.6/0.57/0.3/0.2")
    for seed in range(2):
        plain = run(make_algorithm("track-and-stop"), env, 0.05, seed=seed)
        good = run(make_algorithm("track-and-stop:problem=epsilon-good:epsilon=0.1"), env, 0.05, seed=seed)
        assert good.correct and good.samples < plain.samples


@pytest.mark.slow
def test_the_error_rate_is_at_most_delta_on_bernoulli_arms():
    """Track-and-Stop, 300 runs at delta = 0.1 on arms 0.05 apart with epsilon = 0.03 (arm 1 is not epsilon-good)."""
    env = parse_instance("bernoulli:means=0.5/0.45/0.3")
    errors = sum(not run(make_algorithm("track-and-stop:problem=epsilon-good:epsilon=0.03"), env, 0.1, seed=s).correct
                 for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: EpsilonGoodProblem(3, 1.0, Bernoulli()), "below 1"),
    (lambda: od.epsilon_good_characteristic_time([0.5, 0.5, 0.2], 0.1, family="bernoulli"), "unique"),
    (lambda: od.epsilon_good_characteristic_time([2.0, -1.0], 0.1, family="exponential"), "positive"),
    (lambda: pair_pieces([2.0, 1.0], [[0, 1]], [0.5, 0.5], family="exponential", shifts=-0.1), ">= 0"),
    (lambda: pair_pieces([2.0, 1.0], [[0, 1]], [0.5, 0.5], family="laplace", shifts=0.1), "laplace"),
    (lambda: od.epsilon_good_characteristic_time([0.5, 0.2], -0.1, family="bernoulli"), "epsilon must be"),
    (lambda: od.pairwise_characteristic_time([0.5, 0.2], [[0, 1]], family="bernoulli", shifts=0.1), "cvxpy model"),
    (lambda: pair_pieces([0.5, 0.2], [[0, 1]], [0.5, 0.5], family="bernoulli", shifts=-0.1), ">= 0"),
    (lambda: pair_pieces([0.5, 0.2], [[0, 1]], [0.5, 0.5], family="bernoulli", scales=-1.0), "positive"),
    (lambda: EpsilonGoodProblem(3, 1.0, kind="multiplicative"), "below 1"),
    (lambda: EpsilonGoodProblem(3, 0.1, kind="relative"), "unknown kind"),
    (lambda: od.epsilon_good_characteristic_time([-1.0, -2.0], 0.1, kind="multiplicative"), "positive"),
    (lambda: make_algorithm("fws:problem=multiplicative-epsilon-good:kind=additive"), "sets kind itself"),
    (lambda: od.epsilon_good_characteristic_time([0.5, 0.2], 0.1, family="bernoulli", tol=0), "tol"),
    (lambda: od.epsilon_good_characteristic_time([0.5, 0.2], 0.1, family="bernoulli", solver="NOPE"), "NOPE"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_top_two_pulls_the_leader_and_challenger_arms_themselves():
    """Epsilon-good answers are arms (not the bit masks of top m or thresholding): Top-Two's sides pull them."""
    problem = EpsilonGoodProblem(4, 0.05, Bernoulli())
    assert problem.duel_pulls(2, 0) == (2, 0) and problem.answer_index(3) == 3
