"""Duplicate-deal duels: every deal played twice with the seats swapped, in blocks of deals, the unit of the journal
and of the sequential test's looks (small blocks stop sooner, but each is one worker job: docs/duels.md)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext

from ..agents.base import Agent, PlayerSpec
from ..agents.rule_player import RuleSpec, rule_spec
from ..engine import GameState
from ..net.inference import Inference, resolve_inference
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob
from ..selfplay.executor import Executor, make_executor
from .arena import CONCURRENCY, stream_games
from .journal import BLOCK as JOURNAL_BLOCK
from .journal import DuelJournal
from .sprt import Sprt
from .stats import DuelResult, search_summary


def set_torch_threads(n: int) -> None:
    """Limit torch's intra-op threads when torch is in use (model agents); a no-op otherwise."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


SPRT_BLOCK = 16  # deals per block of a sequential duel: 32 games between two looks of its test
SPRT_JOB = 64  # the most deals a sequential duel plays in one job: 64 games for each of two workers at once
MODEL_DUEL_BLOCK = 2048  # deals per self-play job of a fixed-size duel: bounds the specs and outcomes held at once
LOCAL_BLOCK = 512  # deals per block of a duel played in this process: its seatings' games held until paired

# (deals of a job, deals per block) -> each block's totals, in order, and the job's searcher counts
PlayBlocks = Callable[[range, int], tuple[list[DuelResult], dict[str, float]]]


def block_size(journal: DuelJournal | None, sprt: Sprt | None, default: int) -> int:
    """Deals per block: the journal's (it names its size), a sequential duel's, else ``default``."""
    return journal.block if journal is not None else SPRT_BLOCK if sprt is not None else default


def journal_block(sequential: bool) -> int:
    """The block size of a new journal: a sequential duel's looks are its blocks."""
    return SPRT_BLOCK if sequential else JOURNAL_BLOCK


def job_blocks(done: int, most: int) -> int:
    """Blocks in the next job of a sequential duel that has ``done`` blocks: one at first, so that a clear
    difference stops after 32 games, then half as many as are done (larger jobs play larger batches)."""
    return max(1, min(most, done // 2))


def play_blocks(seeds: range, size: int, play: PlayBlocks, journal: DuelJournal | None = None,
                sprt: Sprt | None = None, most: int = 1) -> tuple[DuelResult, dict[str, float]]:
    """Play the deals ``seeds`` in blocks of ``size`` with ``play``, a block the journal holds taken from it; a
    sequential duel stops after the block where its test decides. The duel's totals and the searchers' counts."""
    blocks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
    held = (lambda b: journal.holds(b)) if journal is not None else (lambda b: False)
    result, stats, i = DuelResult(), {}, 0
    while i < len(blocks):
        if held(blocks[i]):
            parts, counts = [journal.done[blocks[i][0]][0]], journal.done[blocks[i][0]][1]
        else:
            run = [blocks[i]]
            while (len(run) < (job_blocks(i, most) if sprt is not None else 1) and i + len(run) < len(blocks)
                   and not held(blocks[i + len(run)])):
                run.append(blocks[i + len(run)])
            parts, counts = play(range(run[0].start, run[-1].stop), size)
            for b, part in zip(run, parts, strict=True):
                if journal is not None:  # a job's searcher counts go with its first block
                    journal.record(b[0], part, counts if b is run[0] else {})
        for k, v in counts.items():
            stats[k] = stats.get(k, 0) + v
        for part in parts:
            result.merge(part)
            result.seconds += part.seconds
            i += 1
            if sprt is not None:
                result.sprt = sprt.decide(result.pairs)
                if result.sprt["decision"] != "none":
                    return result, stats
    return result, stats


def _by_block(job: range, size: int) -> tuple[list[DuelResult], Callable[[int], DuelResult]]:
    parts = [DuelResult() for _ in range(0, len(job), size)]
    return parts, lambda deal: parts[(deal - job.start) // size]


def _timed(parts: list[DuelResult], job: range, size: int, seconds: float) -> list[DuelResult]:
    for k, part in enumerate(parts):
        part.seconds = seconds * len(job[k * size:(k + 1) * size]) / len(job)
    return parts


def duel_seeds(games: int, seed: int) -> range:
    if games < 2 or games % 2:
        raise ValueError(f"games must be an even number >= 2 (each deal is played twice), got {games}")
    return range(seed, seed + games // 2)


def duel_games(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY, block: int = LOCAL_BLOCK,
) -> Iterator[tuple[int, int, GameState]]:
    seeds = duel_seeds(games, seed)
    with progress_bar(total=games, desc=progress, unit="game", leave=False, enabled=progress is not None) as bar:
        for i in range(0, len(seeds), block):
            yield from _block_games(agent_a, agent_b, seeds[i:i + block], num_rounds, init_points, concurrency,
                                    bar)


def _block_games(agent_a: Agent, agent_b: Agent, seeds: range, num_rounds: int, init_points: int,
                 concurrency: int, bar: object = None) -> Iterator[tuple[int, int, GameState]]:
    for seat, agents in ((0, (agent_a, agent_b)), (1, (agent_b, agent_a))):
        for i, state in stream_games(agents, seeds, num_rounds=num_rounds, init_points=init_points,
                                     concurrency=concurrency):
            if bar is not None:
                bar.update(1)
            yield seat, seeds[i], state


def play_duel(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY, sprt: Sprt | None = None,
    on_game: Callable[[int, int, GameState], None] | None = None,
) -> DuelResult:
    """Play ``games`` duplicate-deal games of A against B in this process, scored from A's side; ``sprt``: a
    sequential duel, ``games`` its cap; ``on_game(A's seat, deal seed, finished state)`` as each game ends."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    seeds = duel_seeds(games, seed)
    with progress_bar(total=games, desc=progress, unit="game", leave=False, enabled=progress is not None) as bar:
        def play(job: range, size: int) -> tuple[list[DuelResult], dict[str, float]]:
            t0 = time.perf_counter()
            parts, part_of = _by_block(job, size)
            for seat, deal, state in _block_games(agent_a, agent_b, job, num_rounds, init_points, concurrency, bar):
                part_of(deal).add(state, seat, init_points, deal)
                if on_game is not None:
                    on_game(seat, deal, state)
            return _timed(parts, job, size, time.perf_counter() - t0), {}

        result, _ = play_blocks(seeds, block_size(None, sprt, LOCAL_BLOCK), play, sprt=sprt,
                                most=SPRT_JOB // SPRT_BLOCK)
    for side, agent in (("a", agent_a), ("b", agent_b)):
        stats = getattr(getattr(agent, "player", None), "stats", None)
        if stats is not None:  # a search agent
            result.search[side] = search_summary(stats())
    return result


def play_model_duel(player_a: object, player_b: object, games: int, seed: int = 0, num_rounds: int = 8,
                    init_points: int = 30, workers: int = 2, progress: str | None = None,
                    inference: Inference | str = "auto", device: str = "cpu",
                    journal: DuelJournal | None = None, sprt: Sprt | None = None,
                    executor: Executor | None = None) -> DuelResult:
    """``play_duel`` for two model players on the self-play engine's worker processes; the blocks a ``journal``
    holds are not played again. ``executor``: a pool to play on and leave running; else one of ``workers``."""
    seeds = duel_seeds(games, seed)
    players = (player_a, player_b)
    setup = resolve_inference(inference, device)
    held = sum(r.games for r, _ in journal.done.values()) if journal is not None else 0
    pool = nullcontext(executor) if executor is not None else make_executor(workers, device=device)
    with pool as ex, progress_bar(total=games, desc=progress, unit="game", leave=False,
                                  enabled=progress is not None, initial=min(held, games)) as bar:
        def play(job: range, size: int) -> tuple[list[DuelResult], dict[str, float]]:
            specs = tuple(GameSpec(s, seats) for seats in ((0, 1), (1, 0)) for s in job)
            t0 = time.perf_counter()
            played = ex.run(PlayJob(players=players, games=specs, inference=setup, num_rounds=num_rounds,
                                    init_points=init_points), progress=bar.update)
            parts, part_of = _by_block(job, size)
            for o in played.outcomes:
                part_of(o.seed).add_outcomes([o], init_points)
            return _timed(parts, job, size, time.perf_counter() - t0), played.player_stats

        result, stats = play_blocks(seeds, block_size(journal, sprt, MODEL_DUEL_BLOCK), play, journal, sprt,
                                    most=max(1, SPRT_JOB * max(workers, 1) // 2 // SPRT_BLOCK))
    for i, side in enumerate("ab"):
        mine = {k.partition(".")[2]: v for k, v in stats.items() if k.startswith(f"{i}.")}
        if mine:
            result.search[side] = search_summary(mine)
    return result


class Pools(dict[str, Executor]):
    """The worker pools of a run of duels by device, kept until ``close``: a pool per duel paid about 20 s a duel
    to start and compile (docs/duels.md)."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers

    def pool(self, device: str) -> Executor | None:
        if self.workers < 1:
            return None
        if device not in self:
            self[device] = make_executor(self.workers, device=device)
        return self[device]

    def close(self) -> None:
        for pool in self.values():
            pool.close()
        self.clear()


def duel_agents(agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8,
                init_points: int = 30, workers: int = 2, progress: str | None = None,
                device: str = "cpu", inference: str | Inference = "auto", inference_b: str | Inference | None = None,
                journal: DuelJournal | None = None, sprt: Sprt | None = None,
                executor: Executor | None = None,
                on_game: Callable[[int, int, GameState], None] | None = None) -> DuelResult:
    """A duel with a model agent on the self-play engine (``play_model_duel``), any other (or one with
    ``on_game``) in this process (``play_duel``); either way the games are the same."""
    specs = [player_spec(agent, name) for agent, name in ((agent_a, "A"), (agent_b, "B"))]
    if on_workers(specs, workers) and on_game is None:
        if inference_b is not None:
            specs[1] = specs[1].with_inference(resolve_inference(inference_b, device, "inference of B"))
        return play_model_duel(*specs, games, seed, num_rounds, init_points, workers, progress,
                               inference=inference, device=device, journal=journal, sprt=sprt,
                               executor=executor)
    if journal is not None:
        raise ValueError("--journal: only a duel with a model or search agent on --workers >= 1 keeps one")
    return play_duel(agent_a, agent_b, games, seed, num_rounds, init_points, progress, sprt=sprt, on_game=on_game)


def on_workers(specs: list[PlayerSpec | None], workers: int) -> bool:
    """Whether a duel of these specs plays on workers: both can be shipped and one runs a network (two built-in
    agents play faster here than a pool starts)."""
    return workers > 0 and None not in specs and not all(isinstance(s, RuleSpec) for s in specs)


def player_spec(agent: Agent, name: str) -> PlayerSpec | None:
    """How a worker rebuilds ``agent``; None for an agent that plays in this process only."""
    spec = rule_spec(agent)
    if spec is not None:
        return spec
    if "torch" not in sys.modules:  # no model agent without torch: a built-in duel never imports it
        return None
    from ..agents.model_agent import ModelAgent

    if not isinstance(agent, ModelAgent):
        return None
    from ..selfplay.policies import NetSpec

    return agent.spec or NetSpec.from_net(agent.net, name)
