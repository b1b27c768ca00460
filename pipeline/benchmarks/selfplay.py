"""Batched self-play of the paper-size network (random weights): games/s, decisions/s vs pure forward passes."""

from __future__ import annotations

import argparse
import time

from ..cli import UserError, float_range, int_range
from ..engine import DISCARD, GameState
from ..net.encoding import encode
from ..runtime.hardware import gpu_available, resolve_bf16
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob
from ..selfplay.executor import make_executor
from ..selfplay.rewards import RewardModel
from ..selfplay.rollouts import RolloutSpec


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int_range(1), default=1024, help="self-play games (default 1024)")
    p.add_argument("--threads", type=int_range(1), default=2,
                   help="workers (processes or Ray tasks), one torch thread each (default 2)")
    p.add_argument("--backend", choices=("process", "ray"), default="process",
                   help="where the workers run: local processes, or Ray tasks (a local Ray, or RAY_ADDRESS's cluster)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the workers run the forward passes (default cpu; cuda: the games stay on the CPU)")
    p.add_argument("--concurrency", type=int_range(1), default=64,
                   help="games played at once per worker (default 64)")
    p.add_argument("--bf16", choices=("auto", "true", "false"), default="auto",
                   help="bf16 autocast for the forward passes (default auto: on CPUs with native bf16)")
    p.add_argument("--epsilon", type=float_range(0.0, 1.0), default=0.0,
                   help="exploration rate of both seats (default 0)")
    p.add_argument("--rollout", type=float_range(0.0, 1.0), default=0.0,
                   help="rl.algorithm rollout_pi: share of seat 0's decisions that branch into rollouts (default 0)")
    p.add_argument("--seconds", type=float_range(0.0), default=3.0,
                   help="duration of the pure forward-pass measurement")
    p.add_argument("--seed", type=int, default=0)


def _warm(threads: int) -> int:
    import torch

    from ..selfplay.batched import play_job  # noqa: F401  (the imports a play job needs, before the clock)

    time.sleep(1.0)  # long enough that every worker takes one warm-up job
    return torch.get_num_threads()


def forward_benchmark(args: tuple) -> float:
    """Samples/s of pure forward passes of ``spec`` on a batch of real discard observations."""
    spec, bf16, batch, seconds, device = args
    import numpy as np
    import torch

    from ..agents.model_agent import NetPlayer  # torch: loaded only when this runs

    rng = np.random.default_rng(0)
    obs = []
    g = 0
    while len(obs) < batch:
        s = GameState(seed=g)
        g += 1
        while not s.is_over and len(obs) < batch:
            if s.phase == DISCARD:
                obs.append(s.observation(s.player))
            legal = s.legal_actions()
            s.step(legal[int(rng.integers(len(legal)))])
    x = torch.from_numpy(encode(obs))
    return NetPlayer(spec.build(), bf16=bf16, device=device).forward_throughput(x, DISCARD, seconds)


def run(args: argparse.Namespace) -> dict:
    if args.seconds <= 0:
        raise UserError(f"--seconds must be > 0, got {args.seconds}")
    if not 0.0 <= args.rollout <= 1.0:
        raise UserError(f"--rollout must be in [0, 1], got {args.rollout}")
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..selfplay.policies import NetSpec  # torch: loaded only when this runs

    if args.device == "cuda" and not gpu_available():
        raise UserError("--device cuda: torch sees no CUDA GPU (torch.cuda.is_available() is false)")
    bf16 = resolve_bf16({"true": True, "false": False}.get(args.bf16, "auto"), args.device)
    torch.manual_seed(args.seed)
    spec = NetSpec.from_net(KoiKoiNet(ModelConfig(width=256, ff=512, heads=4, layers=2)), "random-net",
                            epsilon=args.epsilon)
    record = (args.rollout > 0, False)
    games = tuple(GameSpec(seed=args.seed * 1_000_003 + i, record=record) for i in range(args.games))
    rollout = RolloutSpec(args.rollout) if args.rollout > 0 else None
    job = PlayJob(players=(spec,), games=games, bf16=bf16, concurrency=args.concurrency, explore_seed=args.seed,
                  reward=RewardModel("point"), rollout=rollout)
    inline = args.threads == 1 and args.backend == "process"
    if inline:
        torch.set_num_threads(1)
    executor = make_executor(0 if inline else args.threads, backend=args.backend, device=args.device)
    with executor:
        executor.map(_warm, [1] * executor.workers)  # start the workers before the clock
        with progress_bar(total=args.games, desc="selfplay", unit="game") as bar:
            t0 = time.perf_counter()
            result = executor.run(job, progress=bar.update)
            wall = time.perf_counter() - t0
        batch = max(1, round(result.mean_batch))
        z = sum(executor.map(forward_benchmark, [(spec, bf16, batch, args.seconds, args.device)] * executor.workers))
    decisions_per_s = result.decisions / wall
    return {
        "games_per_s": round(args.games / wall, 2),
        "decisions_per_s": round(decisions_per_s, 1),
        "inference_samples_per_s": round(z, 1),
        "decisions_vs_inference": round(decisions_per_s / z, 3),
        "forward_share": round(result.forward_seconds / result.seconds, 3),  # of the workers' time
        "in_play_forward_samples_per_s": round(result.forward_samples / result.forward_seconds * executor.workers, 1),
        "worker_busy": round(result.seconds / (executor.workers * wall), 3),  # worker time / (workers x wall)
        "mean_batch": round(result.mean_batch, 1),
        "games": args.games, "decisions": result.decisions, "seconds": round(wall, 2),
        "rollout": args.rollout, "samples": len(result.samples), "samples_per_s": round(len(result.samples) / wall, 1),
        "threads": args.threads, "concurrency": args.concurrency, "bf16": bf16, "backend": args.backend,
        "device": args.device,
    }
