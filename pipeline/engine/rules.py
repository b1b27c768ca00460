"""How an action moves a Koi-Koi game: ``Rules.step`` and the turn and round transitions behind it."""

from __future__ import annotations

import operator

from .actions import (
    DECISION_NAMES,
    DISCARD,
    GAME_OVER,
    KOIKOI,
    KOIKOI_DECISION,
    NUM_ACTIONS,
    PICK,
    STOP,
    IllegalActionError,
    RoundResult,
    Turn,
)
from .cards import MONTH_MASK
from .deal import random_deal
from .scoring import base_points


class Rules:
    """The moves of a game; the fields they change are ``GameState``'s (its ``__slots__``)."""

    __slots__ = ()

    def step(self, action: int) -> None:
        """Apply ``action`` (any integral, e.g. ``numpy.int64``) and advance to the next decision."""
        try:
            # masks must stay Python ints: numpy integers would overflow and lack bit_length()
            action = operator.index(action)
        except TypeError:
            raise IllegalActionError(f"action must be an integer token index 0..{NUM_ACTIONS - 1}, "
                                     f"got {action!r} ({type(action).__name__})") from None
        ph = self.phase
        p = self.player
        if ph == DISCARD:
            bit = 1 << action if 0 <= action < 48 else 0
            if not self.hands[p] & bit:
                raise IllegalActionError(self._illegal(action))
            self.hands[p] ^= bit
            self.cur = [p, action, 0, -1, 0, None]
            matches = self.field & MONTH_MASK[action >> 2]
            if matches.bit_count() == 2:  # two field cards match: the player picks one
                self.phase = PICK
                self.pick_card = action
                self.pick_from_draw = False
                return
            self._capture(p, bit, matches, 2)
            self._draw()
        elif ph == PICK:
            matches = self.field & MONTH_MASK[self.pick_card >> 2]
            bit = 1 << action if 0 <= action < 48 else 0
            if not matches & bit:
                raise IllegalActionError(self._illegal(action))
            self._capture(p, 1 << self.pick_card, bit, 4 if self.pick_from_draw else 2)
            if self.pick_from_draw:
                self._end_turn()
            else:
                self._draw()
        elif ph == KOIKOI_DECISION:
            if action == STOP:
                self.cur[5] = False
                self._end_round(p)
            elif action == KOIKOI:
                self.cur[5] = True
                self.koikoi[p] += 1
                self._next_turn()
            else:
                raise IllegalActionError(self._illegal(action))
        else:
            raise IllegalActionError("the game is over: no action is legal")

    def _illegal(self, action: object) -> str:
        return (f"illegal action {action!r} for player {self.player} in decision "
                f"{DECISION_NAMES[self.phase]}; legal: {self.legal_actions()}")

    def _capture(self, p: int, bit: int, matches: int, slot: int) -> None:
        """Take ``matches`` (one, or all three) with the shown card ``bit``, or lay it on the field."""
        if matches:
            self.field &= ~matches
            self.piles[p] |= bit | matches
            self.cur[slot] = matches
        else:
            self.field |= bit

    def _draw(self) -> None:
        c = self.stock.pop()
        self.cur[3] = c
        bit = 1 << c
        matches = self.field & MONTH_MASK[c >> 2]
        if matches.bit_count() == 2:
            self.phase = PICK
            self.pick_card = c
            self.pick_from_draw = True
            return
        self._capture(self.player, bit, matches, 4)
        self._end_turn()

    def _end_turn(self) -> None:
        p = self.player
        k = self.koikoi[p]
        if base_points(self.piles[p], k > 0) > self.turn_base:
            if self.turn >= 15:  # the player's eighth turn: the round stops by itself
                self.cur[5] = False
                self._end_round(p)
            else:
                self.phase = KOIKOI_DECISION
            return
        if self.turn == 16:
            self._end_round(None)
        else:
            self._next_turn()

    def _next_turn(self) -> None:
        self.turns.append(Turn(*self.cur))
        self.turn += 1
        p = self.player ^ 1
        self.player = p
        self.cur = [p, -1, 0, -1, 0, None]  # nothing played yet: observations must not repeat the last turn
        self.turn_base = base_points(self.piles[p], self.koikoi[p] > 0)
        self.phase = DISCARD

    def _end_round(self, winner: int | None) -> None:
        self.turns.append(Turn(*self.cur))
        dealer = self.dealer
        gain, taker = (1, dealer) if winner is None else (self.yaku_points(winner), winner)  # None: Dealer's Priority
        pts = (gain, -gain) if taker == 0 else (-gain, gain)
        self.points[0] += pts[0]
        self.points[1] += pts[1]
        self.results.append(RoundResult(
            round=self.round, dealer=dealer, deal=self.deal, turns=tuple(self.turns),
            winner=winner, points=pts, totals=(self.points[0], self.points[1]),
            yaku_points=gain if winner is not None else 0,
        ))
        if self.points[0] <= 0 or self.points[1] <= 0 or self.round >= self.num_rounds:
            self.phase = GAME_OVER
            a, b = self.points
            self.winner = 0 if a > b else 1 if b > a else None
            return
        self._start_round(taker)

    def _start_round(self, dealer: int) -> None:
        if self.deals is not None:
            try:
                deal = next(self.deals)
            except StopIteration:
                raise ValueError(f"no deal supplied for round {self.round + 1}") from None
        else:
            deal, redeals = random_deal(self.rng)
            self.redeals += redeals
        h0, h1, fld, stock = deal
        self.deal = (h0, h1, fld, tuple(stock))
        self.round += 1
        self.dealer = dealer
        self.hands = [h0, h1]
        self.piles = [0, 0]
        self.field = fld
        self.stock = list(stock)
        self.turn = 1
        self.player = dealer
        self.koikoi = [0, 0]
        self.turns: list[Turn] = []
        self.cur = [dealer, -1, 0, -1, 0, None]
        self.turn_base = 0
        self.pick_card = -1
        self.pick_from_draw = False
        self.phase = DISCARD
