"""The judge: every legal move's P(win the game), by playouts on shared deals (their luck cancels from a cost)."""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.base import Player, legal_list, observation_rng
from ..agents.specs import is_search
from ..engine import GameState, Observation, RecordError, determinize, load_record, replay_record
from ..lineup.loader import load_agent
from ..net.model_dir import is_model_dir
from ..search.spec import parse_search, rollout_path
from ..selfplay.playout import branch, play_out
from ..selfplay.rewards import RewardModel
from ..value.winprob import WinProbTable

Z95 = 1.96  # a two-sided 95% interval of a mean over the deals


@dataclass(frozen=True)
class Game:
    """A finished game: its decisions (observation, action), each round's start (round, points, dealer), outcome."""

    path: str
    names: tuple[str, str]
    decisions: tuple[tuple[Observation, int], ...]
    starts: tuple[tuple[int, tuple[int, int], int], ...]
    winner: int | None
    points: tuple[int, int]


def read_game(path: str | Path, rec: dict[str, Any] | None = None) -> Game:
    """The game of a record file (or of ``rec``, its content), replayed; ``RecordError`` unless a finished game."""
    rec = load_record(path) if rec is None else rec
    decisions: list[tuple[Observation, int]] = []
    starts: list[tuple[int, tuple[int, int], int]] = []
    last: list[GameState] = []

    def visit(state: GameState, action: int) -> None:
        if not starts or starts[-1][0] != state.round:
            starts.append((state.round, (state.points[0], state.points[1]), state.dealer))
        decisions.append((state.observation(state.player), action))
        last[:] = [state]

    report = replay_record(rec, path, visit)
    problem = (report.mismatches + report.unfinished)[:1]
    if problem:  # the line names the file first
        raise RecordError(path, "-", problem[0][len(str(path)) + 2:])
    if not last or not last[0].is_over:
        raise RecordError(path, "-", "the record ends before the game does: only a finished game is analysed")
    s, info = last[0], rec["info"]
    names = (str(info.get("player1Name", "Player1")), str(info.get("player2Name", "Player2")))
    return Game(str(path), names, tuple(decisions), tuple(starts), s.winner, (s.points[0], s.points[1]))


class Judge:
    """Per observation, every legal action's P(win the game) on each of ``deals`` shared deals."""

    def __init__(self, rollout: Player, table: WinProbTable, deals: int = 32, seed: int = 0) -> None:
        if deals < 2:
            raise ValueError(f"the judge needs deals >= 2 for an interval from the deals, got {deals}")
        self.rollout, self.table, self.deals, self.seed = rollout, table, deals, seed
        self.reward = RewardModel("wp", 1.0, table)  # P(win the game) itself
        self.playouts = 0

    def values(self, observations: Sequence[Observation]) -> list[np.ndarray]:
        items, spans = [], []
        for obs in observations:
            rng = observation_rng(self.seed, obs)
            deals = [determinize(obs, rng) for _ in range(self.deals)]
            legal = legal_list(obs)
            spans.append((len(items), len(legal)))
            items += branch(deals, legal)  # action-major: action i's deals at i * deals ...
        v = play_out([self.rollout], items, self.reward)
        self.playouts += len(items)
        return [v[at:at + n * self.deals].reshape(n, self.deals) for at, n in spans]


def verdict(obs: Observation, action: int, values: np.ndarray) -> dict[str, Any]:
    """One decision judged: the chosen and best actions, their values, the cost and its 95% interval."""
    legal = legal_list(obs)
    mean = values.mean(axis=1)
    c = legal.index(action)
    b = c if mean[c] >= mean.max() else int(np.argmax(mean))
    diff = values[b] - values[c]
    half = Z95 * float(diff.std(ddof=1)) / math.sqrt(diff.size)
    cost = float(diff.mean())
    return {"chosen": action, "best": legal[b], "value": round(float(mean[c]), 4),
            "best_value": round(float(mean[b]), 4), "cost": round(cost, 4),
            "ci95": [round(cost - half, 4), round(cost + half, 4)],
            "options": [{"action": a, "value": round(float(m), 4)} for a, m in zip(legal, mean)]}


def judge_game(game: Game, judge: Judge, players: Sequence[int],
               progress: Callable[[int, int], None] | None = None) -> dict[int, dict[str, Any]]:
    """``players``' decisions judged, by index; a round's decisions in the same playout passes."""
    todo = [i for i, (o, _) in enumerate(game.decisions) if o.player in players and o.legal_mask & (o.legal_mask - 1)]
    rounds = sorted({game.decisions[i][0].round for i in todo})
    out: dict[int, dict[str, Any]] = {}
    for k, r in enumerate(rounds):
        batch = [i for i in todo if game.decisions[i][0].round == r]
        for i, v in zip(batch, judge.values([game.decisions[i][0] for i in batch])):
            out[i] = verdict(*game.decisions[i], v)
        if progress is not None:
            progress(k + 1, len(rounds))
    return out


def load_judge(spec: str, seed: int = 0) -> Judge:
    """The judge of a ``search:`` spec: its rollout policy, table and deals; ``ValueError`` (one line)."""
    from ..net.inference import FP32  # torch: loaded when a judge is
    from ..search.agent import rollout_spec, search_reward

    if not is_search(spec):
        raise ValueError(f"agent {spec!r}: the judge is a searcher: give a search: spec, e.g. "
                         "search:models/rl/wp (docs/analysis.md)")
    model, options = parse_search(spec)
    if options.deals < 2:
        raise ValueError(f"agent {spec!r}: the judge needs deals >= 2 (its intervals come from the deals)")
    if not is_model_dir(Path(model)):
        raise ValueError(f"agent {spec!r}: {model} is not a model directory")
    table = search_reward(spec, replace(options, reward="wp")).table
    path = rollout_path(model, options.rollout)
    rollout = (load_agent(model, seed=seed, inference="fp32").player if path is None
               else rollout_spec(spec, path).player(FP32, "cpu"))
    return Judge(rollout, table, options.deals, seed)
