"""The play web app (FastAPI): the JSON API under ``/api`` and the static page that uses only it.

Routes (docs/play.md documents them):

- ``GET /api/opponents``, ``GET /api/cards`` (the deck: names and categories, no game data)
- ``POST /api/games`` -> 201 ``{"id", "state", "events"}``; ``GET /api/games/{id}`` -> ``{"id", "state"}``
- ``POST /api/games/{id}/actions`` ``{"action": token, "move": optional}`` -> ``{"id", "state", "events"}``
- ``GET /api/games/{id}/hint``, ``/review``, ``/record``; ``/analysis`` after the game: its progress, then the
  report of ``pipeline.analysis`` on the person's decisions (docs/analysis.md)
- ``routes``: ``GET /api/opponents/about``, ``/api/games/{id}/opponent``, ``/api/history``

Errors are ``{"error": "one line"}`` (docs/play.md), any echoed input cut short: 400 bad input, an illegal
action or a Host the server does not serve, 403 another site's request, 404 unknown game or path, 405 wrong
method, 409 not now, 413 a body too large, 415 a POST that is not JSON, 500 an internal error, after which the
game is as it was before the request, 503 no new game while records cannot be written. Endpoints are plain
functions, so the server runs them in its thread pool and a slow model in one game does not hold up the others;
each game's lock serialises the requests on that game.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from ..net.encoding import MAX_POINTS, MAX_ROUNDS
from . import routes, view
from .game_session import PlayError
from .games import MAX_SEED, Games
from .guard import LOOPBACK, Guard, excerpt
from .opponents import log

STATIC = Path(__file__).parent / "static"


MAX_SPEC = 255  # characters of an opponent spec: a file name's limit

INTERNAL = ("internal error on the server ({}): the game is as it was before this request; try again, or start "
            "a new game")


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


MAX_ERROR = 300  # characters of an error message: one line, whatever a client sent


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": excerpt(message, MAX_ERROR)}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(excerpt(x) for x in err.get("loc", ()) if x != "body") or "body"  # a key is the client's
    return f"{where}: {excerpt(err.get('msg', 'invalid'), 120)}"


def create_app(games: Games, root: Path = Path("."), hosts: Iterable[str] = LOOPBACK) -> FastAPI:
    """The app over ``games`` (which also holds the opponents offered); ``root`` is the project directory
    (the ratings and params.yaml the page's opponent names come from); ``hosts``: the names and addresses
    the server serves, the only ``Host`` headers it answers (``guard``)."""
    app = FastAPI(title="koikoi play", summary="Play Koi-Koi against the project's agents.")
    app.state.games = games
    app.add_middleware(Guard, hosts=hosts)  # Host, origin, JSON-only POSTs, body size; the security headers

    @app.exception_handler(PlayError)
    def play_error(_: Request, exc: PlayError) -> JSONResponse:
        return _error(exc.status, str(exc))

    @app.exception_handler(Exception)
    def internal_error(request: Request, exc: Exception) -> JSONResponse:
        # the session has rolled its game back; the operator's log gets the cause, the client one line
        log(f"internal error in {request.method} {request.url.path}: {type(exc).__name__}: {exc}")
        return _error(500, INTERNAL.format(type(exc).__name__))

    @app.exception_handler(RequestValidationError)
    def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_message(exc))

    @app.exception_handler(HTTPException)
    def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.get("/api/opponents")
    def opponents() -> dict[str, Any]:
        return {"default": games.default_opponent, "choices": games.opponents.offered()}

    @app.get("/api/cards")
    def cards() -> list[dict[str, Any]]:
        return view.deck()

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame | None = Body(default=None)) -> dict[str, Any]:
        b = body or NewGame()
        game = games.new(b.opponent, b.seed, b.rounds, b.points)
        with game.lock:
            return {"id": game.id, "state": game.view(), "events": game.opening_events}

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return {"id": game.id, "state": game.view()}

    @app.post("/api/games/{game_id}/actions")
    def act(game_id: str, body: Action) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            events = game.act(body.action, body.move)
            return {"id": game.id, "state": game.view(), "events": events}

    @app.get("/api/games/{game_id}/hint")
    def hint(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return {"id": game.id, "move": game.move, "kind": game.values_kind, "options": game.hint()}

    @app.get("/api/games/{game_id}/review")
    def review(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return {"id": game.id, "opponent": game.opponent, "kind": game.values_kind, "decisions": game.review()}

    @app.get("/api/games/{game_id}/analysis")
    def analysis(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return {"id": game.id, **game.analysis(games.judges)}

    @app.get("/api/games/{game_id}/record")
    def record(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        with game.lock:
            return game.record()

    app.include_router(routes.router(games, root))  # the page's opponent names and the person's record

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
