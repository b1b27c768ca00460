"""Networks as self-play players: a picklable spec for workers and its batched, masked evaluation."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..encoding import decisions, encode, legal_masks
from ..engine import Observation
from ..model import KoiKoiNet, ModelConfig


@dataclass(frozen=True)
class NetSpec:
    """A network as sent to a worker: architecture, weights (torch.save bytes) and exploration rate."""

    name: str
    config: dict
    weights: bytes
    epsilon: float = 0.0

    @classmethod
    def from_net(cls, net: KoiKoiNet, name: str, epsilon: float = 0.0) -> NetSpec:
        buf = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, buf)
        return cls(name=name, config=net.config.to_dict(), weights=buf.getvalue(), epsilon=float(epsilon))

    def with_epsilon(self, epsilon: float) -> NetSpec:
        return NetSpec(self.name, self.config, self.weights, float(epsilon))

    def build(self) -> KoiKoiNet:
        net = KoiKoiNet(ModelConfig.from_dict(self.config))
        net.load_state_dict(torch.load(io.BytesIO(self.weights), map_location="cpu", weights_only=True))
        return net.eval()


class NetPlayer:
    """Evaluates one batch of observations (all of one decision type) in one forward pass on ``device``."""

    def __init__(self, net: KoiKoiNet, epsilon: float = 0.0, bf16: bool = False, device: str = "cpu") -> None:
        self.device = torch.device(device)
        self.net = net.eval().to(self.device)
        self.epsilon = epsilon
        self.bf16 = bf16
        self.forward_seconds = 0.0
        self.forward_samples = 0
        self.forward_calls = 0

    def _amp(self) -> contextlib.AbstractContextManager:
        return torch.autocast(self.device.type, dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        """Masked outputs float32 ``(B, 50)``: illegal tokens at -inf."""
        x = torch.from_numpy(encode(observations)).to(self.device)
        d = torch.from_numpy(decisions(observations)).to(self.device)
        t0 = time.perf_counter()
        with torch.inference_mode(), self._amp():
            q = self.net(x, d).float().cpu().numpy()
        self.forward_seconds += time.perf_counter() - t0
        self.forward_samples += len(observations)
        self.forward_calls += 1
        q[~legal_masks(observations)] = -np.inf
        return q

    def forward_throughput(self, x: torch.Tensor, decision: int, seconds: float = 2.0) -> float:
        """Pure forward passes per second on batch ``x`` (samples/s), for the self-play benchmark."""
        x = x.to(self.device)
        d = torch.full((x.shape[0],), decision, dtype=torch.long, device=self.device)
        with torch.inference_mode(), self._amp():
            self.net(x, d).float().cpu()  # warm-up
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                self.net(x, d).float().cpu()  # back on the host, as in play (this also waits for the GPU)
                n += 1
        return n * x.shape[0] / (time.perf_counter() - t0)
