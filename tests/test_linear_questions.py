"""Top-m and thresholding identification on linear arms: the certified oracles against the K-armed questions they
reduce to (canonical arms), best-item identification (m = 1) and a brute-force max-min over the simplex; the GLR
pieces against a constrained solver's closest alternative; the generic rules on the questions, asked by name of
linear instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import minimize

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.experiment import Experiment
from bandits.instances import parse_instance
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.linear_sets import LinearThresholdProblem, LinearTopMProblem
from bandits.pure_exploration.samplers.top_two import TopTwo
from bandits.pure_exploration.threshold import ThresholdProblem
from bandits.pure_exploration.top_m import TopMProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

TIGHT = 1e-7


@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_canonical_arms_give_the_karmed_top_m_time(sigma):
    mu = np.array([1.0, 0.8, 0.5, 0.45, 0.1])
    pairs = od.top_m_pairs(mu, 2)
    karmed = od.pairwise_characteristic_time(mu, pairs, sigma=sigma)
    linear = od.linear_top_m_characteristic_time(np.eye(5), np.eye(5), mu, 2, sigma=sigma, tol=TIGHT)
    assert linear.value == pytest.approx(karmed.value, rel=1e-5)
    assert linear.lower_bound <= karmed.value * (1 + 1e-6) and linear.gap <= TIGHT * 10
    np.testing.assert_allclose(linear.weights, karmed.weights, atol=1e-3)


def test_canonical_arms_give_the_closed_form_of_thresholding():
    mu, level, sigma = np.array([1.0, -0.5, 0.3, 0.9]), 0.2, 1.5
    closed = od.threshold_characteristic_time(mu, level, sigma=sigma)
    linear = od.linear_threshold_characteristic_time(np.eye(4), np.eye(4), mu, level, sigma=sigma, tol=TIGHT)
    assert linear.value == pytest.approx(closed.value, rel=1e-6)
    np.testing.assert_allclose(linear.weights, closed.weights, atol=1e-4)
    assert sorted(linear.active[:, 0].tolist()) == [0, 1, 2, 3]  # the closed form equalises every piece


@pytest.mark.parametrize("question", [
    lambda X, Z, theta: od.linear_top_m_characteristic_time(X, Z, theta, 1, sigma=0.5, tol=TIGHT),
    lambda X, Z, theta: od.linear_epsilon_good_characteristic_time(X, Z, theta, 0.0, sigma=0.5, tol=TIGHT),
], ids=["top-1", "0-good"])
def test_top_one_and_zero_good_are_transductive_best_item_identification(question):
    rng = np.random.default_rng(3)
    X, Z, theta = rng.normal(size=(6, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)
    rho = od.transductive(X, Z, theta, tol=TIGHT)
    assert question(X, Z, theta).value == pytest.approx(2 * 0.5**2 * rho.value, rel=1e-5)


def _brute_force_max_min(X, Y, gaps, step=0.005):
    """max over a grid of the simplex of 3 arms of min_p gap_p^2 / (2 ||y_p||^2_{A(w)^-1}) (sigma = 1)."""
    best = 0.0
    for a in np.arange(step, 1.0, step):
        for b in np.arange(step, 1.0 - a, step):
            w = np.array([a, b, 1.0 - a - b])
            H = np.linalg.inv(X.T @ (X * w[:, None]))
            best = max(best, float(np.min(gaps**2 / (2 * np.einsum("pd,de,pe->p", Y, H, Y)))))
    return best


@pytest.mark.parametrize("question", ["top-m", "threshold"])
def test_the_oracle_is_the_max_min_over_the_simplex(question):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    Z = np.array([[1.0, 0.2], [0.4, 0.9], [0.9, 0.5], [-0.3, 0.6]])
    theta = np.array([0.6, 0.5])
    if question == "top-m":
        res = od.linear_top_m_characteristic_time(X, Z, theta, 2, tol=TIGHT)
        pairs = od.top_m_pairs(Z @ theta, 2)
        Y = Z[pairs[:, 0]] - Z[pairs[:, 1]]
        gaps = Y @ theta
    else:
        res = od.linear_threshold_characteristic_time(X, Z, theta, 0.5, tol=TIGHT)
        margin = Z @ theta - 0.5
        Y, gaps = np.sign(margin)[:, None] * Z, np.abs(margin)
    grid = _brute_force_max_min(X, Y, gaps)
    assert grid <= 1 / res.lower_bound * (1 + 1e-9)  # no design beats the certificate
    assert 1 / res.value == pytest.approx(grid, rel=2e-3)  # and the grid comes close to the design


def _brute_force_glr(problem, mu, N):
    """min over the other answers of min_lambda sum_k N_k (x_k^T (mu - lambda))^2 / (2 sigma^2), lambda giving that
    answer, by a constrained solver (one constraint per pair or item)."""
    X, Z, s2 = problem.X, problem.Z, problem.sigma**2
    scores, values = Z @ mu, []
    if isinstance(problem, LinearTopMProblem):
        best = set(np.argsort(-scores, kind="stable")[: problem.m])
        alternatives = [([(a, b) for a in other for b in range(len(Z)) if b not in other], None)
                        for other in itertools.combinations(range(len(Z)), problem.m) if set(other) != best]
    else:
        alternatives = [(None, k) for k in range(len(Z))]
    for pairs, k in alternatives:
        if pairs is not None:
            cons = [{"type": "ineq", "fun": lambda lam, a=a, b=b: (Z[a] - Z[b]) @ lam} for a, b in pairs]
        else:
            side = 1.0 if scores[k] > problem.level else -1.0
            cons = [{"type": "ineq", "fun": lambda lam, k=k, side=side: -side * (Z[k] @ lam - problem.level)}]
        res = minimize(lambda lam: np.sum(N * (X @ (mu - lam)) ** 2) / (2 * s2), mu, constraints=cons,
                       method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
        values.append(res.fun)
    return min(values)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("question", ["top-m", "threshold"])
def test_the_glr_statistic_is_the_least_cost_alternative(seed, question):
    rng = np.random.default_rng(seed)
    X, Z, mu = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)
    N = rng.integers(1, 30, size=5).astype(float)
    problem = LinearTopMProblem(X, Z, 2, sigma=0.7) if question == "top-m" else \
        LinearThresholdProblem(X, Z, 0.1, sigma=0.7)
    assert problem.pieces(mu, N).value == pytest.approx(_brute_force_glr(problem, mu, N), rel=1e-5)


def test_canonical_arms_give_the_karmed_pieces():
    mu, w = np.array([0.9, 0.2, 0.5, -0.4]), np.array([3.0, 1.0, 2.0, 5.0])
    for linear, karmed in [(LinearTopMProblem(np.eye(4), None, 2), TopMProblem(4, 2)),
                           (LinearThresholdProblem(np.eye(4), None, 0.3), ThresholdProblem(4, 0.3))]:
        a, b = linear.pieces(mu, w), karmed.pieces(mu, w)
        assert a.best == b.best
        order_a, order_b = np.argsort(np.asarray(a.answers, dtype=np.int64)), np.argsort(np.asarray(b.answers))
        np.testing.assert_allclose(a.values[order_a], b.values[order_b], rtol=1e-12)
        np.testing.assert_allclose(a.gradients[order_a], b.gradients[order_b], rtol=1e-10, atol=1e-14)


def test_frank_wolfes_design_inverse_follows_the_question():
    """The rank-one design inverse of FWS gives the problem's own pieces on the new questions."""
    rng = np.random.default_rng(0)
    problem = LinearTopMProblem(rng.normal(size=(6, 3)), rng.normal(size=(5, 3)), 2)
    mu, x = rng.normal(size=3), rng.dirichlet(np.ones(6))
    inverse = problem.design_inverse(x, published=False, refresh=50)
    inverse.start_batch(mu)
    values, _ = inverse.pieces(x, 0.0)
    np.testing.assert_allclose(values, problem.pieces(mu, x).values, rtol=1e-10)


def test_answers_are_sets_of_items_scored_by_the_problem():
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [-1.0, 0.2]])
    theta = np.array([0.3, 1.0])
    top = LinearTopMProblem(np.eye(2), Z, 2)
    assert top.describe_answer(top.answer(theta)) == "{1,2}" and top.n_answers == 6
    assert top.correct(0b110, theta) and not top.correct(0b101, theta)
    level = LinearThresholdProblem(np.eye(2), Z, 0.5)
    assert level.describe_answer(level.answer(theta)) == "{1,2}" and level.n_answers == 16
    assert level.correct(0b110, theta) and not level.correct(0b010, theta)
    assert level.correct(0b010, np.array([0.0, 1.0]))  # item 2 on the level: either side is correct


@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "round-robin", "lingame", "lazy-tas", "top-two",
                                  "top-two:leader=ts"])
@pytest.mark.parametrize("question", ["top-m:m=2", "threshold:level=0.5"])
def test_generic_rules_answer_the_questions_on_linear_instances(rule, question):
    env = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]), np.array([0.9, 0.3]),
                       Z=np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6], [0.2, -0.5]]))
    for seed in range(2):
        result = run(make_algorithm(f"{rule}{',' if ':' in rule else ':'}problem={question}"), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == result.best


def test_a_study_reports_the_linear_question_and_its_lower_bound(tmp_path):
    from bandits.studies import parse_study, run_study, summarize

    doc = {"study": {"name": "linear-top-m", "seed": 1, "runs": 2, "delta": 0.1},
           "instances": [{"family": "sphere", "n": 8, "d": 3, "seed": 1}],
           "algorithms": [{"name": "track-and-stop", "problem": "top-m:m=2", "label": "top-2"}]}
    assert run_study(parse_study(doc), tmp_path / "res", progress=False).failed == 0
    summary = summarize(tmp_path / "res").set_index("algorithm")
    env = parse_instance("sphere:n=8,d=3,seed=1")
    assert summary.loc["top-2", "c"] == pytest.approx(LinearTopMProblem.of_environment(env, 2).oracle(env.theta).T,
                                                      rel=1e-6)
    record = Experiment("fws:problem=top-m:m=2", "sphere:n=8,d=3,seed=1", deltas=(0.1,)).execute()[0]
    assert record["recommendation"] == record["best"] == "{1,2}"


@pytest.mark.slow
@pytest.mark.parametrize("question", ["top-m:m=2", "threshold:level=0.5"])
def test_the_error_rate_is_at_most_delta(question):
    """Frank-Wolfe sampling under the GLR stop with the practical threshold, 300 runs at delta = 0.1."""
    env = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]), np.array([0.8, 0.4]),
                       Z=np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6], [0.2, -0.5]]))
    errors = sum(not run(make_algorithm(f"fws:problem={question}"), env, 0.1, seed=s).correct for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


def test_too_many_pairs_are_refused_before_they_are_formed():
    items = np.zeros((100_000, 2))
    items[:, 0] = np.linspace(0.0, 1.0, 100_000)
    items[:, 1] = 1.0
    with pytest.raises(od.InstanceTooLargeError, match="its pairs"):
        od.linear_top_m_characteristic_time(np.eye(2), items, [1.0, 0.0], 50_000)
    with pytest.raises(od.InstanceTooLargeError, match="its pairs"):
        LinearTopMProblem(np.eye(2), items, 50_000)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: od.linear_top_m_characteristic_time(np.eye(3), np.eye(3), [1.0, 0.5, 0.5], 2), "not unique"),
    (lambda: od.linear_top_m_characteristic_time(np.eye(3), np.eye(3), [1.0, 0.5, 0.2], 3), "m must be"),
    (lambda: od.linear_top_m_characteristic_time(np.ones((3, 2)), np.eye(2), [1.0, 0.5], 1), "span"),
    (lambda: od.linear_threshold_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], 0.5), "on the level"),
    (lambda: od.linear_threshold_characteristic_time(np.eye(2), np.eye(2), [1.0, np.nan], 0.0), "theta"),
    (lambda: od.linear_threshold_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], 0.0, sigma=0), "sigma"),
    (lambda: LinearTopMProblem(np.eye(2), None, 2), "below the number of items"),
    (lambda: LinearThresholdProblem(np.eye(2), np.ones((63, 2)), 0.0), "at most 62 items"),
    (lambda: run(make_algorithm("fws:problem=multiplicative-epsilon-good:epsilon=0.1"), parse_instance("soare:d=3"),
                 0.1, seed=0), "asked of karmed and heteroscedastic and bounded instances, not linear"),
    (lambda: run(PureExploration(TopTwo(beta=0.3), problem="top-m:m=2"), parse_instance("soare:d=3"), 0.1, seed=0),
     "one pull tests the pair"),
    (lambda: run(PureExploration(TopTwo(leader="ucb"), problem="threshold:level=0.1"), parse_instance("soare:d=3"),
                 0.1, seed=0), "top-two needs upper_indices"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises((InvalidInputError, MissingCapability), match=match):
        call()



def test_the_random_top_m_instance_follows_its_recipe():
    """Tirinzoni & Degenne's linear top-m instance: canonical arms e_1..e_10 of R^20 hold the top 5 (values 1 and
    0.9, the sixth at 0.8), the 40 random arms are unit vectors of value at most 0.5, and a seed fixes the instance."""
    env = parse_instance("top-m-random:K=50,d=20,seed=3")
    values = env.X @ env.theta
    assert env.X.shape == (50, 20) and sorted(np.argsort(-values)[:5]) == [0, 1, 2, 3, 4]
    assert values[4] - np.max(values[5:]) == pytest.approx(0.1)
    np.testing.assert_allclose(np.linalg.norm(env.X, axis=1), 1.0)
    assert np.all(values[10:] <= 0.5) and np.all(env.theta[10:] <= 0) and np.all(env.theta[10:] >= -1)
    np.testing.assert_array_equal(env.X, parse_instance("top-m-random:K=50,d=20,seed=3").X)
    assert not np.array_equal(env.X, parse_instance("top-m-random:K=50,d=20,seed=4").X)
    problem = LinearTopMProblem.of_environment(env, 5)
    assert problem.describe_answer(problem.answer(env.theta)) == "{0,1,2,3,4}"
