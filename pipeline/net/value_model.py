"""The afterstate value network: ``ValueNet(x) -> (B, 2)``, the round reward a position promises the player
who just acted, in both reward models' units (RL-Point's points, RL-WP's win probability).

Its samples and fit are RL's (``value.samples``, ``value.fit``); players use it through
``value.lookahead``. It shares the policy network's ``Trunk`` and input encoding.
"""

from __future__ import annotations

import torch
from torch import nn

from .model import ModelConfig, Trunk

HEADS = ("point", "wp")
"""The value's outputs, one per reward model (``rl.rewards.REWARD_MODELS``)."""


class ValueNet(nn.Module):
    """``forward(x (B, F, T)) -> (B, 2)``: the expected round reward of an afterstate, per reward model.

    A ``model.Trunk`` (with the yaku products), mean- and max-pooled over the tokens, then a small MLP.
    ``scale`` holds each head's target standard deviation, so the outputs are in reward units while the
    network fits targets of unit variance.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.trunk = Trunk(config, yaku_cross=True)
        w = config.width
        self.head = nn.Sequential(nn.Linear(2 * w, w), nn.ReLU(), nn.Linear(w, len(HEADS)))
        self.register_buffer("scale", torch.ones(len(HEADS)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.trunk(x.transpose(1, 2))  # (B, T, W)
        pooled = torch.cat([h.mean(1), h.amax(1)], dim=1)
        return self.head(pooled).float() * self.scale
