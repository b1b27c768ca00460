"""A planted Lightning checkpoint runs no code (issue 47): ``checkpoints/sl/last.ckpt`` is read with
``weights_only``, by sl_train's resume check and by the Trainer's own loader, and one holding objects is refused."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest
import torch

from pipeline.runtime.train_guards import AtomicCheckpointIO, read_checkpoint
from pipeline.sl.train import _resume_point


class Planted:
    """Unpickling it calls ``open(marker, "w")``: the marker file is the proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return builtins.open, (str(self.marker), "w")


def plant(ckpt_dir: Path, marker: Path, fingerprint: str = "fp") -> Path:
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    path = ckpt_dir / "last.ckpt"
    torch.save({"state_dict": {"w": torch.zeros(2)}, "koikoi": {"fingerprint": fingerprint, "mlflow_run_id": None},
                "epoch": 0, "payload": Planted(marker)}, path)
    assert not marker.exists()
    return path


def test_sl_train_refuses_a_planted_checkpoint_and_starts_afresh(tmp_path, capsys):
    marker = tmp_path / "marker"
    plant(tmp_path / "checkpoints/sl", marker)
    assert _resume_point(tmp_path / "checkpoints/sl", "fp") == (None, None)
    assert not marker.exists()
    err = capsys.readouterr().err
    assert "cannot read" in err and "it holds objects other than tensors" in err and "starting afresh" in err
    assert not (tmp_path / "checkpoints/sl").exists()  # cleared: the run starts afresh


@pytest.mark.parametrize("weights_only", [None, False, True])
def test_the_trainers_loader_refuses_it_whatever_it_is_asked(tmp_path, weights_only):
    """``trainer.fit(ckpt_path=...)`` reads through the checkpoint plugin: it loads safely even when Lightning
    asks for a full unpickling."""
    marker = tmp_path / "marker"
    path = plant(tmp_path / "ck", marker)
    with pytest.raises(Exception, match="weights_only|Unsupported global"):
        AtomicCheckpointIO().load_checkpoint(path, weights_only=weights_only)
    with pytest.raises(Exception, match="weights_only|Unsupported global"):
        read_checkpoint(path)
    assert not marker.exists()


def test_a_checkpoint_of_tensors_and_plain_containers_still_loads(tmp_path):
    path = tmp_path / "ok.ckpt"
    torch.save({"state_dict": {"w": torch.ones(3)}, "loops": {"fit_loop": {"epoch": 2}}, "lr_schedulers": [],
                "callbacks": {"ModelCheckpoint{'monitor': None}": {"best_model_path": "x"}}, "hparams": None}, path)
    ck = AtomicCheckpointIO().load_checkpoint(path)
    assert torch.equal(ck["state_dict"]["w"], torch.ones(3)) and ck["loops"]["fit_loop"]["epoch"] == 2
