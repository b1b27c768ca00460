"""Batched self-play: many games advance together and every forward pass serves a whole batch.

Each step evaluates the largest group of pending decisions of one (player, decision type); games that wait keep
waiting, so batches stay large. Exploration draws come from one RNG per game seeded by its seed, so batched play
reproduces one-game-at-a-time play exactly. The job's ``Recorder`` (an RL algorithm's hook) sees each step's
recorded decisions, may change their actions and may ask for branch playouts (``playout``) that share the deal.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..agents.base import PlayerSpec, legal_list
from ..engine import GAME_OVER, GameState, Observation, resample_hidden
from ..net.inference import FP32, Inference
from .playout import Link, Pending, Playout, branch, credit, finished, pending_groups, round_over, round_reward
from .reporting import report_progress
from .rewards import RewardModel, RewardModels


class Sample(NamedTuple):
    """One recorded decision: what the player saw and did, its reward; ``target``: a recorder's, per token."""

    obs: Observation
    action: int
    reward: float
    target: np.ndarray | None = None


@dataclass(frozen=True)
class Recorder:
    """What a play job keeps of its recorded decisions and the samples it makes of them: an RL algorithm's hook,
    small and frozen (it travels in the job to every worker). This one: every decision, its round's reward."""

    uneven: ClassVar[bool] = False  # its games' costs vary much (playouts, searches): ``Executor.parts`` splits finer

    def record(self, step: Step) -> None:
        """``step``'s recorded decisions: keep some (``step.keep``), with playouts (``step.branch``) or a choice of
        their own (``step.actions``)."""
        for i in range(len(step.obs)):
            step.keep(i)

    def sample(self, obs: Observation, action: int, reward: float, kept: Any) -> Sample:
        """A kept decision's sample: ``reward`` its round's, ``kept`` what ``record`` kept with it."""
        return Sample(obs, action, reward)

    def scoreless(self) -> Recorder:
        """This recorder less what only scores the games (``first_loop.same_games``)."""
        return self


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

    players: tuple[PlayerSpec, ...]  # NetSpec, SearchSpec
    games: tuple[GameSpec, ...]
    inference: Inference = FP32
    concurrency: int = 64
    reward: RewardModel | RewardModels | None = None  # needed when any game records trajectories
    recorder: Recorder = Recorder()  # what the recorded decisions keep
    explore_seed: int = 0
    device: str = "cpu"  # where the forward passes run ("cuda": the games stay on this worker's CPU core)
    num_rounds: int = 8
    init_points: int = 30

    def split(self, n: int) -> list[PlayJob]:
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
    player_stats: dict[str, float] = field(default_factory=dict)  # "<player index>.<name>": a searcher's counts

    @property
    def samples(self) -> list[Sample]:
        return [x for t in self.trajectories for x in t]

    @property
    def mean_batch(self) -> float:
        return self.forward_samples / max(1, self.forward_calls)

    def for_reward(self, k: int, recorder: Recorder) -> PlayResult:
        """The samples of reward model ``k`` of a play credited with ``RewardModels``, made by ``recorder`` (that
        model's); the rest of the result as it is."""
        def one(s: Sample) -> Sample:  # rewards of every model (per slot of a Pending): this model's
            kept = s.target.of_model(k) if isinstance(s.target, Pending) else s.target
            return recorder.sample(s.obs, s.action, float(s.reward[k]), kept)

        return replace(self, trajectories=[[one(s) for s in t] for t in self.trajectories])

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
            for k, v in r.player_stats.items():
                out.player_stats[k] = out.player_stats.get(k, 0) + v
        return out


class _Game:
    __slots__ = ("spec", "seats", "state", "rng", "trace", "decisions", "open", "own")

    def __init__(self, spec: GameSpec, job: PlayJob) -> None:
        self.spec = spec
        self.seats = spec.seats
        self.state = GameState(seed=spec.seed, num_rounds=job.num_rounds, init_points=job.init_points)
        self.rng = np.random.default_rng((job.explore_seed, spec.seed, *spec.seats))
        self.trace: list[tuple] = []  # (round, player, obs, action, what the recorder kept)
        self.decisions = 0
        self.open = 0  # reward slots of this game's decisions still open
        self.own: list[Link] = []  # slots this greedy game fills itself at the end of the round


class Step:
    """The recorded decisions of one play step, as the job's recorder sees them (it may change ``actions``)."""

    __slots__ = ("games", "obs", "values", "actions", "player", "players", "greedy", "playouts")

    def __init__(self, games: list[_Game], obs: list[Observation], values: np.ndarray, actions: list[int],
                 player: int, players: list, greedy: bool) -> None:
        self.games, self.obs, self.values, self.actions = games, obs, values, actions
        self.player, self.players, self.greedy = player, players, greedy
        self.playouts: list[Playout] = []

    def keep(self, i: int, kept: Any = None) -> None:
        """Record decision ``i`` with its action (as it is now) and ``kept``, for the recorder's ``sample``."""
        g = self.games[i]
        g.trace.append((g.state.round, g.state.player, self.obs[i], self.actions[i], kept))

    def branch(self, i: int, prior: np.ndarray | None, samples: int = 1) -> Pending:
        """Playouts of every legal action of decision ``i`` to the end of its round, on the true deal and ``samples -
        1`` redealt ones; their rewards fill the returned ``Pending``. A greedy game is itself one of them."""
        g, s = self.games[i], self.games[i].state
        actions = legal_list(self.obs[i])
        pending = Pending(actions, np.zeros(len(actions)) if prior is None else prior[actions].astype(np.float64),
                          samples)
        deals = [s] + [resample_hidden(s, s.player, g.rng) for _ in range(samples - 1)]
        links = [Link(g, pending, slot, s.round, s.player) for slot in range(len(actions))]
        skip = (actions.index(self.actions[i]), 0) if self.greedy else None
        if skip is not None:
            g.own.append(links[skip[0]])
        g.open += len(actions) * samples
        self.playouts += branch(deals, actions, g.seats, keys=links, skip=skip)
        return pending


def _outcome(g: _Game) -> GameOutcome:
    s = g.state
    rounds = []
    before = (s.init_points, s.init_points)
    for r in s.results:
        rounds.append((r.round, r.dealer, before, r.points))
        before = r.totals
    return GameOutcome(g.spec.seed, g.spec.seats, (s.points[0], s.points[1]), s.winner, tuple(rounds), g.decisions)


def _samples(g: _Game, job: PlayJob) -> list[Sample]:
    if not g.trace:
        return []
    if job.reward is None:
        raise ValueError("a game records trajectories but the play job has no reward model")
    per_round = job.reward.round_rewards(g.state.results, g.state.winner)
    if isinstance(job.reward, RewardModels):  # every model's rewards: each one's samples later (PlayResult.for_reward)
        return [Sample(o, a, per_round[rnd - 1][p], kept) for rnd, p, o, a, kept in g.trace]
    return [job.recorder.sample(o, a, per_round[rnd - 1][p], kept) for rnd, p, o, a, kept in g.trace]


def play_job(job: PlayJob) -> PlayResult:
    t0 = time.perf_counter()
    players = [spec.player(job.inference, job.device) for spec in job.players]
    pending = deque(job.games)
    active: list[_Game | Playout] = []  # games and their playouts still playing
    waiting: list[_Game] = []  # finished games whose playouts still play
    done: list[_Game] = []
    decisions, games_on = 0, 0
    while pending or active:
        while pending and games_on < job.concurrency:
            active.append(_Game(pending.popleft(), job))
            games_on += 1
        (pi, _), group = max(pending_groups(active).items(), key=lambda kv: len(kv[1]))
        player = players[pi]
        obs = [g.state.observation(g.state.player) for g in group]
        values = player.values(obs)
        actions = values.argmax(axis=1).tolist()
        eps = player.epsilon
        recorded = []  # indices in the group of the decisions of recording seats
        for i, (g, o) in enumerate(zip(group, obs)):
            if type(g) is _Game:  # playouts play greedily and record nothing
                if eps > 0.0 and g.rng.random() < eps:
                    legal = legal_list(o)
                    actions[i] = legal[int(g.rng.integers(len(legal)))]
                if g.spec.record[g.state.player]:
                    recorded.append(i)
        changed = False
        if recorded:
            step = Step([group[i] for i in recorded], [obs[i] for i in recorded], values[recorded],
                        [actions[i] for i in recorded], pi, players, eps == 0.0)
            job.recorder.record(step)
            for i, a in zip(recorded, step.actions):
                actions[i] = a
            active += step.playouts
            changed = bool(step.playouts)  # a koi-koi "stop" branch has already ended its round
        for g, a in zip(group, actions):
            s = g.state
            s.step(a)
            if type(g) is not _Game:
                changed = True
                continue
            g.decisions += 1
            if g.own and round_over(s, g.own[0].round):
                for link in g.own:
                    credit(link, round_reward(s, link.round, link.player, job.reward))
                g.own.clear()
            changed |= s.phase == GAME_OVER
        decisions += len(group)
        if changed or waiting:
            still = []
            for g in active:
                if type(g) is not _Game:
                    r = finished(g, job.reward)
                    if r is None:
                        still.append(g)
                    else:  # the playout's round is over: its reward goes to the decision it branched from
                        credit(g.key, r)
                elif g.state.phase == GAME_OVER:
                    waiting.append(g)
                else:
                    still.append(g)
            active = still
            for g in [g for g in waiting if not g.open]:
                waiting.remove(g)
                done.append(g)
                games_on -= 1
                report_progress(1)
        if not active and waiting:
            raise RuntimeError("play_job: playouts left without a game to finish them")
    done.sort(key=lambda g: (g.spec.seed, g.spec.seats))
    return PlayResult([_outcome(g) for g in done], [_samples(g, job) for g in done], decisions,
                      time.perf_counter() - t0, sum(p.forward_seconds for p in players),
                      sum(p.forward_samples for p in players), sum(p.forward_calls for p in players),
                      {f"{i}.{k}": v for i, p in enumerate(players) if hasattr(p, "stats")
                       for k, v in p.stats().items()})


def play_one_by_one(job: PlayJob) -> PlayResult:
    """The same games without batching (one game at a time, one decision per forward pass); for tests."""
    results = [play_job(replace(job, games=(g,), concurrency=1)) for g in job.games]
    return PlayResult.merge(results)
