"""Round rewards (paper IV-C 1): all of a player's decisions in a round share one reward.

``point``: the round's points times ``scale``. ``wp``: the win probability after the round (the actual outcome
when it ends the game) minus ``baseline``, times ``scale``.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..engine import RoundResult

REWARD_MODELS = ("point", "wp")


class WinProbability(Protocol):
    """P(win | round, points, dealer): ``value.winprob.WinProbTable``."""

    def prob(self, round: int, points: int, dealer: bool) -> float: ...


def game_outcome(winner: int | None, player: int) -> float:
    return 0.5 if winner is None else float(winner == player)


@dataclass(frozen=True)
class RewardModel:
    """Turns a finished game's round results into one reward per (round, player)."""

    kind: str
    scale: float = 1.0
    table: WinProbability | None = None
    baseline: float = 0.0  # wp: subtracted from the probability before scaling (0.5 centres the targets)

    def __post_init__(self) -> None:
        if self.kind not in REWARD_MODELS:
            raise ValueError(f"unknown reward model {self.kind!r}; use one of {', '.join(REWARD_MODELS)}")
        if self.kind == "wp" and self.table is None:
            raise ValueError("the wp reward model needs a win-probability table")

    def reward(self, result: RoundResult, player: int, game_over: bool, winner: int | None) -> float:
        """``player``'s reward for one finished round; ``game_over``: the game ended with it (its winner given)."""
        if self.kind == "point":
            value = float(result.points[player])
        elif game_over:  # the game ended with this round: its real outcome
            value = game_outcome(winner, player) - self.baseline
        else:
            dealer = result.dealer if result.winner is None else result.winner  # Dealer's Priority on a draw
            value = self.table.prob(result.round + 1, result.totals[player], dealer == player) - self.baseline
        return value * self.scale

    def round_rewards(self, results: Sequence[RoundResult], winner: int | None) -> list[tuple[float, float]]:
        """``[(reward of player 0, reward of player 1)]`` per round of a finished game, in order."""
        last = len(results) - 1
        return [(self.reward(r, 0, i == last, winner), self.reward(r, 1, i == last, winner))
                for i, r in enumerate(results)]


@dataclass(frozen=True)
class RewardModels:
    """Several reward models credited at once, each reward an array of one value per model (``rl.first_loop``)."""

    models: tuple[RewardModel, ...]

    def reward(self, result: RoundResult, player: int, game_over: bool, winner: int | None) -> np.ndarray:
        return np.array([m.reward(result, player, game_over, winner) for m in self.models])

    round_rewards = RewardModel.round_rewards  # the same rule over ``reward``: a pair of arrays per round
