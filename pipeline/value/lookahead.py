"""One-step lookahead with a learned afterstate value: a player that ranks every legal action by its value.

At a decision, each legal action's afterstate (``GameState.after`` on a determinization of the
observation: the afterstate does not depend on the hidden cards) is either the end of the round, whose
reward is exact, or a position the value network (``value.ValueNet``) prices. The score of an action is

    prior_weight * log pi(a | s) + Q(a) / temperature

with ``pi`` the policy network's softmax (the SL net, or a trained one) and ``Q`` in reward units
(points for RL-Point, P(win) x 10 for RL-WP). ``prior_weight`` 0 plays the value's argmax; 1 is one step
of KL-regularised policy improvement of ``pi``. ``LookaheadPlayer.values`` returns these scores in
``NetPlayer.values``' shape, so self-play, duels and evaluations use it as they use a network.
Only the observation is read: nothing hidden reaches the player.
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..agents.base import legal_list
from ..agents.model_agent import NetPlayer
from ..engine import DECISION_NAMES, Observation, determinize
from ..net.encoding import encode
from ..net.inference import FP32, Inference
from ..net.model import ModelConfig
from ..net.value_model import HEADS, ValueNet
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel, terminal_reward


class LookaheadPlayer:
    """``values(observations) -> (B, 50)``: lookahead scores of the legal actions, -inf elsewhere."""

    def __init__(self, prior: NetPlayer, value: ValueNet, reward: RewardModel, temperature: float,
                 prior_weight: float, inference: Inference = FP32, seed: int = 0,
                 decisions: tuple[int, ...] = (0, 1, 2)) -> None:
        self.prior = prior
        self.value = inference.prepare(value.eval())
        self.reward = reward
        self.head = HEADS.index(reward.kind)
        self.temperature = temperature
        self.prior_weight = prior_weight
        self.inference = inference
        self.decisions = decisions
        self.rng = np.random.default_rng(seed)  # only fills the hidden cards, which no afterstate depends on
        self.epsilon = prior.epsilon
        self.forward_seconds = 0.0
        self.forward_samples = 0
        self.forward_calls = 0

    def action_scores(self, observations: Sequence[Observation]) -> np.ndarray:
        """Each legal action's value in reward units, float32 ``(B, 50)``, NaN where illegal."""
        q = np.full((len(observations), 50), np.nan, dtype=np.float32)
        live: list[Observation] = []
        where: list[tuple[int, int]] = []
        for i, obs in enumerate(observations):
            if obs.decision not in self.decisions:
                continue
            s = determinize(obs, self.rng)
            for a in legal_list(obs):
                after = s.after(a)
                r = terminal_reward(after, obs.round, obs.player, self.reward)
                if r is None:
                    live.append(after.observation(obs.player))
                    where.append((i, a))
                else:
                    q[i, a] = r
        if live:
            rows, cols = zip(*where)
            q[list(rows), list(cols)] = self.afterstate_values(live)
        return q

    def afterstate_values(self, observations: Sequence[Observation]) -> np.ndarray:
        """The value network's reward of each afterstate, seen by the player who acted, float32 ``(B,)``."""
        t0 = time.perf_counter()
        x = torch.from_numpy(encode(observations)).to(self.inference.dtype)
        with self.inference.context("cpu"):
            v = self.value(x)[:, self.head].float().numpy()
        self.forward_seconds += time.perf_counter() - t0
        self.forward_samples += len(observations)
        self.forward_calls += 1
        return v

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        if not len(observations):
            return np.zeros((0, 50), dtype=np.float32)
        q = self.action_scores(observations)
        score = q / self.temperature
        if self.prior_weight:
            logits = self.prior.values(observations)
            logp = logits - np.logaddexp.reduce(np.where(np.isfinite(logits), logits, -np.inf), axis=1,
                                                keepdims=True)
            score = score + self.prior_weight * logp
        out = np.where(np.isnan(q), -np.inf, score).astype(np.float32)
        rest = [i for i, o in enumerate(observations) if o.decision not in self.decisions]
        if rest:
            out[rest] = self.prior.values([observations[i] for i in rest])
        return out


@dataclass(frozen=True)
class LookaheadSpec:
    """A lookahead player as sent to a self-play worker: its prior network, its value network, its reward."""

    name: str
    prior: NetSpec
    value_config: dict
    value_weights: bytes
    reward: RewardModel
    temperature: float
    prior_weight: float
    epsilon: float = 0.0
    decisions: tuple[int, ...] = (0, 1, 2)

    @classmethod
    def from_nets(cls, name: str, prior: NetSpec, value: ValueNet, reward: RewardModel, temperature: float,
                  prior_weight: float) -> LookaheadSpec:
        buf = io.BytesIO()
        torch.save({k: v.detach().cpu() for k, v in value.state_dict().items()}, buf)
        return cls(name, prior, value.config.to_dict(), buf.getvalue(), reward, temperature, prior_weight)

    def with_epsilon(self, epsilon: float) -> LookaheadSpec:
        return replace(self, epsilon=float(epsilon), prior=self.prior.with_epsilon(epsilon))

    def build_value(self) -> ValueNet:
        net = ValueNet(ModelConfig.from_dict(self.value_config))
        net.load_state_dict(torch.load(io.BytesIO(self.value_weights), map_location="cpu", weights_only=True))
        return net.eval()

    def with_inference(self, inference: Inference) -> LookaheadSpec:
        return replace(self, prior=self.prior.with_inference(inference))

    def player(self, inference: Inference, device: str) -> LookaheadPlayer:
        setup = self.prior.inference or inference  # the prior's forced setup, if any, is the value's too
        return LookaheadPlayer(self.prior.player(setup, device), self.build_value(), self.reward,
                               self.temperature, self.prior_weight, setup, decisions=self.decisions)


def lookahead_meta(reward: RewardModel, temperature: float, prior_weight: float,
                   decisions: tuple[int, ...]) -> dict:
    """How a saved model looks ahead (``config.json``'s meta "lookahead"): its reward, temperature, prior weight."""
    return {"reward": reward.kind, "scale": reward.scale, "baseline": reward.baseline,
            "table": reward.table.to_dict() if reward.table is not None else None,
            "temperature": temperature, "prior_weight": prior_weight,
            "decisions": [DECISION_NAMES[d] for d in decisions]}
