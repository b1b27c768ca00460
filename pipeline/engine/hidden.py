"""Determinization: a game with the cards one player cannot see dealt at random."""

from __future__ import annotations

import numpy as np

from .cards import ids_of, mask_of_ids
from .observation import Observation
from .scoring import base_points
from .state import GameState


def hidden_cards(s: GameState, player: int) -> int:
    """The cards ``player`` cannot see, as a mask: the opponent's hand and the stock."""
    return s.hands[player ^ 1] | mask_of_ids(s.stock)


def resample_hidden(s: GameState, player: int, rng: np.random.Generator) -> GameState:
    """A copy of ``s`` with the opponent's hand and the stock dealt again, uniformly, from their union;
    ``player``'s observation is unchanged."""
    opp = player ^ 1
    cards = ids_of(hidden_cards(s, player))
    order = rng.permutation(len(cards))
    n = s.hands[opp].bit_count()
    new = s.clone()
    new.hands[opp] = mask_of_ids(cards[i] for i in order[:n])
    new.stock = [cards[i] for i in order[n:]]
    return new


def determinize(obs: Observation, rng: np.random.Generator) -> GameState:
    """A whole game consistent with ``obs`` (of the player to act), the unseen cards dealt at random; earlier
    rounds' results are ``None`` and ``deal`` is the current position (the player cannot know them)."""
    if not obs.to_act:
        raise ValueError("determinize: the observation must be of the player to act")
    me, opp = obs.player, obs.player ^ 1
    seen = obs.hand | obs.field | obs.my_pile | obs.opp_pile
    if obs.pick_card >= 0:  # the card shown and waiting for a pick
        seen |= 1 << obs.pick_card
    cards = [c for c in range(48) if not seen >> c & 1]
    order = rng.permutation(len(cards))
    hand = mask_of_ids(cards[i] for i in order[:obs.opp_hand_count])
    stock = [cards[i] for i in order[obs.opp_hand_count:]]
    s = GameState.__new__(GameState)
    s.rng = np.random.default_rng(int(rng.integers(2**63)))
    s.deals = None
    s.num_rounds = obs.num_rounds
    s.init_points = (obs.my_points + obs.opp_points) // 2  # points only change hands
    def seats(mine: int, theirs: int) -> list[int]:  # a per-player pair from ``me``'s view
        return [mine, theirs] if me == 0 else [theirs, mine]

    s.points = seats(obs.my_points, obs.opp_points)
    s.round = obs.round
    s.dealer = me if obs.is_dealer else opp
    s.hands = seats(obs.hand, hand)
    s.piles = seats(obs.my_pile, obs.opp_pile)
    s.field = obs.field
    s.stock = stock
    s.turn = obs.turn
    s.player = me
    s.koikoi = seats(obs.my_koikoi, obs.opp_koikoi)
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
