"""The decisions of greedy self-play games: what every probe walks to find its positions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import count
from typing import NamedTuple

import numpy as np

from ..agents.base import Player
from ..engine import GAME_OVER, GameState, Observation


class Decision(NamedTuple):
    """One decision: the live state before the action (clone it to keep it), its seat's observation, the player's
    value of every action, the greedy action, and the game's index and actions so far (``GameState(seed +
    game)`` stepped through ``history`` rebuilds ``state``; the list grows as the game goes on)."""

    game: int
    state: GameState
    obs: Observation
    values: np.ndarray
    taken: int
    history: list[int]


def greedy_decisions(player: Player, seed: int, games: int | None = None,
                     on_game: Callable[[int], None] | None = None) -> Iterator[Decision]:
    """Every decision of ``player`` against itself, greedy, in games seeded ``seed``, ``seed + 1``, ... (``games``
    of them, or without end); ``on_game(1)`` after each game."""
    for g in count() if games is None else range(games):
        s, history = GameState(seed=seed + g), []
        while s.phase != GAME_OVER:
            obs = s.observation(s.player)
            q = player.values([obs])[0]
            taken = int(q.argmax())
            yield Decision(g, s, obs, q, taken, history)
            s.step(taken)
            history.append(taken)
        if on_game:
            on_game(1)
