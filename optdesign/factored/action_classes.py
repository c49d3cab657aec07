"""Action classes of the mean-field program: per agent, the actions that share one value of v.

Class 0 is a*_i, then one class per action named by the explicit rows of T^MF(m), then "the rest" (one class with
multiplicity): the program is invariant under permutations of an agent's other actions, so an optimum can be
averaged over them (:mod:`optdesign.factored.mean_field`, symmetry reduction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActionClasses:
    """Per agent, the classes of actions that share one value of v (class 0 is a*_i).

    ``named[i]`` lists the actions given a class of their own (classes 1..len(named[i])); with ``rest[i]`` every
    other non-best action shares the last class. ``full=True`` gives every action its own class, in the
    relabelled order that swaps a*_i and 0.
    """

    n_actions: tuple[int, ...]
    named: tuple[tuple[int, ...], ...]
    full: bool

    @classmethod
    def reduced(cls, n_actions: Sequence[int], named: Sequence[Sequence[int]] | None = None) -> ActionClasses:
        named = named or [()] * len(n_actions)
        return cls(tuple(n_actions), tuple(tuple(int(k) for k in a) for a in named), False)

    @classmethod
    def identity(cls, n_actions: Sequence[int]) -> ActionClasses:
        return cls(tuple(n_actions), tuple(() for _ in n_actions), True)

    @property
    def n_classes(self) -> tuple[int, ...]:
        if self.full:
            return self.n_actions
        return tuple(1 + len(nm) + int(k - 1 - len(nm) > 0) for k, nm in zip(self.n_actions, self.named, strict=True))

    @property
    def multiplicities(self) -> list[np.ndarray]:
        out = []
        for k, nm, c in zip(self.n_actions, self.named, self.n_classes, strict=True):
            mult = np.ones(c)
            if not self.full and c > 1 + len(nm):
                mult[-1] = k - 1 - len(nm)
            out.append(mult)
        return out

    def class_maps(self, best_action: np.ndarray | Sequence[int]) -> list[np.ndarray]:
        """For every agent, the class of each action given a*."""
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
