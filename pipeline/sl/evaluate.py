"""Top-1 agreement of a model with recorded human choices, per decision type."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..net import encoding
from ..net.model import KoiKoiNet, masked
from . import DECISION_NAMES
from .datamodule import SLDataModule, tensor_dataset
from .dataset import read_games


@torch.inference_mode()
def predict(net: KoiKoiNet, dm: SLDataModule, batch_size: int = 512) -> np.ndarray:
    """Greedy legal action of ``net`` for every sample of ``dm``'s val set."""
    net.eval()
    unpack = dm.unpacker.cpu()
    out = []
    ds = tensor_dataset(dm.val_set)
    for i in range(0, len(ds), batch_size):
        bits, values, legal, _, decision = ds[i:i + batch_size]
        out.append(masked(net(unpack(bits, values), decision), legal).argmax(-1).numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def agreement(pred: np.ndarray, action: np.ndarray, decision: np.ndarray) -> dict:
    """``{"discard", "pick", "koikoi", "overall", "samples"}`` plus per-type sample counts.

    A prediction agrees when it is the recorded card or one interchangeable with it (two dross
    cards of a month), as the paper counts; ``exact_*`` give the agreement on the very card.
    """
    hit = encoding.same_choice(pred, action)
    exact = pred == action
    res: dict = {}
    for prefix, ok in (("", hit), ("exact_", exact)):
        for d, name in enumerate(DECISION_NAMES):
            sel = decision == d
            res[prefix + name] = round(float(ok[sel].mean()), 4) if sel.any() else None
        res[prefix + "overall"] = round(float(ok.mean()), 4) if ok.size else None
    res["samples"] = int(hit.size)
    res.update({f"samples_{name}": int((decision == d).sum()) for d, name in enumerate(DECISION_NAMES)})
    return res


@torch.inference_mode()
def evaluate_records(net: KoiKoiNet, records_dir: str | Path, batch_size: int = 512, progress: bool = True) -> dict:
    """Replay every record in ``records_dir`` and compare ``net``'s greedy choice with the recorded one
    at every decision (malformed files are skipped with a warning and counted in ``skipped_files``)."""
    net.eval()
    games, skipped = read_games(records_dir, progress)
    obs = [o for g in games for o in g.observations]
    action = np.array([a for g in games for a in g.actions], dtype=np.int64)
    pred = np.zeros(len(obs), dtype=np.int64)
    dec = np.zeros(len(obs), dtype=np.int64)
    for i in range(0, len(obs), batch_size):
        chunk = obs[i:i + batch_size]
        x = torch.from_numpy(encoding.encode(chunk))
        legal = torch.from_numpy(encoding.legal_masks(chunk))
        d = torch.from_numpy(encoding.decisions(chunk))
        pred[i:i + len(chunk)] = masked(net(x, d), legal).argmax(-1).numpy()
        dec[i:i + len(chunk)] = d.numpy()
    res = agreement(pred, action, dec)
    res["games"] = len(games)
    res["skipped_files"] = len(skipped)
    return res
