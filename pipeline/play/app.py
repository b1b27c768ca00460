"""The play web app (FastAPI); plain-function endpoints run in a thread pool: a slow model holds up no other game."""

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from ..net.encoding import MAX_POINTS, MAX_ROUNDS
from . import view
from .about import describe, meta_of
from .game_session import GameSession, PlayError
from .games import MAX_SEED, Games
from .guard import LOOPBACK, Guard, excerpt
from .history import history
from .opponents import log

STATIC = Path(__file__).parent / "static"
MAX_SPEC = 255  # characters of an opponent spec: a file name's limit
MAX_ERROR = 300  # characters of an error message: one line, whatever a client sent
INTERNAL = "internal error on the server ({}): the game is as it was before this request; try again or start a new game"


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    opponent: str | None = Field(None, min_length=1, max_length=MAX_SPEC,
                                 description="one of GET /api/opponents' choices (default: its default)")
    seed: int | None = Field(None, ge=0, le=MAX_SEED, description="the deals' seed (default: a random one)")
    rounds: int = Field(8, ge=1, le=MAX_ROUNDS, description="rounds of the game")
    points: int = Field(30, ge=1, le=MAX_POINTS, description="each player's initial points")


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: int
    move: int | None = None  # the state's "move" the action was chosen at; a stale one is refused (409)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": excerpt(message, MAX_ERROR)}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(excerpt(x) for x in err.get("loc", ()) if x != "body") or "body"  # a key is the client's
    return f"{where}: {excerpt(err.get('msg', 'invalid'), 120)}"


def create_app(games: Games, root: Path = Path("."), hosts: Iterable[str] = LOOPBACK) -> FastAPI:
    """The app over ``games``; ``root``: the project directory; ``hosts``: the only ``Host`` headers it answers."""
    app = FastAPI(title="koikoi play", summary="Play Koi-Koi against the project's agents.")
    app.state.games = games
    app.add_middleware(Guard, hosts=hosts)  # Host, origin, JSON-only POSTs, body size; the security headers

    app.add_exception_handler(PlayError, lambda _, exc: _error(exc.status, str(exc)))
    app.add_exception_handler(RequestValidationError, lambda _, exc: _error(400, _validation_message(exc)))
    app.add_exception_handler(HTTPException, lambda _, exc: _error(exc.status_code, str(exc.detail)))

    @app.exception_handler(Exception)
    def internal_error(request: Request, exc: Exception) -> JSONResponse:
        # the session has rolled its game back; the operator's log gets the cause, the client one line
        log(f"internal error in {request.method} {request.url.path}: {type(exc).__name__}: {exc}")
        return _error(500, INTERNAL.format(type(exc).__name__))

    @app.get("/api/opponents")
    def opponents() -> dict[str, Any]:
        return {"default": games.opponents.default, "choices": games.opponents.offered()}

    @app.get("/api/cards")
    def cards() -> list[dict[str, Any]]:
        return view.deck()

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame | None = Body(default=None)) -> dict[str, Any]:
        b = body or NewGame()
        game = games.new(b.opponent, b.seed, b.rounds, b.points)
        with game.lock:
            return {"id": game.id, "state": game.view(), "events": game.opening_events}

    def locked(game_id: str, answer: Callable[[GameSession], dict[str, Any]]) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return answer(game)

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str) -> dict[str, Any]:
        return locked(game_id, lambda g: {"id": g.id, "state": g.view()})

    @app.post("/api/games/{game_id}/actions")
    def act(game_id: str, body: Action) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            events = game.act(body.action, body.move)
            return {"id": game.id, "state": game.view(), "events": events}

    @app.get("/api/games/{game_id}/hint")
    def hint(game_id: str) -> dict[str, Any]:
        return locked(game_id, lambda g: {"id": g.id, "move": g.move, "kind": g.values_kind, "options": g.hint()})

    @app.get("/api/games/{game_id}/review")
    def review(game_id: str) -> dict[str, Any]:
        return locked(game_id, lambda g: {"id": g.id, "opponent": g.opponent, "kind": g.values_kind,
                                          "decisions": g.review()})

    @app.get("/api/games/{game_id}/analysis")
    def analysis(game_id: str) -> dict[str, Any]:
        return locked(game_id, lambda g: {"id": g.id, **g.analysis(games.judges)})

    @app.get("/api/games/{game_id}/record")
    def record(game_id: str) -> dict[str, Any]:
        return locked(game_id, lambda g: g.record())

    @app.get("/api/opponents/about")
    def about_opponents() -> list[dict[str, Any]]:
        return [describe(spec, root, meta_of(spec, root)) for spec in games.opponents.offered()]

    @app.get("/api/games/{game_id}/opponent")
    def opponent(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        return describe(game.opponent, root, game.meta if game.has_values else None)

    @app.get("/api/history")
    def played() -> dict[str, Any]:
        return history(games.records_dir)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
