"""``sl_train.accelerator``: checked, refused where no GPU is seen, and (with CUDA) a tiny run on the GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tiny import sl_params as tiny_sl_params

from pipeline.net.modelio import load_model
from pipeline.params import ParamError
from pipeline.sl.train import resolved, train_sl

ROOT = Path(__file__).resolve().parents[2]
TINY = {"width": 16, "ff": 32, "heads": 2, "layers": 1, "batch_size": 64, "max_epochs": 1, "patience": 1,
        "card_logit": [], "threads": 1}


def sl_params(**over):
    """``tiny.sl_params`` with these sizes (no dropout or precision set: the accelerator's own)."""
    return tiny_sl_params(TINY, **over)


def test_accelerator_is_checked():
    with pytest.raises(ParamError, match=r"sl_train\.accelerator must be one of auto, cpu, gpu; got 'tpu'"):
        sl_params(accelerator="tpu")
    assert resolved(sl_params(accelerator="cpu"))["accelerator"] == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machines without a GPU")
def test_gpu_without_a_gpu_is_one_clear_error():
    assert resolved(sl_params(accelerator="auto"))["accelerator"] == "cpu"  # auto
    with pytest.raises(ValueError, match=r"^sl_train\.accelerator is gpu but torch sees no CUDA GPU"):
        resolved(sl_params(accelerator="gpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU (torch.cuda.is_available() is false)")
def test_a_tiny_run_trains_on_the_gpu(synthetic_dataset, tmp_path):
    r = train_sl(synthetic_dataset, tmp_path / "model", sl_params(accelerator="gpu"), logger=False, progress=False)
    assert 0.0 <= r["val/acc"] <= 1.0 and r["epochs"] == 1
    net, meta = load_model(tmp_path / "model")  # loads on the CPU
    assert meta["params"]["accelerator"] == "gpu" and meta["params"]["precision"] in ("bf16-mixed", "16-mixed",
                                                                                         "32-true")
    assert all(p.device.type == "cpu" for p in net.parameters())
