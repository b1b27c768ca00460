"""Batched playouts: copies of a game played by networks to the end of the round, many at a time.

The one rollout engine of the project. RL's rollout targets (``batched.play_job``'s branches) and
the search agents (``pipeline.search``) both clone a position once per (action, deal) with :func:`branch` and
play the copies here:

- :func:`pending_groups`: the pending decisions of many games and playouts grouped by (player, decision
  type), so that one forward pass serves a whole group (``play_job`` mixes its games and their
  branches in these groups; :func:`play_out` serves every group of a pass, the largest first);
- :func:`play_out`: playouts played greedily to their end and each one's reward for the player it is
  played for: exact when the round ends, or, truncated after ``left`` of that player's further
  decisions, the learned value of the afterstate of the last of them (``value_model.ValueNet``), read
  from that player's observation.

Playing is greedy (arg-max of each player's values), so a playout's course depends on its deal and
the networks only, never on what it was batched with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..agents.base import Player
from ..engine import GameState, Observation
from .rewards import RewardModel, terminal_reward
from .rollouts import round_over, round_reward

Value = Callable[[Sequence[Observation]], np.ndarray]
"""A learned afterstate value: the expected round reward of each afterstate, from its player's observation."""


class Playout:
    """A copy of a game played out for player ``me``: to the end of round ``round``, or, when ``left`` is set,
    until ``me`` has made ``left`` more decisions. ``seats``: the index (into the players) of who plays each
    seat; ``key``: the caller's tag (which action, which decision it serves)."""

    __slots__ = ("state", "seats", "me", "round", "left", "key")

    def __init__(self, state: GameState, seats: tuple[int, int], me: int, rnd: int, left: int | None = None,
                 key: Any = None) -> None:
        self.state, self.seats, self.me, self.round, self.left, self.key = state, seats, me, rnd, left, key


def branch(deals: Sequence[GameState], actions: Sequence[int], seats: tuple[int, int] = (0, 0),
           left: int | None = None, keys: Sequence[Any] | None = None,
           skip: tuple[int, int] | None = None) -> list[Playout]:
    """Every deal cloned once per action, the action taken: playouts action-major (action ``i``, deal ``j``).

    The deals are copies of one position (the player to act and the round are theirs); the same deals
    serve every action, so differences between actions are not differences of luck. ``keys[i]`` tags
    action ``i``'s playouts (default ``i``); ``skip`` ``(i, j)`` leaves that one out (a game that is
    itself the playout of its action on its true deal).
    """
    out = []
    for i, a in enumerate(actions):
        for j, d in enumerate(deals):
            if (i, j) == skip:
                continue
            c = d.clone()
            c.step(a)
            out.append(Playout(c, seats, d.player, d.round, left, i if keys is None else keys[i]))
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


def play_out(players: Sequence[Player], items: Sequence[Playout], reward: RewardModel,
             value: Value | None = None) -> np.ndarray:
    """Play every playout to its end, greedily, and return each one's reward for its player (float64).

    Each pass serves every pending (player, decision type) group with one forward pass, the largest
    first. A playout with ``left`` set stops at its player's ``left``-th further decision: the action
    the player's network chooses there is valued by its afterstate, exactly if that ends the round,
    else by ``value`` (all such afterstates in one call at the end).
    """
    out = np.zeros(len(items))
    later: list[tuple[int, Observation]] = []  # truncated playouts whose afterstate the value prices
    live = list(range(len(items)))
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
        groups = pending_groups(_Indexed(i, items[i]) for i in still)
        stopped: set[int] = set()
        for (pi, _), group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            obs = [g.state.observation(g.state.player) for g in group]
            for g, a in zip(group, players[pi].values(obs).argmax(axis=1).tolist()):
                p, s = items[g.i], g.state
                if p.left is not None and s.player == p.me:
                    p.left -= 1
                    if p.left <= 0:  # its last decision: the afterstate is valued, not played on
                        stopped.add(g.i)
                        after = s.after(a)
                        r = terminal_reward(after, p.round, p.me, reward)
                        if r is None:
                            later.append((g.i, after.observation(p.me)))
                        else:
                            out[g.i] = r
                        continue
                s.step(a)
        live = [i for i in still if i not in stopped]
    if later:
        if value is None:
            raise ValueError("play_out: truncated playouts need a value to price their afterstates")
        idx, obs = zip(*later)
        out[list(idx)] = value(list(obs))
    return out


class _Indexed:
    """A live playout seen by :func:`pending_groups`, with its index in ``items``."""

    __slots__ = ("i", "state", "seats")

    def __init__(self, i: int, p: Playout) -> None:
        self.i, self.state, self.seats = i, p.state, p.seats
