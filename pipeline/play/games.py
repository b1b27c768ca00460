"""The games a server holds: created with a fresh id, found by id, the least recently used dropped past a cap
(never a finished game whose record is not written yet)."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from ..net.encoding import MAX_POINTS, MAX_ROUNDS
from .game_session import GameSession, PlayError, shown
from .opponents import MODELS_ROOT, Opponents, log

MAX_SEED = 2**53 - 1  # seeds stay exact in the page's JavaScript numbers


class Games:
    """Every game of one server. Each game has its own lock; this one only guards the table."""

    def __init__(self, records_dir: str | Path, default_opponent: str, max_games: int = 256,
                 models_root: str | Path = MODELS_ROOT) -> None:
        self.records_dir = Path(records_dir).resolve()
        self.max_games = max_games
        self.opponents = Opponents(default_opponent, models_root)
        self._lock = threading.Lock()
        self._games: OrderedDict[str, GameSession] = OrderedDict()

    @property
    def default_opponent(self) -> str:
        return self.opponents.default

    def new(self, opponent: str | None = None, seed: int | None = None, rounds: int = 8,
            points: int = 30) -> GameSession:
        """Start a game; ``PlayError`` 400 naming the parameter for a bad one. No seed: a random one."""
        if not 1 <= rounds <= MAX_ROUNDS:
            raise PlayError(400, f"rounds must be in 1..{MAX_ROUNDS}, got {shown(rounds)}")
        if not 1 <= points <= MAX_POINTS:
            raise PlayError(400, f"points must be in 1..{MAX_POINTS}, got {shown(points)}")
        if seed is None:
            seed = secrets.randbelow(2**31)  # a new deal each game; the seed is in the state to replay it
        elif not 0 <= seed <= MAX_SEED:
            raise PlayError(400, f"seed must be in 0..{MAX_SEED}, got {shown(seed)}")
        spec = self.opponents.default if opponent is None else self.opponents.resolve(opponent)
        if spec is None:  # one answer for every refusal: nothing tells a missing path from any other
            raise PlayError(400, f"opponent {shown(opponent)} is not one this server offers; "
                                 f"GET /api/opponents lists them")
        try:
            agent = self.opponents.load(spec, seed=seed + 1)
        except ValueError as e:
            log(f"opponent {spec} cannot be loaded: {e}")
            raise PlayError(500, f"opponent {shown(spec)} cannot be loaded on this server (its log says why); "
                                 f"choose another") from None
        game = GameSession(secrets.token_hex(6), agent, spec, seed, rounds, points, self.records_dir)
        with self._lock:
            self._games[game.id] = game
            self._drop_old()
        return game

    def _drop_old(self) -> None:
        """Past ``max_games``, drop the least recently used games; a finished game whose record could not be
        written stays (its record lives only here until the records directory takes it)."""
        for gid in list(self._games):
            if len(self._games) <= self.max_games:
                return
            if not self._games[gid].record_unsaved:
                del self._games[gid]

    def get(self, game_id: str) -> GameSession:
        """The game with this id, marked as just used; ``PlayError`` 404 when there is none."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                raise PlayError(404, f"no game {shown(game_id)} on this server (it may have been dropped after "
                                     f"{self.max_games} newer games)")
            self._games.move_to_end(game_id)
        return game

    def unsaved(self) -> list[GameSession]:
        """The finished games whose record is not written yet."""
        with self._lock:
            return [g for g in self._games.values() if g.record_unsaved]

    def save_unsaved(self, fallback: Path) -> list[tuple[str, Path | None]]:
        """Write every unwritten record: to the records directory, else to ``fallback``; ``(game id, path or
        None when neither took it)`` for each. For the server's shutdown."""
        out = []
        for game in self.unsaved():
            with game.lock:
                out.append((game.id, game.save_record() or game.save_record(fallback)))
        return out
