"""The page's endpoints beyond playing (included by ``app.create_app``): who the opponents are, and the record.

- ``GET /api/opponents/about`` -> ``[{"spec", "name", "rating", "hint"}]`` for the opponents offered
- ``GET /api/games/{id}/opponent`` -> the same for a game's opponent (``hint``: the unit of its hint values)
- ``GET /api/history`` -> ``{"games", "opponents", "skipped"}``: the finished games in the records directory,
  the person's win rate against each opponent with its Wilson 95% interval, and the files that could not be read

None of them names a card: what they say is public before, during and after any game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter

from ..agents.specs import model_of
from .about import describe
from .games import Games
from .history import history


def _meta_of(spec: str, root: Path) -> dict[str, Any] | None:
    """A model directory's meta from its config.json (no torch needed); None for the built-in agents."""
    try:  # a searcher hints with its model's values
        return dict(json.loads((root / model_of(spec) / "config.json").read_text(encoding="utf-8")).get("meta", {}))
    except (OSError, ValueError, AttributeError):
        return None


def router(games: Games, root: Path) -> APIRouter:
    """The routes over ``games``; ``root`` is the project directory (opponents, ratings, params.yaml)."""
    r = APIRouter()

    @r.get("/api/opponents/about")
    def about_opponents() -> list[dict[str, Any]]:
        return [describe(spec, root, _meta_of(spec, root)) for spec in games.opponents.offered()]

    @r.get("/api/games/{game_id}/opponent")
    def opponent(game_id: str) -> dict[str, Any]:
        game = games.get(game_id)
        meta = game.meta if game.has_values else None
        return describe(game.opponent, root, meta)

    @r.get("/api/history")
    def played() -> dict[str, Any]:
        return history(games.records_dir)

    return r
