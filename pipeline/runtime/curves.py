"""A learning curve as CSV (SL's epochs, RL's loops): ``write_curve`` writes it atomically, ``read_curve`` reads it
back with its numbers as the types written. Here on the ground floor: the trainers write curves, and the duels'
figures and the tuning objectives read them."""

from __future__ import annotations

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
    """A CSV cell back as written: ints as ints, floats as floats (their text has a '.', 'e', 'nan' or 'inf')."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_curve(path: str | Path) -> list[dict]:
    """The rows of a curve written by ``write_curve``, numbers parsed back to the types written."""
    with Path(path).open(newline="") as f:
        return [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]
