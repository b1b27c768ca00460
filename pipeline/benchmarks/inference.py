"""Model forward speed (samples/s): encoded random-game observations through ``KoiKoiNet``, fp32 and bf16."""

from __future__ import annotations

import argparse
import time

from ..cli import UserError, int_range
from ..net.encoding import decisions, encode
from .encode import collect_observations


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=int_range(1), default=256, help="samples per forward pass (default 256)")
    p.add_argument("--batches", type=int_range(1), default=20, help="timed forward passes per precision (default 20)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads (default 1)")
    p.add_argument("--model", default=None, help="model directory (default: a fresh paper-size net)")
    p.add_argument("--shared-trunk", action="store_true", help="fresh net with one shared trunk")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..net.modelio import load_model  # torch: loaded only when this runs

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.model:
        try:
            net, _ = load_model(args.model)
        except (FileNotFoundError, ValueError) as e:
            raise UserError(str(e)) from None
    else:
        net = KoiKoiNet(ModelConfig(shared_trunk=args.shared_trunk)).eval()
    obs = collect_observations(args.batch, args.seed)
    # a realistic mix: self-play batches are grouped per player, so decision types come mixed
    x, d = torch.from_numpy(encode(obs)), torch.from_numpy(decisions(obs))
    result: dict = {"batch": args.batch, "threads": args.threads}
    for name, amp in (("fp32", False), ("bf16", True)):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
            net(x, d)  # warm-up
            t0 = time.perf_counter()
            for _ in range(args.batches):
                net(x, d)
            dt = time.perf_counter() - t0
        result[f"{name}_samples_per_s"] = round(args.batch * args.batches / dt)
    result["decision_mix"] = [int((d == k).sum()) for k in range(3)]
    return result
