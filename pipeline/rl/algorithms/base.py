"""What an RL algorithm is to the training loop (``Algorithm``): the network it fits and how it plays, what
self-play records for it (its ``Recorder``), its loss and units; ``TargetRecorder``: the recorders of targets."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...agents.base import PlayerSpec
from ...engine import Observation
from ...net.encoding import NUM_TOKENS
from ...net.inference import FP32, Inference
from ...net.model import KoiKoiNet
from ...net.modelio import load_model, save_model
from ...params import RLParams
from ...selfplay.batched import PlayResult, Recorder, Sample, Step
from ...selfplay.playout import Pending
from ...selfplay.policies import NetSpec
from ...selfplay.rewards import RewardModel


class Algorithm(ABC):
    """One ``rl.algorithm`` (a module of this package, named in ``ALGORITHMS``)."""

    def recorder(self, players: tuple[NetSpec, ...], sl: NetSpec, variant: str, reward: RewardModel | None = None,
                 seed: int = 0) -> tuple[tuple[PlayerSpec, ...], Recorder]:
        """A loop's players (``sl`` or a searcher added where the algorithm needs one unseated) and what its games
        record, the play job's one hook (default: Monte-Carlo samples); ``reward`` and ``seed``: the loop's."""
        return players, Recorder()

    @abstractmethod
    def loss(self, net: KoiKoiNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The loss of one mini-batch of one decision type (``learner.collate``'s tuple)."""

    @abstractmethod
    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        """What ``loss/<decision>`` is measured in, per decision type (``mse``: the units of the taken action's
        squared error)."""

    def fitted(self, result: PlayResult) -> list[Sample]:
        """The samples of a loop's games that its fit trains on."""
        return result.samples

    def after_fit(self, net: nn.Module, result: PlayResult, seed: int, inference: Inference = FP32) -> dict[str, float]:
        """Called after a loop's fit with the fitted network, the loop's games and the players' inference setup;
        returns metrics to log."""
        return {}

    def state(self) -> dict:
        """What the algorithm keeps between loops, saved in the phase's checkpoint."""
        return {}

    def load_state(self, state: dict) -> None:
        """Restore ``state()`` from a checkpoint."""
        return None

    def initial_net(self, sl: KoiKoiNet, p: RLParams) -> nn.Module:
        """The network phase 1 starts fitting (its architecture also receives a checkpoint's weights)."""
        if p.init == "scratch":
            torch.manual_seed(p.seed)
            return KoiKoiNet(sl.config)  # the SL architecture, fresh weights (the paper's setting)
        return sl

    def learned_net(self, model_dir: Path) -> nn.Module:
        """The fitted network of a saved model directory of this algorithm (phase 2 goes on from phase 1's)."""
        return load_model(model_dir)[0]

    def player(self, net: nn.Module, sl: NetSpec, name: str, variant: str, epsilon: float = 0.0,
               training: bool = False) -> PlayerSpec:
        """How the learner's ``net`` plays (``training``: the behaviour of its training games, else greedy)."""
        return NetSpec.from_net(net, name, epsilon)

    def save(self, net: nn.Module, sl: KoiKoiNet, out_dir: Path, meta: dict, variant: str) -> None:
        """Write the learner as a model directory any agent path plays (``agents.load_agent``)."""
        save_model(net, out_dir, meta)


@dataclass(frozen=True)
class TargetRecorder(Recorder):
    """Keeps a share ``fraction`` of the decisions of the types in ``decisions`` that have a choice, each with a
    ``Pending`` of a reward per action, for ``target``."""

    fraction: float = 1.0
    temperature: float = 1.0  # reward units per nat of the target's log-probability
    decisions: tuple[int, ...] = (0, 1, 2)  # decision types that get a target; others record nothing
    loss: str = "cross_entropy"  # cross_entropy (a distribution target) | logit_mse (a logit target, linear in rewards)
    uneven = True

    def picked(self, step: Step) -> list[int]:
        """The decisions of ``step`` that get a target (only where there is a choice)."""
        return [i for i, o in enumerate(step.obs) if o.decision in self.decisions and o.legal_mask & (o.legal_mask - 1)
                and (self.fraction >= 1.0 or step.games[i].rng.random() < self.fraction)]

    def sample(self, obs: Observation, action: int, reward: float, kept: Any) -> Sample:
        if kept is None:  # nothing weighed (a search with one candidate): no target
            return Sample(obs, action, reward)
        return Sample(obs, action, kept.reward(kept.actions.index(action)), target(kept, self.temperature, self.loss))

    def scoreless(self) -> TargetRecorder:
        return replace(self, temperature=0.0)


def target(p: Pending, temperature: float, loss: str = "cross_entropy") -> np.ndarray:
    """The learner's target over ``p``'s actions, float32 ``(50,)``: ``cross_entropy``, the distribution
    ``softmax(prior + reward / temperature)`` (0 elsewhere); ``logit_mse``, those logits centred (NaN elsewhere)."""
    z = p.prior + np.asarray(p.rewards) / (p.samples * temperature)
    if loss == "logit_mse":
        out = np.full(NUM_TOKENS, np.nan, dtype=np.float32)  # finite marks the branched actions (the support)
        out[p.actions] = z - z.mean()
        return out
    z = np.exp(z - z.max())
    out = np.zeros(NUM_TOKENS, dtype=np.float32)
    out[p.actions] = np.maximum(z / z.sum(), 1e-30)  # > 0 marks the branched actions (the loss's support)
    return out


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
