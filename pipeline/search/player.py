"""The search player: a model that, at its searched decisions, plays every candidate action out on deals
consistent with what it saw and takes the best mean.

At a searched decision with a choice (and, with ``margin``, only where the model hesitates between its
two best actions), each candidate action (every legal one, or the model's ``top`` best) is played on
the same deals, built by ``engine.determinize`` from the player's observation alone, then played
greedily by the model's policy network for both seats to the end of the round on the shared
rollout engine (``selfplay.playout``), every searched decision of a batch in the same forward passes. The
action of best mean reward wins. Elsewhere it plays as its model does.

The deals of a decision come from a generator seeded by the player's seed and the observation, so a
searcher is a function of what it sees: the same observation gives the same choice, whatever the
hidden cards are and whatever it is batched with.
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..agents.base import legal_list
from ..agents.model_agent import NetPlayer
from ..engine import Observation, determinize
from ..net.inference import Inference
from ..selfplay.playout import branch, play_out
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .spec import SearchOptions

WAVE = 8  # deals per action added at a time under a time budget


def observation_seed(obs: Observation) -> int:
    """A stable 64-bit digest of everything in an observation (its repr holds only ints, bools and tuples)."""
    return int.from_bytes(hashlib.blake2b(repr(obs).encode(), digest_size=8).digest(), "little")


class SearchPlayer:
    """``values(observations) -> (B, 50)``: the model's values, and at searched decisions the mean reward of
    each candidate action (-inf elsewhere), so that the arg-max is the search's choice."""

    def __init__(self, model: NetPlayer, reward: RewardModel, options: SearchOptions, seed: int = 0) -> None:
        self.model = model
        self.reward = reward
        self.options = options
        self.seed = seed
        self.epsilon = 0.0
        self.searched = 0  # searched decisions
        self.changed = 0  # of which the search chose another action than the model
        self.deals = 0  # deals played per action, summed over searched decisions
        self.search_seconds = 0.0
        self.recent: deque[tuple[int, float]] = deque(maxlen=10_000)  # (decisions, seconds) of the last searches

    # the self-play engine's forward counters: the model makes every forward pass, its playouts' too
    @property
    def forward_seconds(self) -> float:
        return self.model.forward_seconds

    @property
    def forward_samples(self) -> int:
        return self.model.forward_samples

    @property
    def forward_calls(self) -> int:
        return self.model.forward_calls

    def stats(self) -> dict[str, float]:
        """Counts of the searches so far: decisions, changed choices, deals per action, seconds."""
        return {"searched": self.searched, "changed": self.changed, "deals": self.deals,
                "search_seconds": self.search_seconds}

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        scores = self.model.values(observations)
        rows = [i for i, o in enumerate(observations) if self.searches(o, scores[i])]
        if rows:
            t0 = time.perf_counter()
            q = self.search([observations[i] for i in rows], scores[rows])
            seconds = time.perf_counter() - t0
            self.search_seconds += seconds
            self.recent.append((len(rows), seconds))
            self.searched += len(rows)
            self.changed += int((q.argmax(axis=1) != scores[rows].argmax(axis=1)).sum())
            scores[rows] = q
        return scores

    def searches(self, obs: Observation, scores: np.ndarray) -> bool:
        """Whether this decision is searched: a searched type, a choice, and (``margin``) a close call."""
        if obs.decision not in self.options.decisions or not obs.legal_mask & (obs.legal_mask - 1):
            return False
        if self.options.margin >= 1.0:
            return True
        p = np.sort(_softmax(scores))[::-1]
        return bool(p[0] - p[1] < self.options.margin)

    def candidates(self, obs: Observation, scores: np.ndarray) -> list[int]:
        """The actions searched: every legal one, or the model's ``top`` best (ascending token order)."""
        legal = legal_list(obs)
        top = self.options.top
        if top and len(legal) > top:
            return sorted(sorted(legal, key=lambda a: -scores[a])[:top])
        return legal

    def rng(self, obs: Observation) -> np.random.Generator:
        """The generator of a decision's deals: seeded by this player's seed and the observation only."""
        return np.random.default_rng([self.seed, observation_seed(obs)])

    def search(self, observations: Sequence[Observation], scores: np.ndarray) -> np.ndarray:
        """Mean playout rewards of each observation's candidate actions over its deals, ``(B, 50)``, -inf
        elsewhere."""
        opts = self.options
        cands = [self.candidates(o, s) for o, s in zip(observations, scores)]
        rngs = [self.rng(o) for o in observations]
        sums = [np.zeros(len(c)) for c in cands]
        played: list[list[np.ndarray]] = [[] for _ in observations]  # per row: each wave's values (``confidence``)
        n = 0  # deals per action so far (the same for every decision of the batch)
        budget = None if opts.think is None else opts.think * len(observations)
        t0 = time.perf_counter()
        while n < opts.deals:
            w = opts.deals if budget is None else min(WAVE, opts.deals - n)
            deals = [[determinize(o, rng) for _ in range(w)] for o, rng in zip(observations, rngs)]
            t_wave = time.perf_counter()  # the wave's playouts: what another wave would cost
            items = []
            for c, d in zip(cands, deals):
                items += branch(d, c)
            v = play_out([self.model], items, self.reward)
            at = 0
            for r, c in enumerate(cands):
                size = len(c) * w  # action-major, as ``branch`` lays them out
                block = np.asarray(v[at:at + size], dtype=np.float64).reshape(len(c), w)
                at += size
                if opts.confidence:
                    played[r].append(block)
                sums[r] += block.sum(axis=1)
            n += w
            now = time.perf_counter()
            if budget is not None and now - t0 + (now - t_wave) > budget:  # another wave would overrun
                break
        self.deals += n * len(observations)
        out = np.full((len(observations), 50), -np.inf, dtype=np.float32)
        for r, c in enumerate(cands):
            out[r, c] = sums[r] / n
            if opts.confidence:
                base = c.index(int(np.argmax(scores[r])))
                out[r, c] = lower_bounds(np.concatenate(played[r], axis=1), base, opts.confidence)
        return out


def lower_bounds(values: np.ndarray, base: int, z: float) -> np.ndarray:
    """Each candidate's mean value less ``z`` standard errors of its paired gain over candidate ``base`` (the
    model's choice, left as its mean): the arg-max leaves the model only for a gain the deals make sure of.

    ``values``: candidates x deals, every candidate on the same deals, so the gain's error is that of the
    per-deal differences, far below either mean's."""
    means = values.mean(axis=1)
    gain = values - values[base]
    return means - z * gain.std(axis=1, ddof=1) / np.sqrt(values.shape[1]) if values.shape[1] > 1 else means


def _softmax(scores: np.ndarray) -> np.ndarray:
    legal = scores[np.isfinite(scores)].astype(np.float64)
    e = np.exp(legal - legal.max())
    return e / e.sum()


@dataclass(frozen=True)
class SearchSpec:
    """A search player as sent to a self-play worker (duels): its model's spec, reward, options and seed."""

    name: str
    base: NetSpec
    reward: RewardModel
    options: SearchOptions
    seed: int = 0
    epsilon: float = 0.0

    def with_inference(self, inference: Inference) -> SearchSpec:
        return replace(self, base=self.base.with_inference(inference))

    def player(self, inference: Inference, device: str) -> SearchPlayer:
        return SearchPlayer(self.base.player(inference, device), self.reward, self.options, self.seed)
