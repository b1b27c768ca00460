"""Batched self-play: many games advance together and every forward pass serves a whole batch.

At each step the pending decisions are grouped by (player network, decision type); the largest
group is encoded as one batch and evaluated in one forward pass, and each of its games takes one
step. Games that wait (a pick while most games discard) keep waiting until their group is the
largest, so batches stay large. New games start as others finish, up to ``concurrency`` at once.

Exploration draws come from one RNG per game, seeded by the job's ``explore_seed`` and the game's
seed, so a game's course depends only on its seed and the networks, never on what it was batched
with: batched play reproduces one-game-at-a-time play exactly (tests/selfplay/test_selfplay.py).

Branch targets (``PlayJob.branches``, the ``rollout_pi`` algorithm): at a recorded decision with two
or more legal actions (each with probability ``branches.fraction``), the game's full state is cloned
once per legal action, the action is taken, and the clone is played greedily by the same players to
the end of the round: playouts of the shared playout engine (``playout``), which join the batches
like any game. The round rewards of the
branches share the deal, the stock order and the opponent's hand, so their differences measure the
actions and little else; the true state is only used for these training targets, never by a player.
The sample's target is ``softmax(prior + reward / temperature)`` over the legal actions, ``prior``
being the recording player's own outputs at the decision (a soft policy-iteration step), or those of
an anchor network (``BranchSpec.anchor``: the SL policy, so the targets do not compound from loop
to loop and the learner stays a KL-regularised improvement of SL).

Searched targets (``BranchSpec.search``, the ``expert_it`` algorithm): the picked decisions are searched by the
job's searcher instead (``branches.search_targets``, all of a step's at once), the game plays the search's choice,
and the sample's target is the prior tilted by each candidate's searched gain.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ..agents.base import PlayerSpec, legal_list
from ..engine import GAME_OVER, GameState, Observation, resample_hidden
from ..net.inference import FP32, Inference
from .branches import BranchSpec, Link, Pending, credit, round_over, round_reward, search_targets, target
from .playout import Playout, branch, finished, pending_groups
from .reporting import report_progress
from .rewards import RewardModel, RewardModels


class Sample(NamedTuple):
    """One decision of a recorded player: what it saw, what it did, the reward of that round.

    ``target`` (branch targets only): a probability per token (float32 ``(50,)``, 0 where illegal).
    """

    obs: Observation
    action: int
    reward: float
    target: np.ndarray | None = None


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
    branches: BranchSpec | None = None  # None: Monte-Carlo samples (the round reward of the taken action)
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
    player_stats: dict[str, float] = field(default_factory=dict)  # "<player index>.<name>": a searcher's counts

    @property
    def samples(self) -> list[Sample]:
        return [x for t in self.trajectories for x in t]

    @property
    def mean_batch(self) -> float:
        return self.forward_samples / max(1, self.forward_calls)

    def for_reward(self, k: int, branches: BranchSpec | None) -> PlayResult:
        """The samples of reward model ``k`` of a play credited with ``RewardModels`` (``branches``: that model's
        targets, its temperature; None: Monte-Carlo samples); the rest of the result as it is."""
        def one(s: Sample) -> Sample:
            if isinstance(s.target, Pending):  # rewards of every model per slot: this model's, then its target
                p = s.target.of_model(k)
                return Sample(s.obs, s.action, p.reward(p.actions.index(s.action)),
                              target(p, branches.temperature, branches.loss))
            return Sample(s.obs, s.action, float(s.reward[k]))

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
        self.trace: list[tuple] = []  # (round, player, obs, action[, Pending])
        self.decisions = 0
        self.open = 0  # reward slots of this game's decisions still open
        self.own: list[Link] = []  # slots this greedy game fills itself at the end of the round


def _branch(g: _Game, obs: Observation, prior: np.ndarray, taken: int, greedy: bool,
            job: PlayJob) -> tuple[Pending, list[Playout]]:
    """Playouts of every branched action. A greedy game is itself the playout of the action it takes."""
    actions = legal_list(obs)
    k = job.branches.samples
    base = np.zeros(len(actions)) if job.branches.flat else prior[actions].astype(np.float64)
    pending = Pending(actions, base, k)
    s = g.state
    deals = [s] + [resample_hidden(s, s.player, g.rng) for _ in range(k - 1)]  # the same deals for every action
    links = [Link(g, pending, slot, s.round, s.player) for slot in range(len(actions))]
    skip = (actions.index(taken), 0) if greedy else None
    if skip is not None:
        g.own.append(links[skip[0]])
    g.open += len(actions) * k
    return pending, branch(deals, actions, g.seats, keys=links, skip=skip)


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
    if job.branches is not None:
        if isinstance(job.reward, RewardModels):  # targets per model later (PlayResult.for_reward)
            return [Sample(o, a, 0.0, p) for _, _, o, a, p in g.trace]
        temperature, loss = job.branches.temperature, job.branches.loss
        return [Sample(o, a, 0.0, None) if p is None else Sample(o, a, p.reward(p.actions.index(a)),
                                                                    target(p, temperature, loss))
                for _, _, o, a, p in g.trace]
    per_round = job.reward.round_rewards(g.state.results, g.state.winner)
    return [Sample(o, a, per_round[rnd - 1][p]) for rnd, p, o, a in g.trace]


def play_job(job: PlayJob) -> PlayResult:
    """Play every game of ``job`` in this process (what one worker does)."""
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
        changed = False
        branching = []  # indices in the group of decisions that branch
        for i, (g, o) in enumerate(zip(group, obs)):
            if type(g) is _Game:  # playouts play greedily and record nothing
                if eps > 0.0 and g.rng.random() < eps:
                    legal = legal_list(o)
                    actions[i] = legal[int(g.rng.integers(len(legal)))]
                if g.spec.record[g.state.player]:
                    if job.branches is None:
                        g.trace.append((g.state.round, g.state.player, o, actions[i]))
                    elif job.branches.picks(o, g.rng):
                        branching.append(i)
        if branching and job.branches.search is not None:  # expert_it: the search's choice, its gains the target
            found = search_targets(players[job.branches.search], [obs[i] for i in branching])
            for i, (a, p) in zip(branching, found):
                if pi == 0:  # the searched network's own seat plays the choice (an SL seat keeps its move)
                    actions[i] = a
                group[i].trace.append((group[i].state.round, group[i].state.player, obs[i], actions[i], p))
        elif branching:
            prior = values[branching]
            if job.branches.anchor is not None:  # the targets tilt the anchor's outputs, not the player's
                prior = players[job.branches.anchor].values([obs[i] for i in branching])
            for i, q in zip(branching, prior):
                g = group[i]
                p, kids = _branch(g, obs[i], q, actions[i], eps == 0.0, job)
                g.trace.append((g.state.round, g.state.player, obs[i], actions[i], p))
                active += kids
            changed = True  # a koi-koi "stop" branch has already ended its round
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
    result = PlayResult(outcomes=[_outcome(g) for g in done], trajectories=[_samples(g, job) for g in done],
                        decisions=decisions)
    result.seconds = time.perf_counter() - t0
    result.forward_seconds = sum(p.forward_seconds for p in players)
    result.forward_samples = sum(p.forward_samples for p in players)
    result.forward_calls = sum(p.forward_calls for p in players)
    result.player_stats = {f"{i}.{k}": v for i, p in enumerate(players) if hasattr(p, "stats")
                           for k, v in p.stats().items()}
    return result


def play_one_by_one(job: PlayJob) -> PlayResult:
    """The same games without batching (one game at a time, one decision per forward pass); for tests."""
    results = [play_job(replace(job, games=(g,), concurrency=1)) for g in job.games]
    return PlayResult.merge(results)
