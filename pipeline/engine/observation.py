"""A player's view of a game: everything public plus the player's own hand, nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .actions import GAME_OVER, PICK, Turn

if TYPE_CHECKING:
    from .state import GameState


@dataclass(frozen=True)
class Observation:
    """What one player may see. Relative fields (``my_``/``opp_``) are from ``player``'s seat.

    ``turns`` is this round's public history, the turn in progress last (``draw`` is -1
    until the stock card is turned). ``decision``/``legal_mask`` are set only when
    ``player`` is the one to act.
    """

    player: int
    to_act: bool
    decision: int | None
    legal_mask: int
    hand: int
    field: int
    my_pile: int
    opp_pile: int
    opp_hand_count: int
    stock_count: int
    round: int
    num_rounds: int
    turn: int
    is_dealer: bool
    my_points: int
    opp_points: int
    my_koikoi: int
    opp_koikoi: int
    my_yaku_points: int
    opp_yaku_points: int
    pick_card: int  # card being matched in a pick decision, else -1
    pick_from_draw: bool
    turns: tuple[Turn, ...]

    @classmethod
    def of(cls, s: GameState, player: int) -> Observation:
        opp = player ^ 1
        to_act = s.phase < GAME_OVER and s.player == player  # not at the end, nor at chance (afterstates)
        turns = tuple(s.turns)
        if s.phase != GAME_OVER and s.cur[1] >= 0:
            turns = turns + (Turn(*s.cur),)
        return cls(
            player=player,
            to_act=to_act,
            decision=s.phase if to_act else None,
            legal_mask=s.legal_mask() if to_act else 0,
            hand=s.hands[player],
            field=s.field,
            my_pile=s.piles[player],
            opp_pile=s.piles[opp],
            opp_hand_count=s.hands[opp].bit_count(),
            stock_count=len(s.stock),
            round=s.round,
            num_rounds=s.num_rounds,
            turn=s.turn,
            is_dealer=s.dealer == player,
            my_points=s.points[player],
            opp_points=s.points[opp],
            my_koikoi=s.koikoi[player],
            opp_koikoi=s.koikoi[opp],
            my_yaku_points=s.yaku_points(player),
            opp_yaku_points=s.yaku_points(opp),
            pick_card=s.pick_card if s.phase == PICK else -1,
            pick_from_draw=s.pick_from_draw if s.phase == PICK else False,
            turns=turns,
        )
