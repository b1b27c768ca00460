"""A duel's journal: each block of games' totals appended as it ends, so that a long duel killed midway goes on
where it stopped when the same command is run again (``koikoi duel ... --journal FILE``).

The file is JSON lines, written from the first finished block on: a header naming the duel (agents, seed,
rounds, points, inference setups, block size, ``"counts": "pentanomial"``), then one line per finished block of
deals (its first seed, A's games, wins, losses, draws, points, the pentanomial counts of its pairs and the
searchers' counts). A block is played whole or not at all: a line cut short by a kill is dropped, and that block is
played again. A header that names another duel is an error, never overwritten; so is a journal written before
duels counted pairs (no ``counts`` in its header: its blocks cannot give the interval from the pairs nor a
sequential test), refused in one line. The number of games is not in the header: a longer duel with the same
options counts the blocks played already (the later row of a block wins, e.g. a short duel's last block played
again whole), and a sequential duel (``--sprt``) resumes by reading its blocks in order until its test decides.
The file's handling (a cut row dropped, a foreign header refused) is ``runtime.resumable``'s.
"""

from __future__ import annotations

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
    """A duel journal from before the pairs were counted: one line, before ``Journal`` calls it another duel's."""
    try:
        with Path(path).open() as f:
            first = json.loads(f.readline())
    except (OSError, ValueError):
        return  # absent, empty or not JSON: Journal says which
    if isinstance(first, dict) and first.get("journal") == "koikoi duel" and "counts" not in first:
        raise JournalError(f"{path}: a duel journal written before duels counted pairs (no pentanomial counts); "
                           "play the duel again into another --journal file")


class DuelJournal:
    """The blocks a duel has finished (``done``: first seed -> totals and counts), and ``record`` to add one;
    ``block``: deals per block, part of the header (a sequential duel's blocks are smaller)."""

    def __init__(self, path: Path, header: dict, block: int = BLOCK) -> None:
        _refuse_unpaired(path)
        self.block = block
        self._journal = Journal(path, "koikoi duel", {**header, "block": block, "counts": COUNTS}, _block)
        self.done: dict[int, tuple[DuelResult, dict[str, float]]] = {b: (r, st) for b, r, st in self._journal.rows}

    def holds(self, seeds: range) -> bool:
        """Whether the block of deals ``seeds`` is here whole (both seatings of each deal)."""
        done = self.done.get(seeds[0])
        return done is not None and done[0].games == 2 * len(seeds)

    def record(self, block: int, result: DuelResult, stats: dict[str, float]) -> None:
        """Append a finished block (first seed ``block``): its totals from A's side, its pairs' pentanomial counts
        and the searchers' counts."""
        self.done[block] = result, stats
        self._journal.append({"block": block, "games": result.games, "wins": result.wins, "losses": result.losses,
                              "draws": result.draws, "points": result.points, "pairs": list(result.pairs),
                              "seconds": round(result.seconds, 3), "stats": stats})


def other_blocks(path: Path, duel: dict, block: int = BLOCK) -> tuple[str, dict[int, DuelResult]]:
    """Another duel's journal, read for a paired comparison (``koikoi duel --paired``): its A and its finished
    blocks. It must be of the same B, seed, rounds, points and block size as ``duel`` (another A, any inference
    setups), so that its blocks are the same deals and seatings; ``JournalError`` (one line) otherwise."""
    _refuse_unpaired(path)
    own = header_fields(path, ("a", "inference"), "duel")
    journal = Journal(path, "koikoi duel", {**duel, **own, "block": block, "counts": COUNTS}, _block)
    return own["a"], {b: r for b, r, _ in journal.rows}
