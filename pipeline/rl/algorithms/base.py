"""What an RL algorithm is to the training loop: the network it fits and how that network plays, what self-play
records for it, the loss its samples are fitted with, and what that loss is measured in.

``PolicyAlgorithm`` is what the algorithms that fit the policy network itself share (``rollout_pi``, ``mc_dqn``,
``expert_it``):
the learner's network is the policy."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from ...agents.base import PlayerSpec
from ...net.inference import FP32, Inference
from ...net.model import KoiKoiNet
from ...net.modelio import load_model, save_model
from ...params import RLParams
from ...selfplay.batched import PlayResult, Sample
from ...selfplay.branches import BranchSpec
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel


class Algorithm(Protocol):
    """One ``rl.algorithm`` (a module of this package, named in ``ALGORITHMS``)."""

    def branch_spec(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                    seed: int = 0) -> tuple[tuple[PlayerSpec, ...], BranchSpec | None]:
        """A loop's players (``sl`` or a searcher added where the algorithm needs one unseated) and the branches or
        searches its games make (``None``: plain games); ``reward`` and ``seed``: the loop's (a searcher's)."""
        ...

    def fitted(self, result: PlayResult) -> list[Sample]:
        """The samples of a loop's games that its fit trains on."""
        ...

    def after_fit(self, net: nn.Module, result: PlayResult, seed: int, inference: Inference = FP32) -> dict[str, float]:
        """Called after a loop's fit with the fitted network, the loop's games and the players' inference setup;
        returns metrics to log."""
        ...

    def state(self) -> dict:
        """What the algorithm keeps between loops, saved in the phase's checkpoint."""
        ...

    def load_state(self, state: dict) -> None:
        """Restore ``state()`` from a checkpoint."""
        ...

    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The loss of one mini-batch of one decision type (``learner.collate``'s tuple)."""
        ...

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        """What ``loss/<decision>`` is measured in, per decision type (``mse``: the units of the taken action's
        squared error)."""
        ...

    def initial_net(self, sl: KoiKoiNet, p: RLParams) -> nn.Module:
        """The network phase 1 starts fitting (its architecture also receives a checkpoint's weights)."""
        ...

    def learned_net(self, model_dir: Path) -> nn.Module:
        """The fitted network of a saved model directory of this algorithm (phase 2 goes on from phase 1's)."""
        ...

    def player(self, net: nn.Module, sl: NetSpec, name: str, variant: str, epsilon: float = 0.0,
               training: bool = False) -> PlayerSpec:
        """How the learner's ``net`` plays (``training``: the behaviour of its training games, else greedy)."""
        ...

    def save(self, net: nn.Module, sl: KoiKoiNet, out_dir: Path, meta: dict, variant: str) -> None:
        """Write the learner as a model directory any agent path plays (``agents.load_agent``)."""
        ...


class PolicyAlgorithm:
    """The hooks of an algorithm that fits the policy network itself (from the SL weights, or fresh ones)."""

    def fitted(self, result: PlayResult) -> list[Sample]:
        return result.samples

    def after_fit(self, net: nn.Module, result: PlayResult, seed: int, inference: Inference = FP32) -> dict[str, float]:
        return {}

    def state(self) -> dict:
        return {}  # nothing kept between loops

    def load_state(self, state: dict) -> None:
        return None

    def initial_net(self, sl: KoiKoiNet, p: RLParams) -> nn.Module:
        if p.init == "scratch":
            torch.manual_seed(p.seed)
            return KoiKoiNet(sl.config)  # the SL architecture, fresh weights (the paper's setting)
        return sl

    def learned_net(self, model_dir: Path) -> nn.Module:
        return load_model(model_dir)[0]

    def player(self, net: nn.Module, sl: NetSpec, name: str, variant: str, epsilon: float = 0.0,
               training: bool = False) -> PlayerSpec:
        return NetSpec.from_net(net, name, epsilon)

    def save(self, net: nn.Module, sl: KoiKoiNet, out_dir: Path, meta: dict, variant: str) -> None:
        save_model(net, out_dir, meta)


def taken_action_mse(net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The Monte-Carlo loss: the squared error between the output at the taken action's token and the round
    reward (``batch``'s first four tensors: features, decision, action, reward)."""
    x, d, a, r = batch[:4]
    return F.mse_loss(net(x, d).gather(1, a.view(-1, 1)).squeeze(1).float(), r)


def centred_logit_mse(out: torch.Tensor, target: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """The squared error between the outputs and the target logits, both centred over the ``support`` tokens (the
    mean over them, then over the batch): a logit target says how much likelier each action is than the others."""
    n = support.sum(1, keepdim=True)
    centred = out - out.masked_fill(~support, 0.0).sum(1, keepdim=True) / n
    return ((centred - target).square().masked_fill(~support, 0.0).sum(1) / n.squeeze(1)).mean()
