"""One K-armed run under the GLR stop, compiled: the rule's pulls, the environment's draws and the stop, batch by batch.

The loop is :func:`bandits.run.run` with :class:`bandits.pure_exploration.policy.PureExplorationPolicy` written out for
K arms of a Gaussian or Bernoulli family: the first pass pulls every arm once; then each batch runs up to the next time
of the grid t -> max(t + 1, ceil(t (1 + growth))) within the budget, its pulls chosen one at a time at the batch's
estimate, its rewards drawn as one sum per arm pulled (a normal draw per arm, in arm order, or a binomial draw per arm),
and the GLR stop checked for every pending delta. The two generators are the run's own (the environment's and the
rule's), so the draws are the reference run's. The question is best-arm identification, or the additive epsilon-good
question on Gaussian arms, whose pieces are best-arm pieces at shifted means (:func:`shifted`). Rules (by the codes of
:mod:`bandits.pure_exploration.compiled.plan`): round robin (batch tracking of uniform weights), Track-and-Stop (D- or
C-tracking of the oracle's weights, re-solved on a geometric schedule: :mod:`bandits.pure_exploration.compiled.oracle`),
the Top-Two rules (every leader and challenger, a fixed or IDS beta, tracked or sampled), Frank–Wolfe sampling (its
iterate kept in the Track-and-Stop target's place; :mod:`bandits.pure_exploration.compiled.game`), Lazy TaS, LinGame and
LinGame-C (:mod:`bandits.pure_exploration.compiled.lingame`); the references are in
:mod:`bandits.pure_exploration.samplers`. One more code, ``FLOOR``, pulls in a fixed cycle: the benchmarks' per-sample
floor.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...core.run_time import RATE_SECONDS
from ..samplers.top_two import TS_DRAWS
from .arithmetic import GAUSSIAN, divergence, glr, kl_bound, pair_cost, project_floor, track
from .game import fws_batch
from .interrupts import INTERRUPTED, look_now, signals_pending, wall_clock
from .lazy import karmed_update, lazy_batch, lazy_due
from .lingame import confidence_intervals, lingame_batch, lingame_c_batch, new_game
from .oracle import oracle_target
from .plan import FLOOR, FRANK_WOLFE, LAZY, LINGAME, LINGAME_C, ROUND_ROBIN, TCI, TRACK_AND_STOP, TS, TS_CHALLENGER, UCB

__all__ = ["karmed_checkpoints", "karmed_run", "resolve_due", "settle_stopped", "shifted", "tracking_batch"]

#: blocks of 100 posterior draws the Thompson challenger tries (the reference's TS_DRAWS)
TS_BLOCKS = TS_DRAWS // 100


@njit(cache=True)
def _draw_sums(family: int, sigma: float, means: np.ndarray, batch: np.ndarray, rng: np.random.Generator,
               sums: np.ndarray) -> None:
    """Add a batch's reward sums: n mean + sigma sqrt(n) z per arm pulled, or one binomial draw per arm."""
    for k in range(means.size):
        n = batch[k]
        if family == GAUSSIAN:
            if n > 0:
                sums[k] += n * means[k] + sigma * math.sqrt(n) * rng.standard_normal()
        else:
            sums[k] += rng.binomial(n, means[k])


@njit(cache=True)
def _d_tracking(weights: np.ndarray, counts: np.ndarray) -> int:
    t = counts.sum()
    if counts.min() < math.sqrt(t) - counts.size / 2:
        return int(np.argmin(counts))
    return int(np.argmax(t * weights - counts))


@njit(cache=True)
def _challenger(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, leader: int, answer: int,
                penalised: bool) -> int:
    """argmin over j != leader of W_leader,j (+ log N_j for TCI), the first on a tie."""
    best, arg = np.inf, -1
    for j in range(mu.size):
        if j == leader:
            cost = np.inf
        else:
            cost = pair_cost(family, sigma, mu, counts, leader, j, leader != answer)
        if penalised:
            cost += math.log(counts[j])
        if cost < best or arg < 0:
            best, arg = cost, j
    return arg


@njit(cache=True)
def _pair_share(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, b: int, c: int) -> float:
    """The leader's share N_B d(mu_B, m) / W_B,C of the pair's information (1/2 when it vanishes)."""
    nb, nc = float(counts[b]), float(counts[c])
    m = (nb * mu[b] + nc * mu[c]) / (nb + nc)
    lead, chal = nb * divergence(family, sigma, mu[b], m), nc * divergence(family, sigma, mu[c], m)
    return lead / (lead + chal) if lead + chal > 0 else 0.5


@njit(cache=True)
def _track_and_stop_batch(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, n: int, options: np.ndarray,
                          target: np.ndarray, cumulative: np.ndarray, clock: np.ndarray) -> np.ndarray:
    """n pulls of D- or C-tracking (``options[0]`` 0 or 1) after re-solving the target when t has grown by
    1 + ``options[1]`` since the last solve; ``clock`` holds (t of the last solve, seconds in the oracle)."""
    if resolve_due(clock, counts.sum(), options[1]):
        started = wall_clock()
        w = oracle_target(mu, family, sigma)
        clock[1] += wall_clock() - started
        if w.size == mu.size:
            target[:] = w
    return tracking_batch(target, cumulative, counts, n, options[0] == 1)


@njit(cache=True)
def resolve_due(clock: np.ndarray, t: int, growth: float) -> bool:
    """Whether Track-and-Stop re-solves now (the first time, or t at least 1 + growth times the last solve's t, which
    ``clock[0]`` holds and is set to t when due)."""
    if clock[0] == 0 or t >= (1.0 + growth) * clock[0]:
        clock[0] = t
        return True
    return False


@njit(cache=True)
def tracking_batch(target: np.ndarray, cumulative: np.ndarray, counts: np.ndarray, n: int,
                   c_tracking: bool) -> np.ndarray:
    """n pulls of D-tracking of ``target``, or of C-tracking (``cumulative`` gathers the floored targets)."""
    K = counts.size
    now, batch = counts.copy(), np.zeros(K, np.int64)
    for _ in range(n):
        if c_tracking:
            cumulative += project_floor(target, 0.5 / math.sqrt(K * K + now.sum()))
            k = int(np.argmax(cumulative - now))
        else:
            k = _d_tracking(target, now)
        now[k] += 1
        batch[k] += 1
    return batch


@njit(cache=True)
def _posterior_draw(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
    """One draw of the flat-prior posterior: N(mu_k, sigma^2 / N_k), or Beta(1 + S_k, 1 + N_k - S_k)."""
    K = mu.size
    draw = np.empty(K)
    for k in range(K):
        if family == GAUSSIAN:
            draw[k] = mu[k] + sigma / math.sqrt(counts[k]) * rng.standard_normal()
        else:
            draw[k] = rng.beta(1.0 + sums[k], 1.0 + counts[k] - sums[k])
    return draw


@njit(cache=True)
def _thompson_challenger(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                         leader: int, rng: np.random.Generator) -> int:
    """The best arm of the first posterior draw whose best arm is not the leader, drawn in blocks of 100 (-1: none
    in TS_DRAWS draws)."""
    for _ in range(TS_BLOCKS):
        found = -1
        for _ in range(100):
            best = int(np.argmax(_posterior_draw(family, sigma, mu, counts, sums, rng)))
            if found < 0 and best != leader:
                found = best
        if found >= 0:
            return found
    return -1


@njit(cache=True)
def _top_two_batch(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, n: int,
                   options: np.ndarray, leader_pulls: np.ndarray, beta_sums: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """n Top-Two pulls: the leader (``options[0]``), the challenger (``options[1]``), beta (``options[2]``, -1 for
    IDS) and the choice (``options[3]``: 0 per-leader tracking, 1 a coin of bias beta)."""
    K, t = mu.size, counts.sum()
    answer = int(np.argmax(mu))
    leader_rule, challenger_rule = int(options[0]), int(options[1])
    batch_leader = answer
    if leader_rule == UCB:
        level = math.log(max(t, 2))
        batch_leader = int(np.argmax(np.array([kl_bound(family, sigma, mu[k], level / counts[k], True)
                                               for k in range(K)])))
    now, batch = counts.copy(), np.zeros(K, np.int64)
    for _ in range(n):
        leader = batch_leader
        if leader_rule == TS:
            leader = int(np.argmax(_posterior_draw(family, sigma, mu, counts, sums, rng)))
        c = -1
        if challenger_rule == TS_CHALLENGER:
            c = _thompson_challenger(family, sigma, mu, counts, sums, leader, rng)
        if c < 0:
            c = _challenger(family, sigma, mu, now, leader, answer, challenger_rule == TCI)
        beta = options[2] if options[2] >= 0 else _pair_share(family, sigma, mu, now, leader, c)
        if options[3] == 1:
            pick = leader if rng.random() < beta else c
        else:
            beta_sums[leader] += beta
            pick = c
            if leader_pulls[leader] <= beta_sums[leader]:
                leader_pulls[leader] += 1
                pick = leader
        now[pick] += 1
        batch[pick] += 1
    return batch


@njit(cache=True)
def _game_batch(family: int, sigma: float, mu: np.ndarray, counts: np.ndarray, t: int, n: int, pairs: bool,
                shared: bool, game: tuple, cumulative: np.ndarray) -> np.ndarray:
    """n LinGame (``pairs`` false) or LinGame-C pulls at the batch's means, level c_t = log max(t, 2) and the KL
    confidence intervals at the batch's counts."""
    losses, hedges, plays, pulled = game
    c = math.log(max(t, 2))
    b = int(np.argmax(mu))
    lower, upper = confidence_intervals(family, sigma, mu, counts, c)
    linear = (np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), np.zeros(1))  # placeholders (linear runs only)
    arms = (mu, lower, upper)
    if pairs:
        return lingame_c_batch(family, sigma, c, b, linear, arms, n, losses, hedges, plays, pulled)
    return lingame_batch(family, sigma, c, b, linear, arms, counts, n, 0 if shared else b, losses, hedges, cumulative)


@njit(cache=True)
def _rule_batch(rule: int, family: int, sigma: float, counts: np.ndarray, sums: np.ndarray, n: int,
                options: np.ndarray, state: tuple, game: tuple, rule_rng: np.random.Generator,
                shift: float) -> np.ndarray:
    """The rule's next n pulls at the estimate sums / counts (its pieces' means, :func:`shifted`). ``state`` holds
    the rules' arrays: Track-and-Stop's (or FWS's, Lazy TaS's) target, the C-tracking sums, the re-solve clock (t of
    the last solve, seconds in the oracle), Top-Two's leader pulls and beta sums, Lazy TaS's schedule; ``game``
    LinGame's learners."""
    K, t = counts.size, counts.sum()
    mu = shifted(sums / counts, shift)
    target, cumulative, clock, leader_pulls, beta_sums, lazy = state
    if rule == ROUND_ROBIN:
        return track(counts, np.full(K, 1.0 / K), n)
    if rule == TRACK_AND_STOP:
        return _track_and_stop_batch(family, sigma, mu, counts, n, options, target, cumulative, clock)
    if rule == FRANK_WOLFE:
        return fws_batch(family, sigma, mu, counts, n, target)
    if rule == LAZY:
        if lazy[1] < 0:  # c0, after the first pass
            lazy[1] = counts.min() / math.sqrt(K)
        if lazy_due(lazy, t):
            karmed_update(family, sigma, mu, target, int(options[0]), options[1])
        return lazy_batch(target, cumulative, counts, n, options[2:].astype(np.int64), lazy, float(counts.min()))
    if rule == LINGAME or rule == LINGAME_C:
        return _game_batch(family, sigma, mu, counts, t, n, rule == LINGAME_C, options[0] == 1, game, cumulative)
    if rule == FLOOR:
        batch = np.zeros(K, np.int64)
        for j in range(n):
            batch[(t + j) % K] += 1
        return batch
    return _top_two_batch(family, sigma, mu, counts, sums, n, options, leader_pulls, beta_sums, rule_rng)


@njit(cache=True)
def shifted(mu: np.ndarray, shift: float) -> np.ndarray:
    """The means the pieces read: mu itself (best-arm identification), or for the additive epsilon-good question on
    Gaussian arms (``shift`` = epsilon > 0) every arm but the empirical best b (the first on a tie) lowered by
    epsilon, so that the best-arm pieces of b at these means are the shifted pieces
    (mu_b - mu_j + epsilon)^2 / (2 sigma^2 (1 / w_b + 1 / w_j)) of :mod:`bandits.pure_exploration.epsilon_good`.

    Parameters
    ----------
    mu : numpy.ndarray, shape (K,)
        The estimate.
    shift : float
        epsilon (0: best-arm identification).

    Returns
    -------
    numpy.ndarray, shape (K,)
        ``mu`` itself when ``shift`` is 0, else a shifted copy (b keeps its mean, so it stays the unique argmax).
    """
    if shift == 0.0:
        return mu
    b = int(np.argmax(mu))
    out = mu - shift
    out[b] = mu[b]
    return out


@njit(cache=True)
def karmed_run(family: int, sigma: float, means: np.ndarray, rule: int, options: np.ndarray, growth: float,
               forms: np.ndarray, max_samples: int, env_rng: np.random.Generator, rule_rng: np.random.Generator,
               start: float, shift: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray, np.ndarray]:
    """Run a rule until every delta stops or the budget is spent.

    ``forms`` holds one row (a, c, b, floor, s) per delta: beta(t) = a + c log(b + log(max(t, floor) / s)).
    ``options``: Track-and-Stop (tracking 0 = D / 1 = C, resolve growth); Top-Two (leader, challenger, beta or -1
    for IDS, selection 0 = tracking / 1 = sampling); Lazy TaS (Frank–Wolfe steps, tolerance, the spanning arms);
    LinGame (1 for one learner). ``shift``: 0 for best-arm identification, epsilon for the additive epsilon-good
    question on Gaussian arms (the pieces read :func:`shifted` means).
    Returns per delta the samples, batches, recommendation, how it stopped (0 the stopping rule, 1 the budget), the
    seconds since ``start`` and the seconds in the oracle; then :func:`karmed_checkpoints`'s stop (its first entry
    :data:`.interrupts.INTERRUPTED` when Ctrl-C ended the loop).
    """
    samples, batches, recommendation, how, elapsed, solve, _, _, stop = karmed_checkpoints(
        family, sigma, means, rule, options, growth, forms, max_samples, env_rng, rule_rng, start,
        np.zeros(0, np.int64), shift, np.inf)
    return samples, batches, recommendation, how, elapsed, solve, stop


@njit(cache=True)
def karmed_checkpoints(family: int, sigma: float, means: np.ndarray, rule: int, options: np.ndarray, growth: float,
                       forms: np.ndarray, max_samples: int, env_rng: np.random.Generator,
                       rule_rng: np.random.Generator, start: float, checkpoints: np.ndarray, shift: float,
                       limit: float) -> tuple:
    """:func:`karmed_run` whose batches also end at every time of ``checkpoints`` (increasing, at least K), where
    the answer argmax mu (first on a tie) is read: the fixed-budget runs of an anytime rule, one trajectory read at
    every budget (their ``forms`` never stop, ``max_samples`` is the last checkpoint). Returns karmed_run's six
    arrays, the answers at the checkpoints and the seconds since ``start`` when each was reached, and the loop's stop:
    (t, seconds) if the run-time rule of :mod:`bandits.core.run_time` ended it there (measured over RATE_SECONDS from
    the loop's start, the pulls left would take more than ``limit`` seconds; inf: never), (INTERRUPTED, 0) if Ctrl-C
    did, else (-1, 0). It looks at the signals and the clock every CLOCK_EVERY batches and after every batch of as many
    pulls (:mod:`bandits.pure_exploration.compiled.interrupts`).
    """
    K, D = means.size, forms.shape[0]
    outcome = np.zeros((4, D), np.int64)  # samples, batches, recommendation, how
    times = np.zeros((2, D))  # elapsed, seconds in the oracle
    pending = np.ones(D, np.bool_)
    counts, sums = np.zeros(K, np.int64), np.zeros(K)
    state = (np.full(K, 1.0 / K), np.zeros(K), np.zeros(2), np.zeros(K), np.zeros(K), np.array([0.0, -1.0, 0.0]))
    game = new_game(rule == LINGAME_C, rule != LINGAME or options[0] == 1, K, K)
    answers, reached, c = np.full(checkpoints.size, -1, np.int64), np.zeros(checkpoints.size), 0
    t, n_batches = 0, 0
    begun, decided, refused = wall_clock(), limit == np.inf, np.array([-1.0, 0.0])
    while pending.any():
        if t >= max_samples:
            answer, _ = glr(family, sigma, shifted(sums / counts, shift), counts)
            _settle(outcome, times, pending, pending.copy(), t, n_batches, answer, 1, wall_clock() - start, state[2][1])
            break
        if t == 0:
            batch = np.ones(K, np.int64)
        else:
            n = min(max(t + 1, math.ceil(t * (1.0 + growth))) - t, max_samples - t)
            if c < checkpoints.size:
                n = min(n, checkpoints[c] - t)
            batch = _rule_batch(rule, family, sigma, counts, sums, n, options, state, game, rule_rng, shift)
        _draw_sums(family, sigma, means, batch, env_rng, sums)
        counts += batch
        if t == 0:
            state[1][:] = counts  # C-tracking counts the first pass as on target
        size = int(batch.sum())
        t += size
        n_batches += 1
        if look_now(n_batches, size):
            if signals_pending():  # type: ignore[call-arg]
                refused[0] = INTERRUPTED
                break
            since = wall_clock() - begun
            if not decided and since >= RATE_SECONDS:
                decided = True
                if (max_samples - t) / (t / since) > limit:
                    refused[0], refused[1] = t, since
                    break
        answer, value = glr(family, sigma, shifted(sums / counts, shift), counts)
        if c < checkpoints.size and t == checkpoints[c]:
            answers[c], reached[c] = answer, wall_clock() - start
            c += 1
        settle_stopped(outcome, times, pending, forms, value, t, n_batches, answer, start, state[2][1])
    return outcome[0], outcome[1], outcome[2], outcome[3], times[0], times[1], answers, reached, refused


@njit(cache=True)
def _settle(outcome: np.ndarray, times: np.ndarray, pending: np.ndarray, which: np.ndarray, t: int, batches: int,
            answer: int, how: int, elapsed: float, solve_time: float) -> None:
    """Record the deltas ``which`` as stopped now (``how``: 0 the stopping rule, 1 the budget)."""
    for i in range(pending.size):
        if which[i]:
            outcome[0, i], outcome[1, i], outcome[2, i], outcome[3, i] = t, batches, answer, how
            times[0, i], times[1, i] = elapsed, solve_time
            pending[i] = False


@njit(cache=True)
def settle_stopped(outcome: np.ndarray, times: np.ndarray, pending: np.ndarray, forms: np.ndarray, value: float,
                   t: int, batches: int, answer: int, start: float, solve_time: float) -> None:
    """Settle the pending deltas whose GLR stop fires now: value > a + c log(b + log(max(t, floor) / s)) for the row
    (a, c, b, floor, s) of each delta."""
    stops = np.zeros(pending.size, np.bool_)
    for i in range(pending.size):
        a, c, b, floor, s = forms[i, 0], forms[i, 1], forms[i, 2], forms[i, 3], forms[i, 4]
        stops[i] = pending[i] and value > a + c * math.log(b + math.log(max(t, floor) / s))
    if stops.any():
        _settle(outcome, times, pending, stops, t, batches, answer, 0, wall_clock() - start, solve_time)
