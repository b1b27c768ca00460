"""Accelerator and precision choice: `auto` follows the hardware torch sees (a GPU is faked here, so
this runs on any machine), and a GPU asked for where there is none is a clear error naming the param."""

from __future__ import annotations

import pytest
import torch

from pipeline.net.inference import resolve_inference
from pipeline.runtime import hardware


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
    assert resolve_inference("auto", "cuda").setup == "fp32"


def test_cpu_rule_is_kept_and_fp16_needs_a_gpu(fake_gpu, monkeypatch):
    fake_gpu(True)  # a GPU in the machine does not change what a CPU run does
    for native, want in ((True, "bf16-mixed"), (False, "32-true")):
        monkeypatch.setattr(hardware, "cpu_has_bf16", lambda native=native: native)
        assert hardware.resolve_precision("auto", "cpu") == want
        assert resolve_inference("auto", "cpu").setup == ("compile-bf16" if native else "fp32")
    with pytest.raises(ValueError, match=r"--precision is 16-mixed, which needs a GPU"):
        hardware.resolve_precision("16-mixed", "cpu", "--precision")
    assert hardware.torch_device("gpu") == "cuda" and hardware.torch_device("cpu") == "cpu"


@pytest.fixture
def no_usable_gpu(monkeypatch):
    """``no_usable_gpu(driver, cuda)``: an NVIDIA driver ``driver`` (None: no GPU) and a torch built for ``cuda``
    (None: a CPU-only build) that sees no GPU."""

    def fake(driver: str | None, cuda: str | None = None) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        monkeypatch.setattr(hardware, "nvidia_driver", lambda: driver)
        monkeypatch.setattr(torch.version, "cuda", cuda)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    return fake


def test_the_driver_version_is_read_from_the_kernel_module(tmp_path, monkeypatch):
    f = tmp_path / "version"
    f.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16)"
                 "\nGCC version:  gcc version 12.2.0\n")
    assert hardware.nvidia_driver(f) == "570.86.15"
    f.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")
    assert hardware.nvidia_driver(f) == "535.104.05"
    monkeypatch.setattr(hardware.shutil, "which", lambda name: None)
    assert hardware.nvidia_driver(tmp_path / "missing") is None  # no module, no nvidia-smi: no NVIDIA GPU
    monkeypatch.setattr(hardware.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    assert hardware.nvidia_driver(tmp_path / "missing") == "unknown"


def test_why_torch_cannot_use_a_gpu_that_is_there(no_usable_gpu, monkeypatch):
    no_usable_gpu(None)
    assert hardware.gpu_problem() is None  # no GPU: nothing to say
    no_usable_gpu("550.54.14", None)
    assert hardware.gpu_problem() == (
        f"an NVIDIA GPU is present (driver 550.54.14) but torch {torch.__version__} is a CPU-only build: run "
        "`make setup TORCH=cuda` (or TORCH=cu126 for a driver older than 580; docs/scaling.md)")
    no_usable_gpu("535.104.05", "13.0")
    assert "is built for CUDA 13.0, which needs driver >= 580.65.6: update the driver, or install a torch build " \
           "for an older CUDA (`make setup TORCH=cu126`" in hardware.gpu_problem()
    no_usable_gpu("580.95.05", "13.0")  # new enough: something else is wrong
    assert hardware.gpu_problem().endswith("cannot use it: see what `nvidia-smi` and "
                                           "`python -c 'import torch; torch.cuda.init()'` say")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert hardware.gpu_problem().endswith("but CUDA_VISIBLE_DEVICES='' hides it from torch: unset it")


def test_devices_resolve_and_cuda_without_a_gpu_says_why(no_usable_gpu):
    no_usable_gpu("550.54.14")
    assert hardware.resolve_device("auto") == "cpu" and hardware.resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match=r"^rl\.learner_device is cuda but torch sees no CUDA GPU \(an NVIDIA GPU "
                                         r"is present \(driver 550\.54\.14\) but torch .* is a CPU-only build: run "
                                         r"`make setup TORCH=cuda` .*\); use auto or cpu$"):
        hardware.resolve_device("cuda", "rl.learner_device")
    with pytest.raises(ValueError, match=r"duels\.device must be one of auto, cpu, cuda, got 'gpu'"):
        hardware.resolve_device("gpu", "duels.device")
    no_usable_gpu(None)
    with pytest.raises(ValueError, match=r"sl_train\.accelerator is gpu but torch sees no CUDA GPU "
                                         r"\(torch\.cuda\.is_available\(\) is false\); use auto or cpu"):
        hardware.resolve_accelerator("gpu", "sl_train.accelerator")


def test_announce_names_devices_and_warns_when_auto_misses_a_gpu(no_usable_gpu, capsys):
    cpu = hardware.Placement("learner", "cpu", "32-true", auto=True)
    no_usable_gpu(None)
    params = hardware.announce("rl_phase1[point]", [cpu, hardware.Placement("selfplay", "cpu", "fp32")])
    err = capsys.readouterr().err.splitlines()
    assert err == [f"rl_phase1[point]: learner on cpu ({hardware.device_name('cpu')}) in 32-true; "
                   f"selfplay on cpu ({hardware.device_name('cpu')}) in fp32"]
    assert params == {"device.learner": "cpu", "precision.learner": "32-true", "device.selfplay": "cpu",
                      "precision.selfplay": "fp32", "device.gpu": "none", "device.torch": torch.__version__}
    no_usable_gpu("550.54.14")
    params = hardware.announce("winprob", [hardware.Placement("play", "cpu", "bf16", auto=True)])
    line, warning = capsys.readouterr().err.splitlines()
    assert line.startswith("winprob: play on cpu (") and line.endswith(") in bf16")
    assert warning.startswith("winprob: warning: this run uses the CPU: an NVIDIA GPU is present (driver 550.54.14) "
                              "but torch") and "make setup TORCH=cuda" in warning
    assert params["device.gpu"].startswith("an NVIDIA GPU is present")
    hardware.announce("winprob", [hardware.Placement("play", "cpu", "bf16", auto=False)])  # cpu asked for: no warning
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_a_gpu_in_use_is_named(fake_gpu, monkeypatch):
    fake_gpu(True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    assert hardware.resolve_device("auto") == "cuda"
    params = hardware.placement_params([hardware.Placement("train", "cuda", "bf16-mixed", True)])
    assert params["device.train"] == "cuda" and params["device.gpu"] == "NVIDIA H100 80GB HBM3"


def test_a_play_worker_runs_one_thread_of_torch_and_of_the_blas():
    """Every thread pool of the process at one: the BLAS numpy calls (the rollout policy's matrix products) too,
    whose default of a thread per core made two workers on 2 cores spin against each other. In a fresh process,
    as a worker is, so that this test's own process keeps its threads."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, numpy, threadpoolctl, torch; from pipeline.runtime.hardware import pin_worker_threads; "
            "pin_worker_threads(1); "
            "print(json.dumps([torch.get_num_threads(), [p['num_threads'] for p in threadpoolctl.threadpool_info()]]))")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}  # each library's own default
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    torch_threads, pools = json.loads(out)
    assert torch_threads == 1 and pools and set(pools) == {1}
