"""Networks as self-play players: ``NetSpec``, a network as shipped to a worker, built into an
``agents.model_agent.NetPlayer`` (the one batched, masked evaluation of a network) there."""

from __future__ import annotations

import io
from dataclasses import dataclass, replace

import torch

from ..agents.model_agent import NetPlayer
from ..net.inference import Inference
from ..net.model import KoiKoiNet, ModelConfig


@dataclass(frozen=True)
class NetSpec:
    """A network as sent to a worker: architecture, weights (torch.save bytes) and exploration rate; ``inference``:
    the setup this player keeps whatever its job's (a duel of one setup against another), None: the job's."""

    name: str
    config: dict
    weights: bytes
    epsilon: float = 0.0
    inference: Inference | None = None

    @classmethod
    def from_net(cls, net: KoiKoiNet, name: str, epsilon: float = 0.0) -> NetSpec:
        buf = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, buf)
        return cls(name=name, config=net.config.to_dict(), weights=buf.getvalue(), epsilon=float(epsilon))

    def with_epsilon(self, epsilon: float) -> NetSpec:
        return replace(self, epsilon=float(epsilon))

    def with_inference(self, inference: Inference) -> NetSpec:
        return replace(self, inference=inference)

    def build(self) -> KoiKoiNet:
        net = KoiKoiNet(ModelConfig.from_dict(self.config))
        net.load_state_dict(torch.load(io.BytesIO(self.weights), map_location="cpu", weights_only=True))
        return net.eval()

    def player(self, inference: Inference, device: str) -> NetPlayer:
        return NetPlayer(self.build(), self.epsilon, self.inference or inference, device)

