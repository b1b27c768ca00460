"""Determinization: a game with the cards one player cannot see dealt at random.

Branch targets average a decision's branches over several such copies, so a target measures what an
action is worth given what the player knows, not given one stock order (``rl.branch.samples``).
``determinize`` builds such a game from a player's observation alone, for players that search.
"""

from __future__ import annotations

import numpy as np

from .cards import ids_of
from .observation import Observation
from .scoring import base_points
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


def determinize(obs: Observation, rng: np.random.Generator) -> GameState:
    """A whole game consistent with ``obs``, for its player to search: the opponent's hand and the stock
    dealt at random from the cards the player cannot see, everything else as observed.

    ``obs`` must be of the player to act. The copy's observation for that player equals ``obs``. What it
    cannot know is left out: earlier rounds' results (``results`` holds ``None`` for each, so that a
    round's result keeps its index) and the round's original deal (``deal`` is the current position).
    Future rounds are dealt from a generator seeded by ``rng``.
    """
    if not obs.to_act:
        raise ValueError("determinize: the observation must be of the player to act")
    me, opp = obs.player, obs.player ^ 1
    seen = obs.hand | obs.field | obs.my_pile | obs.opp_pile
    if obs.pick_card >= 0:  # the card shown and waiting for a pick
        seen |= 1 << obs.pick_card
    cards = [c for c in range(48) if not seen >> c & 1]
    order = rng.permutation(len(cards))
    hand = 0
    for i in order[:obs.opp_hand_count]:
        hand |= 1 << cards[i]
    stock = [cards[i] for i in order[obs.opp_hand_count:]]
    s = GameState.__new__(GameState)
    s.rng = np.random.default_rng(int(rng.integers(2**63)))
    s.deals = None
    s.num_rounds = obs.num_rounds
    s.init_points = (obs.my_points + obs.opp_points) // 2  # points only change hands
    s.points = [0, 0]
    s.points[me], s.points[opp] = obs.my_points, obs.opp_points
    s.round = obs.round
    s.dealer = me if obs.is_dealer else opp
    s.hands = [0, 0]
    s.hands[me], s.hands[opp] = obs.hand, hand
    s.piles = [0, 0]
    s.piles[me], s.piles[opp] = obs.my_pile, obs.opp_pile
    s.field = obs.field
    s.stock = stock
    s.turn = obs.turn
    s.player = me
    s.koikoi = [0, 0]
    s.koikoi[me], s.koikoi[opp] = obs.my_koikoi, obs.opp_koikoi
    s.phase = obs.decision
    s.pick_card = obs.pick_card
    s.pick_from_draw = obs.pick_from_draw
    turns = list(obs.turns)
    if len(turns) == obs.turn:  # the turn in progress is the observation's last
        t = turns.pop()
        s.cur = [t.player, t.discard, t.captured, t.draw, t.captured2, t.koikoi]
    else:
        s.cur = [me, -1, 0, -1, 0, None]
    s.turns = turns
    start = obs.my_pile  # the pile at the start of the turn: this turn's captures taken back out
    _, d, cap, drawn, cap2, _ = s.cur
    if cap:
        start &= ~(cap | 1 << d)
    if cap2:
        start &= ~(cap2 | 1 << drawn)
    s.turn_base = base_points(start, obs.my_koikoi > 0)
    s.deal = (s.hands[0], s.hands[1], s.field, tuple(stock))
    s.results = [None] * (obs.round - 1)
    s.winner = None
    s.redeals = 0
    return s
