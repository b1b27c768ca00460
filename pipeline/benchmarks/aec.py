"""Random-policy games through the PettingZoo environment (env(): encoded observations, action masks)."""

from __future__ import annotations

import argparse
import time

from ..cli import int_range


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int_range(1), default=50, help="games to play (default 50)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict:
    from ..engine.aec import AGENTS, env  # gymnasium, pettingzoo: loaded only when this runs

    e = env()
    steps = 0
    t0 = time.perf_counter()
    for g in range(args.games):
        e.reset(seed=args.seed * 1_000_003 + g)
        for i, agent in enumerate(AGENTS):
            e.action_space(agent).seed(args.seed + g + i)
        for agent in e.agent_iter():
            obs, _, terminated, truncated, _ = e.last()
            e.step(None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"]))
            steps += 1
    dt = time.perf_counter() - t0
    return {"games_per_s": round(args.games / dt, 1), "steps_per_s": round(steps / dt), "games": args.games,
            "steps": steps, "seconds": round(dt, 3)}
