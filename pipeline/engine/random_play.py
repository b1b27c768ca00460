"""Seeded random-vs-random games: what ``engine_tests`` and ``koikoi bench engine`` time."""

from __future__ import annotations

import random

from .actions import GAME_OVER
from .state import GameState


def play_random_games(games: int, seed: int = 0) -> tuple[int, int]:
    """Play ``games`` uniform-random games; returns (decisions, rounds)."""
    pick = random.Random(seed).randrange
    decisions = rounds = 0
    for g in range(games):
        s = GameState(seed=seed * 1_000_003 + g)
        while s.phase != GAME_OVER:
            legal = s.legal_actions()
            s.step(legal[pick(len(legal))])
            decisions += 1
        rounds += len(s.results)
    return decisions, rounds
