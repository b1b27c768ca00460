"""Batched self-play: many games advance together and every forward pass serves a whole batch.

At each step the pending decisions are grouped by (player network, decision type); the largest
group is encoded as one batch and evaluated in one forward pass, and each of its games takes one
step. Games that wait (a pick while most games discard) keep waiting until their group is the
largest, so batches stay large. New games start as others finish, up to ``concurrency`` at once.

Exploration draws come from one RNG per game, seeded by the job's ``explore_seed`` and the game's
seed, so a game's course depends only on its seed and the networks, never on what it was batched
with: batched play reproduces one-game-at-a-time play exactly (tests/rl/test_selfplay.py).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ..agents.base import legal_list
from ..engine import GAME_OVER, GameState, Observation
from .policies import NetPlayer, NetSpec
from .rewards import RewardModel


class Sample(NamedTuple):
    """One decision of a recorded player: what it saw, what it did, the reward of that round."""

    obs: Observation
    action: int
    reward: float


@dataclass(frozen=True)
class GameSpec:
    """A game to play: its seed, which of the job's players sits in seats 0 and 1, which seats record."""

    seed: int
    seats: tuple[int, int] = (0, 0)
    record: tuple[bool, bool] = (False, False)


@dataclass(frozen=True)
class GameOutcome:
    """A finished game. ``rounds``: per round (round, dealer, points of p0/p1 before it, round points)."""

    seed: int
    seats: tuple[int, int]
    points: tuple[int, int]
    winner: int | None
    rounds: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]
    decisions: int


@dataclass(frozen=True)
class PlayJob:
    """Games for one worker (or to be split among workers), with the networks that play them."""

    players: tuple[NetSpec, ...]
    games: tuple[GameSpec, ...]
    bf16: bool = False
    concurrency: int = 64
    reward: RewardModel | None = None  # needed when any game records trajectories
    explore_seed: int = 0
    device: str = "cpu"  # where the forward passes run ("cuda": the games stay on this worker's CPU core)
    num_rounds: int = 8
    init_points: int = 30

    def split(self, n: int) -> list[PlayJob]:
        """At most ``n`` non-empty jobs with the games dealt round-robin."""
        n = max(1, min(n, len(self.games)))
        return [replace(self, games=self.games[i::n]) for i in range(n)]


@dataclass
class PlayResult:
    outcomes: list[GameOutcome] = field(default_factory=list)
    trajectories: list[list[Sample]] = field(default_factory=list)  # the recorded samples of each game
    decisions: int = 0
    seconds: float = 0.0  # summed over workers
    forward_seconds: float = 0.0
    forward_samples: int = 0
    forward_calls: int = 0

    @property
    def samples(self) -> list[Sample]:
        return [x for t in self.trajectories for x in t]

    @property
    def mean_batch(self) -> float:
        return self.forward_samples / max(1, self.forward_calls)

    @staticmethod
    def merge(results: Sequence[PlayResult]) -> PlayResult:
        """One result; games sorted by (seed, seats), so the order does not depend on the split."""
        out = PlayResult()
        pairs = sorted(((o, t) for r in results for o, t in zip(r.outcomes, r.trajectories, strict=True)),
                       key=lambda p: (p[0].seed, p[0].seats))
        out.outcomes = [o for o, _ in pairs]
        out.trajectories = [t for _, t in pairs]
        for r in results:
            out.decisions += r.decisions
            out.seconds += r.seconds
            out.forward_seconds += r.forward_seconds
            out.forward_samples += r.forward_samples
            out.forward_calls += r.forward_calls
        return out


class _Game:
    __slots__ = ("spec", "state", "rng", "trace", "decisions")

    def __init__(self, spec: GameSpec, job: PlayJob) -> None:
        self.spec = spec
        self.state = GameState(seed=spec.seed, num_rounds=job.num_rounds, init_points=job.init_points)
        self.rng = np.random.default_rng((job.explore_seed, spec.seed, *spec.seats))
        self.trace: list[tuple[int, int, Observation, int]] = []  # (round, player, obs, action)
        self.decisions = 0


def _outcome(g: _Game) -> GameOutcome:
    s = g.state
    rounds = []
    before = (s.init_points, s.init_points)
    for r in s.results:
        rounds.append((r.round, r.dealer, before, r.points))
        before = r.totals
    return GameOutcome(g.spec.seed, g.spec.seats, (s.points[0], s.points[1]), s.winner, tuple(rounds), g.decisions)


def _samples(g: _Game, reward: RewardModel | None) -> list[Sample]:
    if not g.trace:
        return []
    if reward is None:
        raise ValueError("a game records trajectories but the play job has no reward model")
    per_round = reward.round_rewards(g.state.results, g.state.winner)
    return [Sample(o, a, per_round[rnd - 1][p]) for rnd, p, o, a in g.trace]


def play_job(job: PlayJob) -> PlayResult:
    """Play every game of ``job`` in this process (what one worker does)."""
    from .executor import report_progress

    t0 = time.perf_counter()
    players = [NetPlayer(spec.build(), spec.epsilon, job.bf16, job.device) for spec in job.players]
    pending = deque(job.games)
    active: list[_Game] = []
    done: list[_Game] = []
    decisions = 0
    while pending or active:
        while pending and len(active) < job.concurrency:
            active.append(_Game(pending.popleft(), job))
        groups: dict[tuple[int, int], list[_Game]] = {}
        for g in active:
            s = g.state
            groups.setdefault((g.spec.seats[s.player], s.phase), []).append(g)
        (pi, _), group = max(groups.items(), key=lambda kv: len(kv[1]))
        player = players[pi]
        obs = [g.state.observation(g.state.player) for g in group]
        actions = player.values(obs).argmax(axis=1).tolist()
        eps = player.epsilon
        finished = False
        for g, o, a in zip(group, obs, actions):
            if eps > 0.0 and g.rng.random() < eps:
                legal = legal_list(o)
                a = legal[int(g.rng.integers(len(legal)))]
            s = g.state
            if g.spec.record[s.player]:
                g.trace.append((s.round, s.player, o, a))
            s.step(a)
            g.decisions += 1
            finished |= s.phase == GAME_OVER
        decisions += len(group)
        if finished:
            still = []
            for g in active:
                if g.state.phase == GAME_OVER:
                    done.append(g)
                    report_progress(1)
                else:
                    still.append(g)
            active = still
    done.sort(key=lambda g: (g.spec.seed, g.spec.seats))
    result = PlayResult(outcomes=[_outcome(g) for g in done], trajectories=[_samples(g, job.reward) for g in done],
                        decisions=decisions)
    result.seconds = time.perf_counter() - t0
    result.forward_seconds = sum(p.forward_seconds for p in players)
    result.forward_samples = sum(p.forward_samples for p in players)
    result.forward_calls = sum(p.forward_calls for p in players)
    return result


def play_one_by_one(job: PlayJob) -> PlayResult:
    """The same games without batching (one game at a time, one decision per forward pass); for tests."""
    results = [play_job(replace(job, games=(g,), concurrency=1)) for g in job.games]
    return PlayResult.merge(results)
