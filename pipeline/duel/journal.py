"""A duel's journal (``koikoi duel --journal``): each block of games' totals appended as it ends, so a killed duel
goes on where it stopped. The number of games is not in the header: a longer duel counts the blocks played."""

import json
from pathlib import Path

from ..runtime.resumable import Journal, JournalError, header_fields
from .stats import DuelResult

BLOCK = 100  # deals per journalled block of a fixed-size duel: 200 games, what a kill can lose
COUNTS = "pentanomial"  # the header's mark of a journal whose rows carry their pairs' counts


def _block(row: dict) -> tuple[int, DuelResult, dict[str, float]]:
    pairs = [int(x) for x in row["pairs"]]
    if len(pairs) != 5:
        raise ValueError(f"pairs must be 5 counts, got {pairs}")
    result = DuelResult(games=row["games"], wins=row["wins"], losses=row["losses"], draws=row["draws"],
                        points=row["points"], seconds=row["seconds"], pairs=pairs)
    return int(row["block"]), result, {k: float(v) for k, v in row["stats"].items()}


def _refuse_unpaired(path: Path) -> None:
    try:
        with Path(path).open() as f:
            first = json.loads(f.readline())
    except (OSError, ValueError):
        return  # absent, empty or not JSON: Journal says which
    if isinstance(first, dict) and first.get("journal") == "koikoi duel" and "counts" not in first:
        raise JournalError(f"{path}: a duel journal written before duels counted pairs (no pentanomial counts); "
                           "play the duel again into another --journal file")


class DuelJournal:
    """The blocks a duel has finished (``done``: first seed -> totals and counts), and ``record`` to add one."""

    def __init__(self, path: Path, header: dict, block: int = BLOCK) -> None:
        _refuse_unpaired(path)
        self.block = block
        self._journal = Journal(path, "koikoi duel", {**header, "block": block, "counts": COUNTS}, _block)
        self.done: dict[int, tuple[DuelResult, dict[str, float]]] = {b: (r, st) for b, r, st in self._journal.rows}

    def holds(self, seeds: range) -> bool:
        done = self.done.get(seeds[0])
        return done is not None and done[0].games == 2 * len(seeds)

    def record(self, block: int, result: DuelResult, stats: dict[str, float]) -> None:
        self.done[block] = result, stats
        self._journal.append({"block": block, "games": result.games, "wins": result.wins, "losses": result.losses,
                              "draws": result.draws, "points": result.points, "pairs": list(result.pairs),
                              "seconds": round(result.seconds, 3), "stats": stats})


def other_blocks(path: Path, duel: dict, block: int = BLOCK) -> tuple[str, dict[int, DuelResult]]:
    """Another duel's A and finished blocks (``koikoi duel --paired``); it must share ``duel``'s B and deals."""
    _refuse_unpaired(path)
    own = header_fields(path, ("a", "inference"), "duel")
    journal = Journal(path, "koikoi duel", {**duel, **own, "block": block, "counts": COUNTS}, _block)
    return own["a"], {b: r for b, r, _ in journal.rows}
