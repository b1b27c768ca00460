"""Observation encoding speed (states/s, one core): observations of random games through ``encode``."""

from __future__ import annotations

import argparse
import time

from ..cli import int_range
from ..engine import random_observations
from ..net.encoding import NUM_FEATURES, encode


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--states", type=int_range(1), default=20000, help="observations to encode (default 20000)")
    p.add_argument("--batch", type=int_range(1), default=256, help="observations per encode() call (default 256)")
    p.add_argument("--repeat", type=int_range(1), default=3, help="timed passes; the best is reported (default 3)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    import torch

    torch.set_num_threads(1)  # the figure is per core; numpy's encode is single-threaded anyway

    obs = random_observations(args.states, args.seed)
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for i in range(0, len(obs), args.batch):
            encode(obs[i:i + args.batch])
        best = min(best, time.perf_counter() - t0)
    return {"states_per_s": round(len(obs) / best), "states": len(obs), "batch": args.batch,
            "num_features": NUM_FEATURES, "seconds": round(best, 3), "threads": 1}
