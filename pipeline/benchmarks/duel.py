"""A duel's speed and memory: games/s and the peak RSS, flat as --games grows (games are streamed).
Give a model as --a or --b for the realistic figure: the duel runs as ``koikoi duel`` runs it."""

import argparse
import resource
import time

from ..cli_args import UserError, as_user_error, int_range
from ..duel.arena import CONCURRENCY
from ..duel.runner import duel_agents, on_workers, play_duel, player_spec, set_torch_threads
from ..lineup.loader import load_agent
from ..runtime.memory import rss_mb


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int_range(2), default=10_000, help="games to play, even (default 10000)")
    p.add_argument("--a", default="random", help="agent A: random, heuristic or a model directory (default random)")
    p.add_argument("--b", default="random", help="agent B (default random)")
    p.add_argument("--concurrency", type=int_range(1), default=None, help="games in memory at once (default: a duel's)")
    p.add_argument("--workers", type=int_range(0, 64), default=2,
                   help="worker processes for model agents (default 2; not in peak_rss_mb)")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads for model agents (default 1)")
    p.add_argument("--seed", type=int, default=0)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(args: argparse.Namespace) -> dict:
    if args.games % 2:
        raise UserError(f"--games must be even (each deal is played twice), got {args.games}")
    with as_user_error():
        a, b = load_agent(args.a, seed=args.seed), load_agent(args.b, seed=args.seed + 1)
    set_torch_threads(args.threads)
    concurrency = args.concurrency or CONCURRENCY
    pooled = on_workers([player_spec(a, "A"), player_spec(b, "B")], args.workers)
    before = peak_rss_mb()
    t0 = time.perf_counter()
    if pooled:
        r = duel_agents(a, b, args.games, args.seed, workers=args.workers)
    else:
        r = play_duel(a, b, args.games, args.seed, concurrency=concurrency)
    wall = time.perf_counter() - t0
    return {"games": r.games, "games_per_s": round(r.games / wall, 1), "seconds": round(wall, 2),
            "peak_rss_mb": round(peak_rss_mb(), 1), "peak_rss_mb_before_play": round(before, 1),
            "rss_mb_end": round(rss_mb(), 1), "concurrency": None if pooled else concurrency,
            "workers": args.workers if pooled else 0, "threads": args.threads, "a": args.a, "b": args.b,
            "win_rate": round(r.win_rate, 4)}
