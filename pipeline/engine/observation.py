"""A player's view of a game: everything public plus the player's own hand, nothing else."""

from __future__ import annotations

from typing import NamedTuple

from .actions import Turn


class Observation(NamedTuple):
    """What one player may see (``turns``: this round's, the turn in progress last); a named tuple, ten times
    faster to build than a dataclass: search makes hundreds a decision."""

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
