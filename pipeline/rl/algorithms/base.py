"""What an RL algorithm is to the training loop: what self-play records for it, the loss its samples are fitted
with, and what that loss is measured in."""

from __future__ import annotations

from typing import Protocol

import torch
import torch.nn.functional as F

from ...net.model import KoiKoiNet
from ...params import RLParams
from ...selfplay.policies import NetSpec
from ...selfplay.rollouts import RolloutSpec


class Algorithm(Protocol):
    """One ``rl.algorithm`` (a module of this package, named in ``ALGORITHMS``)."""

    def rollout_spec(self, players: tuple[NetSpec, ...], sl: NetSpec,
                     variant: str) -> tuple[tuple[NetSpec, ...], RolloutSpec | None]:
        """A loop's players (``sl`` added where the algorithm needs it unseated) and the rollouts its games branch
        into (``None``: plain games)."""
        ...

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The loss of one mini-batch of one decision type (``learner.collate``'s tuple)."""
        ...

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        """What ``loss/<decision>`` is measured in, per decision type (``mse``: the units of the taken action's
        squared error)."""
        ...


def taken_action_mse(net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The Monte-Carlo loss: the squared error between the output at the taken action's token and the round
    reward (``batch``'s first four tensors: features, decision, action, reward)."""
    x, d, a, r = batch[:4]
    return F.mse_loss(net(x, d).gather(1, a.view(-1, 1)).squeeze(1).float(), r)
