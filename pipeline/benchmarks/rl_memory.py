"""RL main-process memory: its RSS after every loop of a phase-1 run (params.yaml's rl section, a random
network as the SL model), flat after the first loops; --no-release shows the growth without the fix."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ..cli import UserError, int_range
from ..params import params_with
from ..runtime.memory import rss_mb


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--loops", type=int_range(2), default=12, help="training loops (default 12)")
    p.add_argument("--games", type=int_range(1), default=32, help="rl.games_per_loop (default 32)")
    p.add_argument("--eval-games", type=int_range(2), default=16, help="rl.eval_games, every loop (default 16)")
    p.add_argument("--width", type=int_range(8), default=128,
                   help="network width; ff 2x, 4 heads, 2 layers (default 128; the paper's 256 is ~4x slower)")
    p.add_argument("--workers", type=int_range(0, 64), default=2, help="rl.selfplay.workers (default 2)")
    p.add_argument("--no-release", action="store_true",
                   help="skip the per-loop release of freed memory (pipeline.runtime.memory): what a run did before")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    import torch

    from ..net.model import KoiKoiNet, ModelConfig  # torch: loaded only when this runs
    from ..net.modelio import save_model  # torch: loaded only when this runs
    from ..rl import training  # lightning, torch: loaded only when this runs

    if args.width % 4:
        raise UserError(f"--width must be divisible by the 4 heads, got {args.width}")
    sp, p1 = "rl.selfplay", "rl.phase1"
    params = params_with({
        "rl.games_per_loop": args.games, "rl.eval_games": args.eval_games, "rl.final_eval_games": args.eval_games,
        "rl.eval_every": 1, "rl.learner_device": "cpu", f"{sp}.device": "cpu", "rl.seed": args.seed,
        f"{sp}.workers": args.workers, f"{sp}.backend": "process", f"{p1}.loops": args.loops,
        f"{p1}.target_win_rate": 1.0})
    rss: list[float] = []

    class Measured(training.PhaseRunner):
        def _checkpoint(self, learner, state) -> None:
            super()._checkpoint(learner, state)
            rss.append(round(rss_mb(), 1))

    release = training.release_free_memory
    if args.no_release:
        training.release_free_memory = lambda: False
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="koikoi-rl-memory-") as tmp:
            torch.manual_seed(args.seed)
            sl = save_model(KoiKoiNet(ModelConfig(width=args.width, ff=2 * args.width, heads=4, layers=2)),
                            Path(tmp) / "sl", {"kind": "sl"})
            cfg = training.PhaseConfig(phase=1, variant="point", params=params.rl, winprob=params.winprob, sl_dir=sl,
                                       out_dir=Path(tmp) / "rl", results_dir=Path(tmp) / "results",
                                       ckpt_dir=Path(tmp) / "checkpoints",
                                       progress=False, mlflow=False)
            Measured(cfg).run()
    finally:
        training.release_free_memory = release
    per_loop = rss[1:args.loops + 1]  # after loops 1..n (rss[0]: after the start evaluation)
    half = len(per_loop) // 2
    return {"rss_mb_after_start_eval": rss[0], "rss_mb_per_loop": per_loop,
            "growth_mb_second_half": round(per_loop[-1] - per_loop[half - 1], 1),
            "growth_mb_per_loop_second_half": round((per_loop[-1] - per_loop[half - 1]) / (len(per_loop) - half), 2),
            "release": not args.no_release, "loops": args.loops, "games_per_loop": args.games,
            "eval_games": args.eval_games, "width": args.width, "workers": args.workers,
            "algorithm": params.rl.algorithm, "seconds": round(time.perf_counter() - t0, 1)}
