"""The games a server holds: created with a fresh id, found by id, the least recently used dropped past a cap."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from .opponents import AgentPool
from .session import GameSession, PlayError

MAX_ROUNDS = 12  # the encoding's round one-hots cover up to 12 rounds (pipeline.encoding.MAX_ROUNDS)


class Games:
    """Every game of one server. Each game has its own lock; this one only guards the table."""

    def __init__(self, records_dir: str | Path, default_opponent: str, max_games: int = 256) -> None:
        self.records_dir = Path(records_dir).resolve()
        self.default_opponent = default_opponent
        self.max_games = max_games
        self.agents = AgentPool()
        self._lock = threading.Lock()
        self._games: OrderedDict[str, GameSession] = OrderedDict()

    def new(self, opponent: str | None = None, seed: int | None = None, rounds: int = 8,
            points: int = 30) -> GameSession:
        """Start a game; ``PlayError`` 400 naming the parameter for a bad one. No seed: a random one."""
        opponent = opponent or self.default_opponent
        if not 1 <= rounds <= MAX_ROUNDS:
            raise PlayError(400, f"rounds must be in 1..{MAX_ROUNDS}, got {rounds}")
        if points < 1:
            raise PlayError(400, f"points must be >= 1, got {points}")
        if seed is None:
            seed = secrets.randbelow(2**31)  # a new deal each game; the seed is in the state to replay it
        elif seed < 0:
            raise PlayError(400, f"seed must be >= 0, got {seed}")
        try:
            agent = self.agents.load(opponent, seed=seed + 1)
        except ValueError as e:
            raise PlayError(400, f"opponent: {e}") from None
        game = GameSession(secrets.token_hex(6), agent, opponent, seed, rounds, points, self.records_dir)
        with self._lock:
            self._games[game.id] = game
            while len(self._games) > self.max_games:  # finished games are on disk; idle ones are lost
                self._games.popitem(last=False)
        return game

    def get(self, game_id: str) -> GameSession:
        """The game with this id, marked as just used; ``PlayError`` 404 when there is none."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                raise PlayError(404, f"no game {game_id!r} on this server (it may have been dropped after "
                                     f"{self.max_games} newer games)")
            self._games.move_to_end(game_id)
        return game
