"""``koikoi probe belief``: the belief's knowledge of the real hand, scored without the searcher seeing it."""

import json

import numpy as np
from tiny import save_tiny

from pipeline.agents.base import legal_list
from pipeline.cli import main
from pipeline.engine import DECISION_NAMES
from pipeline.probes.belief_probe import MIN_TURN, collect, hand_value, oracle_deals, score


class Even:
    """An opponent model that finds every legal action alike: every deal explains the play equally."""

    def values(self, observations):
        v = np.full((len(observations), 50), -np.inf, dtype=np.float32)
        for i, o in enumerate(observations):
            v[i, legal_list(o)] = 0.0
        return v


def test_positions_are_the_players_own_views_of_the_kinds_asked(make_net):
    from pipeline.agents.model_agent import NetPlayer

    positions = collect(NetPlayer(make_net()), 6, seed=3, decisions=["discard", "koikoi"])
    assert len(positions) == 6
    for obs, true in positions:
        assert DECISION_NAMES[true.phase] in ("discard", "koikoi") and true.turn >= MIN_TURN
        assert obs == true.observation(true.player) and len(legal_list(obs)) > 1


def test_an_opponent_model_that_tells_nothing_gains_nothing(make_net):
    from pipeline.agents.model_agent import NetPlayer

    positions = collect(NetPlayer(make_net()), 5, seed=1, decisions=["discard"])
    out = score(Even(), positions, pool=16, seed=0, tempers=[1.0, 0.5])
    for t in ("temper=1", "temper=0.5"):
        assert out[t]["gain_nats"] == 0.0 and out[t]["effective"] == 16.0
    assert out["temper=1"]["brier"] == out["temper=0.5"]["brier"]


def test_the_scores_do_not_read_the_real_hand_except_to_score(make_net):
    """The pool and its weights come from the observation: two real hands behind one view weigh alike."""
    from pipeline.agents.model_agent import NetPlayer
    from pipeline.engine import resample_hidden
    from pipeline.search.belief import batched_log_weights

    player = NetPlayer(make_net())
    obs, true = collect(player, 1, seed=2, decisions=["discard"])[0]
    other = resample_hidden(true, true.player, np.random.default_rng(9))
    assert other.observation(true.player) == obs and other.hands != true.hands
    weights = [score(player, [(obs, s)], pool=8, seed=0, tempers=[1.0])["temper=1"]["effective"] for s in (true, other)]
    assert weights[0] == weights[1]
    assert np.isfinite(batched_log_weights(player, [(obs, [true])])[0]).all()


def test_the_command_prints_one_json_line(tmp_path, capsys):
    model = save_tiny(tmp_path / "tiny")
    assert main(["probe", "belief", str(model), "--positions", "3", "--pool", "4", "--temper", "1", "0.25"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["positions"] == 3 and out["pool"] == 4 and set(out) >= {"temper=1", "temper=0.25", "brier_uniform"}
    assert main(["probe", "belief", str(tmp_path / "none")]) == 2


def test_oracle_deals_keep_the_real_hand_and_shuffle_only_the_stock(make_net):
    from pipeline.agents.model_agent import NetPlayer

    _, true = collect(NetPlayer(make_net()), 1, seed=4, decisions=["discard"])[0]
    deals = oracle_deals(true, 6, np.random.default_rng(0))
    assert all(d.hands == true.hands and d.field == true.field and sorted(d.stock) == sorted(true.stock)
               for d in deals)
    assert len({tuple(d.stock) for d in deals}) > 1


def test_the_network_as_its_own_searcher_gains_nothing(make_net):
    from pipeline.agents.model_agent import NetPlayer
    from pipeline.selfplay.rewards import RewardModel

    player = NetPlayer(make_net())
    positions = collect(player, 3, seed=2, decisions=["discard"])
    out = hand_value(player, {"net": player}, RewardModel("point"), positions, deals=4, truth=4, seed=0)
    assert out["net"] == {"gain": 0.0, "ci95": [0.0, 0.0], "changed": 0.0}
    assert out["oracle"]["minus_first"] == {k: out["oracle"][k] for k in ("gain", "ci95")}


def test_the_hand_probe_scores_searchers_only(tmp_path, capsys):
    model = save_tiny(tmp_path / "tiny")
    argv = ["probe", "hand", str(model), "--positions", "2", "--truth", "2", "--deals", "2", "--decisions", "discard"]
    assert main([*argv, "--search", f"search:{model}?decisions=discard&deals=2&reward=point"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["positions"] == 2 and out["reward"] == "point" and "oracle" in out
    assert main([*argv, "--search", str(model)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"--search {model}: not a search: agent")
