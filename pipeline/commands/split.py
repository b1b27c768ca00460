"""``koikoi split AT ELSEWHERE --decisions discard --out DIR``: a model playing one network at some decision
types and another at the rest (``pipeline.selfplay.split``); duel, search or play it like any model directory."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import UserError
from ..engine import DECISION_NAMES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("split", help="save a model that plays one model's network at some decision types and "
                                     "another's at the rest (a discard fit beside RL's koi-koi calls, say)")
    p.add_argument("at", metavar="AT", help="the model directory played at --decisions (a split model: the network "
                                            "it plays there)")
    p.add_argument("elsewhere", metavar="ELSEWHERE", help="the model directory played at the other decision types")
    p.add_argument("--decisions", nargs="+", choices=DECISION_NAMES, required=True,
                   help="the decision types AT plays")
    p.add_argument("--out", required=True, type=Path, help="the model directory to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..selfplay.split import combine  # torch: loaded only when this runs

    if args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out}: not a directory")
    if args.out.resolve() in (Path(args.at).resolve(), Path(args.elsewhere).resolve()):
        raise UserError(f"--out {args.out}: is an input; write the split model elsewhere")
    try:
        out = combine(args.at, args.elsewhere, args.decisions, args.out)
    except (FileNotFoundError, ValueError) as e:
        raise UserError(str(e)) from None
    print(json.dumps({"out": str(out), "at": args.at, "elsewhere": args.elsewhere, "decisions": args.decisions}))
    return 0
