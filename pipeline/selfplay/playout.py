"""Batched playouts: copies of a game played greedily by networks to the end of the round, many at a time.

The one playout engine: RL's branch targets (``batched.play_job``) and the search agents (``pipeline.search``)
clone a position per (action, deal) with ``branch`` and play the copies here, one forward pass per
(player, decision type) group. Greedy play makes a playout's course independent of its batch.
"""

from __future__ import annotations

import gc
import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ..agents.base import Player
from ..engine import GAME_OVER, GameState
from ..engine.deal import random_deal
from .rewards import RewardModel

# A playout never plays the next round, so every copy is dealt this one deal there: no generator and shuffle of its
# own (about a tenth of a searched game's time, docs/search.md).
NEXT_ROUND = itertools.repeat(random_deal(np.random.default_rng(0))[0])


def log_prior(scores: np.ndarray) -> np.ndarray:
    """The network's log-softmax over the legal tokens (``scores``: masked values, -inf where illegal)."""
    s = scores.astype(np.float64)
    legal = np.isfinite(s)
    out = np.full(s.shape, -np.inf)
    x = s[legal] - s[legal].max()
    out[legal] = x - math.log(np.exp(x).sum())
    return out


class Pending:
    """A decision whose branches are playing: one reward slot per legal action, summed over ``samples`` deals."""

    __slots__ = ("actions", "prior", "rewards", "samples")

    def __init__(self, actions: list[int], prior: np.ndarray, samples: int = 1) -> None:
        self.actions, self.prior, self.samples = actions, prior, samples
        self.rewards = [0.0] * len(actions)

    def reward(self, slot: int) -> float:
        """The mean round reward of the slot's action over its deals."""
        return self.rewards[slot] / self.samples

    def of_model(self, k: int) -> Pending:
        """A filled copy with reward model ``k``'s rewards, of a decision credited by several (``RewardModels``)."""
        p = Pending(self.actions, self.prior, self.samples)
        p.rewards = [float(r[k]) for r in self.rewards]
        return p


class Link(NamedTuple):
    """Where a branch's round reward goes: its game's decision, the slot of its action, whose reward."""

    game: Any  # the game that branched (selfplay._Game)
    pending: Pending
    slot: int
    round: int
    player: int


def round_reward(s: GameState, rnd: int, player: int, reward: RewardModel) -> float:
    """``player``'s reward for round ``rnd``, which state ``s`` has just finished (the game's outcome if it ended)."""
    over = s.phase == GAME_OVER and len(s.results) == rnd
    return reward.reward(s.results[rnd - 1], player, over, s.winner)


def credit(link: Link, reward: float) -> None:
    game, pending, slot, _, _ = link
    pending.rewards[slot] += reward
    game.open -= 1


def round_over(s: GameState, rnd: int) -> bool:
    return s.round != rnd or s.phase == GAME_OVER


class Playout:
    """A copy of a game played out for player ``me`` to the end of round ``round``. ``seats``: the index (into
    the players) of who plays each seat; ``key``: the caller's tag (which action, which decision it serves)."""

    __slots__ = ("state", "seats", "me", "round", "key")

    def __init__(self, state: GameState, seats: tuple[int, int], me: int, rnd: int, key: Any = None) -> None:
        self.state, self.seats, self.me, self.round, self.key = state, seats, me, rnd, key


def branch(deals: Sequence[GameState], actions: Sequence[int], seats: tuple[int, int] = (0, 0),
           keys: Sequence[Any] | None = None,
           skip: tuple[int, int] | None = None) -> list[Playout]:
    """Every deal (copies of one position) cloned once per action, the action taken: playouts action-major.
    ``keys[i]`` tags action ``i``'s playouts (default ``i``); ``skip`` ``(i, j)`` leaves that one out (a game that
    is itself the playout of its action on its true deal)."""
    out = []
    for i, a in enumerate(actions):
        for j, d in enumerate(deals):
            if (i, j) == skip:
                continue
            c = d.clone(deals=NEXT_ROUND)
            c.step(a)
            out.append(Playout(c, seats, d.player, d.round, i if keys is None else keys[i]))
    return out


def pending_groups(items: Sequence[Any]) -> dict[tuple[int, int], list[Any]]:
    """``items`` (anything with ``state`` and ``seats``) grouped by (player index, decision type), first seen first."""
    groups: dict[tuple[int, int], list[Any]] = {}
    for it in items:
        s = it.state
        groups.setdefault((it.seats[s.player], s.phase), []).append(it)
    return groups


def finished(p: Playout, reward: RewardModel) -> float | None:
    """The reward of a playout whose round has ended, for its player; None while it goes on."""
    if not round_over(p.state, p.round):
        return None
    return round_reward(p.state, p.round, p.me, reward)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block: playouts make no cycles, yet their many short-lived objects
    trigger collections that walk every live object (26-31 ms a searched decision with it, 18-23 without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def play_out(players: Sequence[Player], items: Sequence[Playout], reward: RewardModel) -> np.ndarray:
    """Play every playout to its end, greedily, and return each one's reward for its player (float64). One
    ``values`` call per player and pass, whatever the decision types: the rollout policy's cost is per call."""
    out = np.zeros(len(items))
    live = list(range(len(items)))
    with _collector_paused():
        while live:
            still = []
            for i in live:
                r = finished(items[i], reward)
                if r is None:
                    still.append(i)
                else:
                    out[i] = r
            if not still:
                break
            groups: dict[int, list[Playout]] = {}
            for i in still:
                s = items[i].state
                groups.setdefault(items[i].seats[s.player], []).append(items[i])
            for pi, group in groups.items():
                chosen = []
                for g in group:
                    legal = g.state.legal_mask()
                    if legal & (legal - 1):
                        chosen.append(g)
                    else:  # one legal action (a last card to discard): the arg-max of any values, without them
                        g.state.step(legal.bit_length() - 1)
                if chosen:
                    obs = [g.state.observation(g.state.player) for g in chosen]
                    for g, a in zip(chosen, players[pi].values(obs).argmax(axis=1).tolist()):
                        g.state.step(a)
            live = still
    return out
