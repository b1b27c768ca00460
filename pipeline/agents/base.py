"""The agent vocabulary, batched so that one call can feed many games to one forward pass."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..engine import Observation, ids_of

if TYPE_CHECKING:
    from ..net.inference import Inference


class Agent(ABC):
    """Chooses actions from observations only (never from the game state itself)."""

    name: str = "agent"

    @abstractmethod
    def act(self, observations: Sequence[Observation]) -> list[int]:
        """One legal action per observation; every observation has ``to_act`` set."""


def legal_list(obs: Observation) -> list[int]:
    """The legal action tokens of an observation, ascending."""
    return ids_of(obs.legal_mask)


def _digest(obs: Observation, key: bytes = b"") -> int:
    """A stable 64-bit digest of everything in an observation (its repr holds only ints, bools and tuples)."""
    return int.from_bytes(hashlib.blake2b(repr(obs).encode(), digest_size=8, key=key).digest(), "little")


def observation_rng(seed: int, obs: Observation) -> np.random.Generator:
    """A generator seeded by ``seed`` and the observation only: the same draws in any batch, in any process."""
    return np.random.default_rng([seed, _digest(obs)])


def observation_uniform(seed: int, obs: Observation) -> float:
    """One uniform draw in [0, 1) from ``seed`` and the observation only (a quarter of ``observation_rng``'s cost)."""
    return _digest(obs, str(seed).encode()) / 2.0**64


def seed_or_entropy(seed: int | None) -> int:
    """``seed``, or with None a fresh one from the OS (an unseeded agent)."""
    return int(np.random.SeedSequence().entropy) if seed is None else int(seed)


@runtime_checkable
class ScoringAgent(Protocol):
    """An agent whose score of every action can be shown (``(B, 50)``, the higher the better)."""

    def action_scores(self, observations: Sequence[Observation]) -> np.ndarray: ...


class Player(Protocol):
    """What plays a seat of the batched engine: masked values ``(B, 50)``, -inf where illegal; the arg-max plays."""

    epsilon: float

    def values(self, observations: Sequence[Observation]) -> np.ndarray: ...


class PlayerSpec(Protocol):
    """A player as shipped to a worker (picklable): the worker rebuilds it on its device."""

    name: str

    def player(self, inference: Inference, device: str) -> Player: ...
