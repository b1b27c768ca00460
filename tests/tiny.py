"""The suite's shared sizes and helpers, one home each: the tiny network (``TINY``), tiny SL params (``sl_params``),
a tiny saved model (``save_tiny``), a free loopback port (``free_port``), a fresh MLflow store (``copy_store``),
the states of seeded uniform-random games (``random_states``), the check that no hidden card reaches a player
(``assert_blind``) and the float32 comparison of one network's outputs
computed two ways (``assert_fp32_close``). Fixtures over them are in ``tests/conftest.py``."""

from __future__ import annotations

import random
import socket
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.engine import GAME_OVER, GameState, resample_hidden
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


# A float32 sum of n terms is off by up to about n * eps of its terms' magnitude, and which order the kernels sum in
# depends on the batch's shape and the CPU (AVX2 and AVX-512 differ). The network passes a value through a few such
# sums (50 tokens, its width, its feed-forward, a head): 2**10 * eps (1.2e-4) of the outputs' scale bounds their
# rounding with room, where a wrong network or row is off by tenths.
FP32_SLACK = 2**10 * float(np.finfo(np.float32).eps)


def assert_fp32_close(got: Any, want: Any) -> None:
    """``got`` equals ``want`` up to float32 rounding: one network's outputs (or what is computed from them) over
    other batches or kernels. Relative to the outputs' largest finite magnitude, not to each value: a value near
    zero carries the rounding of its terms, not its own size; infinities (illegal tokens) must match exactly."""
    want = np.asarray(want, dtype=np.float64)
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=0, atol=FP32_SLACK * scale)


def sl_params(tiny: dict = SL_TINY, **over: Any):
    """The project's params.yaml sl_train section with ``tiny`` and ``over`` on top (checked: a ParamError if bad)."""
    return params_with(dotted({**tiny, **over}, "sl_train"), ROOT / "params.yaml").sl_train


def random_states(games: int, seed: int, first_deal: int) -> list[tuple[GameState, Any]]:
    """(state, observation of the player to act) at every decision of ``games`` uniform-random games on the deals
    ``first_deal``, ``first_deal + 1``, ..., the moves drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    out = []
    for g in range(games):
        s = GameState(seed=first_deal + g)
        while s.phase != GAME_OVER:
            out.append((s.clone(), s.observation(s.player)))
            legal = s.legal_actions()
            s.step(legal[rng.randrange(len(legal))])
    return out


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


def assert_blind(see: Callable[[GameState], Any], s: GameState, player: int, rng: np.random.Generator,
                 redeals: int = 1) -> tuple[Any, int]:
    """No hidden card reaches ``player``: what ``see(state)`` (a player's values, an encoding, a page: worked out from
    ``player``'s observation of ``state``) makes of ``s`` is the same when the cards ``player`` cannot see (the
    opponent's hand, the stock) are dealt again, ``redeals`` times. Returns what it made of ``s``, and how many of the
    deals moved a card: the caller checks that most did, else nothing was compared."""
    seen, moved = see(s), 0
    for _ in range(redeals):
        other = resample_hidden(s, player, rng)
        assert other.observation(player) == s.observation(player)
        moved += other.hands[player ^ 1] != s.hands[player ^ 1] or other.stock != s.stock
        np.testing.assert_equal(see(other), seen)
    return seen, moved
