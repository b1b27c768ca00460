"""A player's view of a game: everything public plus the player's own hand, nothing else."""

from __future__ import annotations

from typing import NamedTuple

from .actions import Turn


class Observation(NamedTuple):
    """What one player may see. Relative fields (``my_``/``opp_``) are from ``player``'s seat.

    ``turns`` is this round's public history, the turn in progress last (``draw`` is -1
    until the stock card is turned). ``decision``/``legal_mask`` are set only when
    ``player`` is the one to act.

    A named tuple, not a frozen dataclass: search playouts make hundreds of observations a decision, and a
    tuple is built ten times faster (positionally, as ``GameState.observation`` does).
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
