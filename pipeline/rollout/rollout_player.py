"""The rollout policy as a player of the batched engine, as shipped to a worker, and as read from its directory."""

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
    """Masked values ``(B, 50)`` from a copy of a ``RolloutNet``'s weights in numpy fp32 on the CPU: torch's
    per-operation overhead was a third of a call at a playout's batch, and a net this small gains nothing from a
    GPU, bf16 or compiling."""

    def __init__(self, net: RolloutNet, epsilon: float = 0.0) -> None:
        self.net = net.eval()

        def weights(layer: torch.nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return (layer.weight.detach().cpu().float().numpy().T.copy(),
                    layer.bias.detach().cpu().float().numpy().copy())

        self.token, self.out = weights(net.token), weights(net.out)
        self.hidden = [weights(layer) for layer in net.hidden]
        self.glob = net.glob.weight.detach().cpu().float().numpy().T.copy()
        self.epsilon = epsilon
        self.forward_seconds = 0.0
        self.forward_samples = 0
        self.forward_calls = 0

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        if not len(observations):
            return np.zeros((0, NUM_TOKENS), dtype=np.float32)
        t0 = time.perf_counter()
        f = featurize(observations)
        rows, _ = np.nonzero(f.valid)  # each real token's observation (``RolloutNet.forward`` on them alone)
        h = f.x[f.valid] @ self.token[0]
        h += self.token[1]
        h += (f.g @ self.glob)[rows]
        np.maximum(h, 0.0, out=h)
        for w, b in self.hidden:
            h = h @ w
            h += b
            np.maximum(h, 0.0, out=h)
        v = (h @ self.out[0] + self.out[1])[np.arange(len(rows)), f.decision[rows]]
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
        del inference, device
        return RolloutPlayer(self.build(), self.epsilon)


def load_rollout(model_dir: str | Path) -> RolloutSpec:
    """The rollout policy of a model directory, named by its path; one-line errors (``read_rollout_config``)."""
    net, _ = load_rollout_net(model_dir)
    return RolloutSpec.from_net(net, str(model_dir))
