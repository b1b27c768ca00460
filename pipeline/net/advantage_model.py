"""The advantage network of ``rl.algorithm: advantage``: ``AdvantageNet(x, d) -> (B, 50)``, how much better each
action is than the SL policy's average action, in round-reward units.

One ``model.Trunk`` (with the yaku products) shared by the three decision types, a linear output per token and
decision type (the advantage ``A``), and a pooled head per decision type (the state value ``V``, used only to
fit ``A``: ``Q(s, a) = V(s) + A(s, a) - mean over the legal actions of A(s, .)``, the dueling form). ``A``'s
output layer starts at zero, so an untrained advantage plays exactly the SL policy.
"""

from __future__ import annotations

import torch
from torch import nn

from .encoding import ROWS
from .model import NUM_DECISIONS, ModelConfig, Trunk

LEGAL_ROW = ROWS["legal"]  # the feature row that marks the legal actions' tokens


class AdvantageNet(nn.Module):
    """``forward(x (B, F, T), decision (B,)) -> (B, T)``: the advantage of every token's action (float32)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.trunk = Trunk(config, yaku_cross=True)
        w = config.width
        self.adv = nn.Linear(w, NUM_DECISIONS)
        self.value = nn.Sequential(nn.Linear(2 * w, w), nn.ReLU(), nn.Linear(w, NUM_DECISIONS))
        nn.init.zeros_(self.adv.weight)  # an untrained advantage is SL's policy, not noise around it
        nn.init.zeros_(self.adv.bias)

    def both(self, x: torch.Tensor, decision: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(A (B, T), V (B,))``, float32."""
        h = self.trunk(x.transpose(1, 2))  # (B, T, W)
        d = decision.view(-1, 1)
        a = self.adv(h).gather(2, d.view(-1, 1, 1).expand(-1, h.shape[1], 1)).squeeze(2)
        v = self.value(torch.cat([h.mean(1), h.amax(1)], dim=1)).gather(1, d).squeeze(1)
        return a.float(), v.float()

    def forward(self, x: torch.Tensor, decision: torch.Tensor) -> torch.Tensor:
        return self.both(x, decision)[0]

    def q_taken(self, x: torch.Tensor, decision: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """``V(s) + A(s, a) - mean_legal A(s, .)`` at the taken actions ``(B,)``: what the round reward is fitted by."""
        a, v = self.both(x, decision)
        legal = x[:, LEGAL_ROW, :] > 0.5
        mean = a.masked_fill(~legal, 0.0).sum(1) / legal.sum(1).clamp(min=1)
        return v + a.gather(1, action.view(-1, 1)).squeeze(1) - mean
