"""The search player: at its searched decisions, the network's likeliest actions are played out on shared
deals consistent with what it saw, and the choice never strays from the network's prior on noise.

At a searched decision with a choice:

1. **Candidates**: the network's ``k`` likeliest legal actions (by its softmax, the prior), less those more
   than ``gap`` nats below the likeliest (a change there would need a gain of over ``gap * z`` standard errors,
   which the deals seldom show: docs/search.md#the-gap); the likeliest, the *anchor*, is always one. Every other action
   keeps its prior and is never played.
2. **Sequential halving over shared deals**: the ``deals`` deals, built by ``engine.determinize`` from the
   observation alone, are split over ceil(log2(candidates)) rounds; every candidate still in plays each deal
   of a round, then the better half (by the score below) goes on, the anchor always. The playouts are greedy
   (the rollout policy's arg-max for both seats, to the end of the round), so the same deal is the same random
   stream for every candidate: their per-deal differences hold no luck of the deal.
3. **Prior-anchored choice**: the arg-max of ``log prior(a) + gain(a) / T(a)``, where ``gain(a)`` is the mean
   per-deal reward of ``a`` less the anchor's on the deals both played and ``T(a) = z * SE(gain(a))`` its
   measured noise: a gain of ``z`` standard errors is worth one nat of prior. An action one nat less likely
   than the anchor must win by more than ``z`` standard errors, a close second (the network unsure) by less,
   a far one by far more; so the search plays below its prior only where the deals are sure of it, and with
   ``deals=0`` it plays exactly its network's move.

The deals of a decision come from a generator seeded by the player's seed and the observation, so a searcher
is a function of what it sees: the same observation gives the same choice, whatever the hidden cards are and
whatever it is batched with.
"""

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
from ..selfplay.branches import log_prior
from ..selfplay.playout import branch, play_out
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .spec import SearchOptions

SE_FLOOR = 1e-6  # reward units: identical per-deal values (a forced outcome) give no evidence either way
ELIMINATED = -1e6  # score offset of the legal actions the search did not keep: below every kept one, prior order


def anchored_scores(logp: np.ndarray, values: np.ndarray, anchor: int, z: float) -> np.ndarray:
    """``log prior + gain / (z * SE)`` per candidate: ``logp`` (candidates,) their log-priors, ``values``
    (candidates, deals) their rewards on shared deals, ``anchor`` the row of the network's choice (gain 0).

    With one deal there is no measured noise: every gain counts as nothing and the prior decides."""
    n = values.shape[1]
    if n < 2:
        return logp.copy()
    diff = values - values[anchor]
    gain = diff.mean(axis=1)
    se = np.maximum(diff.std(axis=1, ddof=1) / math.sqrt(n), SE_FLOOR)
    return logp + gain / (z * se)


@dataclass
class _Decision:
    """One searched decision in flight: its candidates (tokens), their log-priors and per-deal rewards."""

    obs: Observation
    cands: list[int]
    logp: np.ndarray
    rng: np.random.Generator
    rounds: int
    deals_left: int
    z: float
    alive: list[int] = field(default_factory=list)  # rows of ``cands`` still in
    values: list[list[float]] = field(default_factory=list)  # per candidate row, its rewards deal by deal

    def next_deals(self, rounds_left: int) -> int:
        """Deals of the next round: an even share of those left (at least one)."""
        return max(1, self.deals_left // max(rounds_left, 1))

    def scores(self) -> np.ndarray:
        """The anchored score of each candidate still in, on the deals all of them played."""
        n = min(len(self.values[r]) for r in self.alive)
        v = np.array([self.values[r][:n] for r in self.alive])
        return anchored_scores(self.logp[self.alive], v, self.alive.index(0), self.z)

    def gains(self) -> np.ndarray:
        """Each candidate's mean reward less the anchor's (row 0) on the deals both played."""
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
    """``values(observations) -> (B, 50)``: the network's values, and at searched decisions the anchored score of
    each candidate kept to the end (the legal actions it dropped below them, in prior order; -inf where illegal),
    so that the arg-max is the search's choice. ``rollout``: who plays the playouts (default the network)."""

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
        """Counts of the searches so far: decisions, changed choices, deals, playouts, seconds."""
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
        """Whether this decision is searched: a searched type with two or more candidates."""
        if obs.decision not in self.options.decisions or not obs.legal_mask & (obs.legal_mask - 1):
            return False
        return len(self.candidates(obs, scores)) > 1

    def candidates(self, obs: Observation, scores: np.ndarray) -> list[int]:
        """The actions searched, likeliest first (the anchor first): the ``k`` likeliest legal ones (all with
        ``k=0``) within ``gap`` nats of the anchor; ties go to the lower token."""
        logp = log_prior(scores)
        legal = sorted(legal_list(obs), key=lambda a: (-logp[a], a))
        k = self.options.k or len(legal)
        return [a for a in legal[:k] if logp[legal[0]] - logp[a] <= self.options.gap]

    def rng(self, obs: Observation) -> np.random.Generator:
        """The generator of a decision's deals: seeded by this player's seed and the observation only."""
        return observation_rng(self.seed, obs)

    def search(self, observations: Sequence[Observation], scores: np.ndarray) -> np.ndarray:
        """The anchored scores of each observation's candidates kept to the end (``(B, 50)``, the arg-max is the
        choice; the legal actions dropped rank below them in prior order, -inf where illegal)."""
        return self.improve(observations, scores)[0]

    def improve(self, observations: Sequence[Observation], scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The search of each observation (``scores``: the network's masked values), every decision of the batch
        in the same playout passes, round by round: ``(choice, gains)``, both ``(B, 50)``.

        ``choice``: as ``search`` returns. ``gains``: each candidate's mean reward less the anchor's on the deals
        both played (the anchor's 0), NaN for every other token: what expert iteration's targets tilt the prior by."""
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
                w = d.next_deals(d.rounds - r)
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
    """A search player as sent to a self-play worker (duels): its model's spec, reward, options, seed and the
    rollout policy's spec (None: the model plays its own playouts)."""

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
