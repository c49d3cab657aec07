"""The phase lengths of the fixed-budget elimination rules and the checks of a budget grid.

Successive Rejects (Audibert, Bubeck & Munos, COLT 2010) runs K - 1 phases; after phase k every surviving arm has been
pulled

    n_k = ceil((T - K) / (log-bar(K) (K + 1 - k))),   log-bar(K) = 1/2 + sum_{i=2}^K 1/i,

times, and the empirically worst survivor is rejected. Phase k pulls K + 1 - k arms, so the whole run makes
n_1 + ... + n_{K-1} + n_{K-1} <= K + (T - K) = T pulls (each ceiling adds less than one).

Sequential Halving (Karnin, Koren & Somekh, ICML 2013) runs R = ceil(log2 K) rounds; round r pulls each of its |S_r|
survivors t_r = floor(T / (|S_r| R)) times and keeps the ceil(|S_r| / 2) best, so it makes at most T pulls
(sum_r |S_r| t_r <= R T / R).

The log-bar and the ceilings are computed in exact rational arithmetic, so a phase length never moves by one through
a rounding error.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from optdesign.errors import InvalidInputError

__all__ = ["check_budgets", "halving_rounds", "log_bar", "successive_rejects_lengths"]


def log_bar(n_arms: int) -> Fraction:
    """log-bar(K) = 1/2 + sum_{i=2}^K 1/i, exactly.

    Parameters
    ----------
    n_arms : int
        K >= 2.

    Returns
    -------
    fractions.Fraction
        The constant.
    """
    return Fraction(1, 2) + sum((Fraction(1, i) for i in range(2, n_arms + 1)), Fraction(0))


def successive_rejects_lengths(budget: int, n_arms: int) -> np.ndarray:
    """Successive Rejects' cumulative pulls per surviving arm at the end of each phase, n_k = ceil((T - K) /
    (log-bar(K) (K + 1 - k))) for k = 1, ..., K - 1.

    Parameters
    ----------
    budget : int
        The budget T (at least K).
    n_arms : int
        K >= 2.

    Returns
    -------
    numpy.ndarray of int64, shape (K - 1,)
        n_1 <= n_2 <= ... <= n_{K-1}.
    """
    bar = log_bar(n_arms)
    return np.array([math.ceil(Fraction(budget - n_arms) / (bar * (n_arms + 1 - k))) for k in range(1, n_arms)],
                    dtype=np.int64)


def halving_rounds(budget: int, n_arms: int) -> list[tuple[int, int]]:
    """Sequential Halving's rounds: (survivors |S_r|, pulls per survivor t_r = floor(T / (|S_r| ceil(log2 K)))), with
    |S_0| = K and |S_{r+1}| = ceil(|S_r| / 2).

    Parameters
    ----------
    budget : int
        The budget T.
    n_arms : int
        K >= 2.

    Returns
    -------
    list of tuple of int
        One (|S_r|, t_r) per round, ceil(log2 K) rounds.
    """
    rounds = (n_arms - 1).bit_length()  # ceil(log2 K) for K >= 2
    out, alive = [], n_arms
    for _ in range(rounds):
        out.append((alive, budget // (alive * rounds)))
        alive = (alive + 1) // 2
    return out


def check_budgets(budgets: object, minimum: int = 1, who: str = "") -> tuple[int, ...]:
    """A budget grid checked: integers (integral floats such as 1e3 allowed), strictly increasing, at least
    ``minimum``.

    Parameters
    ----------
    budgets : sequence of int
        The budgets T_1 < T_2 < ..., or one budget.
    minimum : int
        The smallest budget the rule can run to.
    who : str
        What needs the minimum, named in the message (e.g. ``"successive-rejects on 3 arms"``).

    Returns
    -------
    tuple of int
        The budgets.

    Raises
    ------
    InvalidInputError
        No budget, a budget that is not an integer (or is a boolean), budgets that do not increase strictly, or a
        budget below ``minimum``.
    """
    values = list(budgets) if isinstance(budgets, (list, tuple, np.ndarray)) else [budgets]
    if not values:
        raise InvalidInputError("budgets: give at least one budget T")
    out = []
    for value in values:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(value) or value != int(value):
            raise InvalidInputError(f"budgets must be integers (pulls), got {value!r}")
        out.append(int(value))
    if any(b <= a for a, b in itertools.pairwise(out)):
        raise InvalidInputError(f"budgets must increase strictly (each a checkpoint of the run), got {out}")
    if out[0] < minimum:
        need = f" ({who})" if who else ""
        raise InvalidInputError(f"budget T = {out[0]} is below the smallest budget {minimum}{need}")
    return tuple(out)
