"""The former home of :mod:`bandits.pure_exploration.games`, whose names it re-exports: old imports, and compiled
kernels cached before the move (their cache names the function they call back by this module's path), keep working."""

from ..games import GAME_METHODS, GAP_TOL, PIVOT_TOL, game_strategies, solve_game

__all__ = ["GAME_METHODS", "GAP_TOL", "PIVOT_TOL", "game_strategies", "solve_game"]
