"""The ``koikoi`` command. Thin: each subcommand lives in ``pipeline/commands/<name>.py``
with ``register(subparsers)`` and calls the library.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands


class UserError(Exception):
    """A bad argument, file or param: printed as one line, exit code 2."""


def comma_list(text: str) -> list[str]:
    """An option's comma-separated names, blanks dropped: ``"pick, koikoi,"`` -> ``["pick", "koikoi"]``."""
    return [t.strip() for t in text.split(",") if t.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="koikoi", description="Train, evaluate and play Koi-Koi agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{mod.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as e:
        print(f"koikoi {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"koikoi {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
