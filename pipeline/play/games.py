"""A server's games, least recently used dropped past a cap; those whose record the disk refused kept apart."""

import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from ..net.encoding import MAX_POINTS, MAX_ROUNDS
from .analysis import Judges
from .game_session import GameSession, PlayError, shown
from .opponents import MODELS_ROOT, Opponents, log

MAX_SEED = 2**53 - 1  # seeds stay exact in the page's JavaScript numbers
MAX_UNSAVED = 64  # finished games kept in memory while the records directory refuses their records


class Games:
    def __init__(self, records_dir: str | Path, default_opponent: str, max_games: int = 256,
                 models_root: str | Path = MODELS_ROOT, max_unsaved: int = MAX_UNSAVED,
                 deals: int | None = None, judge: str | None = None) -> None:
        self.records_dir, self.max_games, self.max_unsaved = Path(records_dir).resolve(), max_games, max_unsaved
        self.opponents = Opponents(default_opponent, models_root, deals=deals)  # deals: koikoi play --deals
        self.judges = Judges(judge)  # the searcher that analyses finished games (None: no analysis)
        self._lock = threading.Lock()
        self._games: OrderedDict[str, GameSession] = OrderedDict()  # live games, least recently used first
        self._unsaved: dict[str, GameSession] = {}  # dropped from the table, their record in memory only

    def new(self, opponent: str | None = None, seed: int | None = None, rounds: int = 8,
            points: int = 30) -> GameSession:
        if not 1 <= rounds <= MAX_ROUNDS:
            raise PlayError(400, f"rounds must be in 1..{MAX_ROUNDS}, got {shown(rounds)}")
        if not 1 <= points <= MAX_POINTS:
            raise PlayError(400, f"points must be in 1..{MAX_POINTS}, got {shown(points)}")
        self._room_for_a_game()
        if seed is None:
            # from 2^53 values, so that a client cannot try every seed for the deal it sees; in the record only
            seed = secrets.randbelow(MAX_SEED + 1)
        elif not 0 <= seed <= MAX_SEED:
            raise PlayError(400, f"seed must be in 0..{MAX_SEED}, got {shown(seed)}")
        spec = self.opponents.default if opponent is None else self.opponents.resolve(opponent)
        if spec is None:  # one answer for every refusal: nothing tells a missing path from any other
            raise PlayError(400, f"opponent {shown(opponent)} is not one this server offers; "
                                 f"GET /api/opponents lists them")
        try:
            agent = self.opponents.ref(spec, seed=seed + 1)
        except ValueError as e:
            log(f"opponent {spec} cannot be loaded: {e}")
            raise PlayError(500, f"opponent {shown(spec)} cannot be loaded on this server (its log says why); "
                                 f"choose another") from None
        game = GameSession(secrets.token_hex(6), agent, spec, seed, rounds, points, self.records_dir)
        with self._lock:
            self._games[game.id] = game
            self._drop_old()
        return game

    def _room_for_a_game(self) -> None:
        """``PlayError`` 503 while ``max_unsaved`` records cannot be written (each tried again first)."""
        waiting = self.unsaved()
        if len(waiting) < self.max_unsaved:
            return
        for game in waiting:
            with game.lock:
                game.save_record()
        with self._lock:
            for game in waiting:
                if not game.record_unsaved:
                    self._unsaved.pop(game.id, None)
            left = sum(g.record_unsaved for g in waiting)
        if left >= self.max_unsaved:
            raise PlayError(503, f"no new game: this server cannot write game records and holds {left} unsaved "
                                 f"ones; ask its operator to make --records writable (GET /api/games/{{id}}/record "
                                 f"returns a finished game's)")

    def _drop_old(self) -> None:
        """Past ``max_games``, drop the least recently used games; one with an unsaved record moves apart."""
        while len(self._games) > max(1, self.max_games):
            _, game = self._games.popitem(last=False)
            if game.record_unsaved:
                self._unsaved[game.id] = game

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            game = self._games.get(game_id)
            if game is not None:
                self._games.move_to_end(game_id)
                return game
            game = self._unsaved.get(game_id)
            if game is None:
                raise PlayError(404, f"no game {shown(game_id)} on this server (it may have been dropped after "
                                     f"{self.max_games} newer games)")
            if not game.record_unsaved:  # written since: it goes back among the live games, dropped in turn
                del self._unsaved[game_id]
                self._games[game_id] = game
                self._drop_old()
        return game

    def unsaved(self) -> list[GameSession]:
        with self._lock:
            return [g for g in [*self._games.values(), *self._unsaved.values()] if g.record_unsaved]

    def save_unsaved(self, fallback: Path) -> list[tuple[str, Path | None]]:
        """At shutdown, write every unwritten record there, else to ``fallback``: ``(game id, path or None)``."""
        out = []
        for game in self.unsaved():
            with game.lock:
                out.append((game.id, game.save_record() or game.save_record(fallback)))
        return out
