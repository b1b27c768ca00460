"""The agent vocabulary, batched, so one call can feed many games to one forward pass:

- :class:`Agent`: what plays a game (duels, the play page): one legal action per observation (``act``);
- :class:`ScoringAgent`: an agent that also shows its score of every action (the play page's hints and reviews);
- :class:`Player`: what plays a seat of the batched game engine (``selfplay``): masked values of a batch;
- :class:`PlayerSpec`: how a worker rebuilds a player (a network, a searcher) from what was shipped to it
  (``NetSpec``, ``SearchSpec``).

Each agent kind is one module of this package (``random_agent``, ``heuristic``, ``model_agent``) or of its own
package (``search.agent``); ``specs`` says what an agent spec names, ``lineup.loader.load_agent`` builds it.
"""

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
    """A stable 64-bit blake2b digest of everything in an observation (its repr holds only ints, bools and tuples),
    keyed by ``key``."""
    return int.from_bytes(hashlib.blake2b(repr(obs).encode(), digest_size=8, key=key).digest(), "little")


def observation_seed(obs: Observation) -> int:
    """A stable 64-bit digest of everything in an observation."""
    return _digest(obs)


def observation_rng(seed: int, obs: Observation) -> np.random.Generator:
    """A generator seeded by ``seed`` and the observation only: an agent that draws from it is a function of what
    it sees, whatever it is batched with, in whichever process (a duel's result does not depend on its workers)."""
    return np.random.default_rng([seed, observation_seed(obs)])


def observation_uniform(seed: int, obs: Observation) -> float:
    """One uniform draw in [0, 1) from ``seed`` and the observation only (``observation_rng``'s rule, the digest
    keyed by the seed in place of a generator: a quarter of the cost, for agents that draw once a decision)."""
    return _digest(obs, str(seed).encode()) / 2.0**64


def seed_or_entropy(seed: int | None) -> int:
    """``seed``, or with None a fresh one from the OS (an unseeded agent)."""
    return int(np.random.SeedSequence().entropy) if seed is None else int(seed)


@runtime_checkable
class ScoringAgent(Protocol):
    """An agent whose score of every action can be shown (``(B, 50)``, the higher the better)."""

    def action_scores(self, observations: Sequence[Observation]) -> np.ndarray: ...


class Player(Protocol):
    """What plays a seat: masked values of a batch of observations, ``(B, 50)`` with -inf where illegal; the
    arg-max is played, or with ``epsilon`` a uniform legal action."""

    epsilon: float

    def values(self, observations: Sequence[Observation]) -> np.ndarray: ...


class PlayerSpec(Protocol):
    """A player as shipped to a worker (picklable): the worker rebuilds it on its device."""

    name: str

    def player(self, inference: Inference, device: str) -> Player: ...
