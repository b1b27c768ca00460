"""A duel's journal: each block of games' totals appended as it ends, so that a long duel killed midway goes on
where it stopped when the same command is run again (``koikoi duel ... --journal FILE``).

The file is JSON lines, written from the first finished block on: a header naming the duel (agents, seed,
rounds, points, inference setups, block size), then one line per finished block of deals (its first seed, A's
games, wins, losses, draws, points and the searchers' counts). A block is played whole or not at all: a line cut
short by a kill is dropped, and that block is played again. A header that names another duel is an error, never
overwritten. The number of games is not in the header: a longer duel with the same options counts the blocks
played already (the later row of a block wins, e.g. a short duel's last block played again whole).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .stats import DuelResult

BLOCK = 100  # deals per journalled block: 200 games, what a kill can lose (minutes for two searchers on 2 cores)


class JournalError(ValueError):
    """The journal file belongs to another duel or is not a journal: one line naming the file and the field."""


class DuelJournal:
    """The blocks a duel has finished (``done``: first seed -> totals and counts), and ``record`` to add one."""

    def __init__(self, path: Path, header: dict) -> None:
        self.path = Path(path)
        self.header = {"journal": "koikoi duel", **header, "block": BLOCK}
        self.done: dict[int, tuple[DuelResult, dict[str, float]]] = {}
        self._started = self.path.exists() and self.path.stat().st_size > 0  # else written with the first block
        if self._started:
            self._load()
        elif not self.path.parent.is_dir():
            raise JournalError(f"{self.path}: no such directory {self.path.parent}")

    def _load(self) -> None:
        lines = self.path.read_text().splitlines()
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            raise JournalError(f"{self.path}: not a duel journal (its first line is not JSON)") from None
        if not isinstance(header, dict) or header.get("journal") != "koikoi duel":
            raise JournalError(f"{self.path}: not a duel journal")
        for key, value in self.header.items():
            if header.get(key) != value:
                raise JournalError(f"{self.path}: journal of another duel: {key} is {header.get(key)!r} there, "
                                   f"{value!r} here (another --journal file, or the same options)")
        kept = [lines[0]]
        for line in lines[1:]:
            try:
                row = json.loads(line)
                result = DuelResult(games=row["games"], wins=row["wins"], losses=row["losses"], draws=row["draws"],
                                    points=row["points"], seconds=row["seconds"])
                self.done[int(row["block"])] = result, {k: float(v) for k, v in row["stats"].items()}
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                break  # cut short by a kill: this block and anything after it is played again
            kept.append(line)
        if len(kept) < len(lines):
            self.path.write_text("".join(x + "\n" for x in kept))

    def holds(self, seeds: range) -> bool:
        """Whether the block of deals ``seeds`` is here whole (both seatings of each deal)."""
        done = self.done.get(seeds[0])
        return done is not None and done[0].games == 2 * len(seeds)

    def record(self, block: int, result: DuelResult, stats: dict[str, float]) -> None:
        """Append a finished block (first seed ``block``): its totals from A's side and the searchers' counts."""
        self.done[block] = result, stats
        if not self._started:
            self._append(self.header)
            self._started = True
        self._append({"block": block, "games": result.games, "wins": result.wins, "losses": result.losses,
                      "draws": result.draws, "points": result.points, "seconds": round(result.seconds, 3),
                      "stats": stats})

    def _append(self, row: dict) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())
