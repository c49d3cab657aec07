"""Action classes of the mean-field program: per agent, the actions that share one value of v.

Class 0 is a*_i, then one class per action named by the explicit rows of T^MF(m), then "the rest" (one class with
multiplicity): the program is invariant under permutations of an agent's other actions, so an optimum can be
averaged over them (:mod:`optdesign.factored.mean_field.model`, symmetry reduction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ActionClasses"]


@dataclass(frozen=True)
class ActionClasses:
    """Per agent, the classes of actions that share one value of v (class 0 is a*_i).

    ``named[i]`` lists the actions given a class of their own (classes 1..len(named[i])); with ``rest[i]`` every
    other non-best action shares the last class. ``full=True`` gives every action its own class, in the
    relabelled order that swaps a*_i and 0.
    """

    #: K_i for every agent
    n_actions: tuple[int, ...]
    #: per agent, the actions with a class of their own (empty with ``full``)
    named: tuple[tuple[int, ...], ...]
    #: one class per action (the unreduced program)
    full: bool

    @classmethod
    def reduced(cls, n_actions: Sequence[int], named: Sequence[Sequence[int]] | None = None) -> ActionClasses:
        """The reduced classes: a*_i, the ``named`` actions one by one, then the rest together.

        Parameters
        ----------
        n_actions : sequence of int
            K_i for every agent.
        named : sequence of sequence of int, optional
            Per agent, the actions given a class of their own (none by default).

        Returns
        -------
        ActionClasses
            The classes with ``full=False``.
        """
        named = named or [()] * len(n_actions)
        return cls(tuple(n_actions), tuple(tuple(int(k) for k in a) for a in named), False)

    @classmethod
    def identity(cls, n_actions: Sequence[int]) -> ActionClasses:
        """One class per action (no reduction), a*_i relabelled as class 0.

        Parameters
        ----------
        n_actions : sequence of int
            K_i for every agent.

        Returns
        -------
        ActionClasses
            The classes with ``full=True``.
        """
        return cls(tuple(n_actions), tuple(() for _ in n_actions), True)

    @property
    def n_classes(self) -> tuple[int, ...]:
        """Classes per agent: K_i with ``full``, else 1 + len(named[i]) + 1 if any action is left for the rest."""
        if self.full:
            return self.n_actions
        return tuple(1 + len(nm) + int(k - 1 - len(nm) > 0) for k, nm in zip(self.n_actions, self.named, strict=True))

    @property
    def multiplicities(self) -> list[np.ndarray]:
        """Per agent, the number of actions in each class (1, except the rest class)."""
        out = []
        for k, nm, c in zip(self.n_actions, self.named, self.n_classes, strict=True):
            mult = np.ones(c)
            if not self.full and c > 1 + len(nm):
                mult[-1] = k - 1 - len(nm)
            out.append(mult)
        return out

    def class_maps(self, best_action: np.ndarray | Sequence[int]) -> list[np.ndarray]:
        """For every agent, the class of each action given a*.

        Parameters
        ----------
        best_action : array_like of int, shape (N,)
            a*, the joint action whose entries form class 0.

        Returns
        -------
        list of numpy.ndarray of int64
            Per agent, an array of length K_i mapping each action to its class.
        """
        out = []
        for i, (k, c) in enumerate(zip(self.n_actions, self.n_classes, strict=True)):
            star = int(best_action[i])
            cmap = np.full(k, c - 1, dtype=np.int64)
            if self.full:
                cmap = np.arange(k)
                cmap[[0, star]] = cmap[[star, 0]]
            else:
                for j, a in enumerate(self.named[i]):
                    cmap[a] = j + 1
            cmap[star] = 0
            out.append(cmap)
        return out
