"""The one inference path: how every player runs a network's forward passes (fp32, autocast, bf16, compiled);
``auto``: ``compile-bf16`` on a CPU with native bf16 matmuls, else ``fp32`` (docs/benchmarks.md)."""

from __future__ import annotations

import contextlib
import copy
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..runtime import hardware
from ..runtime.hardware import INFERENCE_CHOICES, INFERENCE_SETUPS

if TYPE_CHECKING:
    import torch
    from torch import nn

COMPILE_MIN_WIDTH = 128  # under auto: a compile (10-60 s) pays only for networks this wide


@dataclass(frozen=True)
class Inference:
    """How forward passes run: ``setup`` (``hardware.INFERENCE_SETUPS``); ``auto``: the param said auto."""

    setup: str = "fp32"
    auto: bool = False

    def __post_init__(self) -> None:
        if self.setup not in INFERENCE_SETUPS:
            raise ValueError(f"inference setup must be one of {', '.join(INFERENCE_SETUPS)}, got {self.setup!r}")

    @property
    def bf16_weights(self) -> bool:
        return self.setup in ("bf16", "compile-bf16")

    @property
    def compiled(self) -> bool:
        return self.setup.startswith("compile-")

    @property
    def dtype(self) -> torch.dtype:
        import torch

        return torch.bfloat16 if self.bf16_weights else torch.float32

    def context(self, device_type: str = "cpu") -> contextlib.AbstractContextManager:
        """What forward passes run under: inference mode, and bf16 autocast for ``autocast``."""
        import torch

        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        if self.setup == "autocast":
            stack.enter_context(torch.autocast(device_type, dtype=torch.bfloat16))
        return stack

    def prepare(self, net: nn.Module) -> nn.Module:
        """``net`` itself for ``fp32`` and ``autocast``; else an eval-mode copy (bf16 weights, compiled trunks)."""
        if self.setup in ("fp32", "autocast"):
            return net
        import torch

        run = copy.deepcopy(net).eval()
        if self.bf16_weights:
            run = run.to(torch.bfloat16)
        width = getattr(getattr(net, "config", None), "width", COMPILE_MIN_WIDTH)
        if self.compiled and not (self.auto and width < COMPILE_MIN_WIDTH):
            _compile_trunks(run, self)
        return run


FP32 = Inference("fp32")


def resolve_inference(value: str | Inference, device: str = "cpu", name: str = "inference") -> Inference:
    """An inference param (called ``name`` in errors) made concrete for ``device`` (cpu | cuda)."""
    if isinstance(value, Inference):
        return value
    if value not in INFERENCE_CHOICES:
        raise ValueError(f"{name} must be one of {', '.join(INFERENCE_CHOICES)}, got {value!r}")
    if value != "auto":
        return Inference(value)
    if device == "cuda":
        return Inference("fp32", auto=True)
    return Inference("compile-bf16" if hardware.cpu_has_bf16() else "fp32", auto=True)


def checked(setup: Inference, net: nn.Module, device: str = "cpu") -> Inference:
    """``setup``, or the same uncompiled where compiling ``net`` fails on ``device``: a stage runs one pass here
    before it records its setup, so the record says what the workers run."""
    if not setup.compiled:
        return setup
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        return setup

    from ..engine import GameState
    from .encoding import decisions, encode

    run = setup.prepare(net).to(device)
    compiled = [m.forward for m in run.modules() if isinstance(m.forward, _CompiledForward)]
    if not compiled:  # auto, and a network too small to compile
        return setup
    state = GameState(seed=0)
    obs = [state.observation(state.player)] * 2  # a batch of 2: 0 and 1 are sizes torch.compile specializes
    with setup.context(device):  # inputs made inside, as the players make theirs (agents.model_agent.NetPlayer)
        x = torch.from_numpy(encode(obs)).to(device, setup.dtype)
        run(x, torch.from_numpy(decisions(obs)).to(device))
    if any(f.failed for f in compiled):
        return Inference(setup.setup.removeprefix("compile-"), auto=setup.auto)
    return setup


_noted: set[str] = set()  # the compile failures already noted in this process


class _CompiledForward:
    """A module's forward through ``torch.compile``, falling back for good to the eager one when it raises
    (out of memory propagates)."""

    def __init__(self, module: nn.Module, fallback: str) -> None:
        import torch

        self.eager = module.forward
        self.compiled = torch.compile(module.forward, dynamic=True)
        self.fallback = fallback
        self.failed = False

    def __call__(self, *args: torch.Tensor) -> torch.Tensor:
        if not self.failed:
            import torch

            # contiguous inputs: a transposed view (a one-decision batch) and a gathered copy (a mixed one) would
            # otherwise be two graphs, and a duel's process of three models ran past torch's recompile limit
            args = tuple(a.contiguous() for a in args)
            try:
                return self.compiled(*args)
            except (torch.cuda.OutOfMemoryError, MemoryError):
                raise
            except Exception as e:  # noqa: BLE001 - any compiler error: the eager forward computes the same
                self.failed = True
                why = (str(e).strip().splitlines() or [""])[0][:200]
                note = (f"inference: torch.compile failed ({type(e).__name__}: {why}); running {self.fallback} "
                        "uncompiled")
                if note not in _noted:
                    _noted.add(note)
                    print(note, file=sys.stderr, flush=True)
        return self.eager(*args)


def _compile_trunks(net: nn.Module, setup: Inference) -> None:
    """Compile each ``Trunk`` of ``net`` (a copy), its encoder layers off the fused kernel the graph replaces."""
    from .model import Trunk  # torch: loaded only when this runs

    fallback = setup.setup.removeprefix("compile-")
    for m in net.modules():
        if isinstance(m, Trunk):
            for layer in m.encoder.layers:
                layer.fused = False
            m.forward = _CompiledForward(m, fallback)

