"""Size checks before allocation: the multi-agent, graph, bilinear and thresholding instance families, study run
counts, and booleans refused as time limits.

Every refusal test asks for a size that would take minutes or exhaust memory if the check were missing (N, K or n
near 10**9), so a missing check hangs or fails the test rather than passing it. Sizes just under a limit are checked
on the estimate itself where building them would be slow.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from typer.testing import CliRunner

import optdesign as od
from bandits.bilinear.graphs import make_graph
from bandits.cli import app
from bandits.core.validation import check_graph_size
from bandits.instances import parse_instance
from bandits.multiagent.antenna import antenna_tilt, check_antenna_size
from bandits.studies.spec import MAX_STUDY_RUNS, _check_run_count, parse_study
from bandits.thresholding.instances import NWS_MAX_SHORTCUTS, SBM_MAX_PAIRS, nws, sbm
from optdesign import FactorGraph
from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.factored.graph.checks import (
    AGENT_OVERHEAD_ENTRIES,
    FACTOR_OVERHEAD_ENTRIES,
    check_generated_size,
)
from optdesign.validation.sizes import MAX_ARRAY_ENTRIES

runner = CliRunner()
BILLION = 10**9

# ---------------------------------------------------------------------------------------------------------------
# instance strings, as the CLI and study files give them

HUGE_INSTANCES = [
    "ring:N=1000000000,K=10", "line:N=1000000000,K=10", "star:N=1000000000,K=2", "ring:N=10,K=1000000000",
    "line:N=100000,K=50",  # the case: ran for minutes at 4 GB
    "grid:rows=100000,cols=100000", "grid:rows=1000000000,cols=1", "grid:rows=2,cols=1000000000",
    "antenna:N=1000000000", "antenna:N=6,K=1000000000", "antenna:N=6,users=1000000000",
    "antenna:N=100,interferers=50", "antenna:N=1000000000,layout=hex",
    "sbm:n=1000000000", "sbm:n=100,blocks=1000000000", "sbm:n=200000",
    "nws:n=1000000000", "nws:n=100000,k=50000", "nws:n=3000000", "nws:n=10000,p=0.5",
    "gbb:d=1000000000", "gbb:d=1000", "gbb:d=100", "gbb:m=1000000000,graph=star",
    "gbb:m=1000000000,graph=matching", "gbb:m=1000000000,graph=circle", "gbb:m=1599960000,graph=complete",
]


@pytest.mark.parametrize("text", HUGE_INSTANCES)
def test_huge_instances_are_refused_before_allocating(text):
    with pytest.raises(InstanceTooLargeError) as info:
        parse_instance(text)
    message = str(info.value)
    assert "limit" in message and "use " in message  # names the limit and the alternative


def _factored_size(env):
    return env.fg.n_agents, env.fg.n_factors, sorted(set(env.fg.n_actions))


@pytest.mark.parametrize("text, size, expected", [
    ("ring:N=1000,K=3", _factored_size, (1000, 1000, [3])),
    ("line:N=2000,K=2", _factored_size, (2000, 1999, [2])),
    ("star:N=500,K=3", _factored_size, (500, 499, [3])),
    ("grid:rows=5,cols=6", _factored_size, (30, 5 * 5 + 4 * 6, [3])),  # K = 3 by default
    ("antenna:N=12,K=3", lambda env: (env.fg.n_agents, sorted(set(env.fg.n_actions))), (12, [3])),
    ("sbm:n=200", lambda env: (env.graph.number_of_nodes(), env.means.size), (2 * 200, 2 * 200)),  # n per block
    ("nws:n=2000", lambda env: (env.graph.number_of_nodes(), env.means.size), (2000, 2000)),
    ("gbb:d=8", lambda env: (env.X.shape[1], env.theta.size), (8, 8 * 8)),
])
def test_moderate_instances_still_build(text, size, expected):
    """Sizes below the limits build the instance asked for, at the size asked for."""
    assert size(parse_instance(text)) == expected


@pytest.mark.parametrize("args", [
    ["run", "mf-tas", "-i", "ring:N=1000000000,K=10", "--max-samples", "10"],
    ["run", "mf-tas", "-i", "antenna:N=1000000000", "--max-samples", "10"],
    ["run", "grapl", "-i", "sbm:n=1000000000", "-T", "10"],
    ["run", "apt", "-i", "nws:n=1000000000", "-T", "10"],
    ["run", "gbb-g-allocation", "-i", "gbb:d=1000000000", "--max-samples", "10"],
])
def test_cli_refuses_huge_instances_in_one_line(args):
    out = runner.invoke(app, args)
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "limit" in lines[0]


# ---------------------------------------------------------------------------------------------------------------
# FactorGraph generators

@pytest.mark.parametrize("make", [
    lambda: FactorGraph.ring(BILLION), lambda: FactorGraph.line(BILLION, 3), lambda: FactorGraph.star(BILLION),
    lambda: FactorGraph.grid(BILLION, 2), lambda: FactorGraph.grid(100_000, 100_000),
    lambda: FactorGraph.ring(5, BILLION), lambda: FactorGraph.from_edges(BILLION, [(0, 1)]),
    lambda: FactorGraph.ring(10**7, 2), lambda: FactorGraph.line(4, [2, BILLION, 2, 2]),
])
def test_generators_refuse_huge_graphs(make):
    with pytest.raises(InstanceTooLargeError, match="use fewer agents or actions"):
        make()


def test_generator_estimate_just_under_and_over_the_limit():
    per_agent = 2 * 4 + FACTOR_OVERHEAD_ENTRIES + AGENT_OVERHEAD_ENTRIES  # ring, K = 2: one factor per agent
    largest = MAX_ARRAY_ENTRIES // per_agent
    check_generated_size(largest, largest, 4.0 * largest, "ring")  # at the limit: accepted
    with pytest.raises(InstanceTooLargeError):
        check_generated_size(largest + 1, largest + 1, 4.0 * (largest + 1), "ring")


def test_large_ring_builds_quickly_and_lays_tables_out_like_means():
    fg = FactorGraph.ring(10**5, 2, seed=3)  # about 0.3 s (minutes for 10**6 before the generators were vectorised)
    assert fg.n_factors == 10**5 and fg.scopes[-1] == (10**5 - 1, 0)
    assert np.array_equal(fg.means, np.random.default_rng(3).random(4 * 10**5))


@pytest.mark.parametrize("K", [3, [2, 3, 4, 2, 3, 2, 4]])
@pytest.mark.parametrize("seed", [0, 11])
def test_seeded_tables_are_one_draw_per_factor(K, seed):
    """The vectorised draw gives the numbers of one rng.random(shape) per factor, and the planted a* of one
    rng.integers(K_i) per agent, as before."""
    fg = FactorGraph.ring(7, K, seed=seed)
    rng = np.random.default_rng(seed)
    expected = [rng.random(tuple(fg.n_actions[i] for i in s)) for s in fg.scopes]
    assert all(np.array_equal(t, e) for t, e in zip(fg.tables, expected, strict=True))
    planted = FactorGraph.ring(7, K, seed=seed, means="planted", gap=0.2)
    rng = np.random.default_rng(seed)
    tables = [rng.random(tuple(planted.n_actions[i] for i in s)) for s in planted.scopes]
    star = [int(rng.integers(k)) for k in planted.n_actions]
    assert planted.metadata["planted_best"] == star
    for s, t in zip(planted.scopes, tables, strict=True):
        t[tuple(star[i] for i in s)] = 1.0
    scale = 0.2 / FactorGraph(planted.n_actions, list(zip(planted.scopes, tables, strict=True))).gap_min()
    assert all(np.array_equal(p, t * scale) for p, t in zip(planted.tables, tables, strict=True))
    assert planted.best_action().tolist() == star and planted.gap_min() == pytest.approx(0.2)


@pytest.mark.parametrize("shape", [(1, 2), (2, 1), (3, 4), (5, 5), (1, 7), (6, 1), (4, 9)])
def test_grid_scopes_are_networkx_sorted_edges(shape):
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(*shape), ordering="sorted")
    assert FactorGraph.grid(*shape, 2, seed=0).scopes == tuple(sorted(g.edges))


def test_from_edges_still_checks_coverage_and_scopes():
    with pytest.raises(InvalidInputError, match="appear in no factor"):
        FactorGraph.from_edges(4, [(0, 1), (1, 2)], 2, seed=0)
    with pytest.raises(InvalidInputError, match="repeats an agent"):
        FactorGraph.from_edges(3, [(0, 0), (1, 2)], 2, seed=0)
    fg = FactorGraph.from_edges(4, [(0, 1, 2), (2, 3)], [2, 3, 2, 2], seed=1, means="planted")
    assert fg.gap_min() == pytest.approx(0.1)


def test_a_tie_on_many_agents_is_reported_briefly():
    fg = FactorGraph([2] * 60, [((i, i + 1), np.zeros((2, 2))) for i in range(59)])
    with pytest.raises(InvalidInputError, match=r"not unique: .*\.\.\. \(40 more\)") as info:
        fg.gap_min()
    assert len(str(info.value)) < 300


# ---------------------------------------------------------------------------------------------------------------
# antenna, graphs

def test_antenna_estimate_and_default_network():
    check_antenna_size(6, 3, 1000, 2)
    with pytest.raises(InstanceTooLargeError, match="interferers"):
        check_antenna_size(100, 3, 1000, 50)
    with pytest.raises(InstanceTooLargeError):
        antenna_tilt(BILLION, 3)
    assert antenna_tilt(6, 3, 0).n_factors == 6


def test_graph_size_estimates():
    check_graph_size(1e6, 2e6, "graph")
    with pytest.raises(InstanceTooLargeError, match="use a smaller graph"):
        check_graph_size(1e9, 0, "graph")
    with pytest.raises(InstanceTooLargeError):
        make_graph("star", 2 * BILLION)
    assert make_graph("circle", 20).number_of_nodes() == 10


def test_thresholding_limits():
    assert SBM_MAX_PAIRS < (200_000 * 2) ** 2 / 2
    with pytest.raises(InstanceTooLargeError, match="node pairs"):
        sbm(n=30_000)  # 1.8e9 pairs: minutes of networkx's pair loop
    assert sbm(n=300).n_arms == 600
    with pytest.raises(InstanceTooLargeError, match="shortcuts"):
        nws(n=NWS_MAX_SHORTCUTS * 100, k=4, p=0.01 * 1.01)
    assert nws(n=1000, k=4, p=0.01).n_arms == 1000


# ---------------------------------------------------------------------------------------------------------------
# studies

def _study(runs, d=2):
    return {"study": {"runs": runs, "seed": 1}, "instances": [{"family": "soare", "d": d, "omega": 0.1}],
            "algorithms": [{"name": "xy-adaptive"}]}


@pytest.mark.parametrize("doc", [_study(BILLION), _study(1e9), _study(10, d=list(range(2, 200_002)))])
def test_a_study_of_absurdly_many_runs_is_refused_before_listing_them(doc):
    with pytest.raises(InstanceTooLargeError, match="split the sweep"):
        parse_study(doc)


def test_a_study_cell_too_large_to_build_names_the_file_and_cell():
    doc = {"study": {"runs": 2}, "instances": [{"family": "ring", "N": [5, BILLION]}],
           "algorithms": [{"name": "mf-tas"}]}
    with pytest.raises(InstanceTooLargeError, match=r"^s\.toml: mf-tas on ring:N=1000000000: ring instance"):
        parse_study(doc, path="s.toml")


def test_study_run_count_limit_boundary():
    _check_run_count([{"family": "soare", "d": [2, 3]}], 2, MAX_STUDY_RUNS // 4, "s.toml")
    with pytest.raises(InstanceTooLargeError):
        _check_run_count([{"family": "soare", "d": [2, 3]}], 2, MAX_STUDY_RUNS // 4 + 1, "s.toml")
    assert len(parse_study(_study(3)).runs) == 3


def test_cli_study_of_a_billion_runs(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text('[study]\nruns = 1000000000\n[[instances]]\nfamily = "soare"\nd = 2\n'
                    '[[algorithms]]\nname = "xy-adaptive"\n')
    out = runner.invoke(app, ["study", str(path), "--out", str(tmp_path / "out")])
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "1,000,000,000 runs" in lines[0]


# ---------------------------------------------------------------------------------------------------------------
# time limits

@pytest.mark.parametrize("bad", [True, False, 0, -1.0, np.nan, "1"])
def test_time_limit_refuses_booleans_and_non_positive_values(bad):
    fg = FactorGraph.ring(4, 2, seed=0, means="planted")
    with pytest.raises(InvalidInputError, match="time_limit"):
        od.characteristic_time(fg, time_limit=bad)
    with pytest.raises(InvalidInputError, match="time_limit"):
        od.characteristic_time(fg, method="generate", time_limit=bad)
    with pytest.raises(InvalidInputError, match="time_limit"):
        od.regret_lower_bound(fg, time_limit=bad)
    with pytest.raises(InvalidInputError, match="time_limit"):
        od.g_optimal(np.eye(3), time_limit=bad)


def test_time_limit_accepts_numbers():
    fg = FactorGraph.ring(4, 2, seed=0, means="planted")
    assert od.characteristic_time(fg, time_limit=30).status == "optimal"
    assert od.characteristic_time(fg, time_limit=np.float64(30.0)).status == "optimal"


# ---------------------------------------------------------------------------------------------------------------
# what a factored bandit builds on top of its graph

def test_elimination_plan_refuses_too_many_agents_before_ordering():
    from optdesign.factored.inference.elimination import PLAN_AGENT_ENTRIES, PLAN_FACTOR_ENTRIES, EliminationPlan

    n = 10**6  # the min-degree heuristic and the steps took minutes and over 20 GB here
    with pytest.raises(InstanceTooLargeError, match="elimination plan"):
        EliminationPlan([2] * n, list(zip(range(n - 1), range(1, n), strict=True)))
    largest = int(MAX_ARRAY_ENTRIES // (PLAN_AGENT_ENTRIES + PLAN_FACTOR_ENTRIES))
    assert largest > 5 * 10**5  # rings of 10^5 agents, as in the experiments, stay well inside


def test_joint_action_codes_by_halves_match_the_strides():
    import functools

    from bandits.multiagent.joint_actions import decode, encode_joint

    rng = np.random.default_rng(0)
    for _ in range(50):
        ks = rng.integers(1, 6, size=int(rng.integers(1, 300)))
        action = rng.integers(0, ks)
        code = encode_joint(action, ks)
        horner = functools.reduce(lambda c, ak: c * int(ak[1]) + int(ak[0]), zip(action, ks, strict=True), 0)
        assert code == horner and decode(code, ks).tolist() == action.tolist()  # agent 0 the most significant digit
    with pytest.raises(InvalidInputError):
        decode(2**40, [2] * 40)
    n = 10**5  # one N-digit stride per agent was quadratic: 600 MB for the best action of a ring of 10^5 agents
    action = rng.integers(0, 2, size=n)
    assert decode(encode_joint(action, [2] * n), [2] * n).tolist() == action.tolist()


def test_factored_bandit_on_a_large_ring():
    env = parse_instance("ring:N=20000,K=2")
    assert env.decode(env.best_item).tolist() == env.best_action.tolist() == env.fg.best_action().tolist()


def test_random_laplacian_batches_are_counted_without_listing_every_pull(monkeypatch):
    from bandits.thresholding import algorithms
    from bandits.thresholding.algorithms import RandomLaplacian

    env = parse_instance("sbm:n=50")
    policy = RandomLaplacian(order="permutation").start(env, np.random.default_rng(1))
    counts = policy.next_batch(10**12 + 3)  # listed pull by pull, this was 8 TB of arm indices
    assert counts.sum() == 10**12 + 3 and counts.max() - counts.min() == 1
    monkeypatch.setattr(algorithms, "DRAW_CHUNK", 7)  # chunked draws are the numbers of one draw
    policy = RandomLaplacian().start(env, np.random.default_rng(2))
    expected = np.bincount(np.random.default_rng(2).integers(env.n_arms, size=100), minlength=env.n_arms)
    assert np.array_equal(policy.next_batch(100), expected)


@pytest.mark.parametrize("args", [["--agents", "3:1000000000", "--actions", "2"],
                                  ["--agents", "3", "--actions", "2", "--seeds", "1000000000"],
                                  ["--agents", "1000000000", "--actions", "2"]])
def test_compare_refuses_absurd_sweeps_in_one_line(args):
    from optdesign.cli import app as optdesign_app

    out = runner.invoke(optdesign_app, ["compare", *args])
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "limit" in lines[0]


def test_astronomical_joint_action_counts_are_written_without_str():
    """Python refuses str() of an integer beyond 4300 digits: 2^20000 joint actions used to raise ValueError."""
    from optdesign.validation import count_text

    assert [count_text(n) for n in (7, 10**12 - 1, 2**100, 2**20000, 3**100000)] == \
        ["7", "999999999999", "1.26e30", "3.98e6020", "1.33e47712"]
    fg = FactorGraph.ring(20_000, 2, seed=0)
    with pytest.raises(InstanceTooLargeError, match=r"3\.98e6020"):
        fg.joint_actions()
    with pytest.raises(InstanceTooLargeError, match=r"3\.98e6020"):
        od.characteristic_time(fg, method="enumerate")
    assert parse_instance("ring:N=20000,K=2").describe()["joint_actions"] == "3.98e6020"
