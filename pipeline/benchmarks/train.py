"""Training speed: SL Adam steps of ``KoiKoiNet`` (ms per step, on sl_train's batch mix)."""

from __future__ import annotations

import argparse
import time

from ..cli import UserError, comma_list, int_range
from ..engine import random_observations
from ..net.encoding import decisions, encode, legal_masks
from ..runtime.hardware import gpu_available, resolve_precision

# Share of each decision type among the human records' samples (results/sl_dataset/metrics.json).
HUMAN_MIX = (0.830, 0.087, 0.083)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=int_range(3), default=128,
                   help="samples per step, at least one per decision type (default 128, sl_train.batch_size)")
    p.add_argument("--steps", type=int_range(1), default=20, help="timed steps (default 20)")
    p.add_argument("--threads", type=int_range(1), default=2, help="torch threads (default 2, sl_train.threads)")
    p.add_argument("--precision", default="auto", help="auto | 32-true | bf16-mixed | 16-mixed (default auto: "
                   "per device, as sl_train.precision)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the steps run (default cpu)")
    p.add_argument("--yaku-cross", default="discard,pick", metavar="TYPES",
                   help="comma-separated networks given YakuCross rows (default discard,pick as sl_train; '' for none)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    import numpy as np
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..sl.module import SLModule, masked_cross_entropy  # lightning, torch: loaded only when this runs

    if args.device == "cuda" and not gpu_available():
        raise UserError("--device cuda: torch sees no CUDA GPU (torch.cuda.is_available() is false)")
    try:
        precision = resolve_precision(args.precision, "gpu" if args.device == "cuda" else "cpu", "--precision")
    except ValueError as e:
        raise UserError(str(e)) from None
    try:
        config = ModelConfig(yaku_cross=tuple(comma_list(args.yaku_cross)))
    except ValueError as e:
        raise UserError(f"--yaku-cross: {e}") from None
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    # Random-game observations, drawn per decision type in the human records' proportions.
    obs = random_observations(3000, args.seed)
    x_all, d_all, legal_all = encode(obs), decisions(obs), legal_masks(obs)
    rng = np.random.default_rng(args.seed)
    counts = [round(args.batch * s) for s in HUMAN_MIX[1:]]
    counts = [args.batch - sum(counts), *counts]
    idx = np.concatenate([rng.choice(np.flatnonzero(d_all == k), n) for k, n in enumerate(counts)])
    rng.shuffle(idx)
    device = torch.device(args.device)
    x, d, legal = (torch.from_numpy(a[idx]).to(device) for a in (x_all, d_all, legal_all))
    action = torch.multinomial(legal.float(), 1).squeeze(1)  # a legal choice per sample

    module = SLModule(KoiKoiNet(config), lr=3e-4, ema=0.99).train().to(device)
    opt = module.configure_optimizers()
    amp = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")  # as Lightning's 16-mixed

    def step(sel: torch.Tensor) -> None:
        with torch.autocast(device.type, dtype=amp or torch.float32, enabled=amp is not None):
            values = module.net(x[sel], d[sel])
        loss = masked_cross_entropy(values, legal[sel], action[sel])
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        module.on_train_batch_end(None, None, 0)  # the weight average, as in training

    def sync() -> None:  # GPU steps run asynchronously: wait for them before reading the clock
        if device.type == "cuda":
            torch.cuda.synchronize()

    def ms_per_step(sel: torch.Tensor) -> float:
        for _ in range(3):  # warm-up
            step(sel)
        sync()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step(sel)
        sync()
        return (time.perf_counter() - t0) / args.steps * 1000

    mixed = ms_per_step(torch.ones(args.batch, dtype=torch.bool, device=device))
    discard_only = ms_per_step(d == 0)
    return {
        "device": args.device, "precision": precision, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": args.threads, "batch": args.batch, "decision_mix": counts, "yaku_cross": list(config.yaku_cross),
        "ms_per_step": round(mixed, 1), "samples_per_s": round(args.batch / mixed * 1000),
        "ms_per_step_discard_part": round(discard_only, 1),
    }

