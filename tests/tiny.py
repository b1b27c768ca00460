"""The suite's shared sizes and helpers, one home each: the tiny network (``TINY``), tiny SL params (``sl_params``),
a tiny saved model (``save_tiny``), a free loopback port (``free_port``) and a fresh MLflow store (``copy_store``).
Fixtures over them are in ``tests/conftest.py``."""

from __future__ import annotations

import socket
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from pipeline.net.model import KoiKoiNet, ModelConfig
from pipeline.net.modelio import save_model
from pipeline.params import dotted, params_with

ROOT = Path(__file__).resolve().parents[1]
TINY_SIZES = {"width": 16, "ff": 32, "heads": 2, "layers": 1}
TINY_CONFIG = {**TINY_SIZES, "dropout": 0.0}
TINY = ModelConfig(**TINY_CONFIG)
# sl_train overrides of a tiny SL run
SL_TINY = {**TINY_SIZES, "batch_size": 64, "max_epochs": 1, "dropout": 0.0, "precision": "32-true", "threads": 1}


def tiny_net(seed: int = 0, **config: Any) -> KoiKoiNet:
    """A tiny network (``TINY``, with ``config`` on top) with seeded weights, in eval mode."""
    torch.manual_seed(seed)
    return KoiKoiNet(replace(TINY, **config)).eval()


def save_tiny(directory: str | Path, seed: int = 0, meta: dict | None = None, **config: Any) -> Path:
    """``tiny_net(seed, **config)`` saved as a model directory (``meta``: ``{"kind": "sl"}``)."""
    return save_model(tiny_net(seed, **config), directory, {"kind": "sl"} if meta is None else meta)


def sl_params(tiny: dict = SL_TINY, **over: Any):
    """The project's params.yaml sl_train section with ``tiny`` and ``over`` on top (checked: a ParamError if bad)."""
    return params_with(dotted({**tiny, **over}, "sl_train"), ROOT / "params.yaml").sl_train


def free_port() -> int:
    """A loopback port free now (a server started on it soon after gets it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_store(empty: Path, db: Path) -> str:
    """A fresh MLflow store at ``db``, copied from ``empty`` (the ``empty_store`` fixture); returns its URI. SQLite's
    backup API, not a file copy: MLflow may still hold ``empty`` open."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(empty)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    return f"sqlite:///{db}"
