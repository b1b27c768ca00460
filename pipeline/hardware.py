"""What this CPU does fast: bf16 only pays off where the CPU has native bf16 matmuls.

On a CPU without them (AVX2 only) torch's bf16 matmul falls back to a slow path: measured 0.3
GFLOP/s against 68 GFLOP/s in fp32 on one AVX2 core, so "bf16-mixed" training there is ~8x slower
at the paper's sizes, not faster. Params therefore say ``auto`` and this module picks.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

PRECISIONS = ("auto", "32-true", "bf16-mixed")
"""Lightning training precisions a param may name; ``auto`` is bf16-mixed on native-bf16 CPUs, else 32-true."""


@cache
def cpu_has_bf16() -> bool:
    """True when the CPU has native bf16 matmuls (AVX512-BF16 or AMX), where bf16 autocast pays off."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_bf16(value: bool | str) -> bool:
    """The ``bf16`` param: true, false or "auto" (true on CPUs with native bf16)."""
    if value == "auto":
        return cpu_has_bf16()
    if isinstance(value, bool):
        return value
    raise ValueError(f"bf16 must be true, false or auto, got {value!r}")


def resolve_precision(value: str) -> str:
    """A training ``precision`` param: ``auto`` becomes ``bf16-mixed`` or ``32-true`` for this CPU."""
    if value not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {value!r}")
    if value == "auto":
        return "bf16-mixed" if cpu_has_bf16() else "32-true"
    return value
