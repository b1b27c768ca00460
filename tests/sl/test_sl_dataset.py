"""SL dataset build: sample counts, split by game, lossless packing, malformed records."""

from __future__ import annotations

import json

import numpy as np
import torch

from pipeline.engine import load_record
from pipeline.net import encoding
from pipeline.sl.dataset import game_decisions, load_info, load_split, split_games
from pipeline.sl.packing import LayoutPlanner, TorchUnpacker, pack, unpack


def _month(card: list[int]) -> int:
    return card[0]


def direct_counts(rec: dict) -> dict[str, int]:
    """Decisions counted from the JSON alone (no engine): every turn's discard; a pick whenever exactly
    two field cards share the played or drawn card's month; every koi-koi prompt, i.e. every
    non-null isKoiKoi except on a player's eighth turn (turns 15 and 16), where the round stops by itself."""
    n = {"discard": 0, "pick": 0, "koikoi": 0}
    for rnd in rec["record"].values():
        field = [tuple(c) for c in rnd["basic"]["initBoard"]]
        turns = sorted((int(k[4:]), v) for k, v in rnd.items() if k.startswith("turn"))
        for t, turn in turns:
            n["discard"] += 1
            for card, taken in ((turn["discardCard"], turn["collectCard"]), (turn["drawCard"], turn["collectCard2"])):
                if sum(_month(c) == _month(card) for c in field) == 2:
                    n["pick"] += 1
                if taken:
                    for c in taken[1:]:
                        field.remove(tuple(c))
                else:
                    field.append(tuple(card))
            if turn["isKoiKoi"] is not None and t < 15:
                n["koikoi"] += 1
    return n


def test_sample_counts_match_a_direct_count(two_records, two_game_dataset):
    expected = {"discard": 0, "pick": 0, "koikoi": 0}
    for f in sorted(two_records.glob("*.json")):
        for k, v in direct_counts(json.loads(f.read_text())).items():
            expected[k] += v
    _, metrics = two_game_dataset
    assert {k: metrics[f"samples_{k}"] for k in expected} == expected
    assert metrics["samples"] == sum(expected.values()) and metrics["games"] == 2
    assert expected["pick"] > 0 and expected["koikoi"] > 0  # the two games exercise every type


def test_split_is_by_game(two_game_dataset):
    out, metrics = two_game_dataset
    train, _ = load_split(out, "train")
    val, _ = load_split(out, "val")
    assert set(np.unique(train.game)).isdisjoint(np.unique(val.game))
    assert len(train) + len(val) == metrics["samples"]
    info = load_info(out)
    assert sorted(info["train_game_names"] + info["val_game_names"]) == ["1", "2"]
    tr, va = split_games(160, 0.2, seed=0)
    assert len(va) == 32 and not set(tr) & set(va) and len(set(tr) | set(va)) == 160
    assert np.array_equal(split_games(160, 0.2, seed=0)[1], va)  # seeded


def test_actions_are_legal_and_types_match_the_engine(two_game_dataset):
    out, _ = two_game_dataset
    for split in ("train", "val"):
        s, _ = load_split(out, split)
        assert s.legal[np.arange(len(s)), s.action].all()
        koikoi = s.decision == 2
        assert np.isin(s.action[koikoi], [48, 49]).all() and (s.action[~koikoi] < 48).all()


def test_packing_is_lossless_on_real_samples(two_records, two_game_dataset):
    g = game_decisions(load_record(two_records / "1.json"), two_records / "1.json")
    x = encoding.encode(g.observations)
    planner = LayoutPlanner()
    planner.update(x)
    layout = planner.layout()
    packed = pack(x, layout)
    assert np.array_equal(unpack(packed, layout), x)
    assert np.array_equal(TorchUnpacker(layout)(torch.from_numpy(packed["bits"]),
                                                torch.from_numpy(packed["values"])).numpy(), x)
    assert packed["bits"].dtype == np.uint8 and packed["bits"].nbytes * 8 < x.size  # really compact
    # what is on disk decodes to exactly what the encoder gives for the same decisions
    out, _ = two_game_dataset
    info = load_info(out)
    split = "train" if "1" in info["train_game_names"] else "val"
    s, lay = load_split(out, split)
    rows = s.game == info["games_list"].index("1")
    stored = unpack({"bits": s.bits[rows], "values": s.values[rows]}, lay)
    assert np.array_equal(stored, x)
    assert np.array_equal(s.action[rows], g.actions)


def test_malformed_record_is_skipped_and_counted(two_records, tmp_path, capsys):
    from pipeline.sl.dataset import build_dataset

    recs = tmp_path / "recs"
    recs.mkdir()
    for f in two_records.glob("*.json"):
        (recs / f.name).write_text(f.read_text())
    bad = json.loads((two_records / "1.json").read_text())
    del bad["record"]["round1"]["basic"]["initBoard"]
    (recs / "3.json").write_text(json.dumps(bad))
    metrics = build_dataset(recs, tmp_path / "sl", val_fraction=0.5, seed=1, progress=False)
    assert metrics["games"] == 2 and metrics["skipped_files"] == 1
    err = capsys.readouterr().err
    assert "3.json" in err and "initBoard" in err
