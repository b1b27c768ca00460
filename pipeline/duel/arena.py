"""Play many games at once between two agents, batching every pending decision per agent."""

from collections.abc import Callable, Iterable, Iterator, Sequence

from ..agents.base import Agent
from ..engine import GAME_OVER, GameState
from ..runtime.progress import progress_bar

CONCURRENCY = 512  # games in flight: large enough batches for a network, small enough memory


def stream_games(agents: tuple[Agent, Agent], seeds: Iterable[int], num_rounds: int = 8, init_points: int = 30,
                 progress: str | None = None, on_step: Callable[[GameState, int], None] | None = None,
                 concurrency: int = CONCURRENCY, total: int | None = None) -> Iterator[tuple[int, GameState]]:
    """Play one game per seed, ``agents[0]`` as player 0; yields ``(index of its seed, finished state)`` as each
    game ends, with at most ``concurrency`` games in memory. ``on_step(state, action)`` runs before each action."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    pending = enumerate(seeds)
    active: list[tuple[int, GameState]] = []
    bar = progress_bar(enabled=bool(progress), total=total, desc=progress, unit="game", leave=False)
    try:
        while True:
            while len(active) < concurrency and (nxt := next(pending, None)) is not None:
                active.append((nxt[0], GameState(seed=nxt[1], num_rounds=num_rounds, init_points=init_points)))
            if not active:
                return
            for p in (0, 1):
                group = [s for _, s in active if s.player == p]
                if not group:
                    continue
                actions = agents[p].act([s.observation(p) for s in group])
                for s, a in zip(group, actions, strict=True):
                    if on_step is not None:
                        on_step(s, a)
                    s.step(a)
            still = []
            for i, s in active:
                if s.phase == GAME_OVER:
                    bar.update(1)
                    yield i, s
                else:
                    still.append((i, s))
            active = still
    finally:
        bar.close()


def play_games(agents: tuple[Agent, Agent], seeds: Sequence[int], num_rounds: int = 8, init_points: int = 30,
               progress: str | None = None, on_step: Callable[[GameState, int], None] | None = None) -> list[GameState]:
    """Play one game per seed, all at once; the finished states in seed order (for a few games)."""
    states: list[GameState | None] = [None] * len(seeds)
    for i, s in stream_games(agents, seeds, num_rounds, init_points, progress, on_step,
                             concurrency=max(1, len(seeds)), total=len(seeds)):
        states[i] = s
    return states  # type: ignore[return-value]
