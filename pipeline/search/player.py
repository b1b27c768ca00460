"""The search player: a model that, at its searched decisions, plays every candidate action out on deals
consistent with what it saw and takes the best mean.

At a searched decision with a choice (and, with ``margin``, only where the model hesitates between its
two best actions), each candidate action (every legal one, or the model's ``top`` best) is played on
the same deals, built by ``engine.determinize`` from the player's observation alone, then played
greedily by the model's policy network for both seats to the end of the round on the shared
rollout engine (``selfplay.playout``), every searched decision of a batch in the same forward passes. The
action of best mean reward wins. Elsewhere it plays as its model does.

With ``belief``, each deal's rewards are weighted by how likely an opponent model finds the opponent's
play this round on that deal (``belief``), or, with ``pool``, the deals played are resampled by that weight
from a larger pool (a deal picked k times is played once and weighs k); with ``exact``, a decision with few
enough deals that differ for the rest of the round plays all of them.

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
from typing import NamedTuple

import numpy as np

from ..agents.base import legal_list
from ..agents.model_agent import NetGroup, NetPlayer
from ..engine import GameState, Observation, determinize
from ..net.inference import Inference
from ..selfplay.playout import branch, play_out
from ..selfplay.policies import NetSpec
from ..selfplay.rewards import RewardModel
from .belief import all_deals, batched_log_weights, systematic
from .spec import SearchOptions

WAVE = 8  # deals per action added at a time under a time budget


def observation_seed(obs: Observation) -> int:
    """A stable 64-bit digest of everything in an observation (its repr holds only ints, bools and tuples)."""
    return int.from_bytes(hashlib.blake2b(repr(obs).encode(), digest_size=8).digest(), "little")


class SearchPlayer(NetGroup):
    """``values(observations) -> (B, 50)``: the model's values, and at searched decisions the mean reward of
    each candidate action (-inf elsewhere), so that the arg-max is the search's choice."""

    def __init__(self, model: NetPlayer, reward: RewardModel,
                 options: SearchOptions, seed: int = 0, belief: NetPlayer | None = None) -> None:
        self.model = model
        self.belief = belief  # the opponent model whose likelihood of the opponent's play weights the deals
        self.reward = reward
        self.options = options
        self.seed = seed
        self.epsilon = 0.0
        self.searched = 0  # searched decisions
        self.changed = 0  # of which the search chose another action than the model
        self.deals = 0  # deals played per action, summed over searched decisions
        self.exact = 0  # of which every deal was played (``exact``)
        self.effective = 0.0  # effective deals per action ((sum w)^2 / sum w^2), summed over searched decisions
        self.distinct = 0  # distinct deals per action (fewer than ``deals`` only where resampled), summed likewise
        self.search_seconds = 0.0
        self.recent: deque[tuple[int, float]] = deque(maxlen=10_000)  # (decisions, seconds) of the last searches

    def _nets(self) -> list:
        """The distinct players whose forward passes this one makes."""
        out: list = []
        for p in (self.model, self.belief):
            if p is not None and all(p is not q for q in out):
                out.append(p)
        return out

    def stats(self) -> dict[str, float]:
        """Counts of the searches so far: decisions, changed choices, deals per action, seconds."""
        return {"searched": self.searched, "changed": self.changed, "deals": self.deals, "exact": self.exact,
                "effective": self.effective, "distinct": self.distinct,
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
        """Mean playout rewards of each observation's candidate actions, ``(B, 50)``, -inf elsewhere: over its
        deals weighted by the belief (equal weights under ``belief=uniform``, and on deals resampled by ``pool``)."""
        opts = self.options
        cands = [self.candidates(o, s) for o, s in zip(observations, scores)]
        rngs = [self.rng(o) for o in observations]
        exact = [all_deals(o, opts.exact) if opts.exact else None for o in observations]
        sums = [np.zeros(len(c)) for c in cands]
        played: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in observations]  # per row: (values, log w)
        acc = np.zeros((len(observations), 3))  # per row: sum of weights, of squared weights, the log-weight scale
        count = [0] * len(observations)  # deals per action so far
        n = 0  # sampled deals per action so far (the same for every sampled decision of the batch)
        budget = None if opts.think is None else opts.think * len(observations)
        t0 = time.perf_counter()
        picked = self.resampled(observations, rngs, exact)  # before the first wave: its time is the budget's too
        distinct = [0] * len(observations)  # distinct deals per action so far (fewer than ``count`` where resampled)
        while n < opts.deals:
            w = opts.deals if budget is None else min(WAVE, opts.deals - n)
            rows = []  # (row, its deals, their log weights or None) of this wave: enumerated deals all in the first
            for r, (o, rng, ex, pk) in enumerate(zip(observations, rngs, exact, picked)):
                if pk is not None:
                    if n < len(pk.deals):  # a resampled deal played once, weighted by how often it was picked
                        rows.append((r, pk.deals[n:n + w], np.log(pk.counts[n:n + w])))
                elif ex is None:
                    rows.append((r, [determinize(o, rng) for _ in range(w)], None))
                elif not n:
                    rows.append((r, ex, None))
            if not rows:
                break
            t_wave = time.perf_counter()  # the wave's weights and playouts: what another wave would cost
            logw = self._log_weights(observations, rows)
            items = []
            for r, deals, _ in rows:
                items += branch(deals, cands[r])
            v = play_out([self.model], items, self.reward)
            at = 0
            for (r, deals, _), lw in zip(rows, logw):
                size = len(cands[r]) * len(deals)  # action-major, as ``branch`` lays them out
                block = np.asarray(v[at:at + size], dtype=np.float64).reshape(len(cands[r]), len(deals))
                at += size
                if opts.confidence:
                    played[r].append((block, lw))
                weights = _scaled(acc[r], sums[r], lw)  # may scale the row's sums so far down first
                sums[r] += block @ weights
                distinct[r] += len(deals)
                count[r] += len(deals) if picked[r] is None else int(picked[r].counts[n:n + w].sum())
            n += w
            now = time.perf_counter()
            if budget is not None and now - t0 + (now - t_wave) > budget:  # another wave would overrun
                break
        self.deals += sum(count)
        self.distinct += sum(distinct)
        self.exact += sum(ex is not None for ex in exact)
        self.effective += float((acc[:, 0] ** 2 / acc[:, 1]).sum())  # counts as weights where resampled
        out = np.full((len(observations), 50), -np.inf, dtype=np.float32)
        for r, c in enumerate(cands):
            out[r, c] = sums[r] / acc[r, 0]
            if opts.confidence and exact[r] is None:
                base = c.index(int(np.argmax(scores[r])))
                out[r, c] = lower_bounds(played[r], base, opts.confidence)
        return out

    def resampled(self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator],
                  exact: Sequence[list | None]) -> list[Picks | None]:
        """Per sampled row with ``pool``: ``deals`` deals resampled by belief weight from ``pool`` deals of its
        generator, all rows' weights in one call; None for a row weighted as drawn.

        The pool's offset and the order of the picks come from the row's generator (the choice is a function of
        the observation); the picks are shuffled so that the waves of a time budget, taken in order, are each
        a fair resample of the whole pool (systematic picks come grouped by pool index). A deal picked twice is
        kept once with count 2: a greedy playout of a deal gives the same reward every time."""
        opts = self.options
        out: list[Picks | None] = [None] * len(observations)
        if self.belief is None or opts.pool <= opts.deals:
            return out
        rows = [(r, [determinize(o, rngs[r]) for _ in range(opts.pool)])
                for r, (o, ex) in enumerate(zip(observations, exact)) if ex is None]
        if not rows:
            return out
        logw = batched_log_weights(self.belief, [(observations[r], d) for r, d in rows])
        for (r, pool), lw in zip(rows, logw):
            lw = lw * opts.temper
            at = systematic(np.exp(lw - lw.max()), opts.deals, float(rngs[r].random()))
            at = rngs[r].permutation(at)
            first = list(dict.fromkeys(at.tolist()))  # distinct picks, in the shuffled order
            counts = np.bincount(at, minlength=len(pool))[first].astype(np.float64)
            out[r] = Picks([pool[i] for i in first], counts, at)
        return out

    def _log_weights(self, observations: Sequence[Observation],
                     rows: Sequence[tuple[int, list, np.ndarray | None]]) -> list[np.ndarray]:
        """A wave's log weights per row: those given (resampled deals: the log of their counts), else the belief's
        (times ``temper``), all such rows in one call, or 0 under ``belief=uniform``."""
        logw = [lw if lw is not None else np.zeros(len(d)) for _, d, lw in rows]
        weigh = [k for k, (_, _, lw) in enumerate(rows) if lw is None] if self.belief is not None else []
        if weigh:
            found = batched_log_weights(self.belief, [(observations[rows[k][0]], rows[k][1]) for k in weigh])
            for k, lw in zip(weigh, found):
                logw[k] = lw * self.options.temper  # exact at temper=1: the weights of today's belief
        return logw


class Picks(NamedTuple):
    """A decision's resampled deals: each distinct deal once, how often it was picked, and the picks' indices in the
    pool (shuffled; ``deals`` follows their first appearance)."""

    deals: list[GameState]
    counts: np.ndarray
    at: np.ndarray


def _scaled(acc: np.ndarray, sums: np.ndarray, logw: np.ndarray) -> np.ndarray:
    """A wave's deal weights, ``exp(logw - scale)``. The scale is the largest log-weight so far (``acc``: a row's
    sum of weights, of squared weights, and its scale); when it moves, the row's sums so far are scaled down
    with it. Under ``belief=uniform`` every weight is 1."""
    top = float(logw.max())
    if acc[0] == 0.0 or top > acc[2]:
        shrink = np.exp(acc[2] - top) if acc[0] else 1.0
        acc[0] *= shrink
        acc[1] *= shrink ** 2
        sums *= shrink
        acc[2] = top
    weights = np.exp(logw - acc[2])
    acc[0] += weights.sum()
    acc[1] += (weights ** 2).sum()
    return weights


def lower_bounds(played: Sequence[tuple[np.ndarray, np.ndarray]], base: int, z: float) -> np.ndarray:
    """Each candidate's weighted mean value less ``z`` standard errors of its paired gain over candidate ``base``
    (the model's choice, left as its mean): the arg-max leaves the model only for a gain the deals make sure of.

    ``played`` holds the waves' values (candidates x deals, every candidate on the same deals) and log weights.
    The deals are shared, so the gain's error is that of the per-deal differences, far below either mean's."""
    values = np.concatenate([v for v, _ in played], axis=1).astype(np.float64)
    logw = np.concatenate([lw for _, lw in played])
    w = np.exp(logw - logw.max())
    w /= w.sum()
    means = values @ w
    gain = values - values[base]
    spread = ((gain - (means - means[base])[:, None]) ** 2) @ w  # the weighted variance of each paired gain
    n_eff = 1.0 / float((w ** 2).sum())
    return means - z * np.sqrt(spread / max(n_eff - 1.0, 1.0))


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
    belief: NetSpec | None = None  # the opponent model's policy (``belief``); None: uniform deals

    def with_inference(self, inference: Inference) -> SearchSpec:
        belief = self.belief.with_inference(inference) if self.belief is not None else None
        return replace(self, base=self.base.with_inference(inference), belief=belief)

    def player(self, inference: Inference, device: str) -> SearchPlayer:
        belief = self.belief.player(inference, device) if self.belief is not None else None
        return SearchPlayer(self.base.player(inference, device), self.reward, self.options, self.seed, belief)
