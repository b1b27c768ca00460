"""Record replay against the human games, and engine-written records."""

import json
import random
from pathlib import Path

import pytest

from pipeline.engine import (
    GAME_OVER,
    KOIKOI,
    KOIKOI_DECISION,
    GameState,
    RecordError,
    game_to_record,
    load_record,
    replay_dir,
    replay_record,
    write_record,
)
from pipeline.engine.records import record_files, records_sha256
from pipeline.sl.records_source import RECORDS_HELP, shared_records_dir

RECORDS = shared_records_dir()
needs_records = pytest.mark.skipif(RECORDS is None, reason=f"no human records found; {RECORDS_HELP}")


def _play(seed: int, koikoi_bias: float = 0.5, **kw) -> GameState:
    s = GameState(seed=seed, **kw)
    rng = random.Random(seed)
    while s.phase != GAME_OVER:
        legal = s.legal_actions()
        if s.phase == KOIKOI_DECISION:
            s.step(KOIKOI if rng.random() < koikoi_bias else legal[0])
        else:
            s.step(legal[rng.randrange(len(legal))])
    return s


# The totals of the records folders this project knows, by content hash (records_sha256): the 160 games of
# ../shared/koikoi-records, and the 201 of the public dataset at params.yaml's pinned commit (its 201.json is a
# game saved unfinished in round 1). Other records (synthetic ones, in the engine_tests stage) replay too.
KNOWN = {
    "8b50aeffb9ba5577d81cdc4b1e8294f34ba3f33aaa860311531b691aedc1a4d7": ((160, 1266, 14197), 0),
    "1b12c1d9f31ac8e7ce30a03f6505e450fd429741d31cb9ad28166ac329a72839": ((201, 1580, 17825), 1),
}


@needs_records
def test_all_human_records_replay_without_mismatch():
    report = replay_dir(RECORDS)
    assert report.errors == []
    assert report.mismatches == []
    known = KNOWN.get(records_sha256(record_files(RECORDS)))
    if known is not None:
        (games, rounds, turns), unfinished = known
        assert report.summary() == {"games": games, "rounds": rounds, "turns": turns, "mismatches": 0}
        assert len(report.unfinished) == unfinished


def test_a_game_saved_unfinished_is_checked_up_to_its_last_turn_not_a_mismatch(tmp_path):
    """The public dataset's 201.json: saved in round 1, ``result.isOver`` false. Its turns are checked; a finished
    game cut the same way is still a mismatch."""
    rec = game_to_record(_play(3))
    last = rec["record"][f"round{len(rec['record'])}"]
    for k in [k for k in last if k.startswith("turn")][4:]:
        del last[k]
    last["basic"].update(roundWinner=None, player1RoundPts=None, player2RoundPts=None)
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(rec))
    cut = replay_record(load_record(path), path)  # the record says the game is over: the cut is a mismatch
    assert cut.unfinished == [] and "the record ends the round, the engine does not" in cut.mismatches[0]
    rec["result"].update(isOver=False, gameWinner=None, player1EndPts=None, player2EndPts=None)
    path.write_text(json.dumps(rec))
    saved = replay_record(load_record(path), path)
    assert saved.mismatches == [] and len(saved.unfinished) == 1 and "saved.json" in saved.unfinished[0]
    assert saved.turns == cut.turns > 0  # the same turns checked
    last["turn2"]["drawCard"] = [m for m in ([12, 4], [12, 3]) if m != last["turn2"]["drawCard"]][0]
    path.write_text(json.dumps(rec))
    assert replay_record(load_record(path), path).mismatches  # a wrong turn of an unfinished game is still one


def test_a_game_saved_between_rounds_is_unfinished_and_a_finished_one_cut_there_a_mismatch(tmp_path):
    """A record whose last round ended the round but not the game: the engine, which deals the next round as one
    ends, asked for a deal the record does not hold and the replay crashed (ValueError, not a report line)."""
    rec = game_to_record(_play(5, num_rounds=3))
    assert len(rec["record"]) == 3
    del rec["record"]["round3"]
    path = tmp_path / "between.json"
    path.write_text(json.dumps(rec))
    cut = replay_record(load_record(path), path)  # the record says the game is over
    assert cut.unfinished == [] and "the record's game is over, the engine's is not" in cut.mismatches[0]
    rec["result"].update(isOver=False, gameWinner=None, player1EndPts=None, player2EndPts=None)
    path.write_text(json.dumps(rec))
    saved = replay_record(load_record(path), path)
    assert saved.mismatches == [] and saved.rounds == 2 and saved.unfinished == [
        f"{path}: after round 2: the game was saved unfinished (result.isOver false)"]


def test_engine_games_round_trip_through_the_record_format(tmp_path):
    for seed in range(40):
        s = _play(seed, koikoi_bias=0.9 if seed % 2 else 0.1, init_points=10 if seed % 3 == 0 else 30)
        path = tmp_path / f"{seed}.json"
        write_record(s, path)
        report = replay_record(load_record(path), path)
        assert report.mismatches == [], report.mismatches[:3]
        assert report.rounds == len(s.results)
    assert replay_dir(tmp_path).summary()["games"] == 40


def test_a_changed_event_is_reported_with_file_round_and_turn(tmp_path):
    rec = game_to_record(_play(1))
    turn = rec["record"]["round1"]["turn3"]
    turn["drawCard"] = [m for m in ([12, 4], [12, 3]) if m != turn["drawCard"]][0]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rec))
    report = replay_record(load_record(path), path)
    assert report.mismatches and "bad.json: round 1 turn 3" in report.mismatches[0]


@pytest.mark.parametrize("mutate,field", [
    (lambda r: r["record"]["round1"]["basic"].pop("initPile"), "record.round1.basic.initPile"),
    (lambda r: r["record"]["round1"]["turn2"].update(discardCard=[13, 1]), "record.round1.turn2.discardCard"),
    (lambda r: r["record"]["round1"]["turn1"].update(isKoiKoi="yes"), "record.round1.turn1.isKoiKoi"),
    (lambda r: r["info"].pop("numRound"), "info.numRound"),
    (lambda r: r.pop("record"), "record"),
])
def test_malformed_records_name_the_file_and_field(tmp_path, mutate, field):
    rec = game_to_record(_play(2))
    mutate(rec)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(rec))
    with pytest.raises(RecordError) as e:
        replay_record(load_record(path), path)
    assert "broken.json" in str(e.value) and field in str(e.value)


def test_not_json_is_a_record_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(RecordError, match="x.json.*not valid JSON"):
        load_record(path)


def test_records_dir_default_is_beside_the_repository():
    if RECORDS is not None and "KOIKOI_RECORDS" not in __import__("os").environ:
        # resolved on both sides: ../shared may be a link (as on the developers' machines)
        assert RECORDS.resolve() == (Path(__file__).resolve().parents[3] / "shared" / "koikoi-records").resolve()
