"""The anchored player of ``rl.algorithm: advantage``: SL's policy tilted by a learned advantage.

At a decision of the types it covers it scores each legal action ``a`` by

    log pi_SL(a | s) + A(s, a) / tau

(``A``: ``net.advantage_model.AdvantageNet``, in round-reward units; ``tau``: reward units per nat), and plays the
arg-max, or in training samples from the softmax of these scores (``sample``: the behaviour policy, so that the
actions SL rarely takes still get data). Elsewhere it plays SL. SL stays frozen: the policy never becomes the raw
values (which is what made Monte-Carlo DQN from the SL weights lose to SL), and a smaller ``tau`` lets a better
``A`` move it further from SL. One forward pass of each network serves a whole batch.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..agents.model_agent import NetGroup, NetPlayer
from ..engine import DECISION_NAMES, Observation
from ..net.advantage_model import AdvantageNet
from ..net.encoding import decisions, encode, legal_masks
from ..net.inference import Inference
from ..net.model import ModelConfig
from .policies import NetSpec


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of masked logits (-inf where illegal stays -inf)."""
    top = logits.max(axis=1, keepdims=True)
    return logits - (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))


class AnchoredPlayer(NetGroup):
    """``values(observations) -> (B, 50)``: the anchored scores, -inf where illegal (``NetPlayer.values``' shape)."""

    def __init__(self, sl: NetPlayer, adv: NetPlayer, tau: float, decisions: tuple[int, ...],
                 epsilon: float = 0.0, sample: bool = False) -> None:
        self.sl, self.adv = sl, adv
        self.tau = tau
        self.decisions = decisions
        self.epsilon = epsilon
        self.sample = sample  # batched play draws from softmax(values) with each game's own RNG

    def _nets(self) -> tuple[NetPlayer, NetPlayer]:
        return self.sl, self.adv

    def advantages(self, observations: Sequence[Observation]) -> np.ndarray:
        """``A(s, .)`` float32 ``(B, 50)``, -inf where illegal."""
        return self.adv.values(observations)

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        if not len(observations):
            return self.sl.values(observations)
        # one encoding feeds both networks: they read the same features
        x, d, legal = encode(observations), decisions(observations), legal_masks(observations)
        out = self.sl.encoded_values(x, d, legal)
        mine = np.flatnonzero(np.isin(d, self.decisions))
        if len(mine):
            logp = log_softmax(out[mine])
            a = self.adv.encoded_values(x[mine], d[mine], legal[mine])
            out[mine] = np.where(np.isfinite(logp), logp + a / self.tau, -np.inf)
        return out


@dataclass(frozen=True)
class AnchoredSpec:
    """An anchored player as sent to a worker: the SL network, the advantage network, ``tau`` and the decision
    types it covers (indices into ``DECISION_NAMES``)."""

    name: str
    sl: NetSpec
    adv_config: dict
    adv_weights: bytes
    tau: float
    decisions: tuple[int, ...] = (0, 1, 2)
    epsilon: float = 0.0
    sample: bool = False

    @classmethod
    def from_nets(cls, name: str, sl: NetSpec, adv: AdvantageNet, tau: float,
                  decisions: tuple[int, ...] = (0, 1, 2), epsilon: float = 0.0, sample: bool = False) -> AnchoredSpec:
        buf = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in adv.state_dict().items()}, buf)
        return cls(name, sl, adv.config.to_dict(), buf.getvalue(), float(tau), tuple(decisions), float(epsilon),
                   sample)

    def with_epsilon(self, epsilon: float) -> AnchoredSpec:
        return replace(self, epsilon=float(epsilon))

    def with_inference(self, inference: Inference) -> AnchoredSpec:
        return replace(self, sl=self.sl.with_inference(inference))

    def build_adv(self) -> AdvantageNet:
        net = AdvantageNet(ModelConfig.from_dict(self.adv_config))
        net.load_state_dict(torch.load(io.BytesIO(self.adv_weights), map_location="cpu", weights_only=True))
        return net.eval()

    def player(self, inference: Inference, device: str) -> AnchoredPlayer:
        setup = self.sl.inference or inference
        return AnchoredPlayer(self.sl.player(setup, device), NetPlayer(self.build_adv(), 0.0, setup, device),
                              self.tau, self.decisions, self.epsilon, self.sample)


def anchored_meta(tau: float, decisions: tuple[int, ...]) -> dict:
    """How a saved model plays its advantage (``config.json``'s meta "anchored")."""
    return {"tau": tau, "decisions": [DECISION_NAMES[d] for d in decisions]}
