"""A network as a player: ``NetPlayer``, the one way a ``KoiKoiNet`` turns observations into masked action
values, and ``ModelAgent``, the (epsilon-)greedy ``Agent`` over it."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch

from ..engine import Observation
from ..net.encoding import NUM_TOKENS, decisions, encode, legal_masks
from ..net.inference import FP32, Inference, resolve_inference
from ..net.model import KoiKoiNet
from .base import Agent

# Observations per forward pass on a CPU: larger passes' activations stayed allocated (memory grew with a duel's
# games), and 64 costs less CPU per sample than 512 (cache-sized matrices).
CPU_FORWARD_BATCH = 64


class NetPlayer:
    """Evaluates batches of observations on ``device`` (default: the net's) in the ``inference`` setup; under
    ``fp32`` and ``autocast`` it runs ``net`` itself (eval mode for the call), so a learner may share it."""

    def __init__(self, net: KoiKoiNet, epsilon: float = 0.0, inference: Inference = FP32,
                 device: str | None = None) -> None:
        if device is not None:
            net = net.to(device)
        self.device = torch.device(device) if device is not None else next(net.parameters()).device
        self.net = net
        self.epsilon = epsilon
        self.inference = inference
        self.runner = inference.prepare(net)
        self.forward_seconds = 0.0
        self.forward_samples = 0
        self.forward_calls = 0

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        """Masked outputs float32 ``(B, 50)``: illegal tokens at -inf."""
        if not len(observations):
            return np.zeros((0, NUM_TOKENS), dtype=np.float32)
        x, d = encode(observations), decisions(observations)
        step = CPU_FORWARD_BATCH if self.device.type == "cpu" else len(x)
        q = np.concatenate([self._forward(x[i:i + step], d[i:i + step]) for i in range(0, len(x), step)])
        q[~legal_masks(observations)] = -np.inf
        return q

    def _forward(self, x_np: np.ndarray, d_np: np.ndarray) -> np.ndarray:
        training = self.runner.training
        if training:  # dropout off for play; the learner's mode comes back below
            self.runner.eval()
        t0 = time.perf_counter()
        try:
            with self.inference.context(self.device.type):
                # inference tensors whatever the caller's mode: a compiled trunk never recompiles for the other kind
                x = torch.from_numpy(x_np).to(self.device, self.inference.dtype)
                d = torch.from_numpy(d_np).to(self.device)
                q = self.runner(x, d).float().cpu().numpy()
        finally:
            if training:
                self.runner.train()
        self.forward_seconds += time.perf_counter() - t0
        self.forward_samples += len(x_np)
        self.forward_calls += 1
        return q

    def forward_throughput(self, x: torch.Tensor, decision: int, seconds: float = 2.0) -> float:
        """Pure forward passes per second on batch ``x`` (samples/s), for the self-play benchmark."""
        with self.inference.context(self.device.type):
            x = x.to(self.device, self.inference.dtype).clone()  # an inference tensor, as in play (_forward)
            d = torch.full((x.shape[0],), decision, dtype=torch.long, device=self.device)
            self.runner(x, d).float().cpu()  # warm-up (and a compile, once per process)
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                self.runner(x, d).float().cpu()  # back on the host, as in play (this also waits for the GPU)
                n += 1
        return n * x.shape[0] / (time.perf_counter() - t0)


class ModelAgent(Agent):
    """Greedy argmax of ``player``'s values (default: a ``NetPlayer``), or with ``epsilon`` a uniform legal action;
    ``spec``: the same player as shipped to duel workers."""

    def __init__(self, net: KoiKoiNet, name: str = "model", epsilon: float = 0.0, seed: int | None = 0,
                 inference: Inference | str = "auto", spec: object | None = None, player: object | None = None) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"ModelAgent: epsilon must be in [0, 1], got {epsilon!r}")
        self.spec = spec
        self._net = net
        self.player = player if player is not None else NetPlayer(net, inference=resolve_inference(inference, "cpu"))
        self.name = name
        self.epsilon = float(epsilon)
        self.rng = np.random.default_rng(seed)

    @property
    def net(self) -> KoiKoiNet:
        return self._net

    def action_scores(self, observations: Sequence[Observation]) -> np.ndarray:
        return self.player.values(observations)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        if not observations:
            return []
        q = self.action_scores(observations)
        actions = q.argmax(axis=1)
        if self.epsilon > 0:
            explore = np.flatnonzero(self.rng.random(len(actions)) < self.epsilon)
            for i in explore:
                legal = np.flatnonzero(np.isfinite(q[i]))
                actions[i] = legal[self.rng.integers(len(legal))]
        return [int(a) for a in actions]
