"""Replay game records through the engine and check every recorded event against it."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any

from ..runtime.progress import progress_bar
from .actions import KOIKOI, KOIKOI_DECISION, PICK, STOP, IllegalActionError
from .cards import card_tuple, ids_of
from .deal import Deal, deal_is_valid
from .records import RecordError, _card, _cards, _get, _mask, _player, _rounds, load_record, record_files
from .state import GameState


@dataclass
class ReplayReport:
    """Totals of a replay, one line per mismatch, and the unfinished games: a record saved mid-round whose
    ``result.isOver`` is false (the public dataset's 201.json), replayed and checked up to its last turn."""

    games: int = 0
    rounds: int = 0
    turns: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        return {"games": self.games, "rounds": self.rounds, "turns": self.turns,
                "mismatches": len(self.mismatches)}

    def merge(self, other: ReplayReport) -> None:
        self.games += other.games
        self.rounds += other.rounds
        self.turns += other.turns
        self.mismatches += other.mismatches
        self.errors += other.errors
        self.unfinished += other.unfinished


class _Mismatch(Exception):
    pass


def replay_record(rec: dict[str, Any], path: str | Path = "<record>", visitor: Any = None) -> ReplayReport:
    """Replay one game record through the engine and check every recorded event.

    ``visitor``, if given, is called as ``visitor(state, action)`` before each decision
    the engine asks for (the SL dataset build uses it). Raises ``RecordError`` for an
    unreadable record; engine disagreements are returned as mismatch lines.
    """
    path = Path(path)
    report = ReplayReport(games=1)
    info = rec["info"]
    init_points = _get(info, "player1InitPts", path, "info")
    num_rounds = _get(info, "numRound", path, "info")
    if not isinstance(init_points, int) or init_points < 1:
        raise RecordError(path, "info.player1InitPts", f"expected a positive int, got {init_points!r}")
    if not isinstance(num_rounds, int) or num_rounds < 1:
        raise RecordError(path, "info.numRound", f"expected a positive int, got {num_rounds!r}")
    rounds = _rounds(rec, path)

    # Parse every deal up front so a malformed record fails before any replay.
    deals: list[Deal] = []
    dealers: list[int] = []
    for n, rnd in rounds:
        b = rnd["basic"]
        w = f"record.round{n}.basic"
        h1 = _cards(_get(b, "initHand1", path, w), path, f"{w}.initHand1")
        h2 = _cards(_get(b, "initHand2", path, w), path, f"{w}.initHand2")
        board = _cards(_get(b, "initBoard", path, w), path, f"{w}.initBoard")
        pile = _cards(_get(b, "initPile", path, w), path, f"{w}.initPile")
        if sorted(h1 + h2 + board + pile) != list(range(48)):
            raise RecordError(path, w, "the deal is not the 48 cards once each")
        if (len(h1), len(h2), len(board), len(pile)) != (8, 8, 8, 24):
            raise RecordError(path, w, "a deal has 8+8 hand cards, 8 on the field and 24 in the stock")
        deals.append((_mask(h1), _mask(h2), _mask(board), pile))
        dealers.append(_player(_get(b, "Dealer", path, w), path, f"{w}.Dealer") - 1)

    def mismatch(n: int, t: int | None, msg: str) -> None:
        where = f"round {n}" + (f" turn {t}" if t is not None else "")
        report.mismatches.append(f"{path}: {where}: {msg}")

    def act(state: GameState, action: int, n: int, t: int) -> None:
        if visitor is not None:
            visitor(state, action)
        try:
            state.step(action)
        except IllegalActionError as e:
            mismatch(n, t, str(e))
            raise _Mismatch from None

    for i, deal in enumerate(deals):
        if not deal_is_valid(deal):
            mismatch(i + 1, None, "dealt four cards of one month in a hand or on the field (should be re-dealt)")
    # a record saved between rounds leaves the engine a round to deal after its last: the last deal again, never played
    state = GameState(seed=None, num_rounds=num_rounds, init_points=init_points,
                      first_dealer=dealers[0], deals=chain(deals, repeat(deals[-1])))
    try:
        for (n, rnd), dealer in zip(rounds, dealers, strict=True):
            if state.is_over:
                mismatch(n, None, "the engine ended the game before this round")
                raise _Mismatch
            if state.round != n:
                mismatch(n, None, f"engine is in round {state.round}")
                raise _Mismatch
            if state.dealer != dealer:
                mismatch(n, None, f"dealer is player {dealer + 1} in the record, {state.dealer + 1} in the engine")
                raise _Mismatch
            report.rounds += 1
            turn_keys = sorted((int(k[4:]), k) for k in rnd if k.startswith("turn") and k[4:].isdigit())
            if [t for t, _ in turn_keys] != list(range(1, len(turn_keys) + 1)):
                raise RecordError(path, f"record.round{n}", "turns must be numbered turn1..turnN")
            results_before = len(state.results)
            for t, key in turn_keys:
                w = f"record.round{n}.{key}"
                tr = rnd[key]
                if not isinstance(tr, dict):
                    raise RecordError(path, w, "not an object")
                who = _player(_get(tr, "playerInTurn", path, w), path, f"{w}.playerInTurn") - 1
                discard = _card(_get(tr, "discardCard", path, w), path, f"{w}.discardCard")
                col1 = _cards(_get(tr, "collectCard", path, w), path, f"{w}.collectCard")
                draw = _card(_get(tr, "drawCard", path, w), path, f"{w}.drawCard")
                col2 = _cards(_get(tr, "collectCard2", path, w), path, f"{w}.collectCard2")
                koi = _get(tr, "isKoiKoi", path, w)
                if koi not in (None, True, False):
                    raise RecordError(path, f"{w}.isKoiKoi", f"expected null, true or false, got {koi!r}")
                report.turns += 1
                if len(state.results) != results_before or state.is_over:
                    mismatch(n, t, "the engine ended the round before this turn")
                    raise _Mismatch
                if state.turn != t or state.player != who:
                    mismatch(n, t, f"engine expects turn {state.turn} of player {state.player + 1}")
                    raise _Mismatch
                act(state, discard, n, t)
                if state.phase == PICK and not state.pick_from_draw and len(state.results) == results_before:
                    if len(col1) != 2:
                        mismatch(n, t, f"two field cards match the played card but collectCard is {col1}")
                        raise _Mismatch
                    act(state, col1[1], n, t)
                if state.phase == PICK and state.pick_from_draw and len(state.results) == results_before:
                    if len(col2) != 2:
                        mismatch(n, t, f"two field cards match the drawn card but collectCard2 is {col2}")
                        raise _Mismatch
                    act(state, col2[1], n, t)
                if state.phase == KOIKOI_DECISION and len(state.results) == results_before and state.turn == t:
                    if koi is None:
                        mismatch(n, t, "the engine asks koi-koi or stop; the record has no prompt")
                        raise _Mismatch
                    act(state, KOIKOI if koi else STOP, n, t)
                done = state.results[-1].turns[-1] if len(state.results) != results_before else state.turns[-1]
                if done.discard != discard:
                    mismatch(n, t, "turn bookkeeping lost the played card")
                if sorted(ids_of(done.captured)) != sorted(col1[1:]) or (col1 and col1[0] != discard):
                    mismatch(n, t, f"played card captured {_names(done.captured)}, record says {col1}")
                if done.draw != draw:
                    mismatch(n, t, f"drew {list(card_tuple(done.draw))}, record says {list(card_tuple(draw))}")
                if sorted(ids_of(done.captured2)) != sorted(col2[1:]) or (col2 and col2[0] != draw):
                    mismatch(n, t, f"drawn card captured {_names(done.captured2)}, record says {col2}")
                if done.koikoi is not koi:
                    mismatch(n, t, f"koi-koi is {done.koikoi} in the engine, {koi} in the record")
            if len(state.results) == results_before:
                if n == len(rounds) and not _over(rec):  # saved mid-round: every turn it has was checked
                    report.unfinished.append(f"{path}: round {n}: the game was saved unfinished (result.isOver false)")
                    raise _Mismatch
                mismatch(n, None, "the record ends the round, the engine does not")
                raise _Mismatch
            res = state.results[-1]
            b = rnd["basic"]
            w = f"record.round{n}.basic"
            rw = _player(_get(b, "roundWinner", path, w), path, f"{w}.roundWinner", allow_zero=True)
            if (res.winner + 1 if res.winner is not None else 0) != rw:
                mismatch(n, None, f"round winner {rw} in the record, "
                                  f"{res.winner + 1 if res.winner is not None else 0} in the engine")
            rp = (_get(b, "player1RoundPts", path, w), _get(b, "player2RoundPts", path, w))
            if rp != res.points:
                mismatch(n, None, f"round points {list(rp)} in the record, {list(res.points)} in the engine")
        if not state.is_over and not _over(rec):
            report.unfinished.append(f"{path}: after round {len(rounds)}: the game was saved unfinished "
                                     "(result.isOver false)")
        result = rec.get("result")
        if isinstance(result, dict) and result.get("isOver"):
            end = (result.get("player1EndPts"), result.get("player2EndPts"))
            if not state.is_over:
                mismatch(len(rounds), None, "the record's game is over, the engine's is not")
            elif tuple(state.points) != end:
                mismatch(len(rounds), None, f"final points {list(end)} in the record, {state.points} in the engine")
            gw = result.get("gameWinner")
            if state.is_over and gw != (state.winner + 1 if state.winner is not None else 0):
                mismatch(len(rounds), None, f"game winner {gw} in the record, engine says {state.winner}")
    except _Mismatch:
        pass
    return report


def _over(rec: dict[str, Any]) -> bool:
    result = rec.get("result")
    return not isinstance(result, dict) or result.get("isOver") is not False


def _names(mask: int) -> list[list[int]]:
    return [list(card_tuple(c)) for c in ids_of(mask)]


def replay_dir(directory: str | Path, progress: bool = False) -> ReplayReport:
    """Replay every record of a directory; unreadable files are listed in ``errors``."""
    total = ReplayReport()
    files = record_files(directory)
    for f in progress_bar(files, enabled=progress, desc="replay", unit="game", leave=False):
        try:
            total.merge(replay_record(load_record(f), f))
        except RecordError as e:
            total.errors.append(str(e))
    return total
