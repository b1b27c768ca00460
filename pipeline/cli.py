"""The ``koikoi`` command: each subcommand is ``pipeline/commands/<name>.py`` with ``register(subparsers)``."""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.metadata
import pkgutil
import re
import sys

from . import check_interrupted, commands
from .cli_args import UserError
from .params import ParamError

_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2), an unknown option named by its (sub)command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        hint = "" if "did you mean" in message else f" (see {self.prog} --help)"
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        # before argparse, which would name only the top command, or a positional the option's value filled
        unknown = self._unknown_options(sys.argv[1:] if args is None else list(args))
        if unknown:
            self.error("unrecognized arguments: " + ", ".join(unknown))
        return super().parse_known_args(args, namespace)

    def _unknown_options(self, args: list[str]) -> list[str]:
        """The options in ``args`` (before a subcommand's name) this parser does not know, with a suggestion."""
        has_sub = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        known = [o for o in self._option_string_actions if o.startswith("--")]
        found = []
        for arg in args:
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-" or _NUMBER.match(arg):
                if has_sub:
                    break  # the subcommand's name: the rest is its parser's
                continue
            name = arg.split("=", 1)[0]
            if name in self._option_string_actions or arg[:2] in self._option_string_actions or (
                    name.startswith("--") and len([o for o in known if o.startswith(name)]) == 1):
                continue  # an option, a short one with its value (-Sk=v), or an unambiguous abbreviation
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            found.append(f"{name} (did you mean {close[0]}?)" if close else name)
        return found


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="koikoi", description="Train, evaluate and play Koi-Koi agents.")
    parser.add_argument("--version", action="version", version=f"koikoi {importlib.metadata.version('koikoi')}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{mod.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns its exit code (2 for a usage error, 0 after --help or --version)."""
    check_interrupted()  # a Ctrl-C during the imports above
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse has printed the error, the help or the version
        return int(e.code or 0)
    try:
        check_interrupted()
        return int(args.func(args) or 0)
    except (UserError, ParamError) as e:
        command = " ".join(filter(None, (args.command, getattr(args, "target", None))))
        print(f"koikoi {command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"koikoi {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # `python -m pipeline.cli`: the commands' UserError is cli_args', as main's
    sys.exit(main())
