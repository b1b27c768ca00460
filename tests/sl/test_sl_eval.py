"""``koikoi sl-eval``: agreement with the recorded choices, and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import torch
from tiny import TINY

from pipeline.cli import main
from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.sl import DECISION_NAMES
from pipeline.sl.datamodule import SLDataModule
from pipeline.sl.dataset import SampleSet, load_split
from pipeline.sl.evaluate import agreement, predict


def _tiny_model(tmp_path):
    torch.manual_seed(0)
    net = KoiKoiNet(TINY).eval()
    return net, save_model(net, tmp_path / "model", {"kind": "sl"})


def test_sl_eval_matches_the_dataset_path(two_records, two_game_dataset, tmp_path, capsys):
    net, model_dir = _tiny_model(tmp_path)
    assert main(["sl-eval", "--model", str(model_dir), "--records", str(two_records)]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert list(last) == ["discard", "pick", "koikoi", "overall", "samples"]
    # the same numbers from the packed dataset of the same two games
    data, metrics = two_game_dataset
    train, layout = load_split(data, "train")
    val, _ = load_split(data, "val")
    every = SampleSet.concat([train, val])
    dm = SLDataModule(train=every, val=every, layout=layout)
    expected = agreement(predict(net, dm), every.action, every.decision)
    assert last["samples"] == metrics["samples"] == expected["samples"]
    for k in (*DECISION_NAMES, "overall"):
        assert last[k] == expected[k]
    # the koi-koi decision is a choice between [K0] and [K1] only
    pred = predict(net, dm)
    assert np.isin(pred[every.decision == 2], [48, 49]).all()


def test_sl_eval_errors_are_one_line(two_records, tmp_path, capsys):
    _, model_dir = _tiny_model(tmp_path)
    assert main(["sl-eval", "--model", str(tmp_path / "missing"), "--records", str(two_records)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--model" in err and "missing" in err
    assert main(["sl-eval", "--model", str(model_dir), "--records", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--records" in err and "nothing" in err
