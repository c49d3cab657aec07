"""The value of an answer that is one arm or item: what the simple regret of a recommendation reads; an answer's
row in a table of all answers (:meth:`~bandits.pure_exploration.values.Values.answer_index`, LinGame-C's learner);
and the check of an answer a caller passes (:meth:`~bandits.pure_exploration.values.Values.check_answer`).

On a question whose answers are single arms (best-arm and epsilon-good identification of K arms) or items (linear
and transductive identification), the value of an answer a at the parameter mu is mu_a or z_a^T theta, and the simple
regret of a recommendation a is value(i*(mu)) - value(a): the mean a user loses by acting on it. Answers that are sets
of arms (top m, thresholding) or joint actions have no such value here (None).
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

__all__ = ["Values", "checked_index", "has_values"]


class Values:
    """The value of an answer (a base of every :class:`bandits.pure_exploration.Problem`): None by default; the
    problems whose answers are single arms or items override
    :meth:`~bandits.pure_exploration.values.Values.answer_value`."""

    def answer_value(self, answer: int, mu: np.ndarray) -> float | None:
        """The value of ``answer`` at ``mu``: mu_a for an arm, z_a^T theta for an item; None when answers are no
        single arm or item (the default).

        Parameters
        ----------
        answer : int
            An answer.
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        float or None
            The answer's value, or None.
        """
        return None

    @property
    def n_answers(self) -> int:
        """The number of answers (the problem's)."""
        raise NotImplementedError

    def check_answer(self, answer: int) -> int:
        """``answer`` as an int if it is one of the ``n_answers`` answers (an arm, an item or a joint action's code),
        else one clear error; set answers override it with their mask check.

        Parameters
        ----------
        answer : int
            An answer.

        Returns
        -------
        int
            The answer.

        Raises
        ------
        InvalidInputError
            Not an integer in [0, n_answers).
        """
        return checked_index(answer, self.n_answers, "an answer (an arm, item or joint action)")

    def answer_index(self, answer: int) -> int:
        """The answer's row among the ``n_answers`` answers: the answer itself (arms, items, bit masks of every subset);
        set answers of a fixed size override it with their rank.

        Parameters
        ----------
        answer : int
            An answer.

        Returns
        -------
        int
            Its row, in [0, n_answers).
        """
        return int(answer)


def has_values(problem: Values) -> bool:
    """Whether a problem's answers are single arms or items with a value (its class overrides
    :meth:`Values.answer_value`).

    Parameters
    ----------
    problem : Values
        A problem (or any object with the base).

    Returns
    -------
    bool
        True when :meth:`Values.answer_value` gives numbers.
    """
    return type(problem).answer_value is not Values.answer_value


def checked_index(value: int, n: int, what: str) -> int:
    """``value`` as an int if it is an index in [0, n), else one clear error naming ``what`` it is.

    Parameters
    ----------
    value : int
        The index given.
    n : int
        The number of indices.
    what : str
        What the index is, for the message (``"an arm"``).

    Returns
    -------
    int
        The index.

    Raises
    ------
    InvalidInputError
        Not an integer (booleans refused) in [0, n).
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < n:
        raise InvalidInputError(f"{what} must be an index in [0, {n}), got {value!r}")
    return int(value)
