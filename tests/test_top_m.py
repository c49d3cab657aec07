"""Top-m identification as a question asked of K-armed instances (``problem="top-m:m=2"``): its GLR statistic against
brute-force minimisation over the alternative set, its oracle against Theorem 5 of Garivier & Kaufmann where the
question reduces to best-arm identification, set-valued answers scored by the problem, and the generic rules on it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.optimize import minimize

from bandits.core.stopping import Kk21ExpFamilyThreshold, Kk21Threshold
from bandits.experiment import Experiment
from bandits.instances import parse_instance
from bandits.pure_exploration import Bernoulli, Gaussian, KArmedProblem, PureExploration
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.samplers.top_two import TopTwo
from bandits.pure_exploration.stop import GLRStop
from bandits.pure_exploration.top_m import TopMProblem
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


def brute_force_glr(mu: np.ndarray, N: np.ndarray, m: int) -> float:
    """min over the other m-sets S' of min over lambda with S' on top of sum_k N_k (mu_k - lambda_k)^2 / 2 (Gaussian,
    sigma = 1), by a constrained solver."""
    K, best = mu.size, set(np.argsort(-mu)[:m])
    values = []
    for other in itertools.combinations(range(K), m):
        if set(other) == best:
            continue
        cons = [{"type": "ineq", "fun": lambda lam, a=a, b=b: lam[a] - lam[b]}
                for a in other for b in range(K) if b not in other]
        res = minimize(lambda lam: 0.5 * np.sum(N * (mu - lam) ** 2), mu, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 500})
        values.append(res.fun)
    return min(values)


@pytest.mark.parametrize("seed", range(4))
def test_the_glr_statistic_is_the_least_cost_alternative(seed):
    rng = np.random.default_rng(seed)
    mu, N = rng.normal(size=5), rng.integers(1, 20, size=5).astype(float)
    problem = TopMProblem(5, 2)
    assert problem.pieces(mu, N).value == pytest.approx(brute_force_glr(mu, N, 2), rel=1e-6)


@pytest.mark.parametrize("family", [Gaussian(), Bernoulli()])
def test_top_one_is_best_arm_identification(family):
    mu = np.array([0.7, 0.5, 0.45, 0.2])
    top, bai = TopMProblem(4, 1, family).oracle(mu), KArmedProblem(4, family).oracle(mu)
    assert top.T == pytest.approx(bai.T, rel=1e-5)
    assert top.lower_bound <= bai.T * (1 + 1e-9) and top.lower_bound >= top.T * (1 - 1e-4)
    assert TopMProblem(4, 1, family).answer(mu) == 1 << KArmedProblem(4, family).answer(mu)


def test_top_k_minus_one_is_best_arm_identification_of_the_worst():
    mu = np.array([0.9, 0.1, 0.5, 0.45, 0.7])
    assert TopMProblem(5, 4).oracle(mu).T == pytest.approx(KArmedProblem(5).oracle(-mu).T, rel=1e-5)


def test_answers_are_sets_scored_by_the_problem():
    problem = TopMProblem(5, 2)
    mu = np.array([0.1, 0.9, 0.5, 0.7, 0.3])
    answer = problem.answer(mu)
    assert problem.describe_answer(answer) == "{1,3}" and problem.n_answers == 10
    assert problem.correct(answer, mu) and not problem.correct(answer ^ 0b1000 ^ 0b100, mu)
    tie = np.array([0.1, 0.9, 0.7, 0.7, 0.3])  # {1, 2} and {1, 3} are both the top 2
    assert problem.correct(0b110, tie) and problem.correct(0b1010, tie) and not problem.correct(0b11, tie)
    pieces = problem.pieces(mu, np.ones(5))
    assert sorted(map(problem.describe_answer, pieces.answers))[:2] == ["{0,1}", "{0,3}"]


@pytest.mark.parametrize("rule", ["track-and-stop", "fws", "round-robin", "lazy-tas"])
def test_generic_rules_identify_the_top_two_arms(rule):
    env = parse_instance("gaussian:means=1/0.9/0.5/0.4/0.1")
    for seed in range(2):
        result = run(make_algorithm(f"{rule}:problem=top-m:m=2"), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == 0b11 and result.best == 0b11


def test_an_instance_with_a_tie_at_the_top_asks_top_m_not_best_arm():
    """The instance holds means, not a question: two best arms tie, so best-arm identification refuses to start,
    while the top 2 are well defined and identified."""
    env = parse_instance("gaussian:means=1/1/0.3/0.1")
    with pytest.raises(InvalidInputError, match="not unique"):
        run(make_algorithm("fws"), env, 0.1, seed=0)
    result = run(make_algorithm("fws:problem=top-m:m=2"), env, 0.1, seed=0)
    assert result.correct and result.recommendation == 0b11


@pytest.mark.parametrize(("n", "m"), [(6, 3), (70, 2)])
def test_the_swaps_of_a_set_are_every_pair_in_and_out(n, m):
    """Every (i in S, j not in S), i then j increasing, and S - {i} + {j}, by enumeration; masks past 62 members are
    Python ints; the table is built once per set and cannot be written to."""
    problem = TopMProblem(n, m)
    S = (1 << 1) | (1 << (n - 1)) if m == 2 else 0b101010
    inside = [k for k in range(n) if S >> k & 1]
    pairs, swaps = problem.swap_pairs(S, n)
    expected = [(i, j) for i in inside for j in range(n) if j not in inside]
    assert pairs.tolist() == [list(p) for p in expected]
    assert [int(s) for s in swaps] == [S ^ (1 << i) ^ (1 << j) for i, j in expected]
    assert problem.swap_pairs(S, n)[0] is pairs and not pairs.flags.writeable


def test_set_answers_rank_onto_the_rows_of_every_m_set():
    problem = TopMProblem(7, 3)
    ranks = sorted(problem.answer_index(sum(1 << k for k in c)) for c in itertools.combinations(range(7), 3))
    assert ranks == list(range(problem.n_answers))


@pytest.mark.parametrize("problem", [TopMProblem(5, 2), TopMProblem(5, 2, Bernoulli())])
def test_lingames_best_response_is_the_least_pieces_closest_alternative(problem):
    """The lambda LinGame's gains are taken at lies on the boundary of the alternative set (it gives another answer
    or ties it) and costs sum_k w_k d(mu_k, lambda_k) = the least piece."""
    rng = np.random.default_rng(1)
    mu, w = rng.uniform(0.1, 0.9, size=5), rng.dirichlet(np.ones(5))
    lam = problem.response(mu, w)
    cost = float(np.sum(w * problem.family.kl(mu, lam)))
    assert cost == pytest.approx(problem.pieces(mu, w).value, rel=1e-9)
    order = np.sort(lam)[::-1]
    assert order[1] == pytest.approx(order[2], rel=1e-12)  # the 2nd and 3rd largest tie: the top 2 is ambiguous


def test_the_thompson_challenger_is_a_drawn_top_set_other_than_the_leader():
    """TTTS's challenger on top m: the top set of a posterior draw, re-drawn until it differs from the leader; with
    the leader {0, 1} far ahead only swaps among close arms come up."""
    problem = TopMProblem(4, 2)
    algo = PureExploration(TopTwo(challenger="ts"), problem="top-m:m=2")
    state = algo.sampler.start(problem, None, np.random.default_rng(0))
    mu, counts = np.array([1.0, 0.8, 0.75, 0.1]), np.full(4, 20)
    from bandits.pure_exploration import Observations

    obs = Observations(problem, counts, mu * counts, mu)
    challengers = {state._challenger(obs, counts, 0b11) for _ in range(50)}
    assert 0b11 not in challengers and challengers <= {0b101, 0b110, 0b1001, 0b1010, 0b1100}
    assert 0b101 in challengers or 0b110 in challengers
    for seed in range(2):
        result = run(make_algorithm("top-two:leader=ts,challenger=ts,problem=top-m:m=2"),
                     parse_instance("gaussian:means=1/0.9/0.5/0.4/0.1"), 0.1, seed=seed)
        assert result.correct


@pytest.mark.parametrize("rule", ["lingame", "lingame-c"])
def test_lingame_identifies_the_top_two_arms(rule):
    env = parse_instance("gaussian:means=1/0.9/0.5/0.4/0.1")
    for seed in range(2):
        result = run(make_algorithm(f"{rule}:problem=top-m:m=2"), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == 0b11


def test_top_twos_challenger_is_the_least_cost_swap():
    """EB-TC on top m: from the leader set, the challenger is the swap S - {i} + {j} whose piece is least at the
    counts (brute force over every swap), and the two sides pull i and j."""
    problem = TopMProblem(5, 2)
    rng = np.random.default_rng(4)
    mu, N = rng.normal(size=5), rng.integers(1, 30, size=5).astype(float)
    leader = problem.answer(mu)
    swaps = {leader ^ (1 << i) ^ (1 << j): brute_force_glr_pair(mu, N, i, j)
             for i in problem.members(leader) for j in range(5) if not leader >> j & 1}
    assert problem.challenger(mu, N, leader) == min(swaps, key=swaps.get)
    C = problem.challenger(mu, N, leader)
    i, j = problem.duel_pulls(leader, C)
    assert leader >> i & 1 and not C >> i & 1 and C >> j & 1 and not leader >> j & 1


def test_the_penalised_challenger_leaves_two_equal_arms_for_one_pulled_less():
    """TCI on top m: the leader {0, 2} holds an overestimated arm 2 (5 pulls) and leaves out arm 1; TC tests the swap
    of the two well-pulled near-equal arms 0 and 1, which stays cheap however often they are pulled, while the log of
    the pair's harmonic count N_i N_j / (N_i + N_j) moves the test to arm 2's swap (brute force over the swaps)."""
    problem = TopMProblem(4, 2)
    mu, N = np.array([0.9, 0.895, 0.955, 0.1]), np.array([1000.0, 1000.0, 5.0, 5.0])
    leader = problem.answer(mu)
    assert leader == 0b101
    assert problem.challenger(mu, N, leader) == 0b110  # 0 out, 1 in
    scores = {leader ^ (1 << i) ^ (1 << j): brute_force_glr_pair(mu, N, i, j) + np.log(N[i] * N[j] / (N[i] + N[j]))
              for i in (0, 2) for j in (1, 3)}
    assert problem.penalised_challenger(mu, N, leader) == min(scores, key=scores.get) == 0b011  # 2 out, 1 in


def brute_force_glr_pair(mu, N, i, j):
    """min over lambda with lambda_j >= lambda_i of sum_k N_k (mu_k - lambda_k)^2 / 2 (Gaussian, sigma = 1)."""
    res = minimize(lambda lam: 0.5 * np.sum(N * (mu - lam) ** 2), mu, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda lam: lam[j] - lam[i]}], options={"ftol": 1e-14})
    return res.fun


@pytest.mark.parametrize("rule", ["top-two:problem=top-m:m=2", "top-two:beta=ids,problem=top-m:m=2",
                                  "top-two:leader=ts,problem=top-m:m=2", "top-two:leader=ucb,problem=top-m:m=2"])
def test_top_two_identifies_the_top_two_arms(rule):
    env = parse_instance("gaussian:means=1/0.9/0.5/0.4/0.1")
    for seed in range(2):
        result = run(make_algorithm(rule), env, 0.1, seed=seed)
        assert result.correct and result.recommendation == 0b11


def test_a_study_record_shows_the_set():
    record = Experiment("fws:problem=top-m:m=2", "gaussian:means=1/0.9/0.5/0.4/0.1", deltas=(0.1,)).execute()[0]
    assert record["recommendation"] == record["best"] == "{0,1}" and record["config"]["problem"] == "top-m:m=2"


@pytest.mark.slow
def test_the_error_rate_is_at_most_delta():
    """Frank-Wolfe sampling under the GLR stop with the practical threshold, 300 runs at delta = 0.1."""
    env = parse_instance("gaussian:means=0.8/0.6/0.4/0.2")
    errors = sum(not run(make_algorithm("fws:problem=top-m:m=2"), env, 0.1, seed=s).correct for s in range(300))
    assert clopper_pearson_upper(errors, 300) <= 0.1


@pytest.mark.parametrize(("call", "match"), [
    (lambda: TopMProblem(4, 4), "below the number of arms"),
    (lambda: TopMProblem(4, 0), "m"),
    (lambda: TopMProblem(4, 2).oracle(np.array([1.0, 0.5, 0.5, 0.1])), "not unique"),
    (lambda: make_algorithm("fws:problem=top-k:m=2"), "unknown problem 'top-k'"),
    (lambda: make_algorithm("fws:problem=top-m:k=2"), "unknown option k"),
    (lambda: TopMProblem(4, 2).challenger(np.zeros(4), np.ones(4), 0b111), "m = 2 members"),
    (lambda: TopMProblem(4, 2).penalised_challenger(np.zeros(4), np.ones(4), 1 << 4 | 1), "bit mask of the 4"),
])
def test_bad_input_is_one_clear_error(call, match):
    with pytest.raises((InvalidInputError, MissingCapability), match=match):
        call()


def test_a_study_reports_the_lower_bound_of_the_question_asked(tmp_path):
    from bandits.studies import parse_study, run_study, summarize

    doc = {"study": {"name": "top-m", "seed": 1, "runs": 2, "delta": 0.1},
           "instances": [{"family": "gaussian", "means": "1/0.9/0.5/0.4/0.1"}],
           "algorithms": [{"name": "fws", "problem": "top-m:m=2", "label": "top-2"}, {"name": "fws"}]}
    assert run_study(parse_study(doc), tmp_path / "res", progress=False).failed == 0
    summary = summarize(tmp_path / "res").set_index("algorithm")
    mu = np.array([1.0, 0.9, 0.5, 0.4, 0.1])
    assert summary.loc["top-2", "c"] == pytest.approx(TopMProblem(5, 2).oracle(mu).T, rel=1e-9)
    assert summary.loc["fws", "c"] == pytest.approx(KArmedProblem(5).oracle(mu).T, rel=1e-9)


@pytest.mark.parametrize(("samples", "heavy"), [([100] * 9 + [10_000], True), ([100] * 9 + [140], False),
                                                ([100, 10_000], False)])
def test_a_summary_flags_a_heavy_tail(samples, heavy):
    """Mean at least 1.5 x the median over 10 runs or more (fewer runs: no flag)."""
    import pandas as pd

    from bandits.studies.aggregate import _confidence_row

    group = pd.DataFrame({"samples": samples, "rounds": samples, "correct": True, "stopped_by": "stopping_rule",
                          "wall_time": 0.01, "bound_key": "gaussian:means=1/0.5"})
    row = _confidence_row(group, 0.1, {"gaussian:means=1/0.5": {"value": 32.0, "kind": "T*", "unit": "samples"}})
    assert row["heavy_tail"] is heavy


def test_kaufmann_koolen_s_union_runs_over_the_pairs_a_wrong_top_m_answer_misorders():
    """A wrong top-m answer misorders one of m (K - m) pairs (not K - 1): kk21's level is log(m (K - m) / delta) / 2."""
    ones = np.ones(5, dtype=np.int64)
    for m, pairs in ((1, 4), (2, 6), (3, 6), (4, 4)):
        gaussian = GLRStop("kk21").make(TopMProblem(5, m), ones)
        bernoulli = GLRStop("kk21").make(TopMProblem(5, m, Bernoulli()), ones)
        assert gaussian(1000, 0.01) == pytest.approx(Kk21Threshold(pairs + 1)(1000, 0.01))
        assert bernoulli(1000, 0.01) == pytest.approx(Kk21ExpFamilyThreshold(pairs + 1)(1000, 0.01))
        assert gaussian.log_log_form(0.01) == pytest.approx(Kk21Threshold(pairs + 1).log_log_form(0.01))
    assert Kk21Threshold(5, 6)(1000, 0.01) > Kk21Threshold(5)(1000, 0.01)  # more pairs, a higher level
