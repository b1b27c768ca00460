"""The discard benchmark (``pipeline.probes.discard_bench``, ``koikoi probe discards``): positions rebuilt exactly
from the file, reproducible, valued only by what the deciding player sees, scored by rank correlation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pipeline.agents.base import legal_list
from pipeline.agents.model_agent import NetPlayer
from pipeline.cli import main
from pipeline.engine import DISCARD, resample_hidden
from pipeline.net.inference import FP32
from pipeline.probes.discard_bench import (
    bench_document,
    collect_positions,
    position_rng,
    position_values,
    rank_correlation,
    read_bench,
    rebuild,
    reward_models,
    score_views,
    value_positions,
    write_bench,
)
from pipeline.probes.rollout_gain import rollout_values
from pipeline.selfplay.executor import InlineExecutor
from pipeline.selfplay.policies import NetSpec
from pipeline.value.winprob import WinProbTable

TABLE = WinProbTable(num_rounds=8, init_points=30, coef=[[0.0, 3.0, 0.2]] * 8)
K = 4


def _bench(net, n=3, seed=7):
    spec = NetSpec.from_net(net, "tiny")
    positions = collect_positions(NetPlayer(net), n, seed, every=2)
    value_positions(spec, positions, K, seed, reward_models(TABLE), InlineExecutor(), FP32)
    return positions, bench_document("tiny", seed, K, 2, positions)


def test_positions_rebuild_exactly_and_the_same_seed_gives_the_same_file(make_net, tmp_path):
    net = make_net(0)
    positions, doc = _bench(net)
    assert len(positions) == 3
    write_bench(tmp_path / "a.json", doc)
    back = read_bench(tmp_path / "a.json")
    for p, row in zip(positions, back["positions"]):
        s = rebuild(row["game_seed"], row["history"])
        assert s.phase == DISCARD and s.observation(s.player) == p.state.observation(p.state.player)
        assert (s.hands, s.stock) == (p.state.hands, p.state.stock)  # the hidden cards too: the same deal
        assert row["legal"] == legal_list(s.observation(s.player)) and len(row["legal"]) >= 2
        assert row["chosen"] in row["legal"] and len(row["logits"]) == len(row["legal"])
        assert set(row["values"]) == {"point", "wp"} and len(row["stderr"]["wp"]) == len(row["legal"])
    _, again = _bench(net)
    write_bench(tmp_path / "b.json", again)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_values_match_rollout_values_and_use_only_what_the_player_sees(make_net):
    net = make_net(0)
    player = NetPlayer(net)
    positions, doc = _bench(net, n=2)
    rewards = reward_models(TABLE)
    for i, (p, row) in enumerate(zip(positions, doc["positions"])):
        for name, r in rewards.items():  # the benchmark's values: rollout_values on the same deals
            m = rollout_values(player, p.state, p.legal, K, r, position_rng(7, i))
            np.testing.assert_allclose(row["values"][name], m.mean(axis=1))
            np.testing.assert_allclose(row["stderr"][name], m.std(axis=1, ddof=1) / np.sqrt(K))
        other = resample_hidden(p.state, p.state.player, np.random.default_rng(99))  # other hidden cards
        assert other.hands[other.player ^ 1] != p.state.hands[other.player ^ 1] or other.stock != p.state.stock
        moved = position_values(player, other, p.legal, K, list(rewards.values()), position_rng(7, i))
        for name, m in zip(rewards, moved):
            np.testing.assert_allclose(row["values"][name], m.mean(axis=1))


def test_rank_correlation_of_the_values_themselves_is_one_with_no_regret(make_net):
    _, doc = _bench(make_net(0))
    own = rank_correlation(doc, [p["values"]["wp"] for p in doc["positions"]])
    assert own["reward"] == "wp" and own["regret"] == 0.0 and own["best_rate"] == 1.0
    assert own["ranked"] == 0 or own["spearman"] == pytest.approx(1.0)
    worst = rank_correlation(doc, [[-v for v in p["values"]["point"]] for p in doc["positions"]], "point")
    assert worst["regret"] >= 0 and (worst["ranked"] == 0 or worst["spearman"] == pytest.approx(-1.0))
    with pytest.raises(ValueError, match="score rows"):
        rank_correlation(doc, [])


def test_discards_command_writes_the_bench_and_scores_a_model(project, capsys):
    assert main(["probe", "discards", "models/sl", "--positions", "2", "--deals", "2", "--seed", "3",
                 "--out", "bench.json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["positions"] == 2 and out["playouts"] == 2 * out["actions"] and out["reward"] == "point"
    assert main(["probe", "discards-score", "models/sl", "--bench", "bench.json"]) == 0
    score = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert score["positions"] == 2 and score["regret"] == pytest.approx(out["sl_regret"])  # SL scored: its own choices
    assert main(["probe", "discards-score", "models/sl", "--bench", "bench.json", "--reward", "wp"]) == 2
    assert "no wp values" in capsys.readouterr().err
    assert main(["probe", "discards-score", "models/sl", "--bench", "missing.json"]) == 2
    assert main(["probe", "discards-score", "models/sl", "--bench", "bench.json", "--advantage"]) == 2
    assert "no advantage network" in capsys.readouterr().err
    # an anchored model: its advantage alone is scored (untrained: all zero, so no position is ranked)
    from pipeline.net.advantage_model import AdvantageNet
    from pipeline.net.model import ModelConfig
    from pipeline.net.modelio import load_model, save_model

    sl, _ = load_model("models/sl")
    save_model(sl, "models/anchored", {"anchored": {"tau": 0.1, "decisions": ["discard"]}},
               advantage=AdvantageNet(ModelConfig(width=16, ff=32, heads=2, layers=1)))
    assert main(["probe", "discards-score", "models/anchored", "--bench", "bench.json", "--advantage"]) == 0
    adv = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert adv["ranked"] == 0 and adv["positions"] == 2
    assert main(["probe", "discards-score", "models/anchored", "--bench", "bench.json"]) == 0  # the policy: SL's
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["regret"] == pytest.approx(score["regret"])
    both = score_views("models/anchored", read_bench("bench.json"))  # koikoi scale's: one load for the two
    assert both["advantage"]["ranked"] == 0 and both["policy"]["regret"] == pytest.approx(score["regret"])
    assert main(["probe", "discards", "models/none", "--out", "x.json"]) == 2
    assert "models/none" in capsys.readouterr().err
    assert main(["probe", "discards", "models/sl", "--out", "nodir/x.json"]) == 2
