"""A person's record: finished games and the win rate against each opponent; never the cards."""

from pathlib import Path
from typing import Any

from ..duel.stats import DuelResult
from ..engine import RecordError, load_record
from .about import agent_name
from .game_session import HUMAN_NAME


def _field(rec: dict, path: Path, section: str, key: str, kind: type) -> Any:
    value = rec.get(section, {}).get(key) if isinstance(rec.get(section), dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise RecordError(path, f"{section}.{key}", f"expected {kind.__name__}, got {value!r}")
    return value


def played_game(path: Path) -> dict[str, Any]:
    """The summary of one record file (docs/play.md); ``RecordError`` naming the field unless a person's game."""
    rec = load_record(path)
    names = (_field(rec, path, "info", "player1Name", str), _field(rec, path, "info", "player2Name", str))
    if names.count(HUMAN_NAME) != 1:
        raise RecordError(path, "info.player1Name", f"not a game of a person ({HUMAN_NAME!r}) against an agent")
    if not isinstance(rec.get("result"), dict) or rec["result"].get("isOver") is not True:
        raise RecordError(path, "result.isOver", "the game is not over")
    seat = names.index(HUMAN_NAME)  # 0: the person is the record's player 1
    end = (_field(rec, path, "result", "player1EndPts", int), _field(rec, path, "result", "player2EndPts", int))
    winner = _field(rec, path, "result", "gameWinner", int)
    if winner not in (0, 1, 2):
        raise RecordError(path, "result.gameWinner", f"expected 0 (draw), 1 or 2, got {winner!r}")
    opponent = names[seat ^ 1]
    return {"file": path.name, "game": path.stem.rsplit("-", 1)[-1], "ended": str(rec["info"].get("endTime") or ""),
            "opponent": opponent, "name": agent_name(opponent), "seat": seat, "rounds": len(rec["record"]),
            "planned": _field(rec, path, "info", "numRound", int),  # a game ends early when a player runs out
            "init_points": _field(rec, path, "info", "player1InitPts", int),
            "points": end[seat], "opponent_points": end[seat ^ 1],
            "result": "draw" if winner == 0 else "win" if winner - 1 == seat else "loss"}


def tally(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The person's results against each opponent, most played first: counts, win rate and its 95% interval."""
    by: dict[str, DuelResult] = {}
    for g in games:
        seat = g["seat"]
        winner = None if g["result"] == "draw" else seat if g["result"] == "win" else seat ^ 1
        by.setdefault(g["opponent"], DuelResult()).add_outcome(winner, seat, g["points"], g["init_points"])
    rows = [{"opponent": spec, "name": agent_name(spec), "games": r.games, "wins": r.wins, "losses": r.losses,
             "draws": r.draws, "win_rate": round(r.win_rate, 4), "ci95": [round(x, 4) for x in r.ci95],
             "point_diff": round(r.point_diff, 2)} for spec, r in by.items()]
    return sorted(rows, key=lambda row: (-row["games"], row["name"]))


def history(records_dir: Path) -> dict[str, Any]:
    """Every finished game in ``records_dir`` (newest first), the tally per opponent, and the files skipped."""
    games: list[dict[str, Any]] = []
    skipped: list[str] = []
    files = sorted(records_dir.glob("*.json")) if records_dir.is_dir() else []
    for f in files:
        try:
            games.append(played_game(f))
        except RecordError as e:
            skipped.append(str(e).replace(str(f), f.name, 1))  # the file's name, not the server's paths
    games.sort(key=lambda g: (g["ended"], g["file"]), reverse=True)
    return {"games": games, "opponents": tally(games), "skipped": skipped}
