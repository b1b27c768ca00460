"""Positions to distill from: every decision with a choice in games the teacher plays against itself (arg-max,
or with ``epsilon`` a uniform legal action), labelled by its softmax; the split is by game."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..agents.base import Player
from ..engine import GAME_OVER, GameState, Observation
from ..rollout.features import MAX_LEGAL, featurize


@dataclass
class Positions:
    """Labelled positions as in ``features.Features``; ``target``: the teacher's probabilities; ``game``: its index."""

    x: np.ndarray
    valid: np.ndarray
    tokens: np.ndarray
    g: np.ndarray
    decision: np.ndarray
    target: np.ndarray
    game: np.ndarray

    def __len__(self) -> int:
        return len(self.decision)

    def subset(self, keep: np.ndarray) -> Positions:
        return Positions(*(a[keep] for a in (self.x, self.valid, self.tokens, self.g, self.decision, self.target,
                                             self.game)))


def game_seed(seed: int, i: int) -> int:
    """The deal seed of game ``i`` of a run seeded ``seed`` (apart from the duels' and the RL loops' small seeds)."""
    return 7_000_000_000 + seed * 1_000_003 + i


def label_positions(observations: Sequence[Observation], values: np.ndarray, games: Sequence[int]) -> Positions:
    """``observations`` as positions labelled by the softmax of the teacher's ``values`` over their legal tokens."""
    f = featurize(observations, MAX_LEGAL)
    logits = np.where(f.valid, np.take_along_axis(values, f.tokens, axis=1), -np.inf)
    p = np.exp(logits - logits.max(1, keepdims=True))
    return Positions(f.x, f.valid, f.tokens, f.g, f.decision, (p / p.sum(1, keepdims=True)).astype(np.float32),
                     np.asarray(games, dtype=np.int64))


def teacher_positions(teacher: Player, games: int, seed: int, epsilon: float = 0.0, concurrency: int = 128,
                      num_rounds: int = 8, init_points: int = 30,
                      keep_observations: Callable[[int], bool] | None = None,
                      on_game: Callable[[], None] | None = None) -> tuple[Positions, list[Observation]]:
    """Play ``games`` games of ``teacher`` against itself; their positions, and the observations of those kept."""
    rng = np.random.default_rng(seed)
    todo = iter(range(games))
    active: list[tuple[int, GameState]] = []
    parts: list[tuple] = []
    kept: list[Observation] = []
    while True:
        while len(active) < concurrency and (i := next(todo, None)) is not None:
            active.append((i, GameState(seed=game_seed(seed, i), num_rounds=num_rounds, init_points=init_points)))
        if not active:
            break
        kinds = [s.phase for _, s in active]  # the decision type each game waits on
        kind = max(sorted(set(kinds)), key=kinds.count)
        group = [(i, s) for (i, s), k in zip(active, kinds) if k == kind]
        obs = [s.observation(s.player) for _, s in group]
        values = teacher.values(obs)
        actions = values.argmax(axis=1)
        legal = np.isfinite(values)
        explore = np.flatnonzero(rng.random(len(group)) < epsilon) if epsilon > 0 else ()
        for j in explore:
            actions[j] = rng.choice(np.flatnonzero(legal[j]))
        chosen = np.flatnonzero(legal.sum(1) >= 2)
        if len(chosen):
            sub = [obs[j] for j in chosen]
            games_of = [group[j][0] for j in chosen]
            parts.append(label_positions(sub, values[chosen], games_of))
            if keep_observations is not None:
                kept += [o for o, gi in zip(sub, games_of) if keep_observations(int(gi))]
        for (_, s), a in zip(group, actions):
            s.step(int(a))
        still = [(i, s) for i, s in active if s.phase != GAME_OVER]
        if on_game is not None:
            for _ in range(len(active) - len(still)):
                on_game()
        active = still
    if not parts:
        raise ValueError("teacher_positions: the games had no decision with two legal actions")
    return Positions(*(np.concatenate([getattr(q, f.name) for q in parts]) for f in fields(Positions))), kept
