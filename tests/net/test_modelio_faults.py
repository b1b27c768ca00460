"""Model directories that a kill or a disk cut short: written atomically, and a clear line when unreadable."""

from __future__ import annotations

import contextlib
import os
import pickle

import pytest
import torch
from tiny import TINY

from pipeline.cli import main
from pipeline.net.model import KoiKoiNet
from pipeline.net.model_dir import MODEL_FILE
from pipeline.net.modelio import load_model, save_model


def _model(tmp_path, seed: int = 0):
    torch.manual_seed(seed)
    return save_model(KoiKoiNet(TINY), tmp_path / "m", {"kind": "sl"})


class _Gadget:  # a pickled object that safe loading refuses
    pass


@pytest.mark.parametrize("damage", ["empty", "random", "truncated", "object"])
def test_an_unreadable_model_file_is_one_line_naming_it(tmp_path, damage, capsys):
    d = _model(tmp_path)
    weights = d / MODEL_FILE
    data = weights.read_bytes()
    weights.write_bytes({"empty": b"", "random": os.urandom(4096), "truncated": data[:len(data) // 2],
                         "object": pickle.dumps(_Gadget())}[damage])
    with pytest.raises(ValueError) as e:
        load_model(d)
    msg = str(e.value)
    assert "\n" not in msg and str(weights) in msg and "retrain it" in msg
    assert "weights_only" not in msg  # never the advice to turn safe loading off
    assert main(["duel", str(d), "random", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("koikoi duel: error:") and str(weights) in err


def test_a_kill_while_saving_leaves_the_previous_model_whole(tmp_path, monkeypatch):
    d = _model(tmp_path, seed=0)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    real_save = torch.save

    def killed_midway(obj, f, *args, **kwargs):
        with open(f, "wb") if isinstance(f, str | os.PathLike) else contextlib.nullcontext(f) as out:
            out.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt  # the kill lands while the weights are written

    monkeypatch.setattr(torch, "save", killed_midway)
    torch.manual_seed(1)
    with pytest.raises(KeyboardInterrupt):
        save_model(KoiKoiNet(TINY), d, {"kind": "sl"})
    monkeypatch.setattr(torch, "save", real_save)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before  # no temp file left, nothing changed
    load_model(d)
