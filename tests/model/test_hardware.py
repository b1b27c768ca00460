"""Accelerator and precision choice: `auto` follows the hardware torch sees (a GPU is faked here, so
this runs on any machine), and a GPU asked for where there is none is a clear error naming the param."""

from __future__ import annotations

import pytest
import torch

from pipeline import hardware


@pytest.fixture
def fake_gpu(monkeypatch):
    """``fake_gpu(bf16, capability)``: torch reports a CUDA GPU with these properties."""

    def fake(bf16: bool, capability: tuple[int, int] = (8, 0)) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: bf16)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)

    return fake


def test_auto_is_the_cpu_without_a_gpu_and_gpu_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert hardware.resolve_accelerator("auto") == "cpu"
    assert hardware.resolve_accelerator("cpu") == "cpu"
    with pytest.raises(ValueError, match=r"rl\.accelerator is gpu but torch sees no CUDA GPU"):
        hardware.resolve_accelerator("gpu", "rl.accelerator")
    with pytest.raises(ValueError, match=r"x\.accelerator must be one of auto, cpu, gpu, got 'tpu'"):
        hardware.resolve_accelerator("tpu", "x.accelerator")


@pytest.mark.parametrize(("bf16", "capability", "want"), [(True, (8, 0), "bf16-mixed"), (False, (7, 5), "16-mixed"),
                                                          (False, (6, 1), "32-true")])
def test_precision_auto_on_a_gpu(fake_gpu, bf16, capability, want):
    fake_gpu(bf16, capability)
    assert hardware.resolve_accelerator("auto") == "gpu"
    assert hardware.resolve_precision("auto", "gpu") == want
    assert hardware.resolve_precision("32-true", "gpu") == "32-true"
    assert hardware.resolve_bf16("auto", "cuda") is bf16


def test_cpu_rule_is_kept_and_fp16_needs_a_gpu(fake_gpu, monkeypatch):
    fake_gpu(True)  # a GPU in the machine does not change what a CPU run does
    for native, want in ((True, "bf16-mixed"), (False, "32-true")):
        monkeypatch.setattr(hardware, "cpu_has_bf16", lambda native=native: native)
        assert hardware.resolve_precision("auto", "cpu") == want
        assert hardware.resolve_bf16("auto", "cpu") is native
    with pytest.raises(ValueError, match=r"--precision is 16-mixed, which needs a GPU"):
        hardware.resolve_precision("16-mixed", "cpu", "--precision")
    assert hardware.torch_device("gpu") == "cuda" and hardware.torch_device("cpu") == "cpu"
