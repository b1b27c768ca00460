"""A player backed by a ``KoiKoiNet``: one batched forward pass, greedy over legal actions (or epsilon-greedy)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np
import torch

from ..encoding import decisions, encode, legal_masks
from ..engine import Observation
from ..model import KoiKoiNet
from .base import Agent


class ModelAgent(Agent):
    """Greedy argmax of the net's values over legal tokens; with ``epsilon`` a uniform legal action instead.

    The net is switched to eval mode only for the duration of a call, so a learner may share it.
    """

    def __init__(self, net: KoiKoiNet, name: str = "model", epsilon: float = 0.0, seed: int | None = 0,
                 bf16: bool = False) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"ModelAgent: epsilon must be in [0, 1], got {epsilon!r}")
        self.net = net
        self.name = name
        self.epsilon = float(epsilon)
        self.bf16 = bf16
        self.rng = np.random.default_rng(seed)

    def q_values(self, observations: Sequence[Observation]) -> np.ndarray:
        """The net's outputs, float32 ``(B, 50)``, with illegal tokens at -inf."""
        legal = legal_masks(observations)
        if not len(observations):
            return np.zeros((0, legal.shape[1]), dtype=np.float32)
        x = torch.from_numpy(encode(observations))
        d = torch.from_numpy(decisions(observations))
        device = next(self.net.parameters()).device
        was = self.net.training
        self.net.eval()
        amp = torch.autocast(device.type, dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        try:
            with torch.inference_mode(), amp:
                q = self.net(x.to(device), d.to(device)).float().cpu().numpy()
        finally:
            self.net.train(was)
        q[~legal] = -np.inf
        return q

    def act(self, observations: Sequence[Observation]) -> list[int]:
        if not observations:
            return []
        q = self.q_values(observations)
        actions = q.argmax(axis=1)
        if self.epsilon > 0:
            explore = np.flatnonzero(self.rng.random(len(actions)) < self.epsilon)
            for i in explore:
                legal = np.flatnonzero(np.isfinite(q[i]))
                actions[i] = legal[self.rng.integers(len(legal))]
        return [int(a) for a in actions]
