"""The built-in agents as seats of the batched game engine, so their duels run on the worker pool too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..engine import NUM_ACTIONS, Observation
from .base import Agent, legal_list
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

if TYPE_CHECKING:
    from ..net.inference import Inference

RULES: dict[str, type[RandomAgent | HeuristicAgent]] = {"random": RandomAgent, "heuristic": HeuristicAgent}


class RulePlayer:
    """An agent's choice as masked values: 0 for its action, -1 for the other legal ones, -inf where illegal."""

    epsilon = 0.0
    forward_seconds = 0.0
    forward_samples = 0
    forward_calls = 0

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        q = np.full((len(observations), NUM_ACTIONS), -np.inf, dtype=np.float32)
        for i, (obs, a) in enumerate(zip(observations, self.agent.act(observations), strict=True)):
            q[i, legal_list(obs)] = -1.0
            q[i, a] = 0.0
        return q


@dataclass(frozen=True)
class RuleSpec:
    """A built-in agent as sent to a worker: its name (a key of ``RULES``) and seed."""

    name: str
    seed: int = 0

    def with_inference(self, inference: Inference) -> RuleSpec:
        return self  # no network to run

    def player(self, inference: Inference, device: str) -> RulePlayer:
        return RulePlayer(RULES[self.name](self.seed))


def rule_spec(agent: Agent) -> RuleSpec | None:
    """The spec of a built-in agent (None for any other): its ``name`` is its key of ``RULES``."""
    return RuleSpec(agent.name, agent.seed) if type(agent) in RULES.values() else None
