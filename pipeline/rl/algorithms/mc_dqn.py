"""``rl.algorithm: mc_dqn``, the paper's Monte-Carlo DQN (IV-C 2): plain epsilon-greedy games recording Monte-Carlo
samples (``batched.Recorder``), every sample's output at its taken action fitted to the round reward."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import DECISION_NAMES
from ...net.model import KoiKoiNet
from ...params import RLParams
from .base import Algorithm, taken_action_mse


@dataclass(frozen=True)
class MonteCarloDQN(Algorithm):
    @classmethod
    def from_params(cls, p: RLParams) -> MonteCarloDQN:
        return cls()

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return taken_action_mse(net, batch)

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        return dict.fromkeys(DECISION_NAMES, mse)
