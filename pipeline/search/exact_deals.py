"""Every deal of an endgame (the searcher's ``exact`` option): a search plays all of them where few enough differ.

Only the opponent's hand and the cards drawn during the rest of the round matter to a search (playouts
end with the round), so :func:`all_deals` counts and enumerates deals as (hand, next draws) pairs; each
pair stands for as many deals as any other, so their rewards weigh alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations, permutations

import numpy as np

from ..engine import GameState, Observation, determinize

LAST_TURN = 16  # a round has at most 16 turns, each with one draw from the stock


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


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


def seen_cards(obs: Observation) -> int:
    """The cards ``obs``'s player sees (its hand, the field, both piles, a drawn card waiting for a pick), as a mask."""
    seen = obs.hand | obs.field | obs.my_pile | obs.opp_pile
    if obs.pick_card >= 0:
        seen |= 1 << obs.pick_card
    return seen
