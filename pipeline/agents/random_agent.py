"""The paper's random baseline: uniform discards and picks, koi-koi with probability 0.5."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine import Observation
from .base import Agent, legal_list


class RandomAgent(Agent):
    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: Sequence[Observation]) -> list[int]:
        draws = self.rng.random(len(observations))
        out = []
        for obs, u in zip(observations, draws):
            legal = legal_list(obs)
            out.append(legal[int(u * len(legal))])  # koi-koi: [STOP, KOIKOI] -> p = 0.5 each
        return out
