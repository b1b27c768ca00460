"""Fixtures for the play tests: a tiny saved model, a games table writing records to a temp dir, a client."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from fastapi.testclient import TestClient

from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import save_model
from pipeline.play.app import create_app
from pipeline.play.games import Games


@pytest.fixture(autouse=True)
def one_thread(one_thread):
    """Every test here on one torch thread (tests/conftest.py)."""
    yield one_thread


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A saved untrained model at the test sizes (width 16, one layer): a real model agent, fast."""
    torch.manual_seed(0)
    net = KoiKoiNet(ModelConfig(width=16, ff=32, heads=2, layers=1, dropout=0.0, yaku_cross=("pick",),
                                card_logit=("pick",)))
    return str(save_model(net, tmp_path_factory.mktemp("models") / "tiny", {"kind": "sl"}))


@pytest.fixture
def games(tmp_path, tiny_model) -> Games:
    """A server's games: records in a temp dir, random by default, the tiny model the one offered model."""
    return Games(tmp_path / "played", "random", models_root=Path(tiny_model).parent)


@pytest.fixture
def client(games) -> TestClient:
    with TestClient(create_app(games, root=games.records_dir.parent)) as c:  # no ratings: not the checkout's
        yield c
