"""RL checkpoint's replay: seconds to pack, ``torch.save``, ``torch.load`` (weights_only) and unpack a loop of
samples (one blob per loop, ``pipeline.rl.experience``), against the former tuple per sample in the same run.
The samples: greedy self-play of a small random network, repeated up to ``--samples``."""

from __future__ import annotations

import argparse

from ..cli import int_range
from ..runtime.hardware import cpu_name


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", type=int_range(1), default=100_000,
                   help="samples in the loop (default 100000: about 1,900 games of Monte-Carlo samples)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    from ..rl.replay_bench import measure  # torch: loaded only when this runs

    return {**measure(args.samples, args.seed), "cpu": cpu_name()}
