"""The samples of the afterstate value (``value_model.ValueNet``): what a position is worth to the player
who just acted.

``ValueNet`` maps a player's observation of an afterstate (``GameState.after``: the position right after
the player's action, before the stock card is turned, the next deal is dealt or the next decision is
made) to the round reward it expects, in both reward models' units at once: RL-Point's points and
RL-WP's win probability (``rewards.RewardModel``). An afterstate depends only on what the player can
see, so the value of every legal action is one forward pass over its afterstate (``lookahead``), with no
hidden card and no rollout: TD-Gammon's 1-ply search, and the move evaluation of the Moska paper.

The samples are the afterstates of the actions taken in self-play, each labelled with the reward of
its round for the player who acted (a Monte-Carlo target; the network averages over the draws and the
opponent's replies the targets saw).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..engine import Observation, RoundResult, determinize
from ..net.encoding import encode
from ..net.value_model import HEADS, ValueNet
from ..selfplay.batched import PlayResult
from ..selfplay.rewards import RewardModel, terminal_reward


@dataclass(frozen=True)
class ValueSample:
    """An afterstate as its player saw it, and the reward of its round for that player, per head."""

    obs: Observation
    point: float
    wp: float

    def targets(self) -> tuple[float, float]:
        return self.point, self.wp


def round_targets(result: PlayResult, models: Sequence[RewardModel]) -> list[dict[tuple[int, int], tuple]]:
    """Per game of ``result``: ``{(round, player): (reward under each of models)}`` from its outcome."""
    out = []
    for o in result.outcomes:
        last = len(o.rounds) - 1
        per = {}
        for i, (rnd, dealer, before, pts) in enumerate(o.rounds):
            taker = 0 if pts[0] > 0 else 1  # points only change hands; the taker deals next
            r = RoundResult(rnd, dealer, None, (), taker, pts, (before[0] + pts[0], before[1] + pts[1]), 0)
            for p in (0, 1):
                per[(rnd, p)] = tuple(m.reward(r, p, i == last, o.winner) for m in models)
        out.append(per)
    return out


def value_samples(result: PlayResult, point: RewardModel, wp: RewardModel, seed: int) -> list[ValueSample]:
    """The afterstates of every recorded decision of ``result`` with their round's rewards.

    Afterstates that end the round are left out: their reward is known exactly (``lookahead``).
    """
    rng = np.random.default_rng(seed)
    out = []
    for traj, targets in zip(result.trajectories, round_targets(result, (point, wp)), strict=True):
        for sample in traj:
            obs = sample.obs
            after = determinize(obs, rng).after(sample.action)
            if len(after.results) >= obs.round:  # the round ended: no value to learn
                continue
            pt, w = targets[(obs.round, obs.player)]
            out.append(ValueSample(after.observation(obs.player), pt, w))
    return out


def encode_samples(samples: Sequence[ValueSample]) -> tuple[torch.Tensor, torch.Tensor]:
    """Features ``(B, F, T)`` and targets ``(B, 2)`` of a batch."""
    x = torch.from_numpy(encode([s.obs for s in samples]))
    y = torch.tensor([s.targets() for s in samples], dtype=torch.float32)
    return x, y


__all__ = ["HEADS", "ValueNet", "ValueSample", "encode_samples", "round_targets", "terminal_reward",
           "value_samples"]
