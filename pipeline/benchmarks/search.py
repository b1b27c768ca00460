"""A search agent through the play API (random moves for the person): reply times and time per searched decision."""

import argparse
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..cli_args import UserError, as_user_error, int_range
from ..duel.runner import set_torch_threads
from ..engine import DECISION_NAMES
from ..play.games import Games
from ..play.opponents import searcher, warm_up


def by_type(recent: Iterable[tuple[int, int, float]]) -> dict[str, dict]:
    """Count, median and p95 ms of ``SearchPlayer.recent``'s searched decisions by decision type."""
    times: dict[str, list[float]] = {}
    for kind, n, seconds in recent:
        if kind >= 0:
            times.setdefault(DECISION_NAMES[kind], []).append(seconds / n)
    return {k: {"searched": len(v), "median_ms": round(1000 * float(np.median(v)), 1),
                "p95_ms": round(1000 * float(np.percentile(v, 95)), 1)} for k, v in times.items()}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", default=None, help="agent spec (default: the page's searcher)")
    p.add_argument("--games", type=int_range(1), default=4, help="games to play (default 4)")
    p.add_argument("--rounds", type=int_range(1, 12), default=8, help="rounds per game (default 8)")
    p.add_argument("--seed", type=int, default=0, help="first game's seed; the person's moves are seeded from it")
    p.add_argument("--threads", type=int_range(1), default=1, help="torch threads, as koikoi play's (default 1)")


def run(args: argparse.Namespace) -> dict:
    from fastapi.testclient import TestClient

    from ..play.app import create_app  # fastapi, starlette: loaded only when this runs
    spec = args.agent or searcher(Path("."))
    if spec is None:
        raise UserError("no trained model present to search with: give --agent search:<model directory>")
    rng = np.random.default_rng(args.seed)
    replies: list[float] = []
    with tempfile.TemporaryDirectory() as records:
        games = Games(records, spec)
        with as_user_error():
            agent = games.opponents.load(spec, seed=args.seed)
        set_torch_threads(args.threads)
        warm = warm_up(agent)  # before the clock, as `koikoi play` does before it serves
        player = getattr(agent, "player", None)
        before = player.stats() if hasattr(player, "recent") else {}  # the warm-up's searches are not the page's
        if before:
            player.recent.clear()
        with TestClient(create_app(games, root=Path(".")), base_url="http://127.0.0.1") as client:  # a served host
            for g in range(args.games):
                t0 = time.perf_counter()
                r = client.post("/api/games", json={"opponent": spec, "seed": args.seed + g, "rounds": args.rounds})
                replies.append(time.perf_counter() - t0)
                state = r.json()["state"]
                while state["decision"] != "over":
                    action = int(rng.choice(state["legal_actions"]))
                    t0 = time.perf_counter()
                    r = client.post(f"/api/games/{r.json()['id']}/actions",
                                    json={"action": action, "move": state["move"]})
                    replies.append(time.perf_counter() - t0)
                    state = r.json()["state"]
    out = {"agent": spec, "games": args.games, "replies": len(replies),
           "reply_p50_s": round(float(np.percentile(replies, 50)), 4),
           "reply_p95_s": round(float(np.percentile(replies, 95)), 4), "reply_max_s": round(max(replies), 4),
           "warm_up_s": round(warm, 1)}
    if before:  # a search agent: the time of each searched decision (one per call here), by decision type
        per, d = [s / n for _, n, s in player.recent], {k: v - before[k] for k, v in player.stats().items()}
        n = d["searched"]
        out.update(searched=n, changed=d["changed"], search_mean_s=round(float(np.mean(per)), 4) if per else None,
                   search_p95_s=round(float(np.percentile(per, 95)), 4) if per else None,
                   deals_per_search=round(d["deals"] / n, 1) if n else None,
                   playouts_per_search=round(d["playouts"] / n, 1) if n else None, by_type=by_type(player.recent))
    return out
