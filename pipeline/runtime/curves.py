"""A learning curve as CSV (SL's epochs, RL's loops), written atomically and read back with its numbers' types."""

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import atomic


def write_curve(rows: Iterable[Mapping[str, Any]], path: str | Path, columns: Sequence[str]) -> Path:
    """``rows`` as CSV with ``columns`` (other keys ignored, missing ones empty), written atomically."""
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return atomic.write_text(path, f.getvalue())


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_curve(path: str | Path) -> list[dict]:
    with Path(path).open(newline="") as f:
        return [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]
