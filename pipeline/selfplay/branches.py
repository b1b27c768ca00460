"""Branch targets of ``rl.algorithm: rollout_pi``: which decisions branch, and what their branches are worth;
and the searched targets of ``expert_it`` (``search_targets``), kept as filled ``Pending`` decisions.

``batched.play_job`` clones a game once per legal action at a branching decision and plays the
clones to the end of the round (``playout``, the playout engine); this module holds the bookkeeping:
a :class:`Pending` decision with one reward slot per branched action, the :class:`Link` from a branch
(or a greedy game itself) to its slot, and the target distribution once every slot is filled.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..engine import GAME_OVER, GameState, Observation
from ..net.encoding import NUM_TOKENS
from .rewards import RewardModel


@dataclass(frozen=True)
class BranchSpec:
    """Branch targets: which recorded decisions branch, and how branch rewards tilt the prior."""

    fraction: float = 1.0  # share of recorded decisions (with 2+ legal actions) that branch
    temperature: float = 1.0  # reward units per nat of the target's log-probability
    decisions: tuple[int, ...] = (0, 1, 2)  # decision types that branch (discard, pick, koi-koi); others record nothing
    anchor: int | None = None  # the job's player whose outputs are the prior (e.g. SL); None: the recording player
    loss: str = "cross_entropy"  # cross_entropy (a distribution target) | logit_mse (a logit target, linear in rewards)
    samples: int = 1  # deals per branched action: the true one, then samples - 1 with the hidden cards dealt again
    flat: bool = False  # no prior: the target is the rewards alone (softmax(reward / temperature), or their logits)
    search: int | None = None  # the job's searcher over its player 0 (expert_it): picked decisions are searched

    def picks(self, obs: Observation, rng: np.random.Generator) -> bool:
        """Whether this recorded decision branches (only where there is a choice)."""
        return (obs.decision in self.decisions and bool(obs.legal_mask & (obs.legal_mask - 1))
                and (self.fraction >= 1.0 or rng.random() < self.fraction))


def log_prior(scores: np.ndarray) -> np.ndarray:
    """The network's log-softmax over the legal tokens (``scores``: masked values, -inf where illegal)."""
    s = scores.astype(np.float64)
    legal = np.isfinite(s)
    out = np.full(s.shape, -np.inf)
    x = s[legal] - s[legal].max()
    out[legal] = x - math.log(np.exp(x).sum())
    return out


class Pending:
    """A decision whose branches are playing: one reward slot per legal action, summed over ``samples`` deals."""

    __slots__ = ("actions", "prior", "rewards", "samples")

    def __init__(self, actions: list[int], prior: np.ndarray, samples: int = 1) -> None:
        self.actions, self.prior, self.samples = actions, prior, samples
        self.rewards = [0.0] * len(actions)

    def reward(self, slot: int) -> float:
        """The mean round reward of the slot's action over its deals."""
        return self.rewards[slot] / self.samples

    def of_model(self, k: int) -> Pending:
        """A filled copy with reward model ``k``'s rewards, of a decision credited by several (``RewardModels``)."""
        p = Pending(self.actions, self.prior, self.samples)
        p.rewards = [float(r[k]) for r in self.rewards]
        return p


class Link(NamedTuple):
    """Where a branch's round reward goes: its game's decision, the slot of its action, whose reward."""

    game: Any  # the game that branched (selfplay._Game)
    pending: Pending
    slot: int
    round: int
    player: int


def search_targets(searcher: Any, observations: Sequence[Observation]) -> list[tuple[int, Pending | None]]:
    """Per observation, the search's choice and a filled ``Pending`` over the legal actions: prior the network's
    log-prior, reward each candidate's paired gain over the network's choice (0 for the others), so that ``target``
    tilts the prior by gain / temperature where the search looked. Where the searcher has nothing to weigh (one
    candidate) the choice is the network's and there is no target. ``searcher``: a ``search.player.SearchPlayer``,
    its counters kept as its own searches'."""
    scores = searcher.model.values(observations)
    out: list[tuple[int, Pending | None]] = [(int(s.argmax()), None) for s in scores]
    rows = [i for i, o in enumerate(observations) if searcher.searches(o, scores[i])]
    if not rows:
        return out
    t0 = time.perf_counter()
    choice, gains = searcher.improve([observations[i] for i in rows], scores[rows])
    searcher.search_seconds += time.perf_counter() - t0
    searcher.searched += len(rows)
    searcher.changed += int((choice.argmax(axis=1) != scores[rows].argmax(axis=1)).sum())
    for i, c, g in zip(rows, choice, gains):
        legal = np.flatnonzero(np.isfinite(c)).tolist()
        p = Pending(legal, log_prior(scores[i])[legal])
        p.rewards = np.nan_to_num(g[legal], nan=0.0).astype(np.float64).tolist()
        out[i] = (int(c.argmax()), p)
    return out


def round_reward(s: GameState, rnd: int, player: int, reward: RewardModel) -> float:
    """``player``'s reward for round ``rnd``, which state ``s`` has just finished (the game's outcome if it ended)."""
    over = s.phase == GAME_OVER and len(s.results) == rnd
    return reward.reward(s.results[rnd - 1], player, over, s.winner)


def credit(link: Link, reward: float) -> None:
    """Add one deal's round ``reward`` to ``link``'s slot."""
    game, pending, slot, _, _ = link
    pending.rewards[slot] += reward
    game.open -= 1


def round_over(s: GameState, rnd: int) -> bool:
    """Whether round ``rnd`` of ``s`` has ended (a new round began, or the game is over)."""
    return s.round != rnd or s.phase == GAME_OVER


def target(p: Pending, temperature: float, loss: str = "cross_entropy") -> np.ndarray:
    """The learner's target over the branched actions, float32 ``(50,)``.

    - ``cross_entropy``: the distribution ``softmax(prior + reward / temperature)``, 0 elsewhere.
    - ``logit_mse``: the logits ``prior + reward / temperature``, centred over the branched actions, NaN
      elsewhere. Linear in the rewards, so the mean of many noisy one-sample targets is the target of the
      mean reward: the softmax of a noisy reward is not, and favours actions whose outcomes vary most.
    """
    z = p.prior + np.asarray(p.rewards) / (p.samples * temperature)
    if loss == "logit_mse":
        out = np.full(NUM_TOKENS, np.nan, dtype=np.float32)  # finite marks the branched actions (the support)
        out[p.actions] = z - z.mean()
        return out
    z = np.exp(z - z.max())
    out = np.zeros(NUM_TOKENS, dtype=np.float32)
    out[p.actions] = np.maximum(z / z.sum(), 1e-30)  # > 0 marks the branched actions (the loss's support)
    return out
