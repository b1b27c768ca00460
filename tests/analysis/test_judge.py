"""The judge: a record read as a finished game, every legal move valued from its player's observation alone, the
cost's interval, the labels and the accuracy; a clearly losing move flagged, a good player scored above a random
one, the same report from the same game, judge and seed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny import assert_blind

from pipeline.agents.heuristic import HeuristicAgent
from pipeline.agents.random_agent import RandomAgent
from pipeline.agents.rule_player import RulePlayer
from pipeline.analysis.judge import Judge, load_judge, read_game, verdict
from pipeline.analysis.report import analyse, costliest, label, move_accuracy, summary_table
from pipeline.duel.arena import play_games
from pipeline.engine import KOIKOI, KOIKOI_DECISION, STOP, GameState, RecordError, game_to_record, ids_of
from pipeline.value.winprob import WinProbTable

TABLE = WinProbTable(8, 30, [[0.0, 4.0, 0.2]] * 8)


def heuristic_judge(deals: int = 8, seed: int = 0) -> Judge:
    """A judge whose playouts the heuristic plays: it tells good moves from bad ones, with no model."""
    return Judge(RulePlayer(HeuristicAgent(0)), TABLE, deals, seed)


def played(seed: int, rounds: int = 2, agents=None) -> tuple[GameState, dict, list]:
    """A finished game (heuristic as player 1, random as 2 by default), its record and its decisions."""
    steps = []
    s = play_games(agents or (HeuristicAgent(1), RandomAgent(2)), [seed], num_rounds=rounds,
                   on_step=lambda st, a: steps.append((st.observation(st.player), a)))[0]
    return s, game_to_record(s, ("heuristic", "random")), steps


def test_a_record_is_read_as_its_decisions_round_starts_and_outcome(tmp_path):
    s, rec, steps = played(3, rounds=3)
    game = read_game(tmp_path / "g.json", rec)
    assert list(game.decisions) == steps
    assert [r for r, _, _ in game.starts] == [1, 2, 3][:len(s.results)]
    for (_, points, dealer), res in zip(game.starts[1:], s.results):
        assert points == res.totals and dealer in (0, 1)
    assert game.starts[0][1] == (30, 30) and game.winner == s.winner and game.points == tuple(s.points)
    assert game.names == ("heuristic", "random")


def test_a_record_that_is_not_a_finished_game_is_refused_in_one_line(tmp_path):
    _, rec, _ = played(4)
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(rec)[:500])
    wrong = json.loads(json.dumps(rec))
    wrong["record"]["round1"]["turn1"]["drawCard"] = wrong["record"]["round1"]["turn2"]["drawCard"]
    short = json.loads(json.dumps(rec))
    del short["record"]["round2"]
    short["result"] = {"isOver": False}
    for path, doc, words in ((cut, None, "not valid JSON"), (tmp_path / "wrong.json", wrong, "round 1 turn 1"),
                             (tmp_path / "short.json", short, "unfinished")):
        with pytest.raises(RecordError) as e:
            read_game(path, doc)
        assert str(e.value).startswith(f"{path}: ") and words in str(e.value) and "\n" not in str(e.value)
        assert str(e.value).count(str(path)) == 1


def test_every_legal_move_is_valued_from_the_players_observation_alone():
    """A decision's values are the same whatever the hidden cards are (the opponent's hand, the stock)."""
    judge = heuristic_judge(deals=4)
    rng = np.random.default_rng(0)
    s = GameState(seed=11, num_rounds=2)
    changed = checked = 0
    while not s.is_over and checked < 6:
        legal = ids_of(s.legal_mask())
        if len(legal) > 1:
            values, moved = assert_blind(lambda st: judge.values([st.observation(st.player)])[0], s, s.player, rng)
            assert values.shape == (len(legal), 4) and ((0 <= values) & (values <= 1)).all()
            changed += moved
            checked += 1
        s.step(legal[0])
    assert checked == 6 and changed >= 5


def test_koikoi_when_stopping_wins_the_last_round_is_a_blunder_and_stop_is_best():
    """A one-round game (its round the last): the non-dealer's first yaku, early. Stopping wins the game; koi-koi
    gives the dealer the round when nobody scores again, or the opponent its own yaku first."""
    s = GameState(seed=14, num_rounds=1)
    h = HeuristicAgent(1)
    while s.phase != KOIKOI_DECISION:
        s.step(h.act([s.observation(s.player)])[0])
    obs = s.observation(s.player)
    assert not obs.is_dealer and obs.turn <= 4
    values = heuristic_judge(deals=16).values([obs])[0]
    stop, koikoi = verdict(obs, STOP, values), verdict(obs, KOIKOI, values)
    assert stop["value"] == 1.0 and stop["cost"] == 0.0 and label(stop["cost"], stop["ci95"][0]) is None
    assert koikoi["best"] == STOP and koikoi["ci95"][0] > 0.1
    assert label(koikoi["cost"], koikoi["ci95"][0]) == "blunder"


def test_a_good_player_scores_above_a_random_one():
    judge = heuristic_judge(deals=6)
    reports = [analyse(read_game(f"{seed}.json", played(seed)[1]), judge, (0, 1)) for seed in range(3)]
    table = summary_table(reports)
    rows = {line.split("|")[1].strip(): line.split("|")[2:] for line in table.splitlines()[2:]}
    assert set(rows) == {"heuristic", "random"}
    acc = {name: float(r[2]) for name, r in rows.items()}
    assert acc["heuristic"] > acc["random"] + 5, table
    lost = {name: float(r[6]) for name, r in rows.items()}
    assert lost["random"] > 2 * lost["heuristic"], table


def test_the_report_holds_the_graph_the_players_and_each_judged_move():
    s, rec, steps = played(5)
    report = analyse(read_game("5.json", rec), heuristic_judge(deals=4), (0,))
    judged = [(o, a) for o, a in steps if o.player == 0 and len(ids_of(o.legal_mask)) > 1]
    assert len(report["decisions"]) == len(judged) == report["players"]["1"]["decisions"]
    assert set(report["players"]) == {"1"} and report["winner"] == (0 if s.winner is None else s.winner + 1)
    for d, (o, a) in zip(report["decisions"], judged):
        assert d["chosen"] == a and d["player"] == 1 and d["board"]["hand"] == [
            [c // 4 + 1, c % 4 + 1] for c in ids_of(o.hand)]
        assert d["cost"] == round(d["best_value"] - d["value"], 4) or abs(d["cost"] - (d["best_value"] - d["value"])) \
            < 2e-4
        assert d["ci95"][0] <= d["cost"] <= d["ci95"][1] and {x["action"] for x in d["options"]} == set(
            ids_of(o.legal_mask))
    points = report["graph"]["points"]
    assert [p["kind"] for p in points].count("start") == len(s.results) and points[-1]["kind"] == "end"
    assert points[0]["p"] == round(TABLE.prob(1, 30, rec["record"]["round1"]["basic"]["Dealer"] == 1), 4)
    assert [p["decision"] for p in points if p["kind"] == "move"] == list(range(len(judged)))
    assert all(line.startswith("R") for line in costliest(report))


def test_the_same_game_judge_and_seed_give_the_same_report_and_another_seed_other_deals():
    rec = played(6)[1]
    a, b = (json.dumps(analyse(read_game("6.json", rec), heuristic_judge(deals=4), (0, 1))) for _ in range(2))
    assert a == b
    other = analyse(read_game("6.json", rec), heuristic_judge(deals=4, seed=1), (0, 1))
    assert json.dumps(other) != a


def test_labels_need_an_interval_that_excludes_zero_and_accuracy_falls_with_the_cost():
    assert label(0.3, 0.0) is None and label(0.3, -0.1) is None and label(0.015, 0.01) is None
    assert [label(c, 0.001) for c in (0.02, 0.05, 0.1, 0.5)] == ["inaccuracy", "mistake", "blunder", "blunder"]
    acc = [move_accuracy(c) for c in (0.0, 0.02, 0.05, 0.1, 0.2, 0.9)]
    assert acc[0] == 100.0 and acc[-1] == 0.0 and acc == sorted(acc, reverse=True)


def test_a_judge_spec_is_a_searcher_with_deals_and_its_files(judge_spec, tiny_model):
    judge = load_judge(judge_spec, seed=3)
    assert judge.deals == 4 and judge.seed == 3
    for spec, words in (("random", "give a search: spec"), (f"search:{tiny_model}?deals=1", "deals >= 2"),
                        ("search:/nonexistent", "not a model directory"),
                        (f"search:{tiny_model}?rollout=/nonexistent", "rollout="),
                        (f"search:{tiny_model}?winprob=/nonexistent&rollout=self", "win-probability table"),
                        (f"search:{tiny_model}?bogus=1", "unknown search option")):
        with pytest.raises(ValueError, match=words) as e:
            load_judge(spec)
        assert "\n" not in str(e.value)


def test_the_judge_plays_out_as_the_searcher_does_with_the_models_own_rollout_policy(judge_spec, tiny_model, tmp_path):
    import shutil

    from pipeline.rollout.rollout_player import RolloutPlayer

    winprob = judge_spec.split("winprob=")[1].split("&")[0]
    model = shutil.copytree(tiny_model, tmp_path / "m")
    assert not isinstance(load_judge(f"search:{model}?winprob={winprob}").rollout, RolloutPlayer)  # none: itself
    shutil.copytree(judge_spec.split("rollout=")[1].split("&")[0], model / "rollout")  # rollout=own: <model>/rollout
    assert isinstance(load_judge(f"search:{model}?winprob={winprob}").rollout, RolloutPlayer)
    assert not isinstance(load_judge(f"search:{model}?winprob={winprob}&rollout=self").rollout, RolloutPlayer)
