"""Fixtures for the play tests: a tiny saved model, a games table writing records to a temp dir, a client."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from fastapi.testclient import TestClient

from pipeline.model import KoiKoiNet, ModelConfig
from pipeline.modelio import save_model
from pipeline.play.app import create_app
from pipeline.play.games import Games


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny nets gain nothing from intra-op threads, and on a shared machine they lose a lot."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
    with TestClient(create_app(games)) as c:
        yield c
