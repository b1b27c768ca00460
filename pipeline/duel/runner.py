"""Duplicate-deal duels: every deal is played twice with the seats swapped.

Deal seeds run ``s, s+1, ...``; every deal is played once with agent A as player 0 and
once with A as player 1. A seed fixes a game's deals and its first dealer, so both games
of a pair see the same cards and each agent is first dealer once. Games are streamed and
counted as they end: a duel's memory does not grow with its number of games.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from ..agents.base import Agent
from ..engine import GameState
from ..net.inference import Inference, resolve_inference
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob
from ..selfplay.executor import make_executor
from .arena import CONCURRENCY, stream_games
from .journal import BLOCK as JOURNAL_BLOCK
from .journal import DuelJournal
from .stats import DuelResult, search_summary


def set_torch_threads(n: int) -> None:
    """Limit torch's intra-op threads when torch is in use (model agents); a no-op otherwise."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def duel_seeds(games: int, seed: int) -> range:
    """Seeds of the distinct deals (one per pair of games); ``games`` must be even."""
    if games < 2 or games % 2:
        raise ValueError(f"games must be an even number >= 2 (each deal is played twice), got {games}")
    return range(seed, seed + games // 2)


def duel_games(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY,
) -> Iterator[tuple[int, GameState]]:
    """The duel's games as they end, each with A's seat: every deal with A seated 0, then every deal with
    A seated 1; at most ``concurrency`` games in memory at once."""
    seeds = duel_seeds(games, seed)
    kw = dict(num_rounds=num_rounds, init_points=init_points, concurrency=concurrency, total=len(seeds))
    for seat, agents in ((0, (agent_a, agent_b)), (1, (agent_b, agent_a))):
        desc = progress and f"{progress} (A {'first' if seat == 0 else 'second'} seat)"
        for _, state in stream_games(agents, seeds, progress=desc, **kw):
            yield seat, state


def play_duel(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY,
) -> DuelResult:
    """Play ``games`` duplicate-deal games of A against B and score them from A's side, keeping running
    totals only: memory is bounded by ``concurrency``, not by ``games``."""
    t0 = time.perf_counter()
    result = DuelResult()
    for seat, state in duel_games(agent_a, agent_b, games, seed, num_rounds, init_points, progress, concurrency):
        result.add(state, seat, init_points)
    result.seconds = time.perf_counter() - t0
    for side, agent in (("a", agent_a), ("b", agent_b)):
        stats = getattr(getattr(agent, "player", None), "stats", None)
        if stats is not None:  # a search agent
            result.search[side] = search_summary(stats())
    return result


MODEL_DUEL_BLOCK = 2048  # deals per self-play job: bounds the specs and outcomes held at once


def play_model_duel(player_a: object, player_b: object, games: int, seed: int = 0, num_rounds: int = 8,
                    init_points: int = 30, workers: int = 2, progress: str | None = None,
                    inference: Inference | str = "auto", device: str = "cpu",
                    journal: DuelJournal | None = None) -> DuelResult:
    """``play_duel`` for two model players (``NetSpec`` or ``SearchSpec``), on the RL
    self-play engine: worker processes, batched forward passes on ``device`` in the ``inference`` setup (a player
    that names its own, ``NetSpec.inference``, keeps it). The same deals and seatings as ``play_duel``; run in
    blocks of deals, so memory does not grow with ``games``. With a ``journal``, blocks of ``journal.BLOCK``
    deals, each recorded as it ends, and those it holds already are counted, not played again."""
    seeds = duel_seeds(games, seed)
    players = (player_a, player_b)
    setup = resolve_inference(inference, device)
    result = DuelResult()
    stats: dict[str, float] = {}  # the players' search counts, summed over the blocks
    size = MODEL_DUEL_BLOCK if journal is None else JOURNAL_BLOCK
    blocks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
    # a block the journal holds whole: a longer duel of the same options counts it too, a shorter one's last
    # block (fewer deals) is played again
    held = [journal is not None and journal.holds(b) for b in blocks]
    resumed = [journal.done[b[0]] for b, h in zip(blocks, held) if h]
    pending = [b for b, h in zip(blocks, held) if not h]
    for done, counts in resumed:
        result.merge(done)
        _add(stats, counts)
    t0 = time.perf_counter()
    with make_executor(workers, device=device) as ex, progress_bar(total=games, desc=progress, unit="game", leave=False,
                                                     enabled=progress is not None, initial=result.games) as bar:
        for block in pending:
            specs = tuple(GameSpec(s, seats) for seats in ((0, 1), (1, 0)) for s in block)
            job = PlayJob(players=players, games=specs, inference=setup, num_rounds=num_rounds,
                          init_points=init_points)
            t_block = time.perf_counter()
            played = ex.run(job, progress=bar.update)
            part = DuelResult()
            part.add_outcomes(played.outcomes, init_points)
            part.seconds = time.perf_counter() - t_block
            if journal is not None:
                journal.record(block[0], part, played.player_stats)
            result.merge(part)
            _add(stats, played.player_stats)
    result.seconds = sum(done.seconds for done, _ in resumed) + time.perf_counter() - t0
    for i, side in enumerate("ab"):
        mine = {k.partition(".")[2]: v for k, v in stats.items() if k.startswith(f"{i}.")}
        if mine:
            result.search[side] = search_summary(mine)
    return result


def _add(total: dict[str, float], counts: dict[str, float]) -> None:
    for k, v in counts.items():
        total[k] = total.get(k, 0) + v


def duel_agents(agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8,
                init_points: int = 30, workers: int = 2, progress: str | None = None,
                device: str = "cpu", inference: str | Inference = "auto", inference_b: str | Inference | None = None,
                journal: DuelJournal | None = None) -> DuelResult:
    """Two model agents play on the self-play engine (``workers`` processes, forward passes on ``device`` in the
    ``inference`` setup, B's in ``inference_b`` when given; ``journal``: resumable); any other pairing in this
    process (no journal: ValueError)."""
    from ..agents.model_agent import ModelAgent  # torch: loaded only when this runs

    if workers > 0 and isinstance(agent_a, ModelAgent) and isinstance(agent_b, ModelAgent):
        from ..selfplay.policies import NetSpec  # torch: loaded only when this runs

        specs = [agent.spec or NetSpec.from_net(agent.net, name) for agent, name in ((agent_a, "A"), (agent_b, "B"))]
        if inference_b is not None:
            specs[1] = specs[1].with_inference(resolve_inference(inference_b, device, "inference of B"))
        return play_model_duel(*specs, games, seed, num_rounds, init_points, workers, progress,
                               inference=inference, device=device, journal=journal)
    if journal is not None:
        raise ValueError("--journal: only a duel of two model or search agents on --workers >= 1 keeps one")
    return play_duel(agent_a, agent_b, games, seed, num_rounds, init_points, progress)
