"""Duplicate-deal duels: every deal is played twice with the seats swapped.

Deal seeds run ``s, s+1, ...``; every deal is played once with agent A as player 0 and
once with A as player 1. A seed fixes a game's deals and its first dealer, so both games
of a pair see the same cards and each agent is first dealer once. Games are counted as they end: a duel's memory
does not grow with its number of games.

A duel is played in blocks of deals (``play_blocks``), the unit of its journal and of its sequential test: each
block is played whole (both seatings of each of its deals), its two games of each deal scored as a pair
(``DuelResult.pairs``, the interval from them), recorded in the journal, and then a sequential duel's test
(``sprt``) looks at every pair so far and stops the duel when it decides. The block's size is the price of a look:
the duel stops at the end of the block where its test crosses a bound, so small blocks stop sooner, but each block
is one job for the worker pool (its networks shipped and built, its last games played in small batches).
``SPRT_BLOCK`` is the size measured to cost little (docs/duels.md).
"""

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
    if journal is not None:
        return journal.block
    return SPRT_BLOCK if sprt is not None else default


def journal_block(sequential: bool) -> int:
    """The block size of a new journal: a sequential duel's looks are its blocks."""
    return SPRT_BLOCK if sequential else JOURNAL_BLOCK


def job_blocks(done: int, most: int) -> int:
    """Blocks in the next job of a sequential duel that has ``done`` blocks: one at first, so that a clear
    difference stops after 32 games, then half as many as are done, up to ``most``. A job of one block plays
    small batches (1.8x the time per game of a 64-deal job in compile-bf16, docs/duels.md); a job of several is
    looked at block by block all the same, and what it played past the decision is not counted."""
    return max(1, min(most, done // 2))


def play_blocks(seeds: range, size: int, play: PlayBlocks, journal: DuelJournal | None = None,
                sprt: Sprt | None = None, most: int = 1) -> tuple[DuelResult, dict[str, float]]:
    """Play the deals ``seeds`` in blocks of ``size`` with ``play``, taking a block the journal holds whole from it
    instead. A sequential duel (``sprt``) plays jobs of up to ``most`` blocks (``job_blocks``) and stops after the
    block where its test decides. Returns the duel's totals (``seconds``: its blocks', ``sprt``: the test's state
    at the end) and the searchers' counts."""
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
    """A job's blocks' totals, empty, and which of them counts a deal's games."""
    parts = [DuelResult() for _ in range(0, len(job), size)]
    return parts, lambda deal: parts[(deal - job.start) // size]


def _timed(parts: list[DuelResult], job: range, size: int, seconds: float) -> list[DuelResult]:
    """``parts``, each timed its share of the job's ``seconds`` by its deals."""
    for k, part in enumerate(parts):
        part.seconds = seconds * len(job[k * size:(k + 1) * size]) / len(job)
    return parts


def duel_seeds(games: int, seed: int) -> range:
    """Seeds of the distinct deals (one per pair of games); ``games`` must be even."""
    if games < 2 or games % 2:
        raise ValueError(f"games must be an even number >= 2 (each deal is played twice), got {games}")
    return range(seed, seed + games // 2)


def duel_games(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY, block: int = LOCAL_BLOCK,
) -> Iterator[tuple[int, int, GameState]]:
    """The duel's games as they end, each with A's seat and its deal's seed: block by block of ``block`` deals,
    every deal of the block with A seated 0, then with A seated 1; at most ``concurrency`` games in memory at
    once."""
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
    """Play ``games`` duplicate-deal games of A against B and score them from A's side, game and pair, keeping
    running totals only: memory is bounded by ``concurrency`` games and a block's pairs, not by ``games``.
    ``sprt``: a sequential duel, stopped after the block of ``SPRT_BLOCK`` deals where its test decides (``games``
    its cap). ``on_game(A's seat, deal seed, finished state)``: each game as it ends (its record)."""
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
    """``play_duel`` for two model players (``NetSpec`` or ``SearchSpec``), on the RL
    self-play engine: worker processes, batched forward passes on ``device`` in the ``inference`` setup (a player
    that names its own, ``NetSpec.inference``, keeps it). The same deals, seatings and pairs as ``play_duel``;
    run in blocks of deals (``block_size``), so memory does not grow with ``games``. With a ``journal``,
    its blocks, each recorded as it ends, and those it holds already are counted, not played again; with an
    ``sprt``, stopped after the block where the test decides. ``executor``: a pool of workers on ``device`` to
    play on and leave running (``tournament.Arena.pool``); else one of ``workers`` for this duel."""
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
    """The worker pools of a run of duels by device, each started by its first duel and kept until ``close``: a
    pool's processes start and compile the networks once (they share the architecture), where a pool per duel paid
    about 20 s a duel for it on 2 cores (docs/duels.md). The duels stage's arena and a search study hold one."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers

    def pool(self, device: str) -> Executor | None:
        """The pool on ``device`` (its processes start at its first job); None without workers."""
        if self.workers < 1:
            return None
        if device not in self:
            self[device] = make_executor(self.workers, device=device)
        return self[device]

    def close(self) -> None:
        """Stop the pools."""
        for pool in self.values():
            pool.close()
        self.clear()


def duel_agents(agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8,
                init_points: int = 30, workers: int = 2, progress: str | None = None,
                device: str = "cpu", inference: str | Inference = "auto", inference_b: str | Inference | None = None,
                journal: DuelJournal | None = None, sprt: Sprt | None = None,
                executor: Executor | None = None,
                on_game: Callable[[int, int, GameState], None] | None = None) -> DuelResult:
    """A pairing with a model agent (a network or a searcher) against another model or a built-in agent plays on
    the self-play engine (``workers`` processes, forward passes on ``device`` in the ``inference`` setup, B's in
    ``inference_b`` when given; ``journal``: resumable); any other pairing in this process (no journal:
    ValueError). ``sprt``: a sequential duel, ``games`` its cap. ``executor``: the models' worker pool, kept
    running after the duel (``play_model_duel``). Either way the games are the same. ``on_game``: each game as it
    ends (``play_duel``'s; the duel then plays in this process, whose games keep their moves)."""
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
    """Whether a duel of these players' specs (``player_spec``) plays on worker processes: with workers, when both
    can be shipped and one runs a network (two built-in agents play faster here than a pool starts)."""
    return workers > 0 and None not in specs and not all(isinstance(s, RuleSpec) for s in specs)


def player_spec(agent: Agent, name: str) -> PlayerSpec | None:
    """How a worker rebuilds ``agent``: a built-in agent's ``RuleSpec``, a model agent's spec (its network's
    ``NetSpec`` by default); None for any other agent (it plays in this process)."""
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
