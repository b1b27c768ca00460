"""``rl.algorithm: mc_dqn``, the paper's Monte-Carlo DQN (IV-C 2): plain epsilon-greedy games, every sample's
output at its taken action fitted to the round reward."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import DECISION_NAMES
from ...net.model import KoiKoiNet
from ...params import RLParams
from ...selfplay.branches import BranchSpec
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel
from .base import PolicyAlgorithm, taken_action_mse


@dataclass(frozen=True)
class MonteCarloDQN(PolicyAlgorithm):
    @classmethod
    def from_params(cls, p: RLParams) -> MonteCarloDQN:
        return cls()

    def branch_spec(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                    seed: int = 0) -> tuple[tuple[NetSpec, ...], BranchSpec | None]:
        return players, None

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return taken_action_mse(net, batch)

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        return dict.fromkeys(DECISION_NAMES, mse)
