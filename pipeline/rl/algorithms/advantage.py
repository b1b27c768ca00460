"""``rl.algorithm: advantage``: the SL policy, frozen, tilted by a learned advantage that pools the round outcomes of
every game it has seen (``selfplay.anchored``: the player plays ``argmax log pi_SL + A / tau``).

Self-play records plain Monte-Carlo samples (what the player saw, the action it took, the round reward: RL-Point's
points or RL-WP's win probability), the learner's actions drawn from the anchored policy's softmax (``rl.advantage
.sample``) plus ``rl.epsilon`` uniform ones, so actions SL never takes get data. The advantage network
(``net.advantage_model``) fits every sample's reward with ``V(s) + A(s, a) - mean_legal A(s, .)`` at the taken
action (Huber): ``V`` is the baseline that takes the state's worth out of ``A``, one forward pass gives every
action's advantage, and no state needs rollouts of its own: what one state's outcome cannot tell, the function
learns from many similar states. docs/rl.md gives the method, its metrics and how it departs from the issue's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ...engine import DECISION_NAMES
from ...net.advantage_model import AdvantageNet
from ...net.model import KoiKoiNet, ModelConfig
from ...net.modelio import load_advantage, save_model
from ...params import RLParams
from ...params.rl import Advantage
from ...selfplay.anchored import AnchoredSpec, anchored_meta
from ...selfplay.policies import NetSpec
from ...selfplay.rollouts import RolloutSpec


@dataclass(frozen=True)
class AnchoredAdvantage:
    cfg: Advantage  # the rl.advantage section

    @classmethod
    def from_params(cls, p: RLParams) -> AnchoredAdvantage:
        return cls(p.advantage)

    @property
    def decisions(self) -> tuple[int, ...]:
        return tuple(DECISION_NAMES.index(d) for d in self.cfg.decisions)

    def rollout_spec(self, players: tuple[NetSpec, ...], sl: NetSpec,
                     variant: str) -> tuple[tuple[NetSpec, ...], RolloutSpec | None]:
        return players, None  # Monte-Carlo samples: the round reward of the taken action

    def loss(self, net: AdvantageNet, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        x, d, a, r = batch[:4]
        return F.huber_loss(net.q_taken(x, d, a), r, delta=self.cfg.huber)

    def loss_units(self, p: RLParams, mse: str) -> dict[str, str]:
        unit = (f"Huber loss (delta {self.cfg.huber:g}) of V(s) + A(s, a) - mean A at the taken action against the "
                f"round reward, in {mse}")
        return dict.fromkeys(DECISION_NAMES, unit)

    def initial_net(self, sl: KoiKoiNet, p: RLParams) -> AdvantageNet:
        c = self.cfg
        torch.manual_seed(p.seed)
        return AdvantageNet(ModelConfig(width=c.width, ff=c.ff, heads=c.heads, layers=c.layers, dropout=c.dropout,
                                        shared_trunk=True))

    def learned_net(self, model_dir: Path) -> AdvantageNet:
        net = load_advantage(model_dir)
        if net is None:
            raise ValueError(f"{model_dir} holds no advantage network (advantage.pt): rl.algorithm advantage goes "
                             "on from a model of its own phase 1")
        return net

    def player(self, net: AdvantageNet, sl: NetSpec, name: str, variant: str, epsilon: float = 0.0,
               training: bool = False) -> AnchoredSpec:
        return AnchoredSpec.from_nets(name, sl, net, getattr(self.cfg.tau, variant), self.decisions, epsilon,
                                      sample=training and self.cfg.sample)

    def save(self, net: AdvantageNet, sl: KoiKoiNet, out_dir: Path, meta: dict, variant: str) -> None:
        tau = getattr(self.cfg.tau, variant)
        save_model(sl, out_dir, {**meta, "anchored": anchored_meta(tau, self.decisions)}, advantage=net)
