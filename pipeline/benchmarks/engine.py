"""Seeded random-vs-random full games through the rules engine, in one process."""

import argparse
import time

from ..cli_args import int_range
from ..engine.random_play import play_random_games


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int_range(1), default=2000, help="games to play (default 2000)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    decisions, rounds = play_random_games(args.games, args.seed)
    dt = time.perf_counter() - t0
    return {"games_per_s": round(args.games / dt, 1), "decisions_per_s": round(decisions / dt),
            "games": args.games, "rounds": rounds, "decisions": decisions, "seconds": round(dt, 3)}
