"""Read (every field checked) and write game records in the JSON format of the paper's public records."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..runtime.atomic import write_text
from .cards import card_id, card_tuple, ids_of, mask_of_ids
from .state import GameState


class RecordError(ValueError):
    """A record that cannot be read: names the file and the field."""

    def __init__(self, path: str | Path, fld: str, message: str) -> None:
        self.path, self.field = str(path), fld
        # "-": the file as a whole (unreadable, not JSON, not a directory): no field to name
        super().__init__(f"{path}: {message}" if fld == "-" else f"{path}: field '{fld}': {message}")


def load_record(path: str | Path) -> dict[str, Any]:
    """Load one record file; ``RecordError`` if it is not a readable game record."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RecordError(path, "-", f"cannot read file ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RecordError(path, "-", f"not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise RecordError(path, "-", "top level must be an object")
    for key in ("info", "record"):
        if not isinstance(data.get(key), dict):
            raise RecordError(path, key, "missing or not an object")
    return data


def record_files(directory: str | Path) -> list[Path]:
    """The ``*.json`` files of a directory in natural order (``2.json`` before ``10.json``)."""
    d = Path(directory)
    if not d.is_dir():
        raise RecordError(d, "-", "not a directory of game records")

    def key(p: Path) -> tuple[int, int | str]:
        return (0, int(p.stem)) if p.stem.isdigit() else (1, p.stem)

    return sorted(d.glob("*.json"), key=key)


ENV_VAR = "KOIKOI_RECORDS"  # names the records folder instead of sl_dataset.records_dir (records_folder)


def records_folder(records_dir: str | None, project: str | Path = ".") -> tuple[Path | None, str]:
    """The records folder (``$KOIKOI_RECORDS``, else ``records_dir`` under ``project``, else None) and what
    named it. The folder may not exist."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(project, env).resolve(), f"${ENV_VAR}"
    if records_dir:
        return Path(project, records_dir).resolve(), "sl_dataset.records_dir"
    return None, "sl_dataset.records_dir"


def has_records(d: Path | None) -> bool:
    return d is not None and d.is_dir() and any(d.glob("*.json"))


def records_sha256(files: Sequence[Path]) -> str:
    """SHA-256 over each file's name and bytes, in the order given: the same records hash alike anywhere."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _get(obj: dict, key: str, path: Path, where: str) -> Any:
    if key not in obj:
        raise RecordError(path, f"{where}.{key}", "missing")
    return obj[key]


def _card(value: Any, path: Path, where: str) -> int:
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise RecordError(path, where, f"expected a card [month, index], got {value!r}")
    try:
        return card_id(value[0], value[1])
    except ValueError as e:
        raise RecordError(path, where, str(e)) from None


def _cards(value: Any, path: Path, where: str) -> list[int]:
    if not isinstance(value, list):
        raise RecordError(path, where, f"expected a list of cards, got {value!r}")
    return [_card(v, path, f"{where}[{i}]") for i, v in enumerate(value)]


_mask = mask_of_ids  # records_replay's name


def _player(value: Any, path: Path, where: str, allow_zero: bool = False) -> int:
    ok = (0, 1, 2) if allow_zero else (1, 2)
    if value not in ok or isinstance(value, bool):
        raise RecordError(path, where, f"expected one of {ok}, got {value!r}")
    return value


def _rounds(rec: dict, path: Path) -> list[tuple[int, dict]]:
    out = []
    for key, val in rec["record"].items():
        if not key.startswith("round") or not key[5:].isdigit():
            raise RecordError(path, f"record.{key}", "expected keys round1, round2, ...")
        if not isinstance(val, dict) or not isinstance(val.get("basic"), dict):
            raise RecordError(path, f"record.{key}.basic", "missing or not an object")
        out.append((int(key[5:]), val))
    out.sort()
    if [n for n, _ in out] != list(range(1, len(out) + 1)):
        raise RecordError(path, "record", f"rounds must be numbered 1..N, got {[n for n, _ in out]}")
    if not out:
        raise RecordError(path, "record", "no rounds")
    return out


def _tuples(ids: list[int]) -> list[list[int]]:
    return [list(card_tuple(c)) for c in ids]


TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # the records' startTime and endTime


def game_to_record(state: GameState, names: tuple[str, str] = ("Player1", "Player2"),
                   start_time: str | None = None) -> dict[str, Any]:
    """A played game in the records' JSON format; ``start_time`` (``TIME_FORMAT``) defaults to now."""
    now = time.strftime(TIME_FORMAT)
    rounds: dict[str, Any] = {}
    for res in state.results:
        h0, h1, fld, stock = res.deal
        rnd: dict[str, Any] = {"basic": {
            "Dealer": res.dealer + 1,
            "initHand1": _tuples(ids_of(h0)), "initHand2": _tuples(ids_of(h1)),
            "initBoard": _tuples(ids_of(fld)), "initPile": _tuples(list(stock)),
            "roundWinner": res.winner + 1 if res.winner is not None else 0,
            "player1RoundPts": res.points[0], "player2RoundPts": res.points[1],
        }}
        for t, turn in enumerate(res.turns, start=1):
            rnd[f"turn{t}"] = {
                "playerInTurn": turn.player + 1,
                "discardCard": list(card_tuple(turn.discard)),
                "collectCard": _tuples([turn.discard] + ids_of(turn.captured)) if turn.captured else [],
                "drawCard": list(card_tuple(turn.draw)),
                "collectCard2": _tuples([turn.draw] + ids_of(turn.captured2)) if turn.captured2 else [],
                "isKoiKoi": turn.koikoi,
            }
        rounds[f"round{res.round}"] = rnd
    over = state.is_over
    return {
        "info": {"startTime": start_time or now, "endTime": now if over else None,
                 "player1Name": names[0], "player2Name": names[1],
                 "player1InitPts": state.init_points, "player2InitPts": state.init_points,
                 "numRound": state.num_rounds},
        "result": {"isOver": over,
                   "gameWinner": (state.winner + 1 if state.winner is not None else 0) if over else None,
                   "player1EndPts": state.points[0] if over else None,
                   "player2EndPts": state.points[1] if over else None},
        "save": {},
        "record": rounds,
    }


def write_record(state: GameState, path: str | Path, names: tuple[str, str] = ("Player1", "Player2")) -> None:
    """Write a played game as a JSON record file (atomically: a kill leaves no half-written record)."""
    write_text(path, json.dumps(game_to_record(state, names)))
