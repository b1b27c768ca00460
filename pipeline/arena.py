"""Play many games at once between two agents, batching every pending decision per agent."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .agents.base import Agent
from .engine import GAME_OVER, GameState
from .progress import progress_bar


def play_games(
    agents: tuple[Agent, Agent],
    seeds: Sequence[int],
    num_rounds: int = 8,
    init_points: int = 30,
    progress: str | None = None,
    on_step: Callable[[GameState, int], None] | None = None,
) -> list[GameState]:
    """Play one game per seed, ``agents[0]`` as player 0; returns the finished states.

    All games advance together: each step gathers the decisions pending for each agent
    across games and asks that agent once. ``on_step(state, action)`` is called before
    each action (for recording). ``progress`` is a tqdm description, or None.
    """
    states = [GameState(seed=s, num_rounds=num_rounds, init_points=init_points) for s in seeds]
    active = list(states)
    bar = progress_bar(enabled=bool(progress), total=len(states), desc=progress, unit="game", leave=False)
    while active:
        for p in (0, 1):
            group = [s for s in active if s.player == p]
            if not group:
                continue
            actions = agents[p].act([s.observation(p) for s in group])
            for s, a in zip(group, actions, strict=True):
                if on_step is not None:
                    on_step(s, a)
                s.step(a)
        still = [s for s in active if s.phase != GAME_OVER]
        bar.update(len(active) - len(still))
        active = still
    bar.close()
    return states
