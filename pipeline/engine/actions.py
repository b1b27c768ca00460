"""Decision types, action ids, the illegal-action error and the public record of play."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .deal import Deal

# Decision types (also the SL/RL sample types).
DISCARD, PICK, KOIKOI_DECISION = 0, 1, 2
DECISION_NAMES = ("discard", "pick", "koikoi")
GAME_OVER = 3  # phase after the last round; no decision pending

STOP, KOIKOI = 48, 49
NUM_ACTIONS = 50

class IllegalActionError(ValueError):
    """An action that is not legal in the current state."""


class Turn(NamedTuple):
    """One played turn, all public (a named tuple: one is made for every observation)."""

    player: int
    discard: int
    captured: int  # field cards taken by the played card (mask, played card excluded)
    draw: int
    captured2: int  # field cards taken by the drawn card
    koikoi: bool | None  # None: no prompt; True: claimed koi-koi; False: stopped (incl. automatic)


@dataclass(frozen=True)
class RoundResult:
    """A finished round: its deal, turns, winner and the points that changed hands."""

    round: int
    dealer: int
    deal: Deal
    turns: tuple[Turn, ...]
    winner: int | None  # None: no stop, Dealer's Priority applied
    points: tuple[int, int]  # round points of player 0 and 1 (zero-sum)
    totals: tuple[int, int]  # game points after the round
    yaku_points: int  # the winner's total (0 on Dealer's Priority)
