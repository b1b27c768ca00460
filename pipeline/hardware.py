"""What this machine does fast: which accelerator trains, and in which precision.

On a CPU without native bf16 matmuls (AVX2 only) torch's bf16 matmul falls back to a slow path:
measured 0.3 GFLOP/s against 68 GFLOP/s in fp32 on one AVX2 core, so "bf16-mixed" training there
is ~8x slower at the paper's sizes, not faster. Params therefore say ``auto`` and this module picks:
on a CPU bf16 only with AVX512-BF16/AMX; on a GPU bf16 where it has it (Ampere and later), else
fp16 with a gradient scaler (Lightning's ``16-mixed``) on tensor-core GPUs, else fp32.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

PRECISIONS = ("auto", "32-true", "bf16-mixed", "16-mixed")
"""Lightning training precisions a param may name; ``auto`` picks per accelerator (see the module doc)."""

ACCELERATORS = ("auto", "cpu", "gpu")
"""Lightning accelerators a param may name; ``auto`` is ``gpu`` when torch sees a CUDA GPU, else ``cpu``."""


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


def gpu_has_bf16() -> bool:
    """True on GPUs with native bf16 (compute capability 8.0+), not emulated."""
    import torch

    return gpu_available() and torch.cuda.is_bf16_supported(including_emulation=False)


def resolve_accelerator(value: str, name: str = "accelerator") -> str:
    """An accelerator param (called ``name`` in errors) made concrete: ``cpu`` or ``gpu``.

    ``gpu`` without a CUDA GPU is a ``ValueError``."""
    if value not in ACCELERATORS:
        raise ValueError(f"{name} must be one of {', '.join(ACCELERATORS)}, got {value!r}")
    if value == "auto":
        return "gpu" if gpu_available() else "cpu"
    if value == "gpu" and not gpu_available():
        raise ValueError(f"{name} is gpu but torch sees no CUDA GPU (torch.cuda.is_available() is false); "
                         "use auto or cpu")
    return value


def torch_device(accelerator: str) -> str:
    """The torch device type of a resolved accelerator: ``cuda`` or ``cpu``."""
    return "cuda" if accelerator == "gpu" else "cpu"


def resolve_bf16(value: bool | str, device: str = "cpu") -> bool:
    """The ``bf16`` param for forward passes on ``device``: true, false or "auto" (native bf16 there)."""
    if value == "auto":
        return gpu_has_bf16() if device == "cuda" else cpu_has_bf16()
    if isinstance(value, bool):
        return value
    raise ValueError(f"bf16 must be true, false or auto, got {value!r}")


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
