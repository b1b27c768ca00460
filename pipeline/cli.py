"""The ``koikoi`` command. Thin: each subcommand lives in ``pipeline/commands/<name>.py``
with ``register(subparsers)`` and calls the library.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.metadata
import math
import pkgutil
import re
import sys
from collections.abc import Callable

from . import check_interrupted, commands
from .params import ParamError
from .runtime.hardware import resolve_device


class UserError(Exception):
    """A bad argument, file or param: printed as one line, exit code 2."""


_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (exit code 2), like every other error of the command, and an
    unknown option named by the (sub)command that does not know it, with the close option it may mean."""

    def error(self, message: str) -> None:  # type: ignore[override]
        hint = "" if "did you mean" in message else f" (see {self.prog} --help)"
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        # Checked before argparse parses: it would name only the top command ("koikoi: error:
        # unrecognized arguments"), or first complain of a positional the misspelt option's value filled.
        unknown = self._unknown_options(sys.argv[1:] if args is None else list(args))
        if unknown:
            self.error("unrecognized arguments: " + ", ".join(unknown))
        return super().parse_known_args(args, namespace)

    def _unknown_options(self, args: list[str]) -> list[str]:
        """The options in ``args`` this parser does not know (with a suggestion each). A parser with
        subcommands checks only what comes before the subcommand's name."""
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


def plain(doc: str | None) -> str:
    """A docstring as help text: reST ``literal`` markup dropped."""
    return re.sub(r"``([^`]*)``", r"\1", doc or "").strip()


def summary(doc: str | None) -> str:
    """A docstring's first paragraph on one line, as plain help text (a list of subcommands shows it whole)."""
    return " ".join(plain(doc).split("\n\n")[0].split())


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an int in ``low..high`` (``high`` None: no upper bound)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {f'{low}..{high}' if high is not None else f'>= {low}'}, "
                                             f"got {value}")
        return value

    return parse


def float_range(low: float, high: float | None = None) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in ``low..high`` (``high`` None: no upper bound); nan and inf
    are refused."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            bounds = f"in {low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"must be a finite number {bounds}, got {text}")
        return value

    return parse


def comma_list(text: str) -> list[str]:
    """An option's comma-separated names, blanks dropped: ``"pick, koikoi,"`` -> ``["pick", "koikoi"]``."""
    return [t.strip() for t in text.split(",") if t.strip()]


def worker_device(value: str, workers: int) -> str:
    """A ``--device`` option for model agents on ``workers`` processes made concrete: ``cpu`` when they play in
    this process (0 workers); a device this machine lacks is a usage error naming the option."""
    if not workers:
        return "cpu"
    try:
        return resolve_device(value, "--device")
    except ValueError as e:
        raise UserError(str(e)) from None


def param_overrides(items: list[str], section: str) -> dict[str, object]:
    """``--set KEY=VALUE`` options as dotted overrides of ``section`` (values read as YAML: ``-S lr=0.0005``)."""
    import yaml

    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--set {item!r}: expected KEY=VALUE")
        overrides[f"{section}.{key}"] = yaml.safe_load(value)
    return overrides


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


if __name__ == "__main__":
    # `python -m pipeline.cli`: run the imported module's main, so that the commands' UserError
    # is this very class (the __main__ copy of this file defines another one)
    from pipeline.cli import main as package_main

    sys.exit(package_main())
