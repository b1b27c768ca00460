"""Forward speed of each inference setup: the paper-size network's decisions per CPU-second, and the ratio to fp32."""

import argparse
import statistics
import time
from pathlib import Path

from ..cli_args import UserError, as_user_error, int_range
from ..engine import random_observations
from ..net.encoding import encode
from ..net.inference import resolve_inference
from ..runtime.hardware import INFERENCE_SETUPS, cpu_name


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch", type=int_range(1), nargs="+", default=[16, 64, 256],
                   help="samples per forward pass (default 16 64 256)")
    p.add_argument("--setups", nargs="+", choices=(*INFERENCE_SETUPS, "auto"), default=list(INFERENCE_SETUPS),
                   help="setups to measure (default all); fp32 too, as the ratios' base")
    p.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per round (default 1)")
    p.add_argument("--rounds", type=int_range(1), default=5, help="rounds; the median counts (default 5)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads (default 1)")
    p.add_argument("--model", default=None, help="model directory (default: a fresh paper-size net)")
    p.add_argument("--seed", type=int, default=0)


def cpu_summary() -> dict:
    import torch
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        flags = set()
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
    return {"cpu": cpu_name(), "capability": torch.backends.cpu.get_cpu_capability(),
            "flags": [f for f in wanted if f in flags]}


def _rate(run, x, d, seconds: float, rounds: int) -> float:
    rates = []
    for _ in range(rounds):
        n, t0 = 0, time.process_time()
        while time.process_time() - t0 < seconds:
            run(x, d).float()
            n += 1
        rates.append(n * x.shape[0] / (time.process_time() - t0))
    return statistics.median(rates)


def run(args: argparse.Namespace) -> dict:
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..net.modelio import load_model  # torch: loaded only when this runs
    if args.seconds <= 0:
        raise UserError(f"--seconds must be > 0, got {args.seconds}")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.model:
        with as_user_error((FileNotFoundError, ValueError)):
            net, _ = load_model(args.model)
    else:
        net = KoiKoiNet(ModelConfig(yaku_cross=("discard", "pick"), card_logit=("pick",))).eval()
    obs = random_observations(max(args.batch), args.seed)
    # one decision type per pass, as self-play groups its batches
    x, d = torch.from_numpy(encode(obs)), torch.zeros(len(obs), dtype=torch.long)
    result: dict = {**cpu_summary(), "threads": args.threads, "batches": args.batch,
                    "auto": resolve_inference("auto").setup, "setups": {}}
    # fp32 first (the base), compiled setups last: a compile turns off the fused encoder kernel for the process
    names = ["fp32"] + sorted((s for s in dict.fromkeys(args.setups) if s != "fp32"),
                              key=lambda s: resolve_inference(s).compiled)
    for name in names:
        setup = resolve_inference(name)
        t0 = time.perf_counter()
        runner = setup.prepare(net)
        with setup.context():
            for b in args.batch:  # the first passes: a compile happens here, once per process
                runner(x[:b].to(setup.dtype), d[:b])
            warm = time.perf_counter() - t0
            rates = {b: _rate(runner, x[:b].to(setup.dtype), d[:b], args.seconds, args.rounds) for b in args.batch}
        row = {"decisions_per_cpu_s": {b: round(r) for b, r in rates.items()}, "warm_up_s": round(warm, 1)}
        if name != "fp32":
            base = result["setups"]["fp32"]["decisions_per_cpu_s"]
            row["vs_fp32"] = {b: round(r / base[b], 2) for b, r in rates.items()}
        result["setups"][setup.setup if name != "auto" else f"auto ({setup.setup})"] = row
    return result
