"""The ``koikoi`` command's argument helpers, shared by its commands and benchmarks (below both, and ``cli``)."""

import argparse
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .runtime.hardware import resolve_device


class UserError(Exception):
    """A bad argument, file or param: printed as one line, exit code 2."""


@contextmanager
def as_user_error(kinds: type | tuple = ValueError, prefix: str = "", strerror: bool = False) -> Iterator[None]:
    """An exception of ``kinds`` raised inside, as a ``UserError``: ``prefix`` then its message (or ``strerror``)."""
    try:
        yield
    except kinds as e:
        raise UserError(f"{prefix}{e.strerror if strerror else e}") from None


def plain(doc: str | None) -> str:
    """A docstring as help text: reST ``literal`` markup dropped."""
    return re.sub(r"``([^`]*)``", r"\1", doc or "").strip()


def summary(doc: str | None) -> str:
    """A docstring's first paragraph on one line, as plain help text (a list of subcommands shows it whole)."""
    return " ".join(plain(doc).split("\n\n")[0].split())


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
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
    """A ``--device`` for model agents on ``workers`` processes made concrete (``cpu`` for 0 workers)."""
    if not workers:
        return "cpu"
    with as_user_error():
        return resolve_device(value, "--device")


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
