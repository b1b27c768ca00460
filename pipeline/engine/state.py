"""The Koi-Koi game state: one ``GameState`` holds a whole multi-round game; only decisions stop it. Actions: a
card id 0..47 (discard, pick), ``STOP`` (48) or ``KOIKOI`` (49). Players are 0 and 1."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

from .actions import DISCARD, GAME_OVER, KOIKOI, KOIKOI_DECISION, PICK, STOP, RoundResult, Turn
from .cards import MONTH_MASK, ids_of
from .deal import Deal
from .observation import Observation
from .rules import Rules
from .scoring import base_points, with_bonus


class GameState(Rules):
    """A Koi-Koi game. ``seed`` draws the first dealer and every shuffle; ``deals`` supplies them instead."""

    __slots__ = (
        "rng", "deals", "num_rounds", "init_points", "points", "round", "dealer",
        "hands", "piles", "field", "stock", "turn", "player", "koikoi", "phase",
        "pick_card", "pick_from_draw", "turn_base", "cur", "turns", "deal",
        "results", "winner", "redeals",
    )

    def __init__(
        self,
        seed: int | None = 0,
        num_rounds: int = 8,
        init_points: int = 30,
        first_dealer: int | None = None,
        deals: Iterator[Deal] | None = None,
    ) -> None:
        if num_rounds < 1:
            raise ValueError(f"num_rounds must be >= 1, got {num_rounds}")
        if init_points < 1:
            raise ValueError(f"init_points must be >= 1, got {init_points}")
        self.rng = np.random.default_rng(seed)
        self.deals = deals
        self.num_rounds = num_rounds
        self.init_points = init_points
        self.points = [init_points, init_points]
        self.round = 0
        self.results: list[RoundResult] = []
        self.winner: int | None = None  # game winner; None while playing or on a draw
        self.redeals = 0
        if first_dealer is None:
            first_dealer = int(self.rng.integers(2))
        if first_dealer not in (0, 1):
            raise ValueError(f"first_dealer must be 0 or 1, got {first_dealer!r}")
        self._start_round(first_dealer)

    @property
    def current_player(self) -> int:
        return self.player

    @property
    def is_over(self) -> bool:
        return self.phase == GAME_OVER

    def legal_actions(self) -> list[int]:
        """Legal actions of the pending decision, ascending (empty when the game is over)."""
        return ids_of(self.legal_mask())

    def legal_mask(self) -> int:
        """Legal actions as a bit mask over the 50 action tokens."""
        ph = self.phase
        if ph == DISCARD:
            return self.hands[self.player]
        if ph == PICK:
            return self.field & MONTH_MASK[self.pick_card >> 2]
        if ph == KOIKOI_DECISION:
            return (1 << STOP) | (1 << KOIKOI)
        return 0

    def yaku_points(self, player: int) -> int:
        """The player's current yaku total, koi-koi bonus included."""
        k = self.koikoi[player]
        return with_bonus(base_points(self.piles[player], k > 0), k)

    def clone(self, deals: Iterator[Deal] | None = None) -> GameState:
        """An independent copy (its RNG continues alike). With ``deals``, later rounds are those deals and the
        RNG is shared, not copied: half the cost for a playout that ends with its round."""
        new = GameState.__new__(GameState)
        for name in GameState.__slots__:
            setattr(new, name, getattr(self, name))
        if deals is not None:
            new.deals = deals
        else:
            bg = type(self.rng.bit_generator)()
            bg.state = self.rng.bit_generator.state
            new.rng = np.random.Generator(bg)
        new.points = list(self.points)
        new.hands = list(self.hands)
        new.piles = list(self.piles)
        new.stock = list(self.stock)
        new.koikoi = list(self.koikoi)
        new.cur = list(self.cur)
        new.turns = list(self.turns)
        new.results = list(self.results)
        return new

    def observation(self, player: int) -> Observation:
        """What ``player`` may see: never the opponent's hand nor the stock order."""
        s = self
        opp = player ^ 1
        to_act = s.phase < GAME_OVER and s.player == player  # not at the end
        turns = tuple(s.turns)
        if s.phase != GAME_OVER and s.cur[1] >= 0:
            turns = turns + (Turn(*s.cur),)
        pick = s.phase == PICK
        return Observation(  # positional, in the fields' order: far faster than keywords on this hot path
            player, to_act, s.phase if to_act else None, s.legal_mask() if to_act else 0,
            s.hands[player], s.field, s.piles[player], s.piles[opp], s.hands[opp].bit_count(), len(s.stock),
            s.round, s.num_rounds, s.turn, s.dealer == player,
            s.points[player], s.points[opp], s.koikoi[player], s.koikoi[opp], s.yaku_points(player), s.yaku_points(opp),
            s.pick_card if pick else -1, s.pick_from_draw if pick else False, turns,
        )


def random_observations(n: int, seed: int = 0) -> list[Observation]:
    """``n`` acting-player observations from seeded uniform-random games (benchmarks, warm-ups)."""
    rng = random.Random(seed)
    out: list[Observation] = []
    g = 0
    while len(out) < n:
        s = GameState(seed=seed * 1_000_003 + g)
        g += 1
        while s.phase != GAME_OVER and len(out) < n:
            out.append(s.observation(s.player))
            legal = s.legal_actions()
            s.step(legal[rng.randrange(len(legal))])
    return out
