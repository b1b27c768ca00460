"""``koikoi analyse RECORD...``: finished games judged move by move by a searcher (docs/analysis.md)."""

import argparse
import json
import sys
from pathlib import Path

from ..cli_args import UserError, as_user_error
from ..engine import RecordError
from ..engine.records import record_files
from ..runtime.atomic import write_text
from ..runtime.hardware import pin_worker_threads
from ..runtime.progress import progress_bar

PLAYERS = {"1": (0,), "2": (1,), "both": (0, 1)}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyse", help="judge every decision of finished games: costliest moves, accuracy, P(win)")
    p.add_argument("records", nargs="+", metavar="RECORD", help="game records (JSON), or directories of them")
    p.add_argument("--agent", metavar="SPEC", default=None,
                   help="the judge, search:<model>?<options>; its deals= are the judge's (default: the champion)")
    p.add_argument("--player", choices=tuple(PLAYERS), default="both",
                   help="whose decisions are judged (default both); the graph is player 1's P(win) unless 2 alone")
    p.add_argument("--out", type=Path, default=Path("analysis"),
                   help="where each game's report (NAME.json) and graph (NAME.png) go (default analysis/)")
    p.add_argument("--format", choices=("png", "svg"), default="png", help="the graph's format (default png)")
    p.add_argument("--seed", type=int, default=0, help="the judge's seed: its deals follow from it (default 0)")
    p.add_argument("--summary", action="store_true",
                   help="print only a table of every player's figures (written to DIR/summary.md too)")
    p.set_defaults(func=run)


def record_paths(items: list[str]) -> list[Path]:
    """The record files named, directories expanded; ``UserError`` for a path that is neither."""
    out: list[Path] = []
    for item in items:
        p = Path(item)
        if not (p.is_dir() or p.is_file()):
            raise UserError(f"{item}: no such record file or directory")
        found = record_files(p) if p.is_dir() else [p]
        if not found:
            raise UserError(f"{item}: no game records (*.json) in it")
        out += found
    return out


def run(args: argparse.Namespace) -> int:
    from ..analysis.judge import read_game
    from ..analysis.report import analyse, costliest, players_line, plot_graph, summary_table
    from ..play.analysis import judge_for
    with as_user_error(RecordError):  # every record read before any playout: a bad one costs nothing
        games = [read_game(p) for p in record_paths(args.records)]
    with as_user_error():
        spec, judge = judge_for(args.agent, args.seed)
    pin_worker_threads(1)  # the rollout policy's small matrix products: one BLAS thread (docs/analysis.md)
    players = PLAYERS[args.player]
    with as_user_error(OSError, f"--out {args.out}: ", strerror=True):
        args.out.mkdir(parents=True, exist_ok=True)
    reports, names = [], set()
    with progress_bar(total=len(games), desc="analyse", unit="game", leave=False, enabled=len(games) > 1) as bar:
        for game in games:
            report = analyse(game, judge, players, perspective=players[0] if len(players) == 1 else 0)
            report["judge"]["spec"] = spec
            name = stem = Path(game.path).stem
            while name in names:  # records of one name from two directories
                name = f"{stem}-{len(names)}"
            names.add(name)
            write_text(args.out / f"{name}.json", json.dumps(report, indent=1) + "\n")
            plot_graph(report, args.out / f"{name}.{args.format}")
            reports.append(report)
            bar.update(1)
            if not args.summary:
                print(f"{game.path}: {players_line(report)}")
                for line in costliest(report):
                    print(f"  {line}")
    if args.summary:
        table = summary_table(reports)
        write_text(args.out / "summary.md", f"Judge {spec}, seed {args.seed}; {len(reports)} games.\n\n{table}\n")
        print(table)
    print(f"koikoi analyse: {len(reports)} report{'s' if len(reports) != 1 else ''} in {args.out}", file=sys.stderr)
    return 0
