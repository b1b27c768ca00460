"""``koikoi replay DIR``: replay human game records through the engine and check every event."""

import argparse
import json
import sys

from ..cli_args import UserError, as_user_error
from ..engine import RecordError, replay_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay every game record in DIR and report mismatches")
    p.add_argument("directory", help="directory of *.json game records")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with as_user_error(RecordError):
        report = replay_dir(args.directory, progress=True)
    if report.games == 0 and not report.errors:
        raise UserError(f"{args.directory}: no game records (*.json) in it")
    for line in report.mismatches:
        print(line)
    for line in report.errors:
        print(f"koikoi replay: error: {line}", file=sys.stderr)
    print(json.dumps(report.summary()))
    return 2 if report.errors else 1 if report.mismatches else 0
