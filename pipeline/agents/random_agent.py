"""The paper's random baseline: uniform discards and picks, koi-koi with probability 0.5."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import Observation
from .base import Agent, legal_list, observation_uniform, seed_or_entropy


class RandomAgent(Agent):
    """Uniform over the legal actions, one draw from its seed and the observation."""

    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed_or_entropy(seed)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        out = []
        for obs in observations:
            legal = legal_list(obs)
            u = observation_uniform(self.seed, obs)
            out.append(legal[int(u * len(legal))])  # koi-koi: [STOP, KOIKOI] -> p = 0.5 each
        return out
