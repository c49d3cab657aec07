"""Property-based fuzzing (hypothesis) of the public entry points: any input gives a correct result or a project
error (OptDesignError), never another exception; a command line answers bad input with exit status 2 and one
``error:`` line on stderr (or click's usage message), never a traceback.

Fuzzed: the linear designs (g_optimal, d_optimal, xy_allocation, transductive, xy_oracle) on arrays of random shape,
dtype (int, bool, object, complex, ragged lists), entries (NaN, inf, subspaces, duplicated arms, tiny and huge norms)
and keyword values; FactorGraph (constructor, generators, JSON documents); mf_characteristic_time and
characteristic_time on tiny graphs; bandits instance and algorithm strings; study documents (parse_study); the
``optdesign solve`` and ``bandits`` command lines. Truths checked where a result comes back: weights form a
distribution; the value is the criterion at the weights (g_value, minmax_value) and lies above its certified lower
bound; a G/D-optimal value lies in [d, d (1 + gap)] (Kiefer–Wolfowitz); a FactorGraph survives its JSON round trip
and a* maximises theta; lower bound of T* <= T^MF <= 2 Abar / Delta_min^2; a parsed string names a registered
instance or algorithm; a study's run keys are distinct. Sizes stay small (n <= 30, d <= 6, N <= 4, K <= 3): every
example solves in milliseconds. Examples per test: the hypothesis profile (tests/conftest.py); the @example cases
are inputs that raised a non-project exception before the fixes made with these tests, run under every profile.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import operator
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib
from hypothesis import event, example, given, note
from hypothesis import strategies as st
from typer.testing import CliRunner

import optdesign as od
from bandits.cli import app as bandits_app
from bandits.core.entries import split_options
from bandits.instances import INSTANCES, parse_instance, resolve
from bandits.registry import ALGORITHMS, make_algorithm
from bandits.studies import parse_study
from optdesign import FactorGraph, OptDesignError
from optdesign.cli import app as optdesign_app
from optdesign.cli.problems import FACTOR_GRAPH_PROBLEMS, SolveProblem

pytestmark = pytest.mark.filterwarnings("ignore")  # numpy and the solvers warn about the degenerate inputs
runner = CliRunner()
JUNK = [None, 0, -1, 1, 2, 0.5, np.nan, np.inf, "", "x", "run", True, [], [1], ["x"], {}, {"a": 1}, [[1]], [{}]]


def outcome(fn, *args, **kwargs):
    """fn(*args, **kwargs), or None when it raises a project error; any other exception fails the test."""
    try:
        out, label = fn(*args, **kwargs), "result"
    except OptDesignError as exc:
        out, label = None, type(exc).__name__
        note(f"{label}: {exc}")
    event(f"{getattr(fn, '__name__', 'call')}: {label}")
    return out


def mostly(good: list, bad: list):
    """Draws from ``good`` about six times in seven, else from ``bad`` (so that many examples reach a result)."""
    return st.sampled_from(good * -(-6 * len(bad) // len(good)) + bad)


def _paths(node, prefix=()):
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


@st.composite
def mutated(draw, document, max_changes: int = 3):
    """A copy of a JSON/TOML-like document with up to ``max_changes`` changes anywhere in it: a key dropped, a
    value of the wrong type, an unknown key, an emptied table or list (junk values stay small: sizes <= 2)."""
    doc = copy.deepcopy(document)
    for _ in range(draw(st.integers(0, max_changes))):
        paths = list(_paths(doc))
        if not paths:
            break
        *parents, last = draw(st.sampled_from(paths))
        parent = functools.reduce(operator.getitem, parents, doc)
        action = draw(st.sampled_from(["drop", "replace", "replace", "unknown", "empty"]))
        if action == "drop":
            del parent[last]
        elif action == "unknown" and isinstance(parent, dict):
            parent["bogus"] = 1
        else:
            parent[last] = copy.deepcopy(draw(st.sampled_from(JUNK))) if action == "replace" else type(parent[last])()
    return doc


# linear designs -------------------------------------------------------------------------------------------------------

METHODS = mostly(["auto", "auto", "barrier", "cvxpy", "frank-wolfe", "multiplicative", "exchange", "corank"],
                 ["", None, 3])
MINMAX_METHODS = mostly(["auto", "barrier", "cvxpy"],
                        ["frank-wolfe", "multiplicative", "exchange", "corank", "", None, 3])
# no tol below 1e-6: the fast paths would then run to their 30 s time limits, which is not a refusal
TOLS = mostly([1e-4, 1e-2, 1e-6], [1, 0, -1e-3, "1e-3", np.nan, np.inf, True, None])


@st.composite
def arrays(draw, cols: int | None = None, max_rows: int = 30, vector: bool = False):
    """Arm-like arrays: mostly n x d in general position (duplicated arms, ties and norms from 1e-99 to 1e99
    included), else with one defect: shape, rank (a subspace), scale (tiny or huge), NaN/inf entries or dtype."""
    defect = draw(st.sampled_from(["none"] * 5 + ["shape", "rank", "scale", "nan", "dtype"]))
    d = cols or draw(st.integers(1, 6))
    good = st.tuples(st.just(d)) if vector else st.tuples(st.integers(min(d, max_rows), max_rows), st.just(d))
    shape = draw(st.sampled_from([(), (0,), (4,), (0, 3), (3, 0), (2, 2, 1), (2, 6)]) if defect == "shape" else good)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(-2, 3, shape).astype(float) if draw(st.integers(0, 2)) == 0 else rng.standard_normal(shape)
    if X.ndim == 2 and X.size:
        rank = draw(st.integers(1, X.shape[1])) if defect == "rank" else X.shape[1]
        X = X[:, :rank] @ rng.standard_normal((rank, X.shape[1])) if rank < X.shape[1] else X
        if draw(st.booleans()):  # duplicated arms
            X = np.vstack([X, X[rng.integers(0, X.shape[0], draw(st.integers(1, 3)))]])
    scales = [-320, -150, -101, 101, 150, 300] if defect == "scale" else [0, 0, 0, -8, 8, -40, 40, -99, 99]
    X = np.asarray(X * 10.0 ** draw(st.sampled_from(scales)))
    if defect == "nan" and X.size:
        X.flat[draw(st.integers(0, X.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    kinds = {"float": lambda: X, "list": X.tolist, "int": lambda: np.round(X).astype(np.int64),
             "object": lambda: X.astype(object), "bool": lambda: X > 0, "complex": lambda: X + 0j,
             "imaginary": lambda: X + 1j, "text": lambda: np.where(np.arange(X.size).reshape(X.shape) == 0, "a", X),
             "ragged": lambda: [*X.tolist()[:-1], X[-1, :-1].tolist()] if X.ndim == 2 and len(X) > 1 else X}
    return kinds[draw(st.sampled_from(list(kinds)[5:] if defect == "dtype" else list(kinds)[:5]))]()


def assert_distribution(w: np.ndarray, n: int) -> None:
    assert w.shape == (n,) and np.all(np.isfinite(w)) and np.all(w >= 0) and abs(w.sum() - 1) <= 1e-8


@example(X=[[1.0, 0.0], [1.0]], method="auto", tol=1e-4, design=od.g_optimal)  # ValueError, ZeroDivisionError,
@example(X=np.eye(2) * 1e-300, method="auto", tol=1e-4, design=od.d_optimal)  # TypeError, or imaginary parts
@example(X=np.eye(2) * 1e300, method="barrier", tol=1e-4, design=od.g_optimal)  # silently dropped
@example(X=np.eye(2) + 1j, method="auto", tol=1e-4, design=od.g_optimal)
@example(X=np.random.default_rng(0).standard_normal((6, 3)) * 1e-8, method="cvxpy", tol=1e-4, design=od.d_optimal)
@given(X=arrays(), method=METHODS, tol=TOLS, design=st.sampled_from([od.g_optimal, od.d_optimal]))
def test_g_and_d_optimal_designs(X, method, tol, design):
    res = outcome(design, X, method=method, tol=tol)
    if res is None:
        return
    assert not np.iscomplexobj(X)  # complex arms are refused, never cast
    X = np.asarray(X, dtype=float)
    d, gap = X.shape[1], np.inf if res.gap is None else res.gap
    assert_distribution(res.weights, X.shape[0])
    assert d * (1 - 1e-6) <= res.g_value <= d * (1 + gap) * (1 + 1e-6)  # Kiefer–Wolfowitz: the optimum is d
    assert res.status != "optimal" or gap <= max(tol, 1e-2)  # "optimal" is certified (it was rank one at |X| = 1e-8)
    assert res.g_value == pytest.approx(od.g_value(X, res.weights), rel=1e-6)
    assert res.lower_bound <= res.value * (1 + 1e-12)


@st.composite
def design_problems(draw):
    """Arms X, then items or directions Z and a parameter theta of the same dimension d (each may be None)."""
    d = draw(st.integers(1, 6))
    return draw(arrays(d)), *(draw(arrays(d, 8, v)) if draw(mostly([True], [False])) else None for v in (0, 1))


@example(inputs=(np.eye(2), np.eye(2) * 1e200, None), problem="xy", method="auto", tol=1e-4)
@example(inputs=(np.array([[2.0]]), np.array([[2e99]]), None), problem="xy", method="cvxpy", tol=1e-4)  # bound inf
@example(inputs=(np.eye(2), np.eye(2), np.array([1e200, 0.0])), problem="oracle", method="barrier", tol=1e-4)
@given(inputs=design_problems(), problem=st.sampled_from(["xy", "transductive", "oracle"]), method=MINMAX_METHODS,
       tol=TOLS)
def test_minmax_designs(inputs, problem, method, tol):
    X, Z, theta = inputs
    design, args, Y = {"xy": (od.xy_allocation, (X, Z), Z), "transductive": (od.transductive, (X, Z, theta), Z),
                       "oracle": (od.xy_oracle, (X, theta), X)}[problem]
    res = outcome(design, *args, method=method, tol=tol)
    if res is None:
        return
    X = np.asarray(X, dtype=float)
    assert_distribution(res.weights, X.shape[0])
    assert res.lower_bound <= res.value * (1 + 1e-7) and (res.status != "optimal" or res.gap <= max(tol, 1e-2))
    if theta is not None and problem != "xy":  # the directions whose max the design minimises
        Y = od.oracle_directions(Y, theta)[0]
    elif problem == "transductive" or Y is None:
        Y = od.pairwise_differences(X if Y is None else Y)
    assert res.value == pytest.approx(od.minmax_value(X, res.weights, Y), rel=1e-6)


# factor graphs and characteristic times -------------------------------------------------------------------------------

@st.composite
def factor_graph_inputs(draw, max_agents: int = 4, max_defects: int = 2):
    """(n_actions, factors, metadata) of a small graph: a chain plus random scopes, with optional defects."""
    n = draw(st.integers(1, max_agents))
    ks = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    extra = st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True).map(tuple)
    scopes = ([(i, i + 1) for i in range(n - 1)] or [(0,)]) + draw(st.lists(extra, max_size=2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale, digits = draw(st.sampled_from([-6, 0, 0, 0, 3, 50])), draw(st.sampled_from([15, 15, 1]))  # 1: ties
    tables = [np.round(rng.random(tuple(ks[i] for i in s)), digits) * 10.0**scale for s in scopes]
    factors, meta = list(zip(scopes, tables, strict=True)), {"seed": 1}
    order = ["scope", "shape", "nan", "dtype", "huge", "metadata", "n_actions", "factors"]  # applied in this order
    e = draw(st.integers(0, len(factors) - 1))  # the damaged factor
    for defect in sorted(draw(st.lists(st.sampled_from(order), max_size=max_defects, unique=True)), key=order.index):
        if defect == "scope":
            factors[e] = (draw(st.sampled_from([(), (0, 0), (n,), (-1,), ("a",), 0, None, (0.0,)])), factors[e][1])
        elif defect in ("shape", "nan", "dtype", "huge"):
            t = tables[e]  # the undamaged table
            t = {"shape": np.atleast_2d(t).T[..., None], "nan": np.where(t == t.flat[0], np.nan, t), "huge": t * 1e200,
                 "dtype": draw(st.sampled_from([t + 1j, [*t.astype(object).tolist(), "a"], t > 0.5]))}[defect]
            factors[e] = (factors[e][0], t)
        elif defect == "factors":
            factors = draw(st.sampled_from([[], None, "ab", 5, [(0,)], [((0,), np.zeros(2), 1)]]))
        else:  # a bad K_i (10**30 is safe: the tables' shapes are checked before anything is allocated) or junk
            junk = draw(st.sampled_from([[*ks[:-1], bad] for bad in (0, -1, 2.0, "2", None, 10**30, np.int64(2))]
                                        + ["22", 2, [], None, {0: 2}, 3.5, [1]]))
            ks, meta = (junk, meta) if defect == "n_actions" else (ks, junk)
    return ks, factors, meta


def assert_round_trip(fg: FactorGraph) -> None:
    """JSON round trip, and a* maximises theta over every joint action (the graphs here are tiny)."""
    back = FactorGraph.from_dict(json.loads(json.dumps(fg.to_dict())))
    assert back.n_actions == fg.n_actions and back.scopes == fg.scopes and np.array_equal(back.means, fg.means)
    best = outcome(fg.best_action)
    if best is not None:
        assert fg.value(best) == pytest.approx(np.max(fg.value(fg.joint_actions())), rel=1e-12, abs=1e-300)
        assert fg.gap_min() > 0


DOCUMENTS = [fg.to_dict() for fg in (FactorGraph.ring(3, 2, seed=0), FactorGraph.star(3, [2, 3, 2], means="planted"),
                                      FactorGraph.single_agent([0.5, 0.4, 0.1]))]


@example(inputs=([2, 2], [((0, 1), np.eye(2))], "x"), document=DOCUMENTS[0])  # ValueError before the fixes
@example(inputs=([2, 2], [((0, 1), np.eye(2) + 1j)], None),
         document={**DOCUMENTS[2], "factors": [{"scope": [0], "means": [[0.5], 0.4]}]})
@given(inputs=factor_graph_inputs(), document=st.sampled_from(DOCUMENTS).flatmap(lambda doc: mutated(doc, 2)))
def test_factor_graph_constructor_and_documents(inputs, document):
    fg = outcome(FactorGraph, inputs[0], inputs[1], metadata=inputs[2])
    if fg is not None:
        assert not any(np.iscomplexobj(table) for _, table in inputs[1])  # complex means are refused, never cast
        assert_round_trip(fg)
    fg = outcome(FactorGraph.from_dict, document)
    if fg is not None:
        assert_round_trip(fg)


EDGES = [[(0, 1)], [(0, 1), (1, 2)], [], [(0, 0)], [(0, 5)], [(-1, 0)], [()], "ab", None, 5, [(0.0, 1.0)], [0, 1]]


# huge N and K (10**7 agents, 10**9 actions) must be refused by the size check before any factor is listed or
# drawn: without it such an example would run for minutes or exhaust memory
@example(generator="ring", N=3, K=-1, seed=0, means="uniform", gap=None, edges=None)  # each raised ValueError,
@example(generator="line", N=3, K=2.0, seed=-1, means="planted", gap="x", edges=None)  # TypeError or IndexError
@example(generator="from_edges", N=0, K=2, seed=0, means="uniform", gap=None, edges=[(0, 5)])
@example(generator="ring", N=10**400, K=2, seed=0, means="uniform", gap=None, edges=None)  # listed N factors first
@given(generator=st.sampled_from(["ring", "line", "star", "grid", "from_edges"]),
       N=mostly([2, 3, 4], [-1, 0, 1, 2.0, "3", None, True, 10**7, 10**9, np.int64(10**9), 10**400]),
       K=mostly([2, 3, np.int64(2), [2, 3, 2]], [0, -1, 1, 2.0, 2.5, "2", None, [2, 0, 2], (), np.nan, 10**5, 10**9,
                                                  10**400, [2, 10**400, 2]]),
       seed=mostly([0, 1, None, 10**30], [-1, 1.5, "a"]), means=mostly(["uniform", "planted"], ["x", 3]),
       gap=mostly([None, None, 0.1], [0, -1, "x", np.nan, [1]]), edges=mostly(EDGES[:2], EDGES[2:]))
def test_factor_graph_generators(generator, N, K, seed, means, gap, edges):
    args = {"grid": (N, 2, K), "from_edges": (N, edges, K)}.get(generator, (N, K))
    fg = outcome(getattr(FactorGraph, generator), *args, seed=seed, means=means, gap=gap)
    if fg is not None:
        assert_round_trip(fg)


@example(inputs=([3], [((0,), [1e300, 5e299, 2e299])], None), m=1, tol=1e-4, method="auto", time_limit=None,
         solver=None, formulation="junction-tree")  # OverflowError (1 / Delta^2) before the means were bounded
@example(inputs=([2, 2], [((0, 1), np.eye(2))], None), m=1, tol=1e-4, method="auto", time_limit=None, solver=3,
         formulation="global")  # AttributeError
@given(inputs=factor_graph_inputs(max_defects=1), m=mostly([1, 1, 2], [0, "1", 1.5]),
       tol=mostly([1e-4, 1e-6], [0, "x"]), method=mostly(["auto", "auto", "generate"], ["x"]),
       time_limit=mostly([None, 30.0], [-1, 0, "x", np.nan]), solver=mostly([None], [3, "NOPE"]),
       formulation=mostly(["junction-tree", "global"], ["x"]))
def test_characteristic_times(inputs, m, tol, method, time_limit, solver, formulation):
    fg = outcome(FactorGraph, inputs[0], inputs[1])
    if fg is None:
        return
    mf = outcome(od.mf_characteristic_time, fg, m, tol=tol, solver=solver)
    exact = outcome(od.characteristic_time, fg, method=method, tol=tol, solver=solver, time_limit=time_limit,
                    formulation=formulation)
    for res in (mf, exact):
        if res is not None:
            assert np.isfinite(res.value) and 0 <= res.lower_bound <= res.value * (1 + 1e-7)
    if mf is not None:
        assert mf.lower_bound <= 2 * fg.abar / fg.gap_min() ** 2 * (1 + 1e-6)  # the uniform allocation's value
        if exact is not None:
            assert exact.lower_bound <= mf.value * (1 + 1e-6)  # T* <= T^MF(m)


# bandits: instance and algorithm strings, study documents -------------------------------------------------------------

# huge sizes ("1000000000", "1e9") must be refused by every family's size check before it allocates (ring:N=1e9,
# antenna:users=1e9, sbm:n=1e9, gbb:d=1e9, ...): a missing check would make an example hang or run out of memory
VALUES = ["0", "-1", "1", "2", "3", "1.5", "0.3", "nan", "inf", "-inf", "1e400", "-1e9", "10**9", "abc", "", "true",
          "pi/2", "0.5/0.4", "uniform", "planted", "complete", "run", "é", " 2 ", "1000000000", "1e9"]


@st.composite
def option_strings(draw, specs: dict, target):
    """``NAME:key=value,...`` texts from plausible pieces (mostly the family's own keys), with garbage mixed in."""
    name = draw(mostly(sorted(specs), ["", "nope", "SOARE", "é", "\x00"]))
    keys = (list(inspect.signature(resolve(target(specs[name]))).parameters) if name in specs else []) or ["d"]
    pair = st.builds("{}={}".format, mostly(keys, ["", "bogus", "d d"]), st.sampled_from(VALUES))
    items = draw(st.lists(st.tuples(mostly([True], [False]), pair, st.text(max_size=6)), max_size=3))
    items = [item if keep else garbage for keep, item, garbage in items]
    return name + draw(mostly([":"], ["", "::", ",", "="])) + ",".join(items)


INSTANCE_STRINGS = option_strings(INSTANCES, lambda spec: spec.factory)
ALGORITHM_STRINGS = option_strings(ALGORITHMS, lambda spec: spec.target)


@example(text="many-arms:seed=-1")  # ValueError (numpy's SeedSequence), ValueError (formatting a str with :g),
@example(text="sbm:sigma=abc")  # networkx's NetworkXError, ValueError (int(nan)); TypeError for 10**30 (np.isfinite)
@example(text="nws:n=3")
@example(text="gbb:m=nan")
@example(text="sphere:seed=1000000000000000000000000000000")
@example(text="factorial:D=1e9")  # OverflowError (2.0**D in the size estimate)
@example(text="ring:N=1000000000,K=10")  # MemoryError after 20 s (10**9 factors listed before any check)
@example(text="antenna:users=1e9")  # numpy's MemoryError
@example(text="gbb:d=1e9")  # numpy's MemoryError (M = zeros((d, d)) before the soare arms' check)
@example(text="sbm:blocks=1e9")  # numpy's MemoryError (the blocks x blocks probabilities)
@given(text=st.one_of(INSTANCE_STRINGS, ALGORITHM_STRINGS))
def test_instance_and_algorithm_strings(text):
    env, algo = outcome(parse_instance, text), outcome(make_algorithm, text)
    if env is not None:  # an instance names its parameters; an algorithm keeps its registry name
        assert split_options(text)[0] in INSTANCES and isinstance(env.name, str)
    if algo is not None:
        assert algo.name == split_options(text)[0]


STUDIES = [tomllib.loads(text.replace(";", "\n")) for text in (
    '[study];seed = 7;runs = 2;delta = [0.1, 0.01];x = "d";[[instances]];family = "soare";d = [2, 3];omega = 0.3'
    ';[[algorithms]];name = "xy-oracle";threshold = "practical";label = "oracle";[[algorithms]];name = "g-static"'
    ';[quick];runs = 1;algorithms = ["oracle"];[quick.instances];d = [2]',
    '[study];runs = 2;delta = 0.05;x = "N";y = "rounds";[[instances]];family = "ring";N = [3, 4];K = 2'
    ';means = "planted";seed = "run";[[algorithms]];name = "mf-tas";[[algorithms]];name = "uniform";[quick];runs = 1'
    ';[quick.instances];N = [3]',
    '[study];runs = 2;budget = 500;free_warmup = true;y = "error";[[instances]];family = "sbm";n = 20;seed = "run"'
    ';[[algorithms]];name = "apt";[[algorithms]];name = "grapl";gamma = 10.0;[quick];runs = 1')]


# a study of 10**9 runs is refused before any run is listed (the junk values keep other runs <= 2)
@example(doc={**STUDIES[0], "study": {**STUDIES[0]["study"], "runs": 10**9}}, quick=False)
@example(doc={**STUDIES[2], "study": {**STUDIES[2]["study"], "runs": 1e9}}, quick=False)
@example(doc={**STUDIES[0], "study": {"delta": "x"}}, quick=False)  # ValueError
@example(doc={**STUDIES[0], "study": {"x": []}}, quick=False)  # TypeError (unhashable)
@example(doc={**STUDIES[0], "quick": {"algorithms": 0}}, quick=True)  # TypeError
@example(doc=[], quick=False)  # AttributeError
@given(doc=st.sampled_from(STUDIES).flatmap(mutated), quick=st.booleans())
def test_study_documents(doc, quick):
    study = outcome(parse_study, doc, quick=quick)
    if study is not None:
        keys = [run.key for run in study.runs]
        assert keys and len(set(keys)) == len(keys) and len(keys) % study.replicates == 0
        assert all(0 < delta < 1 for run in study.runs for delta in run.deltas)


# command lines --------------------------------------------------------------------------------------------------------

def assert_clean_exit(out) -> None:
    """Exit 0, or 2 with click's usage message or exactly one ``error:`` line on stderr; never a traceback."""
    event(f"exit {out.exit_code}")
    assert out.exit_code in (0, 2), (out.exit_code, out.output, out.exception)
    assert "Traceback" not in out.output
    if out.exit_code == 2 and "Usage:" not in out.output:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr


@given(algorithm=ALGORITHM_STRINGS, instance=INSTANCE_STRINGS,
       broken=st.sampled_from(["algorithm", "instance", "delta"]), delta=st.sampled_from(["x", "", "0.1;0.2", "1e"]),
       other=st.sampled_from([[], ["list"], ["version"], ["plot", "no/such/dir"], ["list", "x"], ["nope"], ["run"]]))
def test_bandits_cli(algorithm, instance, broken, delta, other):
    # one part is always broken (all are checked before an instance is built), so that no run starts
    algorithm = "zz" + algorithm if broken == "algorithm" else algorithm
    instance = instance + ",bogus_option=1" if broken == "instance" else instance
    args = ["run", algorithm, "-i", instance, "--delta", delta if broken == "delta" else "0.1", "--max-samples", "50"]
    assert_clean_exit(runner.invoke(bandits_app, args))
    assert_clean_exit(runner.invoke(bandits_app, other))


OPTIONS = mostly([["--tol", "1e-3"], ["--method", "barrier"], ["--method", "cvxpy"], ["--json"], ["--m", "2"],
                  ["--solver", "SCS"], ["--regret-method", "mf"]],
                 [["--tol", "0"], ["--tol", "abc"], ["--method", "x"], ["--m", "0"], ["--solver", "NOPE"],
                  ["--regret-method", "x"], ["--items", "*"], ["--theta", "*"], ["--instance", "*"], ["--arms", "*"]])


@example(problem="char-time", arms=np.eye(2), document=DOCUMENTS[0], fmt="npy", options=[["--instance", "*"]])
@example(problem="g-optimal", arms=np.eye(2) + 1j, document=DOCUMENTS[0], fmt="npy", options=[])  # was cast
@given(problem=mostly([p.value for p in SolveProblem], ["nope", ""]), arms=arrays(max_rows=8),
       document=st.sampled_from(DOCUMENTS).flatmap(lambda doc: mutated(doc, 1)),
       fmt=mostly(["csv", "npy"], ["txt", "json"]), options=st.lists(OPTIONS, max_size=2))
def test_optdesign_solve_cli(problem, arms, document, fmt, options):
    with tempfile.TemporaryDirectory() as tmp:
        path, graph_path = Path(tmp) / f"arms.{fmt}", Path(tmp) / "graph.json"
        try:
            np.save(path, np.asarray(arms)) if fmt == "npy" else path.write_text("\n".join(
                ",".join(map(str, r)) if isinstance(r, list) else str(r) for r in np.atleast_2d(arms).tolist()))
        except ValueError:  # a ragged list: write a broken file instead
            path.write_bytes(b"\x93NUMPY broken")
        graph_path.write_text(json.dumps(document))
        linear = problem not in FACTOR_GRAPH_PROBLEMS
        args = ["solve", problem, *(["--arms", path] if linear else ["--instance", graph_path])]
        args += {"transductive": ["--items", path], "xy-oracle": ["--theta", path]}.get(problem, [])
        args += [path if a == "*" else a for option in options for a in option]  # --instance arms.npy: binary
        out = runner.invoke(optdesign_app, [str(a) for a in args])
        assert_clean_exit(out)
        assert out.exit_code == 2 or not (linear and np.iscomplexobj(arms))  # complex arms are refused
