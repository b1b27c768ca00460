"""Determinization: a copy of a game with the cards one player cannot see dealt again at random.

Rollout targets average a decision's branches over several such copies, so a target measures what an
action is worth given what the player knows, not given one stock order (docs/rl.md, "Rollout policy
iteration", ``rl.rollout.samples``).
"""

from __future__ import annotations

import numpy as np

from .cards import ids_of
from .state import GameState


def hidden_cards(s: GameState, player: int) -> int:
    """The cards ``player`` cannot see, as a mask: the opponent's hand and the stock."""
    mask = s.hands[player ^ 1]
    for c in s.stock:
        mask |= 1 << c
    return mask


def resample_hidden(s: GameState, player: int, rng: np.random.Generator) -> GameState:
    """A copy of ``s`` with the opponent's hand and the stock order dealt again from their union.

    Everything ``player`` may see is kept, so ``player``'s observation of the copy equals that of ``s``;
    the opponent keeps its hand size. Uniform over the consistent deals (it ignores what the opponent's
    past play says about its hand).
    """
    opp = player ^ 1
    cards = ids_of(hidden_cards(s, player))
    order = rng.permutation(len(cards))
    n = s.hands[opp].bit_count()
    new = s.clone()
    hand = 0
    for i in order[:n]:
        hand |= 1 << cards[i]
    new.hands[opp] = hand
    new.stock = [cards[i] for i in order[n:]]
    return new
