"""Fixtures for the play tests: a tiny saved model, a games table writing records to a temp dir, a client."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pipeline.play.app import create_app
from pipeline.play.games import Games

BASE = "http://127.0.0.1"  # the server answers only the addresses it serves (loopback by default)


@pytest.fixture(autouse=True)
def one_thread(one_thread):
    """Every test here on one torch thread (tests/conftest.py)."""
    yield one_thread


@pytest.fixture
def games(tmp_path, tiny_model, judge_spec) -> Games:
    """A server's games: records in a temp dir, random by default, the tiny model the one offered model, a judge
    over it for the analysis after a game."""
    return Games(tmp_path / "played", "random", models_root=Path(tiny_model).parent, judge=judge_spec)


@pytest.fixture
def client(games) -> TestClient:
    # no ratings: not the checkout's
    with TestClient(create_app(games, root=games.records_dir.parent), base_url=BASE) as c:
        yield c
