"""``koikoi replay DIR``: replay human game records through the engine and check every event."""

from __future__ import annotations

import argparse
import json
import sys

from ..engine import RecordError, replay_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay every game record in DIR and report mismatches")
    p.add_argument("directory", help="directory of *.json game records")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        report = replay_dir(args.directory, progress=sys.stderr.isatty())
    except RecordError as e:
        print(f"koikoi replay: error: {e}", file=sys.stderr)
        return 2
    for line in report.mismatches:
        print(line)
    for line in report.errors:
        print(f"koikoi replay: error: {line}", file=sys.stderr)
    print(json.dumps(report.summary()))
    if report.errors:
        return 2
    return 1 if report.mismatches else 0
