"""The rollout policy as a player of the batched engine (``RolloutPlayer``), as shipped to a worker (``RolloutSpec``)
and as read from its model directory (``load_rollout``)."""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ..engine import Observation
from ..net.encoding import NUM_TOKENS
from ..net.inference import Inference
from .features import featurize
from .network import RolloutConfig, RolloutNet, load_rollout_net


class RolloutPlayer:
    """Masked values of a batch of observations (any decision types), ``(B, 50)`` with -inf where illegal, from a
    ``RolloutNet`` in fp32 on ``device`` (a net this small gains nothing from bf16 or compiling); the same
    ``epsilon`` and forward counters as ``agents.model_agent.NetPlayer`` (the features count as forward time)."""

    def __init__(self, net: RolloutNet, epsilon: float = 0.0, device: str | None = None) -> None:
        self.device = torch.device(device) if device is not None else next(net.parameters()).device
        self.net = net.to(self.device).eval()
        self.epsilon = epsilon
        self.forward_seconds = 0.0
        self.forward_samples = 0
        self.forward_calls = 0

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        """Masked outputs float32 ``(B, 50)``: illegal tokens at -inf."""
        if not len(observations):
            return np.zeros((0, NUM_TOKENS), dtype=np.float32)
        t0 = time.perf_counter()
        f = featurize(observations)
        rows, _ = np.nonzero(f.valid)
        x, g, owner, d = (torch.from_numpy(a) for a in (f.x[f.valid], f.g, rows, f.decision))
        if self.device.type != "cpu":
            x, g, owner, d = (t.to(self.device) for t in (x, g, owner, d))
        with torch.inference_mode():
            v = self.net.score_rows(x, g, owner, d).float().cpu().numpy()
        q = np.full((len(observations), NUM_TOKENS), -np.inf, dtype=np.float32)
        q[rows, f.tokens[f.valid]] = v
        self.forward_seconds += time.perf_counter() - t0
        self.forward_samples += len(observations)
        self.forward_calls += 1
        return q


@dataclass(frozen=True)
class RolloutSpec:
    """A rollout policy as sent to a worker (picklable): its name, config and weights (``torch.save`` bytes)."""

    name: str
    config: dict
    weights: bytes
    epsilon: float = 0.0

    @classmethod
    def from_net(cls, net: RolloutNet, name: str, epsilon: float = 0.0) -> RolloutSpec:
        buf = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, buf)
        return cls(name=name, config=net.config.to_dict(), weights=buf.getvalue(), epsilon=float(epsilon))

    def with_epsilon(self, epsilon: float) -> RolloutSpec:
        return replace(self, epsilon=float(epsilon))

    def build(self) -> RolloutNet:
        net = RolloutNet(RolloutConfig.from_dict(self.config))
        net.load_state_dict(torch.load(io.BytesIO(self.weights), map_location="cpu", weights_only=True))
        return net.eval()

    def player(self, inference: Inference, device: str) -> RolloutPlayer:
        """The policy as a player on ``device``; ``inference`` is not used (fp32 always, see ``RolloutPlayer``)."""
        del inference
        return RolloutPlayer(self.build(), self.epsilon, device)


def load_rollout(model_dir: str | Path) -> RolloutSpec:
    """The rollout policy of a model directory (the rollout stage's ``models/rollout``), named by its path;
    ``FileNotFoundError`` without one, ``ValueError`` (one line) for any other model directory."""
    net, _ = load_rollout_net(model_dir)
    return RolloutSpec.from_net(net, str(model_dir))
