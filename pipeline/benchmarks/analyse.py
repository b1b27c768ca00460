"""A game analysed for one player: ``koikoi analyse``'s seconds, and the play page's (``page_s``)."""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ..agents.heuristic import HeuristicAgent
from ..analysis.judge import read_game
from ..analysis.report import analyse
from ..cli_args import as_user_error, int_range
from ..duel.arena import play_games
from ..engine import RecordError, game_to_record
from ..play.analysis import judge_for
from ..play.games import Games
from ..runtime.hardware import pin_worker_threads


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", default=None, metavar="SPEC",
                   help="the judge, a search: spec (default: koikoi analyse's, the duels' champion)")
    p.add_argument("--record", default=None, help="a game record to analyse (default: an 8-round heuristic game)")
    p.add_argument("--player", choices=("1", "2"), default="1", help="whose decisions are judged (default 1)")
    p.add_argument("--seed", type=int, default=0, help="the default game's deal, and the page's game's seed")
    p.add_argument("--repeat", type=int_range(1), default=3, help="analyses of the game (default 3)")


def run(args: argparse.Namespace) -> dict:
    from fastapi.testclient import TestClient

    from ..play.app import create_app  # fastapi, starlette: loaded only when this runs
    t0 = time.perf_counter()
    with as_user_error():
        spec, judge = judge_for(args.agent)
    load = time.perf_counter() - t0
    pin_worker_threads(1)
    with as_user_error(RecordError):
        game = read_game(args.record) if args.record else read_game(
            f"heuristic game {args.seed}", game_to_record(play_games((HeuristicAgent(0), HeuristicAgent(1)),
                                                                     [args.seed])[0]))
    seat = int(args.player) - 1
    seconds, cpu, playouts = [], [], judge.playouts
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = analyse(game, judge, (seat,), seat)
        seconds.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    playouts = (judge.playouts - playouts) // args.repeat
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as records:
        games = Games(records, "heuristic", judge=spec)
        games.judges.judge = judge  # loaded above: load_s apart
        with TestClient(create_app(games, root=Path(".")), base_url="http://127.0.0.1") as client:
            r = client.post("/api/games", json={"opponent": "heuristic", "seed": args.seed, "rounds": 8}).json()
            state = r["state"]
            while state["decision"] != "over":
                state = client.post(f"/api/games/{r['id']}/actions", json={
                    "action": int(rng.choice(state["legal_actions"])), "move": state["move"]}).json()["state"]
            t0 = time.perf_counter()
            while (page := client.get(f"/api/games/{r['id']}/analysis").json())["status"] == "running":
                time.sleep(0.1)
            page_s = time.perf_counter() - t0
    return {"agent": spec, "game": game.path, "rounds": len(game.starts), "player": seat + 1,
            "decisions": len(report["decisions"]), "deals": judge.deals, "playouts": playouts,
            "seconds": round(float(np.median(seconds)), 2), "seconds_max": round(max(seconds), 2),
            "cpu_s": round(float(np.median(cpu)), 2), "playouts_per_s": round(playouts / float(np.median(seconds))),
            "load_s": round(load, 2), "page_s": round(page_s, 2), "page_decisions": len(page.get("decisions", []))}
