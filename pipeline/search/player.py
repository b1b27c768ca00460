"""The search player: the network's likeliest actions, sequentially halved over shared deals consistent with
what it saw, chosen by ``log prior + gain / (z * SE)`` so that noise never moves it off its prior (docs/search.md).
The deals are seeded by the player's seed and the observation: the same observation gives the same choice."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..agents.base import Player, PlayerSpec, legal_list, observation_rng
from ..agents.model_agent import NetPlayer
from ..engine import Observation, determinize
from ..net.inference import Inference
from ..selfplay.playout import branch, log_prior, play_out
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .spec import SearchOptions

SE_FLOOR = 1e-6  # reward units: identical per-deal values (a forced outcome) give no evidence either way
ELIMINATED = -1e6  # score offset of the legal actions the search did not keep: below every kept one, prior order


def anchored_scores(logp: np.ndarray, values: np.ndarray, anchor: int, z: float) -> np.ndarray:
    """``log prior + gain / (z * SE)`` per candidate; with one deal there is no noise measured: the prior decides."""
    n = values.shape[1]
    if n < 2:
        return logp.copy()
    diff = values - values[anchor]
    gain = diff.mean(axis=1)
    se = np.maximum(diff.std(axis=1, ddof=1) / math.sqrt(n), SE_FLOOR)
    return logp + gain / (z * se)


@dataclass
class _Decision:
    """One searched decision in flight."""

    obs: Observation
    cands: list[int]
    logp: np.ndarray
    rng: np.random.Generator
    rounds: int
    deals_left: int
    z: float
    alive: list[int] = field(default_factory=list)  # rows of ``cands`` still in
    values: list[list[float]] = field(default_factory=list)  # per candidate row, its rewards deal by deal

    def scores(self) -> np.ndarray:
        n = min(len(self.values[r]) for r in self.alive)
        v = np.array([self.values[r][:n] for r in self.alive])
        return anchored_scores(self.logp[self.alive], v, self.alive.index(0), self.z)

    def gains(self) -> np.ndarray:
        anchor = np.asarray(self.values[0])
        return np.array([np.mean(np.asarray(v) - anchor[:len(v)]) if r else 0.0 for r, v in enumerate(self.values)])

    def halve(self) -> None:
        """The better half by score goes on (at least two), the anchor (row 0) always."""
        keep = max(2, math.ceil(len(self.alive) / 2))
        scores = self.scores()
        order = [self.alive[i] for i in np.argsort(-scores, kind="stable")]
        kept = order[:keep] if 0 in order[:keep] else [0, *order[:keep - 1]]
        self.alive = sorted(kept)


class SearchPlayer:
    """The network's values, and at searched decisions the search's scores; ``rollout`` plays the playouts."""

    def __init__(self, model: NetPlayer, reward: RewardModel, options: SearchOptions, seed: int = 0,
                 rollout: Player | None = None) -> None:
        self.model = model
        self.rollout = rollout if rollout is not None else model
        self.reward = reward
        self.options = options
        self.seed = seed
        self.epsilon = 0.0
        self.searched = 0  # searched decisions
        self.changed = 0  # of which the search chose another action than the network
        self.deals = 0  # deals played, summed over searched decisions
        self.playouts = 0  # playouts played (deals x candidates still in), summed
        self.search_seconds = 0.0
        # (decision type, decisions, seconds) of the last searches: a bench's per-type times
        self.recent: deque[tuple[int, int, float]] = deque(maxlen=10_000)

    # the self-play engine's forward counters: the network's passes and the rollout policy's
    @property
    def forward_seconds(self) -> float:
        return self.model.forward_seconds + (self.rollout.forward_seconds if self.rollout is not self.model else 0.0)

    @property
    def forward_samples(self) -> int:
        return self.model.forward_samples + (self.rollout.forward_samples if self.rollout is not self.model else 0)

    @property
    def forward_calls(self) -> int:
        return self.model.forward_calls + (self.rollout.forward_calls if self.rollout is not self.model else 0)

    def stats(self) -> dict[str, float]:
        return {"searched": self.searched, "changed": self.changed, "deals": self.deals, "playouts": self.playouts,
                "search_seconds": self.search_seconds}

    def values(self, observations: Sequence[Observation]) -> np.ndarray:
        scores = self.model.values(observations)
        if self.options.deals == 0:
            return scores
        rows = [i for i, o in enumerate(observations) if self.searches(o, scores[i])]
        if rows:
            t0 = time.perf_counter()
            q = self.search([observations[i] for i in rows], scores[rows])
            seconds = time.perf_counter() - t0
            self.search_seconds += seconds
            kinds = {observations[i].decision for i in rows}
            self.recent.append((kinds.pop() if len(kinds) == 1 else -1, len(rows), seconds))
            self.searched += len(rows)
            self.changed += int((q.argmax(axis=1) != scores[rows].argmax(axis=1)).sum())
            scores[rows] = q
        return scores

    def searches(self, obs: Observation, scores: np.ndarray) -> bool:
        if obs.decision not in self.options.decisions or not obs.legal_mask & (obs.legal_mask - 1):
            return False
        return len(self.candidates(obs, scores)) > 1

    def candidates(self, obs: Observation, scores: np.ndarray) -> list[int]:
        """The ``k`` likeliest legal actions (all with ``k=0``) within ``gap`` nats of the first, the anchor."""
        logp = log_prior(scores)
        legal = sorted(legal_list(obs), key=lambda a: (-logp[a], a))
        k = self.options.k or len(legal)
        return [a for a in legal[:k] if logp[legal[0]] - logp[a] <= self.options.gap]

    def rng(self, obs: Observation) -> np.random.Generator:
        return observation_rng(self.seed, obs)

    def search(self, observations: Sequence[Observation], scores: np.ndarray) -> np.ndarray:
        return self.improve(observations, scores)[0]

    def improve(self, observations: Sequence[Observation], scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The whole batch searched in shared playout passes: ``(choice, gains)``. ``choice``: the search's scores
        (dropped legal actions below the kept ones, -inf where illegal); ``gains``: each candidate's mean reward less
        the anchor's (NaN for other tokens), what expert iteration tilts by."""
        opts = self.options
        todo = []
        for o, s in zip(observations, scores):
            cands = self.candidates(o, s)
            todo.append(_Decision(o, cands, log_prior(s)[cands], self.rng(o), max(1, math.ceil(math.log2(len(cands)))),
                                  opts.deals, opts.z, alive=list(range(len(cands))), values=[[] for _ in cands]))
        for r in range(max(d.rounds for d in todo)):
            items, spans = [], []
            for d in todo:
                if r >= d.rounds or d.deals_left <= 0:
                    continue
                w = max(1, d.deals_left // max(d.rounds - r, 1))  # an even share of the deals left
                d.deals_left -= w
                deals = [determinize(d.obs, d.rng) for _ in range(w)]
                spans.append((d, w, len(items)))
                items += branch(deals, [d.cands[i] for i in d.alive])
            v = play_out([self.rollout], items, self.reward)
            self.playouts += len(items)
            for d, w, at in spans:
                block = v[at:at + len(d.alive) * w].reshape(len(d.alive), w)  # action-major, as ``branch`` lays out
                for row, vals in zip(d.alive, block):
                    d.values[row] += vals.tolist()
                if r < d.rounds - 1:
                    d.halve()
        choice = np.full((len(observations), 50), -np.inf, dtype=np.float32)
        gains = np.full((len(observations), 50), np.nan, dtype=np.float32)
        for b, d in enumerate(todo):
            self.deals += opts.deals - max(d.deals_left, 0)
            legal = legal_list(d.obs)
            choice[b, legal] = ELIMINATED + log_prior(scores[b])[legal]
            choice[b, [d.cands[i] for i in d.alive]] = d.scores()
            gains[b, d.cands] = d.gains()
        return choice, gains


@dataclass(frozen=True)
class SearchSpec:
    """A search player as sent to a self-play worker (rollout None: the model plays its own playouts)."""

    name: str
    base: NetSpec
    reward: RewardModel
    options: SearchOptions
    seed: int = 0
    epsilon: float = 0.0
    rollout: PlayerSpec | None = None

    def with_inference(self, inference: Inference) -> SearchSpec:
        return replace(self, base=self.base.with_inference(inference))

    def player(self, inference: Inference, device: str) -> SearchPlayer:
        rollout = None if self.rollout is None else self.rollout.player(inference, device)
        return SearchPlayer(self.base.player(inference, device), self.reward, self.options, self.seed, rollout)
