"""What this machine does fast: which accelerator trains, and in which precision.

bf16 only where it is native (a CPU without AVX512-BF16/AMX runs it ~8x slower than fp32). ``auto`` never
falls back to the CPU in silence: ``gpu_problem`` says why torch cannot use the machine's NVIDIA GPU.
"""

import os
import platform
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TextIO

PRECISIONS = ("auto", "32-true", "bf16-mixed", "16-mixed")  # Lightning's
ACCELERATORS = ("auto", "cpu", "gpu")  # Lightning's
DEVICES = ("auto", "cpu", "cuda")  # torch's
INFERENCE_SETUPS = ("fp32", "autocast", "bf16", "compile-fp32", "compile-bf16")  # pipeline.net.inference's
INFERENCE_CHOICES = ("auto", *INFERENCE_SETUPS)

SETUP_DOC = "docs/scaling.md"  # where the CUDA set-up is described

# The oldest Linux driver each CUDA major version runs on (NVIDIA's minor-version compatibility table)
MIN_DRIVER = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 65, 6)}


def pin_worker_threads(n: int) -> None:
    """A play worker's threads, torch's and numpy's BLAS (two BLAS on 2 cores spin against each other)."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(n)
    threadpool_limits(n)  # for the rest of the process


@cache
def cpu_has_bf16() -> bool:
    """True when the CPU has native bf16 matmuls (AVX512-BF16 or AMX), where bf16 autocast pays off."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


def nvidia_driver(version_file: Path = Path("/proc/driver/nvidia/version")) -> str | None:
    """The loaded NVIDIA driver's version (``unknown`` where only ``nvidia-smi`` shows one); None: no NVIDIA GPU."""
    try:
        text = version_file.read_text()
    except OSError:
        return "unknown" if shutil.which("nvidia-smi") else None
    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", text)
    return m.group(1) if m else "unknown"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text))


def gpu_problem() -> str | None:
    """Why torch cannot use this machine's NVIDIA GPU, and what to run; None where there is none or it can."""
    driver = nvidia_driver()
    if driver is None or gpu_available():
        return None
    import torch

    present = f"an NVIDIA GPU is present (driver {driver})"
    if torch.version.cuda is None:
        return (f"{present} but torch {torch.__version__} is a CPU-only build: run `make setup TORCH=cuda` "
                f"(or TORCH=cu126 for a driver older than 580; {SETUP_DOC})")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return f"{present} but CUDA_VISIBLE_DEVICES={visible!r} hides it from torch: unset it"
    need = MIN_DRIVER.get(_version(torch.version.cuda)[0])
    if need and driver != "unknown" and _version(driver) < need:
        return (f"{present} but torch {torch.__version__} is built for CUDA {torch.version.cuda}, which needs driver "
                f">= {'.'.join(map(str, need))}: update the driver, or install a torch build for an older CUDA "
                f"(`make setup TORCH=cu126`, {SETUP_DOC})")
    return (f"{present} but torch {torch.__version__} (CUDA {torch.version.cuda}) cannot use it: see what "
            "`nvidia-smi` and `python -c 'import torch; torch.cuda.init()'` say")


def _no_gpu(name: str, value: str) -> ValueError:
    why = gpu_problem() or "torch.cuda.is_available() is false"
    return ValueError(f"{name} is {value} but torch sees no CUDA GPU ({why}); use auto or cpu")


def gpu_has_bf16() -> bool:
    """True on GPUs with native bf16 (compute capability 8.0+), not emulated."""
    import torch

    return gpu_available() and torch.cuda.is_bf16_supported(including_emulation=False)


def _resolve(value: str, name: str, choices: tuple[str, str, str]) -> str:
    """``value`` of ``choices`` (auto, cpu, the GPU's word) made concrete."""
    gpu = choices[2]
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    if value == "auto":
        return gpu if gpu_available() else "cpu"
    if value == gpu and not gpu_available():
        raise _no_gpu(name, value)
    return value


def resolve_accelerator(value: str, name: str = "accelerator") -> str:
    return _resolve(value, name, ACCELERATORS)


def resolve_device(value: str, name: str = "device") -> str:
    return _resolve(value, name, DEVICES)


def play_device(value: str, name: str, backend: str = "process") -> str:
    """A players' ``device`` param made concrete; on a Ray cluster ``cuda`` is the cluster's GPUs."""
    if backend == "ray" and os.environ.get("RAY_ADDRESS") and value in ("auto", "cuda"):
        return "cpu" if value == "auto" else "cuda"
    return resolve_device(value, name)


def torch_device(accelerator: str) -> str:
    return "cuda" if accelerator == "gpu" else "cpu"


def resolve_precision(value: str, accelerator: str = "cpu", name: str = "precision") -> str:
    """A training precision param (called ``name`` in errors) made concrete for a resolved ``accelerator``."""
    if value not in PRECISIONS:
        raise ValueError(f"{name} must be one of {', '.join(PRECISIONS)}, got {value!r}")
    if value == "16-mixed" and accelerator != "gpu":
        raise ValueError(f"{name} is 16-mixed, which needs a GPU (fp16 autocast on a CPU is slow); use auto, "
                         "32-true or bf16-mixed")
    if value != "auto":
        return value
    if accelerator != "gpu":
        return "bf16-mixed" if cpu_has_bf16() else "32-true"
    if gpu_has_bf16():
        return "bf16-mixed"
    import torch

    # fp16 pays off on tensor cores (7.0+); older GPUs gain little from it and risk overflows
    return "16-mixed" if torch.cuda.get_device_capability()[0] >= 7 else "32-true"


@cache
def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's word for it."""
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
    except OSError:
        m = None
    return m.group(1).strip() if m else (platform.processor() or platform.machine())


def device_name(device: str) -> str:
    """What ``device`` is on this machine: the GPU's name, or the CPU's with its vector extension."""
    import torch

    if device == "cuda":  # a Ray cluster's GPUs need none here
        return torch.cuda.get_device_name() if gpu_available() else "a GPU of the Ray cluster"
    return f"{cpu_name()}, {torch.backends.cpu.get_cpu_capability()}"


@dataclass(frozen=True)
class Placement:
    """Where one part of a stage (``role``) runs; ``auto``: its param said auto."""

    role: str
    device: str
    precision: str
    auto: bool = False


def placement_params(placements: Sequence[Placement]) -> dict[str, str]:
    """MLflow params of the resolved devices, the GPU (or why none) and the torch build."""
    import torch

    out: dict[str, str] = {}
    for p in placements:
        out[f"device.{p.role}"] = p.device
        out[f"precision.{p.role}"] = p.precision
    on_gpu = any(p.device == "cuda" for p in placements)
    out["device.gpu"] = device_name("cuda") if on_gpu else (gpu_problem() or "none")[:500]
    out["device.torch"] = torch.__version__
    return out


def announce(stage: str, placements: Sequence[Placement], file: TextIO | None = None) -> dict[str, str]:
    """Print where ``stage`` runs (and why not on the GPU an ``auto`` part could not use); return its MLflow params."""
    out = file or sys.stderr
    parts = [f"{p.role} on {p.device} ({device_name(p.device)}) in {p.precision}" for p in placements]
    print(f"{stage}: {'; '.join(parts)}", file=out, flush=True)
    problem = gpu_problem()
    if problem and any(p.auto and p.device == "cpu" for p in placements):
        print(f"{stage}: warning: this run uses the CPU: {problem}", file=out, flush=True)
    return placement_params(placements)
