"""What the opponent's play this round says about its hand: belief weights of deals, and all deals of an endgame.

A deal (``engine.determinize``) fixes the opponent's hand, and with it the hand the opponent held at each
of its decisions this round (that hand plus the cards it discarded since). Replaying the round's public
history from its start on that deal (:func:`opponent_decisions`) rebuilds the observation the opponent
had at each of its decisions and the action it took. A deal's belief weight is the product over those
decisions of the probability that an opponent model (a policy network: the softmax of its values over
the legal actions) takes that action (:func:`log_weights`, every hand's decisions in one batched call).
Everything comes from the searcher's observation and the deal, never from the true hidden cards.

Rather than weight the deals it plays, a search may draw more deals than it plays and resample them by weight
(:func:`systematic`), so that each deal played is a likely one.

Only the opponent's hand and the cards drawn during the rest of the round matter to a search (playouts
end with the round), so :func:`all_deals` counts and enumerates deals as (hand, next draws) pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations, permutations

import numpy as np

from ..engine import DISCARD, KOIKOI, KOIKOI_DECISION, PICK, STOP, GameState, Observation, Turn, determinize

LAST_TURN = 16  # a round has at most 16 turns, each with one draw from the stock


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def round_start(s: GameState) -> GameState:
    """The round of ``s`` rewound to its first decision: the same deal and points, no turn played.

    The hands get back the cards played from them, the field the cards captured from it, the stock the
    cards drawn from it (on top, in the order they were drawn).
    """
    turns = list(s.turns) + ([Turn(*s.cur)] if s.cur[1] >= 0 else [])
    discards = [_mask([t.discard for t in turns if t.player == p]) for p in (0, 1)]
    draws = [t.draw for t in turns if t.draw >= 0]
    r = s.clone()
    r.hands = [s.hands[0] | discards[0], s.hands[1] | discards[1]]
    r.field = (s.field | s.piles[0] | s.piles[1]) & ~(discards[0] | discards[1] | _mask(draws))
    r.stock = list(s.stock) + draws[::-1]  # the stock is drawn from its end
    r.piles, r.koikoi, r.turns = [0, 0], [0, 0], []
    r.turn, r.player, r.phase = 1, s.dealer, DISCARD
    r.cur = [s.dealer, -1, 0, -1, 0, None]
    r.turn_base, r.pick_card, r.pick_from_draw = 0, -1, False
    return r


def opponent_decisions(s: GameState, me: int) -> list[tuple[Observation, int]]:
    """Each decision the opponent of ``me`` made this round in ``s``, as (its observation then, its action),
    replayed from the round's start (:func:`round_start`) along the round's public turns."""
    opp = me ^ 1
    r = round_start(s)
    out = []
    for t in s.turns:  # complete turns; the one in progress, if any, is ``me``'s
        n = r.turn
        while r.turn == n:
            if r.phase == DISCARD:
                a = t.discard
            elif r.phase == PICK:
                a = _lowest(t.captured2 if r.pick_from_draw else t.captured)  # the one card picked
            elif r.phase == KOIKOI_DECISION:
                a = KOIKOI if t.koikoi else STOP
            else:  # a turn that ended the round is never in an observation's history
                raise ValueError("opponent_decisions: the round ended during its history")
            if t.player == opp:
                out.append((r.observation(opp), a))
            r.step(a)
    return out


def log_weights(model, obs: Observation, deals: Sequence[GameState]) -> np.ndarray:
    """Each deal's log belief weight: the sum over the opponent's decisions this round of the log-probability
    that ``model`` (``values(observations) -> (B, 50)``, -inf where illegal) takes the action it took.

    Deals with the same opponent hand share their decisions; all of them go through ``model`` in one call.
    """
    return batched_log_weights(model, [(obs, deals)])[0]


def batched_log_weights(model, rows: Sequence[tuple[Observation, Sequence[GameState]]]) -> list[np.ndarray]:
    """:func:`log_weights` of several (observation, deals) rows, every row's decisions in one ``model`` call."""
    hands: dict[tuple[int, int], int] = {}  # (row, opponent hand) -> index of its first decision
    spans: list[tuple[int, int]] = []  # per unique hand: [start, end) in ``observations``
    observations: list[Observation] = []
    actions: list[int] = []
    keys = []
    for r, (obs, deals) in enumerate(rows):
        row_keys = []
        for d in deals:
            key = (r, d.hands[obs.player ^ 1])
            if key not in hands:
                hands[key] = len(spans)
                start = len(observations)
                for o, a in opponent_decisions(d, obs.player):
                    observations.append(o)
                    actions.append(a)
                spans.append((start, len(observations)))
            row_keys.append(hands[key])
        keys.append(row_keys)
    logp = np.zeros(len(observations))
    if observations:
        v = model.values(observations).astype(np.float64)
        taken = v[np.arange(len(actions)), actions]
        logp = taken - np.logaddexp.reduce(v, axis=1)  # log-softmax over the legal actions (-inf elsewhere)
    per_hand = np.array([logp[a:b].sum() for a, b in spans], dtype=np.float64)
    return [per_hand[np.asarray(k, dtype=np.int64)] for k in keys]


def systematic(weights: np.ndarray, n: int, u: float) -> np.ndarray:
    """``n`` indices of ``weights`` (>= 0, not all 0) by systematic resampling with offset ``u`` in [0, 1): the ``n``
    evenly spaced points ``(u + k) / n`` on the cumulative normalised weights. Index ``i`` comes ``n * w_i``
    times rounded up or down (low variance: one uniform draw, not ``n``), zero weights never; ascending."""
    cum = np.cumsum(weights, dtype=np.float64)
    at = np.searchsorted(cum, (u + np.arange(n)) / n * cum[-1], side="right")
    return np.minimum(at, np.flatnonzero(weights)[-1])  # a point rounded onto the total: the last weighted index


def draws_left(obs: Observation) -> int:
    """Cards still to be drawn from the stock this round (one per turn, the current turn's if not yet)."""
    drawn = len(obs.turns) == obs.turn and obs.turns[-1].draw >= 0  # the turn in progress has drawn
    return LAST_TURN - obs.turn + 1 - drawn


def deal_count(obs: Observation) -> int:
    """The number of deals that differ for the rest of the round: opponent hands times orders of the next draws."""
    n = 48 - seen_cards(obs).bit_count()
    k = obs.opp_hand_count
    return math.comb(n, k) * math.perm(n - k, min(draws_left(obs), n - k))


def all_deals(obs: Observation, limit: int) -> list[GameState] | None:
    """Every deal consistent with ``obs`` that differs for the rest of the round (each opponent hand with each
    order of the next draws; the rest of the stock in a fixed order), or None when there are more than ``limit``."""
    if deal_count(obs) > limit:
        return None
    seen = seen_cards(obs)
    hidden = [c for c in range(48) if not seen >> c & 1]
    k, d = obs.opp_hand_count, draws_left(obs)
    base = determinize(obs, np.random.default_rng(0))  # the position; its hidden cards are replaced below
    out = []
    for hand in combinations(hidden, k):
        rest = [c for c in hidden if c not in hand]
        for top in permutations(rest, min(d, len(rest))):
            s = base.clone()
            s.hands[obs.player ^ 1] = _mask(hand)
            s.stock = [c for c in rest if c not in top] + list(top[::-1])  # drawn from the end: top[0] first
            s.deal = (s.hands[0], s.hands[1], s.field, tuple(s.stock))
            out.append(s)
    return out


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def seen_cards(obs: Observation) -> int:
    """The cards ``obs``'s player sees (its hand, the field, both piles, a drawn card waiting for a pick), as a mask."""
    seen = obs.hand | obs.field | obs.my_pile | obs.opp_pile
    if obs.pick_card >= 0:
        seen |= 1 << obs.pick_card
    return seen
