"""The one inference path: how every player runs a network's forward passes on this machine.

Self-play, playouts, duels, the searcher, ``winprob`` and the play server spend about
90% of their time in forward passes, so their setup sets the speed of nearly everything. ``resolve_inference``
turns a param (``auto`` or a setup's name) into an ``Inference``; ``Inference.prepare`` makes the module that
runs, once per player:

- ``fp32``: the network as it is (no copy; a learner may share it).
- ``autocast``: fp32 weights cast to bf16 at every op (``torch.autocast``): what the project did before.
- ``bf16``: a bf16 copy of the weights, bf16 inputs: no cast per op (2.4-3.4x fp32 on an AMX Xeon).
- ``compile-fp32``, ``compile-bf16``: the same with each ``model.Trunk`` (the encoder, nearly all of the FLOPs)
  compiled by ``torch.compile`` (3.1-3.9x fp32 on AMX with bf16).

``auto`` picks, by what the device has (docs/benchmarks.md has the figures behind it): on a CPU with native
bf16 matmuls (AMX or AVX512-BF16) ``compile-bf16``; on a CPU without (AVX2: bf16 there is an emulation about 8x
slower than fp32, and compiling measured no gain) ``fp32``; on a GPU ``fp32`` (on an H200, bf16 passes were 1.2x
faster alone but self-play ran at half fp32's rate: at play's batch sizes the GPU waits for the games anyway).
Under ``auto`` a network too small for compilation to pay (tests' tiny nets) stays eager.

Compilation is paid once per process: ``torch.compile`` caches by code, not by module, so every later network
of the same architecture in the process (a new loop's weights, another model of the play server) reuses it.
A compile that fails falls back to the same setup without compilation, with a one-line note on stderr (once per
distinct failure); a stage runs ``checked`` before it records its setup, so a run that fell back says so.
"""

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

# Under ``auto``, compile only networks at least this wide: a compile costs 10-60 s of CPU, which the
# paper-size network (width 256, 124 MFLOP a decision) repays within a few thousand decisions, a test's net never.
COMPILE_MIN_WIDTH = 128


@dataclass(frozen=True)
class Inference:
    """How forward passes run: ``setup`` (one of ``hardware.INFERENCE_SETUPS``); ``auto``: the param said auto (then
    are not compiled). Picklable: self-play jobs carry it to their workers."""

    setup: str = "fp32"
    auto: bool = False

    def __post_init__(self) -> None:
        if self.setup not in INFERENCE_SETUPS:
            raise ValueError(f"inference setup must be one of {', '.join(INFERENCE_SETUPS)}, got {self.setup!r}")

    @property
    def bf16(self) -> bool:
        """True when the arithmetic is bf16 (weights or autocast)."""
        return self.setup != "fp32" and self.setup != "compile-fp32"

    @property
    def bf16_weights(self) -> bool:
        return self.setup in ("bf16", "compile-bf16")

    @property
    def compiled(self) -> bool:
        return self.setup.startswith("compile-")

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the inputs the prepared module takes."""
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
        """The module to run ``net``'s forward passes with: ``net`` itself for ``fp32`` and ``autocast``; else an
        eval-mode copy (bf16 weights, compiled trunks), so the caller's network is never changed."""
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
"""Plain fp32: what a player runs unless told otherwise."""


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
    """``setup``, or where it compiles ``net`` (a ``KoiKoiNet``) and compiling fails on ``device``, the same
    setup uncompiled: one forward pass compiled here, before a stage records its setup and hands it to its
    players, so that the record and every worker run what this process found runs (a compile is paid once more
    for it, in this process). Where this process has no CUDA and ``device`` is ``cuda`` (a Ray head sending the
    games to GPU workers) nothing can be checked here: ``setup`` as it is, and a worker whose compile fails falls
    back on its own, with its line."""
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
    """A module's forward through ``torch.compile``, falling back to the eager forward (for good, with one line
    on stderr per distinct failure in the process) when compilation or a compiled call raises; running out of
    memory is not a compile failure and propagates."""

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
    """Each ``Trunk`` of ``net`` (a copy: ``prepare``) compiled, its encoder layers off the fused kernel
    (``layers.EncoderLayer.fused``), which the compiled graph replaces."""
    from .model import Trunk  # torch: loaded only when this runs

    fallback = setup.setup.removeprefix("compile-")
    for m in net.modules():
        if isinstance(m, Trunk):
            for layer in m.encoder.layers:
                layer.fused = False
            m.forward = _CompiledForward(m, fallback)

