"""Batched self-play of the paper-size network (random weights): games/s, decisions/s vs pure forward passes."""

import argparse
import time

from ..cli_args import UserError, float_range, int_range
from ..engine import DISCARD, random_observations
from ..net.encoding import encode
from ..net.inference import resolve_inference
from ..rl.algorithms.rollout_pi import BranchRecorder
from ..runtime.hardware import INFERENCE_CHOICES, gpu_available
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob, Recorder
from ..selfplay.executor import make_executor
from ..selfplay.rewards import RewardModel
from .inference import cpu_summary


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int_range(1), default=1024, help="self-play games per setup (default 1024)")
    p.add_argument("--threads", type=int_range(1), default=2, help="workers, one torch thread each (default 2)")
    p.add_argument("--backend", choices=("process", "ray"), default="process", help="local processes, or Ray tasks")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="forward passes' device (default cpu)")
    p.add_argument("--concurrency", type=int_range(1), default=64, help="games at once per worker (default 64)")
    p.add_argument("--inference", nargs="+", choices=INFERENCE_CHOICES, default=["auto"],
                   help="inference setups to measure (default auto); fp32 too, as the ratios' base")
    p.add_argument("--epsilon", type=float_range(0.0, 1.0), default=0.0, help="exploration rate (default 0)")
    p.add_argument("--branch", type=float_range(0.0, 1.0), default=0.0,
                   help="rollout_pi: share of seat 0's decisions that branch into playouts (default 0)")
    p.add_argument("--seconds", type=float_range(0.0), default=3.0, help="seconds of pure forward passes (default 3)")
    p.add_argument("--seed", type=int, default=0)


def _warm(args: tuple) -> int:
    """A worker's first forward passes, before the clock: its imports and a compile."""
    spec, setup, device = args
    import torch

    from ..selfplay.batched import play_job  # noqa: F401  (the imports a play job needs, before the clock)
    player = spec.player(setup, device)
    obs = random_observations(64, 0)
    for b in (1, 7, 64):  # a compile with dynamic batch sizes settles after two shapes
        player.values(obs[:b])
    time.sleep(1.0)  # long enough that every worker takes one warm-up job
    return torch.get_num_threads()


def forward_benchmark(args: tuple) -> float:
    """Samples/s of pure forward passes of ``spec`` on a batch of discard observations (most decisions)."""
    import torch
    spec, setup, batch, seconds, device = args
    obs = [o for o in random_observations(2 * batch) if o.decision == DISCARD][:batch]
    return spec.player(setup, device).forward_throughput(torch.from_numpy(encode(obs)), DISCARD, seconds)


def run(args: argparse.Namespace) -> dict:
    if args.seconds <= 0:
        raise UserError(f"--seconds must be > 0, got {args.seconds}")
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..selfplay.policies import NetSpec  # torch: loaded only when this runs
    if args.device == "cuda" and not gpu_available():
        raise UserError("--device cuda: torch sees no CUDA GPU (torch.cuda.is_available() is false)")
    torch.manual_seed(args.seed)
    spec = NetSpec.from_net(KoiKoiNet(ModelConfig(width=256, ff=512, heads=4, layers=2)), "random-net",
                            epsilon=args.epsilon)
    setups = {"fp32": resolve_inference("fp32")}
    for name in args.inference:
        setup = resolve_inference(name, args.device)
        setups.setdefault(setup.setup, setup)
    out: dict = {**cpu_summary(), "games": args.games, "threads": args.threads, "concurrency": args.concurrency,
                 "backend": args.backend, "device": args.device, "branch": args.branch,
                 "auto": resolve_inference("auto", args.device).setup, "setups": {}}
    for name, setup in setups.items():
        row = _measure(args, spec, setup)
        if name != "fp32":
            base = out["setups"]["fp32"]
            row["vs_fp32"] = {k: round(row[k] / base[k], 2) for k in ("decisions_per_s", "inference_samples_per_s")}
        out["setups"][name] = row
    return out


def _measure(args: argparse.Namespace, spec: object, setup: object) -> dict:
    import torch
    games = tuple(GameSpec(seed=args.seed * 1_000_003 + i, record=(args.branch > 0, False)) for i in range(args.games))
    recorder = BranchRecorder(args.branch) if args.branch > 0 else Recorder()
    job = PlayJob(players=(spec,), games=games, inference=setup, concurrency=args.concurrency,
                  explore_seed=args.seed, reward=RewardModel("point"), recorder=recorder)
    inline = args.threads == 1 and args.backend == "process"
    if inline:
        torch.set_num_threads(1)
    executor = make_executor(0 if inline else args.threads, backend=args.backend, device=args.device)
    with executor:
        t0 = time.perf_counter()
        executor.map(_warm, [(spec, setup, args.device)] * executor.workers)  # workers start before the clock
        warm = time.perf_counter() - t0
        with progress_bar(total=args.games, desc=f"selfplay {setup.setup}", unit="game") as bar:
            t0 = time.perf_counter()
            res = executor.run(job, progress=bar.update)
            wall = time.perf_counter() - t0
        batch = max(1, round(res.mean_batch))
        z = sum(executor.map(forward_benchmark, [(spec, setup, batch, args.seconds, args.device)] * executor.workers))
    per_s = res.decisions / wall
    return {"games_per_s": round(args.games / wall, 2), "decisions_per_s": round(per_s, 1),
            "inference_samples_per_s": round(z, 1), "decisions_vs_inference": round(per_s / z, 3),
            "forward_share": round(res.forward_seconds / res.seconds, 3),  # of the workers' time
            "in_play_forward_samples_per_s": round(res.forward_samples / res.forward_seconds * executor.workers, 1),
            "worker_busy": round(res.seconds / (executor.workers * wall), 3), "mean_batch": round(res.mean_batch, 1),
            "decisions": res.decisions, "seconds": round(wall, 2), "warm_up_s": round(warm, 1),
            "samples": len(res.samples), "samples_per_s": round(len(res.samples) / wall, 1)}
