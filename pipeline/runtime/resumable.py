"""A resumable command's journal: JSON lines, a header naming the work, then one row per finished unit.

A row cut short by a kill is dropped with every row after it; a header naming other work is an error.
"""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


class JournalError(ValueError):
    """The journal file belongs to other work or is not a journal."""


class Journal:
    """The rows of a journal (``rows``: each parsed by ``parse``), and ``append`` to add one."""

    def __init__(self, path: Path, kind: str, header: dict, parse: Callable[[dict], Any] = dict) -> None:
        self.path, self.kind = Path(path), kind
        self.header = {"journal": kind, **header}
        self.rows: list = []
        self._started = self.path.exists() and self.path.stat().st_size > 0  # else written with the first row
        if self._started:
            self._load(parse)
        elif not self.path.parent.is_dir():
            raise JournalError(f"{self.path}: no such directory {self.path.parent}")

    def _load(self, parse: Callable[[dict], Any]) -> None:
        lines = self.path.read_text().splitlines()
        what = self.kind.removeprefix("koikoi ")
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            raise JournalError(f"{self.path}: not a {what} journal (its first line is not JSON)") from None
        if not isinstance(header, dict) or header.get("journal") != self.kind:
            raise JournalError(f"{self.path}: not a {what} journal")
        for key, value in self.header.items():
            if header.get(key) != value:
                raise JournalError(f"{self.path}: journal of another {what}: {key} is {header.get(key)!r} there, "
                                   f"{value!r} here (another --journal file, or the same options)")
        kept = [lines[0]]
        for line in lines[1:]:
            try:
                self.rows.append(parse(json.loads(line)))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                break  # cut short by a kill: this unit and anything after it is done again
            kept.append(line)
        if len(kept) < len(lines):
            self.path.write_text("".join(x + "\n" for x in kept))

    def append(self, row: dict) -> None:
        """Append a finished unit's row (the header first, with the first row)."""
        if not self._started:
            self._write(self.header)
            self._started = True
        self._write(row)

    def _write(self, row: dict) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())


def header_fields(path: Path, keys: tuple[str, ...], what: str, optional: tuple[str, ...] = ()) -> dict:
    """``keys`` (and ``optional`` ones, None where absent) of the header of the journal at ``path``."""
    try:
        with Path(path).open() as f:
            first = json.loads(f.readline())
        return {**{key: first[key] for key in keys}, **{key: first.get(key) for key in optional}}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise JournalError(f"{path}: not a {what} journal ({type(e).__name__}: {e})") from None
