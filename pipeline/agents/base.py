"""The agent interface: batched, so one call can feed many games to one forward pass."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ..engine import Observation, ids_of


class Agent(ABC):
    """Chooses actions from observations only (never from the game state itself)."""

    name: str = "agent"

    @abstractmethod
    def act(self, observations: Sequence[Observation]) -> list[int]:
        """One legal action per observation; every observation has ``to_act`` set."""


def legal_list(obs: Observation) -> list[int]:
    """The legal action tokens of an observation, ascending."""
    return ids_of(obs.legal_mask)
