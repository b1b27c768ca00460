"""The page's extras: a person's record from data/played, the opponent's name, rating and hint units, and
the progress toward yaku shown for both players."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.duel.stats import wilson_interval
from pipeline.engine import GameState, write_record
from pipeline.engine.cards import mask_of
from pipeline.play.about import agent_name, describe, hint_units, rating
from pipeline.play.history import history
from pipeline.play.view import progress

ROOT = Path(__file__).resolve().parents[2]


def finish(client, opponent: str, seed: int, rng: np.random.Generator) -> dict:
    r = client.post("/api/games", json={"opponent": opponent, "seed": seed, "rounds": 2}).json()
    state = r["state"]
    while state["decision"] != "over":
        state = client.post(f"/api/games/{r['id']}/actions",
                            json={"action": int(rng.choice(state["legal_actions"]))}).json()["state"]
    return {"id": r["id"], **state}


def test_the_record_lists_each_finished_game_and_the_win_rate_per_opponent(client, games, tiny_model):
    assert client.get("/api/history").json() == {"games": [], "opponents": [], "skipped": []}
    rng = np.random.default_rng(3)
    played = [finish(client, opp, seed, rng) for seed, opp in enumerate(["random", "heuristic", "random", tiny_model,
                                                                         "random"])]
    client.post("/api/games", json={"opponent": "random", "seed": 9})  # unfinished: not in the record
    bad = games.records_dir / "broken.json"
    bad.write_text("{", encoding="utf-8")
    write_record(GameState(seed=1), games.records_dir / "duel.json", ("sl", "random"))  # no person in it
    odd = json.loads(next(games.records_dir.glob("20*-*.json")).read_text())  # a played game's record
    (games.records_dir / "odd.json").write_text(json.dumps({**odd, "result": []}))  # a record, but not its result
    doc = client.get("/api/history").json()

    assert sorted(g["game"] for g in doc["games"]) == sorted(p["id"] for p in played)
    by_id = {g["game"]: g for g in doc["games"]}
    for p in played:
        g = by_id[p["id"]]
        assert (g["points"], g["opponent_points"]) == (p["points"]["you"], p["points"]["opponent"])
        assert g["result"] == ("draw" if p["winner"] is None else "win" if p["winner"] == p["you"] else "loss")
        assert g["rounds"] == len(p["results"]) and g["planned"] == 2 and g["init_points"] == 30
    assert by_id[played[3]["id"]]["name"] == "tiny" and by_id[played[0]["id"]]["name"] == "Random"

    rows = {row["opponent"]: row for row in doc["opponents"]}
    assert [row["games"] for row in doc["opponents"]] == [3, 1, 1]  # most played first
    randoms = [by_id[p["id"]] for p in played if p["opponent"] == "random"]
    wins = sum(g["result"] == "win" for g in randoms) + 0.5 * sum(g["result"] == "draw" for g in randoms)
    r = rows["random"]
    assert r["wins"] + r["losses"] + r["draws"] == 3 and r["win_rate"] == pytest.approx(wins / 3, abs=1e-4)
    assert r["ci95"] == pytest.approx(list(wilson_interval(wins, 3)), abs=1e-4)
    assert r["point_diff"] == pytest.approx(sum(g["points"] - 30 for g in randoms) / 3, abs=0.01)
    assert len(doc["skipped"]) == 3 and any(s.startswith("broken.json: ") for s in doc["skipped"])
    assert "odd.json: field 'result.isOver'" in "\n".join(doc["skipped"])
    assert any(s.startswith("duel.json: ") and "not a game of a person" in s for s in doc["skipped"])
    assert str(games.records_dir) not in json.dumps(doc)  # file names only, not the server's paths


def test_the_record_of_a_missing_directory_is_empty(tmp_path):
    assert history(tmp_path / "none") == {"games": [], "opponents": [], "skipped": []}


def test_progress_counts_toward_each_yaku_from_the_two_piles():
    boar, butterfly, deer = (7, 1), (6, 1), (10, 1)
    mine = progress(mask_of([boar, butterfly, (1, 2)]), mask_of([(3, 3)]))
    bdb = next(p for p in mine if p["name"] == "Boar-Deer-Butterfly")
    assert (bdb["have"], bdb["need"], bdb["missing"]) == (2, 3, ["Deer"])
    assert mine[0] is bdb  # most advanced first
    assert {p["name"] for p in mine} == {"Boar-Deer-Butterfly", "Red Ribbons", "Tane", "Tan"}
    # the opponent holding the Deer makes the yaku impossible: it is not shown
    assert "Boar-Deer-Butterfly" not in {p["name"] for p in progress(mask_of([boar, butterfly]), mask_of([deer]))}
    # a yaku made is not "in progress"; Three Lights may not count the Rain Man, so with it four are needed
    assert "Boar-Deer-Butterfly" not in {p["name"] for p in progress(mask_of([boar, butterfly, deer]), 0)}
    lights = {p["name"]: p for p in progress(mask_of([(1, 1), (11, 1)]), 0)}["Lights"]
    assert (lights["have"], lights["need"]) == (2, 4)
    lights = {p["name"]: p for p in progress(mask_of([(1, 1), (3, 1)]), 0)}["Lights"]
    assert (lights["have"], lights["need"]) == (2, 3)
    assert progress(0, 0) == []


def test_names_ratings_and_hint_units(tmp_path):
    assert [agent_name(s) for s in ("models/rl/wp", "models/rl/point", "models/sl", "heuristic", "random")] == [
        "RL-WP", "RL-Point", "SL", "Heuristic", "Random"]
    assert agent_name(str(tmp_path / "my-model")) == "my_model"  # a path is never shown whole
    assert rating("models/rl/wp", tmp_path) is None  # no duels run
    (tmp_path / "results/duels").mkdir(parents=True)
    (tmp_path / "results/duels/ratings.json").write_text(json.dumps({"anchor": "random", "ratings": {
        "rl_wp": {"strength": 2.5, "lo": 2.3, "hi": 2.7, "elo": 434.3, "elo_lo": 400.1, "elo_hi": 468.9},
        "random": {"strength": 0, "lo": 0, "hi": 0, "elo": 0, "elo_lo": 0, "elo_hi": 0}}}))
    assert rating("models/rl/wp", tmp_path) == {"elo": 434.3, "elo_lo": 400.1, "elo_hi": 468.9, "anchor": "Random"}
    assert describe("heuristic", tmp_path) == {"spec": "heuristic", "name": "Heuristic", "rating": None, "hint": None}
    # a rating without its interval: the page shows it as exact, as the default opponent's choice reads it
    (tmp_path / "results/duels/ratings.json").write_text(json.dumps({"ratings": {"sl": {"elo": 300.0}}}))
    assert rating("models/sl", tmp_path) == {"elo": 300.0, "elo_lo": 300.0, "elo_hi": 300.0, "anchor": ""}

    sl = hint_units({"kind": "sl"}, "SL", tmp_path)
    rollout = hint_units({"kind": "rl", "variant": "wp", "algorithm": "rollout_pi"}, "RL-WP", tmp_path)
    assert sl["unit"] == rollout["unit"] == "probability" and "not a chance of winning" in rollout["what"]
    # Q values of a Monte-Carlo DQN model: points, or P(win) once the params' scale and baseline are undone
    point = hint_units({"kind": "rl", "variant": "point", "algorithm": "mc_dqn"}, "RL-Point", ROOT)
    wp = hint_units({"kind": "rl", "variant": "wp", "algorithm": "mc_dqn"}, "RL-WP", ROOT)
    assert point["unit"] == "points" and "points" in point["what"]
    assert wp["unit"] == "win_probability" and "chance to win" in wp["what"]
    from pipeline.params import load_params

    rl = load_params(ROOT / "params.yaml").rl
    assert wp["scale"] == pytest.approx(1 / rl.reward_scale.wp) and wp["offset"] == rl.wp_baseline
    assert point["scale"] == pytest.approx(1 / rl.reward_scale.point) and point["offset"] == 0
    raw = hint_units({"kind": "rl", "variant": "wp", "algorithm": "mc_dqn"}, "RL-WP", tmp_path)  # no params.yaml
    assert raw["unit"] == "q" and "could not be read" in raw["what"] and raw["scale"] == 1


def test_the_page_is_told_its_opponent_by_name(client, tiny_model):
    about = {a["spec"]: a for a in client.get("/api/opponents/about").json()}
    assert about["heuristic"]["name"] == "Heuristic" and about["random"]["hint"] is None
    for spec, name, unit in ((tiny_model, "tiny", "probability"), ("random", "Random", None)):
        gid = client.post("/api/games", json={"opponent": spec, "seed": 2}).json()["id"]
        r = client.get(f"/api/games/{gid}/opponent").json()
        assert r["spec"] == spec and r["name"] == name and r["rating"] is None
        assert (r["hint"] or {}).get("unit") == unit
    assert client.get("/api/games/nope/opponent").status_code == 404


def test_a_played_record_says_when_the_game_began(tmp_path, monkeypatch):
    from pipeline.engine import ids_of
    from pipeline.lineup.loader import load_agent
    from pipeline.play import game_session as session

    monkeypatch.setattr(session.time, "strftime", lambda fmt, *a: "2020-01-01 00:00:00")  # the game begins then
    game = session.GameSession("g", load_agent("random", seed=0), "random", seed=3, rounds=1, points=30,
                               records_dir=tmp_path)
    monkeypatch.undo()
    while not game.state.is_over:
        game.act(ids_of(game.state.observation(game.you).legal_mask)[0], game.move)
    info = game.record()["info"]
    assert info["startTime"] == "2020-01-01 00:00:00" and info["endTime"] > info["startTime"]
